"""Significance tests between pairs of runs, vectorised over pairs (methods §4.2).

Every function takes one metric in long form (``run_id, query_id, value``), aligns it into a
runs x topics matrix, and tests a family of pairs at once: the pairs are rows of a
pairs x topics matrix of differences (:mod:`evalwh.stats.paired`), or are read off one
family-wide computation (:mod:`evalwh.stats.family`), so there is no Python loop over pairs.
Pairs are oriented (``run_a`` first); the outcome column is ``+1`` (``run_a`` significantly
better), ``-1`` or ``0``.

Procedures (:class:`Procedure`):

* ``anova``: one-way ANOVA with run as the factor (:func:`scipy.stats.f_oneway`) as a gate,
  then pairwise t with the pooled error and a correction (Bonferroni: the papers' procedure,
  methods §4.2 A).
* ``anova2``: the same with a two-way ANOVA blocked by topic (no replication).
* ``t``: paired t-test per pair (:func:`scipy.stats.ttest_rel`).
* ``wilcoxon``: Wilcoxon signed-rank per pair (:func:`scipy.stats.wilcoxon`, zeros dropped).
* ``sign``: sign test per pair (binomial on wins against losses, ties dropped).
* ``randomization``: paired randomisation test (sign flips of the differences).
* ``bootstrap``: paired bootstrap test of the mean difference.
* ``tukey``: Tukey's HSD with the two-way ANOVA's residual variance (family-wise).
* ``randomized_tukey``: the randomised Tukey HSD test (family-wise).

The per-pair tests take a multiple-comparison :class:`Correction` over the family of pairs;
the Tukey procedures are family-wise already and take none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import stats

from evalwh.errors import Choice, InsufficientDataError
from evalwh.stats import family, paired

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

REQUIRED = ["run_id", "query_id", "value"]


class Procedure(Choice):
    """A significance procedure for pairs of runs (methods §4.2)."""

    __noun__ = "test"

    anova = "anova"
    anova2 = "anova2"
    t = "t"
    wilcoxon = "wilcoxon"
    sign = "sign"
    randomization = "randomization"
    bootstrap = "bootstrap"
    tukey = "tukey"
    randomized_tukey = "randomized_tukey"

    @property
    def family_wise(self) -> bool:
        """True for the Tukey procedures, whose p-values already hold over all pairs."""
        return self in (Procedure.tukey, Procedure.randomized_tukey)


class Correction(Choice):
    """A multiple-comparison correction over a family of pairs."""

    none = "none"
    bonferroni = "bonferroni"
    holm = "holm"
    bh = "bh"  # Benjamini-Hochberg (false discovery rate)
    by = "by"  # Benjamini-Yekutieli (false discovery rate under any dependence)


def default_correction(test: Procedure | str, fallback: Correction | str) -> Correction:
    """The correction to use when none is named: none for a Tukey test, else ``fallback``.

    Examples:
        >>> default_correction("tukey", "holm").value, default_correction("t", "holm").value
        ('none', 'holm')
    """
    return Correction.none if Procedure(test).family_wise else Correction(fallback)


@dataclass(frozen=True)
class ScoreMatrix:
    """One metric as a complete runs x topics matrix (rows in ``runs`` order)."""

    runs: list[str]
    topics: list[str]
    values: NDArray[np.float64]


def score_matrix(scores: pd.DataFrame, runs: Sequence[str] | None = None) -> ScoreMatrix:
    """Pivot long-form scores into a runs x topics matrix, keeping topics defined for every run.

    A topic whose value is missing or NULL for any run is dropped for all runs, so that every
    pair and the ANOVA see the same topics (methods §0.4: a paired test drops a topic that is
    NULL for either run).

    Args:
        scores: One metric in long form, columns ``run_id, query_id, value``.
        runs: The runs and their order; all runs of ``scores`` in sorted order when None.

    Returns:
        The matrix with its run and topic labels (topics sorted).

    Raises:
        InsufficientDataError: if columns or runs are missing, fewer than two runs are given,
            or fewer than two topics are defined for every run.

    Examples:
        >>> frame = pd.DataFrame({"run_id": ["a", "a", "b", "b"], "query_id": ["1", "2"] * 2,
        ...                       "value": [0.5, 0.25, 0.0, 1.0]})
        >>> m = score_matrix(frame)
        >>> m.runs, m.topics, m.values.tolist()
        (['a', 'b'], ['1', '2'], [[0.5, 0.25], [0.0, 1.0]])
    """
    missing = [c for c in REQUIRED if c not in scores.columns]
    if missing:
        raise InsufficientDataError(f"scores is missing columns {missing}; expected {REQUIRED}")
    if scores.duplicated(["run_id", "query_id"]).any():
        raise InsufficientDataError(
            "scores has more than one value per (run_id, query_id); pass one metric at a time"
        )
    wide = scores.pivot(index="run_id", columns="query_id", values="value").astype("float64")
    if runs is None:
        runs = sorted(wide.index.astype(str))
    else:
        absent = sorted(set(runs) - set(wide.index))
        if absent:
            raise InsufficientDataError(f"scores has no values for run(s) {absent}")
        if len(set(runs)) != len(runs):
            raise InsufficientDataError("runs lists a run more than once")
    if len(runs) < 2:
        raise InsufficientDataError(f"need at least two runs to compare, got {len(runs)}")
    wide = wide.loc[list(runs)].dropna(axis=1, how="any")
    wide = wide.reindex(columns=sorted(wide.columns))
    if wide.shape[1] < 2:
        raise InsufficientDataError(
            f"only {wide.shape[1]} topic(s) have a value for every run; need at least 2"
        )
    return ScoreMatrix(list(runs), [str(t) for t in wide.columns], wide.to_numpy(dtype=np.float64))


def adjust_p(p_values: NDArray[np.float64], correction: Correction | str) -> NDArray[np.float64]:
    """Adjust a family of p-values for multiple comparisons.

    NaN p-values (no test possible) are left NaN and do not count towards the family size.
    Benjamini-Hochberg and Benjamini-Yekutieli are :func:`scipy.stats.false_discovery_control`;
    scipy has no Bonferroni or Holm, which are one line each.

    Args:
        p_values: One family of p-values (any shape; flattened order is irrelevant).
        correction: ``none``, ``bonferroni`` (``min(1, m p)``), ``holm`` (step-down: the i-th
            smallest becomes ``max_{j<=i} min(1, (m - j + 1) p_(j))``), ``bh`` or ``by``.

    Returns:
        The adjusted p-values, in the input's shape.

    Examples:
        >>> adjust_p(np.array([0.01, 0.04, 0.03, 0.005]), "holm").round(3).tolist()
        [0.03, 0.06, 0.06, 0.02]
        >>> adjust_p(np.array([0.01, 0.04, 0.03, 0.005]), "bonferroni").tolist()
        [0.04, 0.16, 0.12, 0.02]
        >>> adjust_p(np.array([0.01, 0.04, 0.03, 0.005]), "bh").round(4).tolist()
        [0.02, 0.04, 0.04, 0.02]
    """
    correction = Correction(correction)
    p = np.asarray(p_values, dtype=np.float64)
    if correction is Correction.none:
        return p.copy()
    flat = p.ravel()
    valid = ~np.isnan(flat)
    m = int(valid.sum())
    out = np.full_like(flat, np.nan)
    if m == 0:
        return out.reshape(p.shape)
    if correction is Correction.bonferroni:
        out[valid] = np.minimum(1.0, m * flat[valid])
    elif correction is Correction.holm:
        order = np.argsort(flat[valid], kind="stable")
        ranked = flat[valid][order] * (m - np.arange(m))
        adjusted = np.minimum(1.0, np.maximum.accumulate(ranked))
        values = np.empty(m)
        values[order] = adjusted
        out[valid] = values
    else:
        out[valid] = stats.false_discovery_control(flat[valid], method=correction.value)
    return out.reshape(p.shape)


@dataclass(frozen=True)
class PairTests:
    """What :func:`pair_tests` finds for a family of pairs (arrays, one entry per pair).

    ``p_value`` is raw for the per-pair tests and family-wise for the Tukey procedures;
    ``gate_p_value`` is the ANOVA F test's p (NaN for the others); ``ci_low, ci_high`` bound
    the mean difference with the interval that belongs to the test (:data:`INTERVALS`), NaN
    for the tests that have none (Wilcoxon, sign, randomisation).
    """

    statistic: NDArray[np.float64]
    p_value: NDArray[np.float64]
    gate_p_value: NDArray[np.float64]
    direction: NDArray[np.float64]
    ci_low: NDArray[np.float64]
    ci_high: NDArray[np.float64]


# the interval each procedure prints beside its p-value (methods §4.2), for headers and docs
INTERVALS = {
    Procedure.anova: "pooled-error t interval (one-way ANOVA's MSE)",
    Procedure.anova2: "pooled-error t interval (two-way ANOVA's V_E)",
    Procedure.t: "paired t interval",
    Procedure.wilcoxon: "none (the signed-rank test has no interval of the mean)",
    Procedure.sign: "none (the sign test has no interval of the mean)",
    Procedure.randomization: "none (the randomisation test has no interval of the mean)",
    Procedure.bootstrap: "symmetric bootstrap interval (mean +- the critical |mean* - mean|)",
    Procedure.tukey: "Tukey's simultaneous interval (studentized range, two-way ANOVA's V_E)",
    Procedure.randomized_tukey: "randomised Tukey interval (mean +- the critical permuted range)",
}


def interval_alpha(test: Procedure | str, correction: Correction | str, alpha: float, n_pairs: int) -> float:
    """The level of a per-pair interval: ``alpha / m`` under Bonferroni, else ``alpha``.

    Under Bonferroni (and no correction) a pair is rejected exactly when its interval
    excludes 0 (the ANOVA gate aside); under Holm, BH and BY a rejected pair's interval
    excludes 0, but not the other way round (their thresholds depend on the other pairs).
    The Tukey procedures' intervals are simultaneous already.

    Examples:
        >>> interval_alpha("t", "bonferroni", 0.05, 5), interval_alpha("t", "holm", 0.05, 5)
        (0.01, 0.05)
    """
    if Correction(correction) is Correction.bonferroni and not Procedure(test).family_wise:
        return alpha / max(n_pairs, 1)
    return alpha


def interval_note(test: Procedure | str, correction: Correction | str, alpha: float, n_pairs: int) -> str:
    """One phrase saying which interval a comparison prints and what it covers.

    Examples:
        >>> interval_note("tukey", "none", 0.05, 6)
        "95% Tukey's simultaneous interval (studentized range, two-way ANOVA's V_E)"
        >>> interval_note("t", "bonferroni", 0.05, 5)
        '99% paired t interval (Bonferroni: 1 - alpha/5 each)'
        >>> interval_note("wilcoxon", "holm", 0.05, 5)
        'interval: none (the signed-rank test has no interval of the mean)'
    """
    test, correction = Procedure(test), Correction(correction)
    kind = INTERVALS[test]
    if kind.startswith("none"):
        return f"interval: {kind}"
    level = 1 - interval_alpha(test, correction, alpha, n_pairs)
    text = f"{100 * level:.4g}% {kind}"
    if correction is Correction.bonferroni and not test.family_wise:
        return f"{text} (Bonferroni: 1 - alpha/{n_pairs} each)"
    if correction in (Correction.holm, Correction.bh, Correction.by):
        return f"{text} per comparison, not adjusted by {correction.value}"
    return text


def pair_tests(
    values: NDArray[np.float64],
    a_idx: NDArray[np.intp],
    b_idx: NDArray[np.intp],
    *,
    test: Procedure | str,
    alpha: float = 0.05,
    n_resamples: int = 9999,
    rng: np.random.Generator | int | None = None,
    ci_alpha: float | None = None,
) -> PairTests:
    """Test the pairs ``(a_idx[i], b_idx[i])`` of the rows of a runs x topics matrix.

    The family-wide procedures (``anova``, ``anova2``, ``tukey``, ``randomized_tukey``) use
    every row of ``values`` (the family of runs), whichever pairs are asked for. The
    intervals cover ``1 - ci_alpha`` (``alpha`` when None; see :func:`interval_alpha`), the
    Tukey intervals ``1 - alpha`` simultaneously.

    Wilcoxon ranks the differences as computed (``values[a] - values[b]``), as
    :func:`scipy.stats.wilcoxon` does; the other tests, and wins/ties/losses, take the
    differences rounded to 12 decimals (:func:`evalwh.stats.paired.rounded_differences`).

    Examples:
        >>> v = np.array([[0.9, 0.8, 0.9, 0.7], [0.1, 0.2, 0.1, 0.2]])
        >>> out = pair_tests(v, np.array([0]), np.array([1]), test="t")
        >>> round(float(out.statistic[0]), 3), out.direction.tolist()
        (9.0, [1.0])
    """
    test = Procedure(test)
    generator = np.random.default_rng(rng)
    means = values.mean(axis=1)
    mean_diff = means[a_idx] - means[b_idx]
    diffs = paired.rounded_differences(values[a_idx], values[b_idx])
    gate = np.full(a_idx.size, np.nan)
    direction = np.sign(mean_diff)
    level = alpha if ci_alpha is None else ci_alpha
    ci_low = np.full(a_idx.size, np.nan)
    ci_high = np.full(a_idx.size, np.nan)
    if test in (Procedure.anova, Procedure.anova2):
        statistic, p_value, gate_p = _anova_pairs(
            values, a_idx, b_idx, blocked=test is Procedure.anova2
        )
        gate[:] = gate_p
        _, _, _, df_e, mse = _anova(values, test is Procedure.anova2)
        half = stats.t.ppf(1 - level / 2, df_e) * np.sqrt(2.0 * mse / values.shape[1])
        ci_low, ci_high = mean_diff - half, mean_diff + half
    elif test is Procedure.t:
        statistic, p_value = paired.paired_t(diffs)
        ci_low, ci_high = paired.t_interval(diffs, level)
    elif test is Procedure.wilcoxon:
        statistic, p_value = paired.wilcoxon(values[a_idx] - values[b_idx])
        # the direction is the sign of the mean difference, else of W+ - W- (methods §4.2 C)
        direction = np.where(mean_diff != 0, direction, np.sign(statistic))
    elif test is Procedure.sign:
        statistic, p_value = paired.sign_test(diffs)
        direction = np.where(mean_diff != 0, direction, np.sign(statistic))
    elif test is Procedure.randomization:
        statistic = paired.paired_t(diffs)[0]
        p_value = paired.randomization(diffs, n_resamples, generator)
    elif test is Procedure.bootstrap:
        statistic = paired.paired_t(diffs)[0]
        p_value, ci_low, ci_high = paired.bootstrap(diffs, n_resamples, generator, level)
    elif test is Procedure.tukey:
        statistic, p_value = family.tukey_hsd(values, a_idx, b_idx)
        half = family.tukey_half_width(values, alpha)
        ci_low, ci_high = mean_diff - half, mean_diff + half
    else:
        statistic = paired.paired_t(diffs)[0]
        p_value, half = family.randomized_tukey(values, a_idx, b_idx, n_resamples, generator, alpha=alpha)
        ci_low, ci_high = mean_diff - half, mean_diff + half
    return PairTests(
        np.asarray(statistic, dtype=np.float64),
        np.asarray(p_value, dtype=np.float64),
        gate,
        direction,
        ci_low,
        ci_high,
    )


def corrected(
    tests: PairTests, test: Procedure | str, correction: Correction | str, alpha: float
) -> NDArray[np.float64]:
    """Corrected p-values of a family: the correction, then the ANOVA gate where there is one.

    Raises:
        InsufficientDataError: for a correction on top of a family-wise Tukey procedure.
    """
    test = Procedure(test)
    correction = Correction(correction)
    if test.family_wise and correction is not Correction.none:
        raise InsufficientDataError(
            f"the {test.value} test's p-values hold for the whole family already; "
            f"use correction none, not {correction.value}"
        )
    adjusted = adjust_p(tests.p_value, correction)
    if test in (Procedure.anova, Procedure.anova2) and tests.gate_p_value.size:
        # the ANOVA gate: no pair differs unless F is significant
        if not tests.gate_p_value[0] < alpha:
            adjusted = np.ones_like(adjusted)
    return adjusted


def pairwise(
    scores: pd.DataFrame,
    *,
    test: Procedure | str = Procedure.anova,
    correction: Correction | str = Correction.bonferroni,
    alpha: float = 0.05,
    runs: Sequence[str] | None = None,
    n_resamples: int = 9999,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Test every pair of runs on one metric and give each pair an outcome.

    Args:
        scores: One metric in long form, columns ``run_id, query_id, value``.
        test: The procedure (see :class:`Procedure`).
        correction: Multiple-comparison correction over all ``k(k-1)/2`` pairs. Bonferroni
            with an ANOVA procedure is the papers' procedure; Holm is uniformly more powerful;
            the Tukey procedures take ``none``.
        alpha: Significance level.
        runs: The runs and their order (pair ``(a, b)`` has ``a`` before ``b``); sorted when None.
        n_resamples: Resamples of the randomization, bootstrap and randomised Tukey tests.
        rng: Random generator or seed for the resampling tests.

    Returns:
        One row per pair: ``run_a, run_b, n_topics, mean_a, mean_b, mean_diff, statistic,
        p_value, p_adjusted, gate_p_value, outcome``. ``statistic`` is t (ANOVA pairwise,
        paired t, randomization: the t of the mean difference), or W+ - W- for Wilcoxon;
        ``gate_p_value`` is the ANOVA F test's p-value (NaN for per-pair tests); ``outcome``
        is +1 when ``run_a`` is significantly better, -1 when worse, 0 otherwise.

    Raises:
        InsufficientDataError: as :func:`score_matrix`.

    Examples:
        >>> frame = pd.DataFrame({"run_id": ["a"] * 4 + ["b"] * 4, "query_id": list("wxyz") * 2,
        ...                       "value": [0.9, 0.8, 0.9, 0.7, 0.1, 0.2, 0.1, 0.2]})
        >>> pairwise(frame, test="t")[["run_a", "run_b", "outcome"]].values.tolist()
        [['a', 'b', 1]]
    """
    test = Procedure(test)
    correction = Correction(correction)
    if not 0.0 < alpha < 1.0:
        raise InsufficientDataError(f"alpha must lie in (0, 1), got {alpha}")
    matrix = score_matrix(scores, runs)
    values = matrix.values
    k, n = values.shape
    a_idx, b_idx = np.triu_indices(k, 1)
    means = values.mean(axis=1)
    mean_diff = means[a_idx] - means[b_idx]
    tests = pair_tests(
        values, a_idx, b_idx, test=test, alpha=alpha, n_resamples=n_resamples, rng=rng
    )
    statistic, p_value, gate, direction = (
        tests.statistic, tests.p_value, tests.gate_p_value, tests.direction
    )
    p_adjusted = corrected(tests, test, correction, alpha)
    significant = np.nan_to_num(p_adjusted, nan=1.0) < alpha
    outcome = np.where(significant, direction, 0).astype(np.int8)
    return pd.DataFrame(
        {
            "run_a": np.asarray(matrix.runs, dtype=object)[a_idx],
            "run_b": np.asarray(matrix.runs, dtype=object)[b_idx],
            "n_topics": n,
            "mean_a": means[a_idx],
            "mean_b": means[b_idx],
            "mean_diff": mean_diff,
            "statistic": statistic,
            "p_value": p_value,
            "p_adjusted": p_adjusted,
            "gate_p_value": gate,
            "outcome": outcome,
        }
    )


def anova_table(
    scores: pd.DataFrame, *, blocked: bool = False, runs: Sequence[str] | None = None
) -> dict[str, float]:
    """The ANOVA of one metric with run as the factor (optionally blocked by topic).

    Args:
        scores: One metric in long form, columns ``run_id, query_id, value``.
        blocked: Two-way ANOVA without replication, topic as the block.
        runs: The runs to include; all when None.

    Returns:
        ``F, p_value, df_between, df_error, mse`` (the error mean square used by the pairwise
        comparisons).

    Examples:
        >>> frame = pd.DataFrame({"run_id": ["a"] * 3 + ["b"] * 3, "query_id": list("xyz") * 2,
        ...                       "value": [0.5, 0.6, 0.7, 0.1, 0.2, 0.4]})
        >>> {k: round(v, 4) for k, v in anova_table(frame).items()}
        {'F': 12.1, 'p_value': 0.0254, 'df_between': 1.0, 'df_error': 4.0, 'mse': 0.0167}
    """
    values = score_matrix(scores, runs).values
    f, p, df_b, df_e, mse = _anova(values, blocked)
    return {"F": f, "p_value": p, "df_between": df_b, "df_error": df_e, "mse": mse}


def kendall_tau(x: pd.Series, y: pd.Series) -> dict[str, float]:
    """Kendall's tau_b between two system rankings given as per-run scores (methods §4.5).

    Args:
        x: One score per run (index = run_id), e.g. MAP.
        y: Another score per run, e.g. mean A_p@1000; runs are aligned by index.

    Returns:
        ``tau, p_value, n_runs`` from :func:`scipy.stats.kendalltau` (variant ``b``).

    Raises:
        InsufficientDataError: if fewer than two runs have both scores.

    Examples:
        >>> runs = ["s1", "s2", "s3", "s4"]
        >>> out = kendall_tau(pd.Series([.4, .3, .2, .1], runs), pd.Series([.5, .2, .3, .1], runs))
        >>> round(out["tau"], 6), out["n_runs"]
        (0.666667, 4)
    """
    both = pd.concat({"x": x, "y": y}, axis=1, join="inner").dropna()
    if len(both) < 2:
        raise InsufficientDataError(f"only {len(both)} run(s) have both scores; need at least 2")
    result = stats.kendalltau(both["x"].to_numpy(), both["y"].to_numpy(), variant="b")
    return {"tau": float(result.statistic), "p_value": float(result.pvalue), "n_runs": len(both)}


def _anova(values: NDArray[np.float64], blocked: bool) -> tuple[float, float, float, float, float]:
    """F, p, df_between, df_error and MSE of the one-way (or topic-blocked) ANOVA."""
    k, n = values.shape
    if not blocked:
        df_b, df_e = k - 1.0, float(k * n - k)
        mse = float(((values - values.mean(axis=1, keepdims=True)) ** 2).sum() / df_e)
        if mse > 0.0:
            result = stats.f_oneway(*values)
            return float(result.statistic), float(result.pvalue), df_b, df_e, mse
        # every run constant over topics: scipy warns and returns inf or NaN; decide here
        differ = bool(np.ptp(values.mean(axis=1)) > 0)
        return (np.inf if differ else np.nan), (0.0 if differ else 1.0), df_b, df_e, 0.0
    # two-way without replication: SS_total = SS_runs + SS_topics + SS_error
    # (scipy has no two-way ANOVA; these are the textbook sums of squares)
    grand = values.mean()
    ss_runs = n * ((values.mean(axis=1) - grand) ** 2).sum()
    ss_topics = k * ((values.mean(axis=0) - grand) ** 2).sum()
    ss_error = ((values - grand) ** 2).sum() - ss_runs - ss_topics
    df_b, df_e = k - 1.0, (k - 1.0) * (n - 1.0)
    mse = max(float(ss_error), 0.0) / df_e
    ms_runs = ss_runs / df_b
    if mse == 0.0:
        f = np.inf if ms_runs > 0 else np.nan
        p = 0.0 if ms_runs > 0 else 1.0
        return float(f), p, df_b, df_e, mse
    f = ms_runs / mse
    return float(f), float(stats.f.sf(f, df_b, df_e)), df_b, df_e, mse


def _anova_pairs(
    values: NDArray[np.float64], a_idx: NDArray[Any], b_idx: NDArray[Any], *, blocked: bool
) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    """Pooled-error t and two-sided p for every pair, and the ANOVA gate's p-value."""
    k, n = values.shape
    _, gate_p, _, df_e, mse = _anova(values, blocked)
    means = values.mean(axis=1)
    diff = means[a_idx] - means[b_idx]
    se = np.sqrt(mse * 2.0 / n)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0, diff / se, np.copysign(np.where(diff == 0, 0.0, np.inf), diff))
    p = 2.0 * stats.t.sf(np.abs(t), df_e)
    gate = 1.0 if np.isnan(gate_p) else gate_p  # all values equal: nothing differs
    return t, p, gate


def comparison_intervals(
    scores: pd.DataFrame,
    *,
    alpha: float = 0.05,
    blocked: bool = False,
    runs: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Per-run means with Bonferroni comparison intervals from the ANOVA's pooled error.

    The half-width is half the minimum significant difference,
    ``t_{1 - alpha/(2 n_pairs), df_E} * sqrt(2 MSE / n) / 2``, so two runs' intervals fail to
    overlap exactly when the ``anova`` procedure (gate aside) finds them different: the
    display of MATLAB's ``multcompare``, which the papers' figures follow.

    Args:
        scores: One metric in long form, columns ``run_id, query_id, value``.
        alpha: Significance level of the family.
        blocked: Use the topic-blocked (two-way) ANOVA's error.
        runs: The family of runs; all when None.

    Returns:
        ``run_id, n_topics, mean, half_width``, one row per run in ``runs`` order.

    Examples:
        >>> frame = pd.DataFrame({"run_id": ["a"] * 3 + ["b"] * 3, "query_id": list("xyz") * 2,
        ...                       "value": [0.5, 0.6, 0.7, 0.1, 0.2, 0.4]})
        >>> comparison_intervals(frame)["half_width"].round(4).tolist()
        [0.1463, 0.1463]
    """
    matrix = score_matrix(scores, runs)
    k, n = matrix.values.shape
    _, _, _, df_e, mse = _anova(matrix.values, blocked)
    n_pairs = k * (k - 1) / 2
    critical = stats.t.ppf(1.0 - alpha / (2.0 * n_pairs), df_e)
    return pd.DataFrame(
        {
            "run_id": matrix.runs,
            "n_topics": n,
            "mean": matrix.values.mean(axis=1),
            "half_width": critical * np.sqrt(2.0 * mse / n) / 2.0,
        }
    )


def paired_comparison_half_width(
    a: ArrayLike, b: ArrayLike, *, p_adjusted: float, alpha: float = 0.05
) -> float:
    """Half-width of two runs' comparison bars that overlap exactly when a corrected paired t-test keeps the pair.

    With ``d = a - b`` over the topics both have, ``se = sd(d) / sqrt(n)`` and the paired
    t-test's p-value ``p`` (:func:`scipy.stats.ttest_rel`), the family's correction turned
    ``p`` into ``p_adjusted`` (Holm, Bonferroni, ...): the pair is significant exactly when
    ``p < alpha * p / p_adjusted``. Each run's bar is ``mean +- t_{1 - alpha'/2, n-1} * se / 2``
    with ``alpha' = alpha * p / p_adjusted``, so the two bars fail to overlap exactly when
    ``|mean(d)| > t * se``, i.e. when the corrected test rejects (ties at the boundary aside).
    These are intervals for the difference of this pair, split between its two runs, not
    confidence intervals of either run's mean.

    Args:
        a: The first run's per-topic values.
        b: The second run's values on the same topics, in the same order.
        p_adjusted: The pair's adjusted p-value in its family.
        alpha: The family's significance level.

    Returns:
        The half-width (0 when the differences are constant; NaN with fewer than two topics).

    Examples:
        >>> a, b = [0.5, 0.6, 0.7, 0.4], [0.4, 0.5, 0.5, 0.45]
        >>> p = float(stats.ttest_rel(a, b).pvalue)
        >>> h = paired_comparison_half_width(a, b, p_adjusted=min(1.0, 3 * p))
        >>> round(h, 4), bool(abs(np.mean(a) - np.mean(b)) > 2 * h), 3 * p < 0.05
        (0.1252, False, False)
    """
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    n = d.size
    if n < 2:
        return float("nan")
    se = float(np.std(d, ddof=1)) / np.sqrt(n)
    if se == 0.0:
        return 0.0
    p = float(2.0 * stats.t.sf(abs(float(d.mean())) / se, n - 1))
    level = alpha * p / p_adjusted if p > 0.0 and p_adjusted > 0.0 else alpha
    return float(stats.t.isf(min(level, 1.0) / 2.0, n - 1) * se / 2.0)
