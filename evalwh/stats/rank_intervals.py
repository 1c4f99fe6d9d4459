"""Where each run could rank, and which runs the topics cannot tell apart (methods §13).

The input is a runs x topics matrix of one measure (higher is better), or a DataFrame of
per-topic scores (``run_id, query_id, measure, value``) from the warehouse or any other tool.

* :func:`competition_ranks`: rank 1 for the highest mean, tied means share the best rank
  ("1224" ranking), vectorised over the rows of a matrix.
* :func:`bootstrap_ranks`: the bootstrap over topics: per replicate, ``n`` topics drawn with
  replacement (the same topics for every run, as the runs are paired on topics), each run's
  mean over them, and its competition rank among the runs (Efron and Tibshirani 1993, ch. 13;
  the rank intervals of Hall and Miller, "Using the bootstrap to quantify the authority of an
  empirical ranking", Annals of Statistics 2009).
* :func:`rank_intervals`: each run's observed rank and the percentile interval of its
  bootstrap ranks (95% by default, :data:`DEFAULT_REPLICATES` replicates, seed
  :data:`DEFAULT_SEED`).
* :func:`tiers`: tier 1 is the best run and every run the family's test cannot distinguish
  from it; tier 2 the same among the rest, and so on.
* :func:`distinguishable`: the runs x runs matrix of rejected null hypotheses from a
  comparison of all pairs (:func:`evalwh.stats.compare.compare`).
* :func:`rank_frame`: all of it for one measure's matrix, one row per run; on a DataFrame of
  per-topic scores, :func:`evalwh.stats.compare.rank_table` (and ``compare(..., ranks=True)``).

The interval is a statement about this collection's topics as a sample: where the run's rank
would fall on another topic set drawn like this one, the other runs held fixed. It does not
cover a rank on other runs, other judgments or another population of topics, and the
percentile interval of a rank is known to be too narrow for runs whose true means are close
(Hall and Miller 2009): a bench simulation (``bench/rank_intervals.py``) measures its coverage.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from evalwh.errors import InsufficientDataError

if TYPE_CHECKING:
    import pandas as pd
    from numpy.typing import ArrayLike, NDArray


# the bootstrap's defaults: the same seed, the same intervals, at every call
DEFAULT_SEED = 0
DEFAULT_REPLICATES = 2000
DEFAULT_CONFIDENCE = 0.95

# means are rounded before ranking, so that runs equal up to floating-point error tie
_DECIMALS = 12
# replicates per chunk of the means: keeps the (runs, chunk, topics) gather near 32 MB
_CHUNK_CELLS = 4_000_000

TABLE_COLUMNS = ["measure", "run_id", "n_topics", "mean", "rank", "rank_low", "rank_high", "tier"]


def competition_ranks(means: ArrayLike) -> NDArray[np.int64]:
    """Competition ranks of the last axis: 1 for the highest value, ties share the best rank.

    Examples:
        >>> competition_ranks([0.2, 0.5, 0.2, 0.1]).tolist()
        [2, 1, 2, 4]
        >>> competition_ranks([[1.0, 2.0, 3.0], [3.0, 3.0, 1.0]]).tolist()
        [[3, 2, 1], [1, 1, 3]]
    """
    x = np.round(np.asarray(means, dtype=np.float64), _DECIMALS)
    if x.ndim == 0:
        raise InsufficientDataError("rank intervals: ranks need a vector of means")
    if np.isnan(x).any():
        raise InsufficientDataError("rank intervals: a mean is missing (NaN); every run needs a score per topic")
    from scipy.stats import rankdata

    return rankdata(-x, method="min", axis=-1).astype(np.int64)  # type: ignore[no-any-return]


def _matrix_checked(values: ArrayLike) -> NDArray[np.float64]:
    matrix = np.asarray(values, dtype=np.float64)
    if matrix.ndim != 2:
        raise InsufficientDataError(f"rank intervals: a runs x topics matrix needed; got shape {matrix.shape}")
    k, n = matrix.shape
    if k < 2 or n < 2:
        raise InsufficientDataError(f"rank intervals need at least 2 runs and 2 topics, got {k} x {n}")
    if np.isnan(matrix).any():
        raise InsufficientDataError("rank intervals: a score is missing (NaN); every run needs a score per topic")
    return matrix


def bootstrap_ranks(
    values: ArrayLike, *, replicates: int = DEFAULT_REPLICATES, seed: int | np.random.Generator | None = DEFAULT_SEED
) -> NDArray[np.int64]:
    """The runs' competition ranks on ``replicates`` topic sets drawn with replacement: replicates x runs.

    The topic indices of all replicates are one draw, ``rng.integers(0, n, (replicates, n))``
    with ``rng = numpy.random.default_rng(seed)``: :func:`scipy.stats.bootstrap` draws the same
    indices from the same generator, so its ``bootstrap_distribution`` of a run's rank equals
    this function's column (tests/test_rank_intervals.py).

    Examples:
        >>> v = np.array([[0.9, 0.8, 0.7, 0.9], [0.1, 0.2, 0.1, 0.3], [0.5, 0.4, 0.6, 0.5]])
        >>> r = bootstrap_ranks(v, replicates=200)
        >>> r.shape, sorted(set(r[:, 0].tolist())), sorted(set(r[:, 1].tolist()))
        ((200, 3), [1], [3])
    """
    matrix = _matrix_checked(values)
    if replicates < 1:
        raise InsufficientDataError(f"rank intervals: replicates must be at least 1, got {replicates}")
    k, n = matrix.shape
    generator = np.random.default_rng(seed)
    drawn = generator.integers(0, n, (replicates, n))
    ranks = np.empty((replicates, k), dtype=np.int64)
    # each run's mean is a sum over its own row, in the same order whatever the row's position:
    # runs with the same scores get bit-identical means (a matrix product need not give them)
    chunk = max(1, _CHUNK_CELLS // (k * n))
    for start in range(0, replicates, chunk):
        rows = drawn[start : start + chunk]
        ranks[start : start + len(rows)] = competition_ranks(matrix[:, rows].sum(axis=2).T / n)
    return ranks


@dataclass(frozen=True)
class RankIntervals:
    """Each run's observed rank and the percentile interval of its bootstrap ranks.

    Attributes:
        rank: Competition rank of the run's mean over all topics (1 is the best).
        low, high: The ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` empirical
            quantiles of the run's ``B`` bootstrap ranks: the ``ceil(B q)``-th smallest, a rank
            the bootstrap produced (with 2,000 replicates at 95%, the 50th and the 1,950th).
        replicates, seed, confidence: As drawn.
    """

    rank: NDArray[np.int64]
    low: NDArray[np.int64]
    high: NDArray[np.int64]
    replicates: int
    seed: int | None
    confidence: float


def rank_intervals(
    values: ArrayLike,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    replicates: int = DEFAULT_REPLICATES,
    seed: int | None = DEFAULT_SEED,
) -> RankIntervals:
    """Observed ranks and bootstrap percentile intervals of the runs (rows) of a runs x topics matrix.

    Examples:
        >>> v = np.array([[0.9, 0.8, 0.7, 0.9, 0.6], [0.5, 0.4, 0.9, 0.2, 0.3], [0.5, 0.6, 0.4, 0.3, 0.4]])
        >>> out = rank_intervals(v)
        >>> out.rank.tolist(), out.low.tolist(), out.high.tolist()
        ([1, 2, 3], [1, 2, 2], [1, 3, 3])
    """
    if not 0.0 < confidence < 1.0:
        raise InsufficientDataError(f"rank intervals: confidence must lie in (0, 1), got {confidence}")
    matrix = _matrix_checked(values)
    ranks = bootstrap_ranks(matrix, replicates=replicates, seed=seed)
    low, high = percentile_ranks(ranks, confidence)
    return RankIntervals(competition_ranks(matrix.mean(axis=1)), low, high, replicates, seed, confidence)


def percentile_ranks(
    ranks: NDArray[np.int64], confidence: float = DEFAULT_CONFIDENCE
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The ``(1 - c) / 2`` and ``(1 + c) / 2`` empirical quantiles of each column of replicate ranks.

    The ``ceil(B q)``-th smallest of the ``B`` rows, a rank the bootstrap produced.

    Examples:
        >>> r = np.array([[1, 2], [2, 1], [1, 2], [3, 1]])
        >>> [x.tolist() for x in percentile_ranks(r, 0.5)]
        [[1, 1], [2, 2]]
    """
    replicates = ranks.shape[0]
    # the j-th smallest rank, j = ceil(B q), for q = (1 -+ c) / 2; B q is rounded first:
    # (1 - 0.95) / 2 is 0.025000000000000022 in floating point, 2,000 times it a hair above 50,
    # and numpy's "inverted_cdf" then takes the 51st smallest instead of the 50th
    ordered = np.sort(ranks, axis=0)
    tail = (1.0 - confidence) / 2.0
    j_low = max(int(np.ceil(round(replicates * tail, 9))), 1)
    j_high = max(int(np.ceil(round(replicates * (1.0 - tail), 9))), 1)
    return ordered[j_low - 1], ordered[j_high - 1]


def tiers(means: ArrayLike, distinct: ArrayLike) -> NDArray[np.int64]:
    """Tiers of runs: the best run and the runs not distinguishable from it, then the same among the rest.

    ``distinct[i, j]`` is True when the family's test rejects "run i equals run j" (symmetric).
    Tier 1 holds the run with the highest mean and every run not distinct from it; those runs
    leave, and tier 2 is formed the same way from the best of the rest, and so on. A tier is
    therefore not always a contiguous block of the ranking: a run may be indistinguishable from
    a tier's leader while a run above it is not. Of tied means, the first run leads.

    Examples:
        >>> d = np.array([[0, 0, 1, 1], [0, 0, 0, 1], [1, 0, 0, 1], [1, 1, 1, 0]], dtype=bool)
        >>> tiers([0.5, 0.4, 0.3, 0.1], d).tolist()
        [1, 1, 2, 3]
    """
    m = np.asarray(means, dtype=np.float64)
    d = np.asarray(distinct, dtype=bool)
    k = m.shape[0]
    if m.ndim != 1 or d.shape != (k, k):
        raise InsufficientDataError(f"tiers: {k} means need a {k} x {k} matrix, got {d.shape}")
    if np.isnan(m).any():
        raise InsufficientDataError("tiers: a mean is missing (NaN)")
    if not (d == d.T).all():
        raise InsufficientDataError("tiers: the matrix of distinguishable pairs must be symmetric")
    out = np.zeros(k, dtype=np.int64)
    order = np.argsort(-np.round(m, _DECIMALS), kind="stable")
    tier = 0
    for leader in order:
        if out[leader]:
            continue
        tier += 1
        members = (out == 0) & ~d[leader]
        members[leader] = True
        out[members] = tier
    return out


def distinguishable(pairs: pd.DataFrame, runs: Sequence[str], measure: str | None = None) -> NDArray[np.bool_]:
    """The runs x runs matrix of rejected pairs of one measure of a comparison of all pairs.

    ``pairs`` is :attr:`evalwh.stats.compare.Comparison.pairs` (``measure, run_a, run_b,
    reject``); every pair of ``runs`` must be in it (a comparison against baselines is not enough).

    Examples:
        >>> import pandas as pd
        >>> p = pd.DataFrame({"run_a": ["x", "x", "y"], "run_b": ["y", "z", "z"], "reject": [False, True, False]})
        >>> distinguishable(p, ["x", "y", "z"]).astype(int).tolist()
        [[0, 0, 1], [0, 0, 0], [1, 0, 0]]
    """
    frame = pairs if measure is None else pairs[pairs["measure"] == measure]
    index = {str(r): i for i, r in enumerate(runs)}
    k = len(index)
    out = np.zeros((k, k), dtype=bool)
    seen = np.eye(k, dtype=bool)
    a = frame["run_a"].astype(str).map(index)
    b = frame["run_b"].astype(str).map(index)
    keep = a.notna() & b.notna()
    ai, bi = a[keep].to_numpy(dtype=np.intp), b[keep].to_numpy(dtype=np.intp)
    rejected = frame.loc[keep, "reject"].to_numpy(dtype=bool)
    out[ai, bi] = out[bi, ai] = rejected
    seen[ai, bi] = seen[bi, ai] = True
    if not seen.all():
        i, j = np.argwhere(~seen)[0]
        raise InsufficientDataError(
            f"tiers need every pair of runs compared; the pair {list(index)[i]!r}, {list(index)[j]!r} is missing "
            "(compare all pairs, not against a baseline)"
        )
    return out


def rank_frame(
    values: ArrayLike,
    runs: Sequence[str],
    distinct: ArrayLike,
    *,
    measure: str = "value",
    confidence: float = DEFAULT_CONFIDENCE,
    replicates: int = DEFAULT_REPLICATES,
    seed: int | None = DEFAULT_SEED,
) -> pd.DataFrame:
    """One measure's rows of a rank table: ``measure, run_id, n_topics, mean, rank, rank_low, rank_high, tier``.

    ``values`` is the runs x topics matrix (rows in the order of ``runs``), ``distinct`` the
    runs x runs matrix of :func:`distinguishable`. Rows are sorted best rank first.

    Examples:
        >>> v = np.array([[0.9, 0.8, 0.7, 0.9, 0.6], [0.5, 0.4, 0.9, 0.2, 0.3], [0.5, 0.6, 0.4, 0.3, 0.4]])
        >>> d = np.array([[0, 0, 1], [0, 0, 0], [1, 0, 0]], dtype=bool)
        >>> rank_frame(v, ["a", "b", "c"], d)[["run_id", "rank", "rank_low", "rank_high", "tier"]].values.tolist()
        [['a', 1, 1, 1, 1], ['b', 2, 2, 3, 1], ['c', 3, 2, 3, 2]]
    """
    import pandas as pd

    matrix = _matrix_checked(values)
    if len(runs) != matrix.shape[0]:
        raise InsufficientDataError(f"rank intervals: {len(runs)} run names for {matrix.shape[0]} rows")
    found = rank_intervals(matrix, confidence=confidence, replicates=replicates, seed=seed)
    means = matrix.mean(axis=1)
    table = pd.DataFrame(
        {
            "measure": measure,
            "run_id": [str(r) for r in runs],
            "n_topics": matrix.shape[1],
            "mean": means,
            "rank": found.rank,
            "rank_low": found.low,
            "rank_high": found.high,
            "tier": tiers(means, distinct),
        }
    )
    return table.sort_values(["rank", "tier", "run_id"], kind="stable", ignore_index=True)[TABLE_COLUMNS]


_TESTS = {
    "t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank test", "sign": "sign test",
    "randomization": "paired randomisation test", "bootstrap": "paired bootstrap test",
    "tukey": "Tukey's HSD", "randomized_tukey": "randomised Tukey HSD", "anova": "one-way ANOVA then t",
    "anova2": "two-way ANOVA then t",
}  # fmt: skip
_CORRECTIONS = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg", "by": "Benjamini-Yekutieli"}


def rank_note(attrs: dict[str, object]) -> str:
    """One sentence saying how the rank intervals and tiers of a rank table were made (its ``attrs``).

    Examples:
        >>> rank_note({"confidence": 0.95, "replicates": 2000, "seed": 0, "test": "t", "correction": "holm",
        ...            "alpha": 0.05})
        "rank interval: the 95% percentile interval of the run's rank over 2,000 bootstrap samples of the topics (seed 0); tier: the runs the paired t-test (Holm over all pairs, alpha 0.05) cannot tell from the tier's best run, then the same among the rest"
    """
    test = _TESTS.get(str(attrs["test"]), str(attrs["test"]))
    correction = str(attrs["correction"])
    over = "no correction" if correction == "none" else f"{_CORRECTIONS.get(correction, correction)} over all pairs"
    level = float(str(attrs["confidence"]))
    replicates = int(str(attrs["replicates"]))
    alpha = float(str(attrs["alpha"]))
    return (
        f"rank interval: the {level:.0%} percentile interval of the run's rank over {replicates:,} "
        f"bootstrap samples of the topics (seed {attrs['seed']}); tier: the runs the {test} ({over}, "
        f"alpha {alpha:g}) cannot tell from the tier's best run, then the same among the rest"
    )
