"""How two rankings of the same systems differ (methods §11.4-§11.6).

The input is two score vectors over the same items (runs): the reference's scores and the
scores under another label set; higher scores rank first. Every function is vectorised over
the items; :func:`tau_b_replicates` and :func:`bootstrap_tau` are vectorised over the resamples too.

* :func:`kendall_tau_b`: Kendall's tau_b (:func:`scipy.stats.kendalltau`), symmetric.
* :func:`tau_ap`: Yilmaz, Aslam and Robertson's AP correlation (SIGIR 2008): top-weighted and
  asymmetric (the reference is the truth, the other ranking is walked from the top); with ties
  in the other ranking it is Urbano and Marrero's tau_AP_a (ICTIR 2017), the expectation over
  the orders of each tie group, which equals tau_ap without ties (a pair tied in both
  rankings agrees).
* :func:`rbo`: Webber, Moffat and Zobel's rank-biased overlap (TOIS 2010), the extrapolated
  RBO_ext of two lists of the same length, persistence ``p``; tied scores are ordered by the
  items' names, the same on both sides.
* :func:`ranks`, :func:`top_k_overlap`: competition ranks and the overlap of the two top-k.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from evalwh.errors import InsufficientDataError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

# bootstrap replicates per chunk: keeps the (chunk, run pairs) difference arrays near 32 MB
_CHUNK_CELLS = 4_000_000


def _pair(reference: ArrayLike, other: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    x = np.asarray(reference, dtype=np.float64)
    y = np.asarray(other, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise InsufficientDataError(f"rankings: two aligned 1-d score vectors needed; got {x.shape} and {y.shape}")
    if len(x) < 2:
        raise InsufficientDataError(f"rankings: {len(x)} item(s); comparing rankings needs at least two")
    if np.isnan(x).any() or np.isnan(y).any():
        raise InsufficientDataError("rankings: a score is missing (NaN); every item needs a score on both sides")
    return x, y


def kendall_tau_b(reference: ArrayLike, other: ArrayLike) -> float:
    """Kendall's tau_b of two score vectors (:func:`scipy.stats.kendalltau`); NaN if one side is all ties.

    Examples:
        >>> kendall_tau_b([0.4, 0.3, 0.2, 0.1], [0.3, 0.4, 0.2, 0.1])
        0.6666666666666669
    """
    from scipy import stats

    x, y = _pair(reference, other)
    return float(stats.kendalltau(x, y).statistic)


def _harmonic(n: int) -> NDArray[np.float64]:
    """H[m] = 1 + 1/2 + ... + 1/m for m = 0..n (H[0] = 0)."""
    return np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, n + 1))])


def tau_ap(reference: ArrayLike, other: ArrayLike) -> float:
    """AP correlation of ``other``'s ranking against the ``reference`` ranking (Yilmaz et al. 2008).

    Walk ``other``'s ranking from the top: for the item at position i (i >= 2), the share of
    the i - 1 items above it that the reference also ranks above it; tau_ap is twice the
    mean of these shares minus one. A pair tied in the reference is not concordant. Ties in
    ``other`` follow Urbano and Marrero's tau_AP_a: the expected value over every order of
    each tie group; a pair tied in both rankings counts as agreeing (their tau_AP_a assumes
    a reference without ties), so any ranking has tau_ap 1 against itself.

    Examples:
        >>> tau_ap([4, 3, 2, 1], [4, 3, 2, 1]), tau_ap([4, 3, 2, 1], [1, 2, 3, 4])
        (1.0, -1.0)
        >>> round(tau_ap([4, 3, 2, 1], [3, 4, 2, 1]), 4), round(tau_ap([4, 3, 2, 1], [4, 3, 1, 2]), 4)
        (0.3333, 0.7778)
    """
    x, y = _pair(reference, other)
    n = len(x)
    harmonic = _harmonic(n)
    # p: the first position of each item's tie group in other's ranking (1 = top), t: its size
    p = (y[None, :] > y[:, None]).sum(axis=1) + 1
    t = (y[None, :] == y[:, None]).sum(axis=1)
    # concordant items above the item's tie group: ranked above it by other and by the reference
    above = ((y[None, :] > y[:, None]) & (x[None, :] > x[:, None])).sum(axis=1)
    # mean of 1/(position - 1) over the positions p..p+t-1 the item may take in its tie group
    top = p == 1
    weight = np.where(top, 0.0, (harmonic[p + t - 2] - harmonic[np.maximum(p - 2, 0)]) / t)
    # concordant pairs within the tie group, in expectation over its orders: a pair the
    # reference orders agrees in half of them; a pair the reference ties too agrees always
    # (evalwh's choice, so that a ranking with ties has tau_ap 1 against itself)
    same_y = y[None, :] == y[:, None]
    both = (same_y & (x[None, :] == x[:, None])).sum(axis=1) - 1
    pairs = t * (t - 1)
    tied = np.divide(same_y @ both, pairs, out=np.zeros(n), where=pairs > 0)
    within = ((t - 1) - (p - 1) * (harmonic[p + t - 2] - harmonic[p - 1])) / (2.0 * t) * (1.0 + tied)
    return float(2.0 / (n - 1) * (np.sum(above * weight) + np.sum(within)) - 1.0)


def order(scores: ArrayLike, names: ArrayLike | None = None) -> NDArray[np.int64]:
    """Item indices from the best score to the worst; equal scores in name order (else index order)."""
    s = np.asarray(scores, dtype=np.float64)
    keys = np.arange(len(s)) if names is None else np.asarray(names)
    return np.lexsort((keys, -s)).astype(np.int64)


def rbo(reference: ArrayLike, other: ArrayLike, *, p: float = 0.9, names: ArrayLike | None = None) -> float:
    """Extrapolated rank-biased overlap RBO_ext of two rankings of the same k items (Webber et al. 2010).

    ``RBO_ext = X_k / k * p^k + (1 - p) / p * sum_{d=1..k} X_d / d * p^d`` with ``X_d`` the
    number of items in both top-d lists. Equal scores are ordered by ``names`` (index order
    without), the same on both sides. Symmetric; 1 for identical orders.

    Examples:
        >>> rbo([3, 2, 1], [2, 3, 1], p=0.5)
        0.5
    """
    if not 0.0 < p < 1.0:
        raise InsufficientDataError(f"rbo: persistence p={p} must lie strictly between 0 and 1")
    x, y = _pair(reference, other)
    k = len(x)
    pos_x = np.empty(k, dtype=np.int64)
    pos_y = np.empty(k, dtype=np.int64)
    pos_x[order(x, names)] = np.arange(1, k + 1)
    pos_y[order(y, names)] = np.arange(1, k + 1)
    # an item is in both top-d lists from depth max(its two positions) on
    overlap = np.cumsum(np.bincount(np.maximum(pos_x, pos_y), minlength=k + 1)[1:])
    depth = np.arange(1, k + 1, dtype=np.float64)
    powers = p**depth
    return float(overlap[-1] / k * p**k + (1.0 - p) / p * np.sum(overlap / depth * powers))


def ranks(scores: ArrayLike) -> NDArray[np.int64]:
    """Competition ranks, 1 for the best score; equal scores share the best of their ranks."""
    s = np.asarray(scores, dtype=np.float64)
    return ((s[None, :] > s[:, None]).sum(axis=1) + 1).astype(np.int64)


def top_k_overlap(reference: ArrayLike, other: ArrayLike, k: int, *, names: ArrayLike | None = None) -> float:
    """The share of the reference's top ``k`` that is in the other's top ``k`` (ties by name).

    Examples:
        >>> top_k_overlap([4, 3, 2, 1], [4, 1, 3, 2], 2)
        0.5
    """
    x, y = _pair(reference, other)
    k = min(k, len(x))
    if k < 1:
        raise InsufficientDataError(f"top-k overlap: k={k} must be at least 1")
    return len(np.intersect1d(order(x, names)[:k], order(y, names)[:k])) / k


def _tau_b_rows(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """tau_b of each row pair of ``a`` and ``b`` (shape ``(B, n)``): concordance over all pairs.

    With s the signs of the differences over the pairs i < j, tau_b = sum(s_a s_b) /
    sqrt(#(s_a != 0) #(s_b != 0)): the counts of nonzero signs are the pairs not tied on each
    side, tau_b's denominator.
    """
    i, j = np.triu_indices(a.shape[1], k=1)
    sa = a[:, i]
    sa -= a[:, j]
    np.sign(sa, out=sa)
    sb = b[:, i]
    sb -= b[:, j]
    np.sign(sb, out=sb)
    num = np.einsum("bp,bp->b", sa, sb)
    den = np.sqrt(np.count_nonzero(sa, axis=1).astype(np.float64) * np.count_nonzero(sb, axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / den, np.nan)


def tau_b_replicates(
    reference: ArrayLike,
    other: ArrayLike,
    *,
    reference_topics: ArrayLike | None = None,
    other_topics: ArrayLike | None = None,
    resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
) -> tuple[float, NDArray[np.float64]]:
    """Kendall's tau_b between two rankings of runs, and its bootstrap replicates over topics.

    Each replicate draws the topics with replacement (one ``(resamples, topics)`` index
    matrix, ``rng.integers(0, topics, (resamples, topics))``), takes each run's mean over the
    drawn topics under both label sets by one matrix product per side (rounded to 12
    decimals, so that equal means tie whatever the order of summation), and computes tau_b
    between the two mean vectors.

    Args:
        reference: Per-topic scores under the reference, shape ``(runs, topics)``.
        other: Per-topic scores under the other set, the same shape and order.
        reference_topics: Which topics the reference scores (bool per topic; None: all);
            a mean is over the (drawn) topics the set scores.
        other_topics: The same for the other set.
        resamples: Number of replicates.
        rng: Seed or generator of the resampling.

    Returns:
        ``(estimate, replicates)``: tau_b on all topics, and one tau_b per replicate (NaN where
        a side is all ties or scores none of the drawn topics).

    Examples:
        >>> a = [[0.5, 0.6, 0.7], [0.3, 0.2, 0.4], [0.1, 0.2, 0.1]]
        >>> estimate, replicates = tau_b_replicates(a, a, resamples=4, rng=1)
        >>> estimate, replicates.tolist()
        (1.0, [1.0, 1.0, 1.0, 1.0])
    """
    x = np.asarray(reference, dtype=np.float64)
    y = np.asarray(other, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 2:
        raise InsufficientDataError(f"bootstrap: two (runs, topics) matrices of one shape needed; got {x.shape}, {y.shape}")
    if resamples < 1:
        raise InsufficientDataError(f"bootstrap: resamples={resamples} must be at least 1")
    runs, topics = x.shape
    mask_x = np.ones(topics, dtype=bool) if reference_topics is None else np.asarray(reference_topics, dtype=bool)
    mask_y = np.ones(topics, dtype=bool) if other_topics is None else np.asarray(other_topics, dtype=bool)
    x = np.where(mask_x[None, :], np.nan_to_num(x), 0.0)
    y = np.where(mask_y[None, :], np.nan_to_num(y), 0.0)
    generator = np.random.default_rng(rng)
    drawn = generator.integers(0, topics, size=(resamples, topics))
    # how often each topic was drawn in each replicate, and once each for the estimate: (1 + B, topics)
    counts = np.zeros((resamples + 1, topics))
    counts[0] = 1.0
    np.add.at(counts, (np.repeat(np.arange(1, resamples + 1), topics), drawn.ravel()), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        means_x = (counts @ x.T) / (counts @ mask_x.astype(np.float64))[:, None]
        means_y = (counts @ y.T) / (counts @ mask_y.astype(np.float64))[:, None]
    # two runs with the same values on the drawn topics tie; summing in another order must not
    # split them by a rounding error, so the means are compared at 12 decimals
    means_x, means_y = np.round(means_x, 12), np.round(means_y, 12)
    chunk = max(1, _CHUNK_CELLS // max(runs * (runs - 1) // 2, 1))
    taus = np.concatenate(
        [_tau_b_rows(means_x[i : i + chunk], means_y[i : i + chunk]) for i in range(0, resamples + 1, chunk)]
    )
    return float(taus[0]), taus[1:]


def bootstrap_tau(
    reference: ArrayLike,
    other: ArrayLike,
    *,
    reference_topics: ArrayLike | None = None,
    other_topics: ArrayLike | None = None,
    resamples: int = 1000,
    confidence: float = 0.95,
    rng: np.random.Generator | int | None = None,
    estimate: float | None = None,
) -> tuple[float, float]:
    """Bootstrap interval over topics for Kendall's tau_b between two rankings (methods §11.4).

    The union of two normal intervals with the replicates' standard error ``sd`` (of the
    :func:`tau_b_replicates`, ``z`` the normal quantile of ``(1 + confidence) / 2``): one
    centred on the estimate, ``tau_b +- z * sd``, and one centred on the bias-corrected
    estimate ``2 tau_b - mean(replicates)``; cut to [-1, 1]. The replicates' tau_b is biased
    low (a replicate repeats some topics and leaves others out, so its means are noisier and
    its rankings agree less), and so is tau_b on a sample of topics against the population's:
    the bias-corrected side reaches up by the bootstrap's estimate of that bias, and the union
    still contains the printed estimate. In simulation (``bench/tau_coverage.py``, methods
    §11.4) it held the population's tau_b in 86-99% of collections where the interval centred
    on the estimate alone held it in 79-99%.

    Args:
        reference: Per-topic scores under the reference, shape ``(runs, topics)``.
        other: Per-topic scores under the other set, the same shape and order.
        reference_topics: Which topics the reference scores (bool per topic; None: all).
        other_topics: The same for the other set.
        resamples: Number of replicates.
        confidence: Coverage of the interval.
        rng: Seed or generator of the resampling.
        estimate: The centre, tau_b of the runs' means as printed beside the interval; None:
            tau_b of the means over all topics computed here.

    Returns:
        ``(low, high)``; NaN when tau_b is undefined (a side all ties) or fewer than two
        replicates have a tau_b (those where a side is all ties are left out).

    Examples:
        >>> a = [[0.5, 0.6, 0.7], [0.3, 0.2, 0.4], [0.1, 0.2, 0.1]]
        >>> bootstrap_tau(a, a, resamples=50, rng=1)
        (1.0, 1.0)
    """
    from statistics import NormalDist  # the quantile without importing scipy.stats (about a second)

    if not 0.0 < confidence < 1.0:
        raise InsufficientDataError(f"bootstrap: confidence={confidence} must lie strictly between 0 and 1")
    own, taus = tau_b_replicates(
        reference, other, reference_topics=reference_topics, other_topics=other_topics, resamples=resamples, rng=rng
    )
    estimate = own if estimate is None else float(estimate)
    taus = taus[np.isfinite(taus)]
    if not np.isfinite(estimate) or len(taus) < 2:
        return float("nan"), float("nan")
    half = NormalDist().inv_cdf((1.0 + confidence) / 2.0) * float(np.std(taus, ddof=1))
    corrected = 2.0 * estimate - float(np.mean(taus))  # the estimate less the bootstrap's bias
    return max(-1.0, min(estimate, corrected) - half), min(1.0, max(estimate, corrected) + half)
