"""Paired tests over many pairs at once: rows of a pairs x topics matrix of differences.

Every function takes ``diffs``, one row per pair (``run_a - run_b`` on each topic, the same
topics for every row), and returns one value per row, so a family of pairs is tested without
a Python loop over pairs. The resampling tests draw one set of resamples for all rows (the
pairs share their topics) and work through the resamples in chunks to bound memory at
``pairs x chunk``, never ``pairs x resamples``.

* :func:`paired_t`: Student's paired t (:func:`scipy.stats.ttest_rel`).
* :func:`wilcoxon`: Wilcoxon signed-rank, zero differences dropped (:func:`scipy.stats.wilcoxon`).
* :func:`sign_test`: the two-sided binomial test of wins against losses, ties dropped.
* :func:`randomization`: the paired randomisation test (sign flips of the differences).
* :func:`bootstrap`: the paired bootstrap test of the mean difference, with a percentile interval.

And per pair: :func:`t_interval`, :func:`hedges_dz` and :func:`win_tie_loss`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import stats

from evalwh.errors import InsufficientDataError
from evalwh.stats.family import critical_distance

if TYPE_CHECKING:
    from numpy.typing import NDArray

Array = "NDArray[np.float64]"
# differences equal in theory can differ in the last bits (sums of ratios); tests round them
DIFF_DECIMALS = 12
# resampling chunks hold at most this many float64 cells (pairs x resamples): 32 MiB
_CHUNK_CELLS = 4_000_000


def rounded_differences(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """``a - b`` rounded to 12 decimals, so that ties and zero differences are exact.

    Examples:
        >>> rounded_differences(np.array([[0.3]]), np.array([[0.1 + 0.2]])).tolist() == [[0.0]]
        True
    """
    return np.round(a - b, DIFF_DECIMALS)


def paired_t(diffs: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Paired t and two-sided p per row; a row of identical differences is decided directly.

    scipy returns NaN (and warns) for zero variance: a constant non-zero difference is
    infinitely significant (t = +-inf, p = 0), a constant zero difference no evidence (t = 0,
    p = 1).

    Examples:
        >>> t, p = paired_t(np.array([[0.1, 0.2, 0.3], [0.0, 0.0, 0.0]]))
        >>> round(float(t[0]), 6), round(float(p[0]), 6), float(t[1]), float(p[1])
        (3.464102, 0.07418, 0.0, 1.0)
    """
    constant = np.all(diffs == diffs[:, :1], axis=1)
    t = np.zeros(diffs.shape[0])
    p = np.ones(diffs.shape[0])
    first = diffs[constant, 0]
    t[constant] = np.copysign(np.where(first == 0, 0.0, np.inf), first)
    p[constant] = np.where(first == 0, 1.0, 0.0)
    if (~constant).any():
        result = stats.ttest_rel(diffs[~constant], np.zeros_like(diffs[~constant]), axis=1)
        t[~constant] = result.statistic
        p[~constant] = result.pvalue
    return t, p


def wilcoxon(diffs: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Signed-rank test per row (zeros dropped); statistic W+ - W-, two-sided p from scipy.

    scipy's ``method="auto"`` decides once for a whole batch (a zero or tie in any row
    switches every row), so rows are grouped by the rule scipy applies to one row: exact
    without zeros or ties (n <= 50), else an exhaustive sign-flip permutation for n <= 13,
    else the normal approximation with the tie correction. Each row's p is then what one
    call of :func:`scipy.stats.wilcoxon` on that row gives. A row of zeros gets p = 1.

    Examples:
        >>> w, p = wilcoxon(np.array([[0.1, 0.2, 0.3, 0.4, 0.5]]))
        >>> float(w[0]), float(p[0])
        (15.0, 0.0625)
    """
    nonzero = (diffs != 0).sum(axis=1)
    # ranks of |d| among the non-zero differences: zeros take the lowest ranks, so
    # subtracting their count gives the ranks the test uses
    ranks = stats.rankdata(np.abs(diffs), axis=1) - (diffs.shape[1] - nonzero)[:, None]
    w_diff = (np.sign(diffs) * ranks).sum(axis=1)
    p = np.ones(diffs.shape[0])
    testable = nonzero > 0
    n = diffs.shape[1]
    magnitudes = np.sort(np.abs(diffs), axis=1)
    ties = ((np.diff(magnitudes, axis=1) == 0) & (magnitudes[:, 1:] > 0)).any(axis=1)
    clean = (nonzero == n) & ~ties
    if n <= 50:
        groups = [(testable & clean, "exact")]
        groups.append((testable & ~clean, "permutation" if n <= 13 else "asymptotic"))
    else:
        groups = [(testable, "asymptotic")]
    for rows, method in groups:  # at most two groups: one scipy call each
        if rows.any():
            chosen: Any = stats.PermutationMethod() if method == "permutation" else method
            result = stats.wilcoxon(diffs[rows], axis=1, zero_method="wilcox", method=chosen)
            p[rows] = result.pvalue
    return w_diff.astype(np.float64), p


def win_tie_loss(diffs: NDArray[np.float64]) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any]]:
    """Topics where ``run_a`` wins, ties and loses, per row.

    Examples:
        >>> [x.tolist() for x in win_tie_loss(np.array([[0.1, 0.0, -0.2, 0.3]]))]
        [[2], [1], [1]]
    """
    return (diffs > 0).sum(axis=1), (diffs == 0).sum(axis=1), (diffs < 0).sum(axis=1)


def sign_test(diffs: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Two-sided sign test per row: wins against losses under Binomial(w + l, 1/2), ties dropped.

    For p = 1/2 the binomial is symmetric, so the two-sided p-value of
    :func:`scipy.stats.binomtest` is ``min(1, 2 F(min(w, l)))``; it is computed that way for
    all rows at once. Statistic: wins - losses. No wins and no losses gives p = 1.

    Examples:
        >>> s, p = sign_test(np.array([[0.1, 0.2, 0.3, 0.4, 0.5, -0.1]]))
        >>> float(s[0]), round(float(p[0]), 6)
        (4.0, 0.21875)
    """
    wins, _, losses = win_tie_loss(diffs)
    trials = wins + losses
    p = np.minimum(1.0, 2.0 * stats.binom.cdf(np.minimum(wins, losses), trials, 0.5))
    p = np.where(trials == 0, 1.0, p)
    return (wins - losses).astype(np.float64), p


def _chunk(rows: int, total: int) -> int:
    """Resamples per chunk so that ``rows x chunk`` cells stay under the memory bound."""
    return max(1, min(total, _CHUNK_CELLS // max(rows, 1)))


def _check_resamples(n_resamples: int) -> None:
    if n_resamples < 1:
        raise InsufficientDataError(f"n_resamples must be at least 1, got {n_resamples}")


def _tolerance(diffs: NDArray[np.float64]) -> NDArray[np.float64]:
    """A tolerance per row so that resampled statistics equal to the observed one count."""
    return 1e-12 * np.maximum(1.0, np.abs(diffs).max(axis=1))


def randomization(
    diffs: NDArray[np.float64], n_resamples: int, rng: np.random.Generator
) -> NDArray[np.float64]:
    """Two-sided paired randomisation p-values, ``(1 + #{|perm mean| >= |obs mean|}) / (1 + B)``.

    Under the null hypothesis the two runs' labels on a topic are exchangeable, so each
    difference's sign is flipped at random (Fisher; Smucker, Allan and Carterette, CIKM 2007).
    One set of sign vectors serves every row. The +1 counts the observed labelling, so a
    p-value is never 0 (Phipson and Smyth 2010).

    Examples:
        >>> p = randomization(np.array([[0.1, 0.2, 0.3, 0.4, 0.5]]), 20000, np.random.default_rng(0))
        >>> abs(float(p[0]) - 2 / 32) < 0.01
        True
    """
    _check_resamples(n_resamples)
    rows, n = diffs.shape
    observed = np.abs(diffs.mean(axis=1)) - _tolerance(diffs)
    extreme = np.zeros(rows, dtype=np.int64)
    step = _chunk(rows, n_resamples)
    for start in range(0, n_resamples, step):  # chunks of resamples, to bound memory
        size = min(step, n_resamples - start)
        signs = rng.choice(np.array([-1.0, 1.0]), size=(n, size))
        permuted = np.abs(diffs @ signs) / n
        extreme += (permuted >= observed[:, None]).sum(axis=1)
    return (1.0 + extreme) / (1.0 + n_resamples)


def bootstrap_counts(n: int, size: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """``size`` bootstrap resamples of ``n`` topics as counts: row b says how often each topic is drawn.

    Examples:
        >>> counts = bootstrap_counts(4, 3, np.random.default_rng(0))
        >>> counts.shape, counts.sum(axis=1).tolist()
        ((3, 4), [4.0, 4.0, 4.0])
    """
    draws = rng.integers(0, n, size=(size, n))
    flat = (draws + (np.arange(size) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=size * n).reshape(size, n).astype(np.float64)


def bootstrap(
    diffs: NDArray[np.float64], n_resamples: int, rng: np.random.Generator, alpha: float
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Paired bootstrap test of the mean difference and its percentile interval, per row.

    Topics are drawn with replacement (the same draws for every row). The test follows
    Efron and Tibshirani (1993, section 16.4) and Sakai (SIGIR 2006): the null distribution is that of
    the resampled mean centred on the observed mean, so
    ``p = (1 + #{|mean* - mean| >= |mean|}) / (1 + B)``. The interval is the symmetric
    bootstrap interval ``mean +- c``, ``c`` the critical ``|mean* - mean|`` of that count
    (:func:`evalwh.stats.family.critical_distance`), so it excludes 0 exactly when
    ``p < alpha``.

    Returns:
        ``p, ci_low, ci_high``.

    Examples:
        >>> p, lo, hi = bootstrap(np.array([[0.1, 0.2, 0.3, 0.4, 0.5]]), 5000, np.random.default_rng(0), 0.05)
        >>> bool(p[0] < 0.01), bool(0.1 <= lo[0] <= 0.3 <= hi[0] <= 0.5)
        (True, True)
    """
    _check_resamples(n_resamples)
    rows, n = diffs.shape
    counts = bootstrap_counts(n, n_resamples, rng)  # B x n, shared by all rows
    observed = diffs.mean(axis=1)
    threshold = np.abs(observed) - _tolerance(diffs)
    extreme = np.zeros(rows, dtype=np.int64)
    low = np.empty(rows)
    high = np.empty(rows)
    # the interval needs every resampled mean of a row: chunk over rows, all resamples each
    step = max(1, _CHUNK_CELLS // n_resamples)
    for start in range(0, rows, step):
        block = slice(start, start + step)
        means = diffs[block] @ counts.T / n  # rows x B
        extreme[block] = (np.abs(means - observed[block, None]) >= threshold[block, None]).sum(
            axis=1
        )
        # the same order statistic of every row (B is shared): one partition, no loop
        deviations = np.abs(means - observed[block, None])
        half = critical_distance(deviations, alpha, _tolerance(diffs[block]))
        low[block], high[block] = observed[block] - half, observed[block] + half
    return (1.0 + extreme) / (1.0 + n_resamples), low, high


def t_interval(
    diffs: NDArray[np.float64], alpha: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The t-based ``1 - alpha`` confidence interval of the mean difference, per row.

    ``mean +- t_{1-alpha/2, n-1} s / sqrt(n)`` (the interval of :func:`scipy.stats.ttest_rel`'s
    ``confidence_interval``).

    Examples:
        >>> lo, hi = t_interval(np.array([[0.1, 0.2, 0.3]]), 0.05)
        >>> round(float(lo[0]), 4), round(float(hi[0]), 4)
        (-0.0484, 0.4484)
    """
    n = diffs.shape[1]
    mean = diffs.mean(axis=1)
    half = stats.t.ppf(1 - alpha / 2, n - 1) * diffs.std(axis=1, ddof=1) / np.sqrt(n)
    return mean - half, mean + half


def hedges_dz(diffs: NDArray[np.float64]) -> NDArray[np.float64]:
    """Cohen's d_z (mean difference over the standard deviation of the differences), Hedges-corrected.

    ``g = J d_z`` with ``J = 1 - 3 / (4 (n - 1) - 1)`` (Hedges and Olkin 1985; Lakens 2013,
    eq. 4 with ``df = n - 1``). Zero variance gives +-inf (or 0 for no difference); with two
    topics J is 0 and such a value is NaN (undefined).

    Examples:
        >>> round(float(hedges_dz(np.array([[0.1, 0.2, 0.3]]))[0]), 4)  # d_z = 2, J = 4/7
        1.1429
    """
    n = diffs.shape[1]
    mean = diffs.mean(axis=1)
    sd = diffs.std(axis=1, ddof=1)
    correction = 1.0 - 3.0 / (4.0 * (n - 1) - 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        dz = np.where(sd > 0, mean / sd, np.copysign(np.where(mean == 0, 0.0, np.inf), mean))
        # two topics: J = 0, so zero variance's +-inf times J is undefined (NaN), not a warning
        return dz * correction
