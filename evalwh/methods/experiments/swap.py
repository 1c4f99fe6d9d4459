"""Swap error rates over disjoint topic-set pairs (methods §8.2; Voorhees & Buckley 2002, as in S4).

For ``B`` random splits of the topic set into two disjoint halves ``T_A`` and ``T_B`` of
``c = floor(|T| / 2)`` topics, every pair of runs is compared on both halves: ``dA`` and ``dB``
are the differences of the run means. The comparison falls in the bin ``floor(|dA| / 0.01)``,
and is a swap when ``dA * dB < 0`` (a zero difference is never a swap). The error rate of a bin
is swaps / comparisons.

Everything is vectorised: the splits are a samples x topics 0/1 membership matrix, drawn once
from one seeded generator and reused for every run pair and measure; one matrix product gives
the run means of every sample, and broadcasting over the upper triangle of run pairs gives all
differences at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from evalwh.errors import InsufficientDataError
from evalwh.measures.evaluation import evaluate

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.store.connection import Store

BIN_WIDTH = 0.01
THRESHOLD = 0.05
# bound the (samples x pairs) block held in memory at once, about 16 MB per float array
_BLOCK_CELLS = 2_000_000


def topic_splits(
    n_topics: int, samples: int, *, rng: np.random.Generator | int | None
) -> tuple[Any, Any]:
    """Draw ``samples`` pairs of disjoint topic sets of ``floor(n_topics / 2)`` topics each.

    Each sample is a random permutation of the topics: ``T_A`` is its first half, ``T_B`` the
    next ``floor(n_topics / 2)`` topics (one topic is left out when ``n_topics`` is odd).

    Args:
        n_topics: Size of the topic set.
        samples: Number of split pairs ``B``.
        rng: A numpy Generator, a seed, or None for fresh entropy.

    Returns:
        Two boolean arrays of shape (samples, n_topics): membership of ``T_A`` and ``T_B``.

    Examples:
        >>> a, b = topic_splits(5, 3, rng=1)
        >>> a.sum(axis=1).tolist(), b.sum(axis=1).tolist(), bool((a & b).any())
        ([2, 2, 2], [2, 2, 2], False)
    """
    if n_topics < 2:
        raise InsufficientDataError(
            f"swap rates: need at least 2 topics to split, found {n_topics}"
        )
    generator = np.random.default_rng(rng)
    half = n_topics // 2
    order = np.argsort(generator.random((samples, n_topics)), axis=1)
    position = np.empty_like(order)
    np.put_along_axis(position, order, np.arange(n_topics)[None, :], axis=1)
    return position < half, (position >= half) & (position < 2 * half)


def _score_matrices(scores: pd.DataFrame) -> tuple[list[str], list[str], dict[str, Any]]:
    """Pivot long scores into one runs x topics matrix per measure (NaN where undefined)."""
    missing = [c for c in ("run_id", "query_id", "value") if c not in scores.columns]
    if missing:
        raise InsufficientDataError(
            f"swap rates: scores is missing columns {missing}; "
            "expected ['run_id', 'query_id', 'value'] "
            "and optionally 'measure'"
        )
    frame = scores if "measure" in scores.columns else scores.assign(measure="value")
    runs = sorted(frame["run_id"].astype(str).unique())
    topics = sorted(frame["query_id"].astype(str).unique())
    matrices = {}
    for measure, part in frame.groupby("measure", sort=False):
        wide = part.pivot(index="run_id", columns="query_id", values="value")
        matrices[str(measure)] = wide.reindex(index=runs, columns=topics).to_numpy(dtype=float)
    if len(runs) < 2:
        raise InsufficientDataError(
            f"swap rates: need at least 2 runs to compare, found {len(runs)}"
        )
    return runs, topics, matrices


def _bin_counts(matrix: Any, in_a: Any, in_b: Any, bin_width: float) -> tuple[Any, Any]:
    """Comparisons and swaps per bin for one runs x topics matrix under the given splits."""
    defined = ~np.isnan(matrix)
    values = np.where(defined, matrix, 0.0)
    weight_a, weight_b = in_a.astype(float), in_b.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        # run means over the defined topics of each half (undefined values left out, §0.4)
        mean_a = (weight_a @ values.T) / (weight_a @ defined.T)
        mean_b = (weight_b @ values.T) / (weight_b @ defined.T)
    first, second = np.triu_indices(matrix.shape[0], k=1)
    comparisons = np.zeros(1, dtype=np.int64)
    swaps = np.zeros(1, dtype=np.int64)
    block = max(1, _BLOCK_CELLS // max(1, first.size))
    for start in range(0, mean_a.shape[0], block):
        d_a = mean_a[start : start + block, first] - mean_a[start : start + block, second]
        d_b = mean_b[start : start + block, first] - mean_b[start : start + block, second]
        usable = np.isfinite(d_a) & np.isfinite(d_b)
        # Round the quotient, not |dA|: 0.05 and 0.29 must land in bins 5 and 29, yet in
        # floating point 0.3 - 0.25 = 0.04999999999999999 and 0.29 / 0.01 = 28.999999999999996.
        bins = np.floor(np.round(np.abs(d_a[usable]) / bin_width, 8)).astype(np.int64)
        swapped = (d_a[usable] * d_b[usable]) < 0
        counted = np.bincount(bins)
        swapped_counts = np.bincount(bins, weights=swapped).astype(np.int64)
        size = max(comparisons.size, counted.size)
        comparisons = np.pad(comparisons, (0, size - comparisons.size)) + np.pad(
            counted, (0, size - counted.size)
        )
        swaps = np.pad(swaps, (0, size - swaps.size)) + np.pad(
            swapped_counts, (0, size - swapped_counts.size)
        )
    return comparisons, swaps


def swap_rates(
    scores: pd.DataFrame,
    *,
    samples: int = 1000,
    rng: np.random.Generator | int | None = None,
    bin_width: float = BIN_WIDTH,
    splits: tuple[Any, Any] | None = None,
) -> pd.DataFrame:
    """Swap error rates per bin of ``|dA|`` for every pair of runs, per measure.

    Args:
        scores: Per-topic values in long form, ``run_id, query_id, value`` and optionally
            ``measure``. A missing or NaN value is left out of the run means of that half.
        samples: Number of topic-set pairs ``B`` (ignored when ``splits`` is given).
        rng: A numpy Generator, a seed, or None; the splits are drawn once from it and reused
            for every measure and run pair.
        bin_width: Width of the difference bins.
        splits: Explicit ``(in_a, in_b)`` boolean membership arrays of shape
            (samples, topics), topics in sorted ``query_id`` order; drawn when None.

    Returns:
        One row per (measure, populated bin): ``measure, bin, bin_lower, bin_upper,
        comparisons, swaps, error_rate``.

    Raises:
        InsufficientDataError: with fewer than two runs or topics, or missing columns.

    Examples:
        >>> import numpy as np, pandas as pd
        >>> scores = pd.DataFrame({"run_id": ["x"] * 4 + ["y"] * 4, "query_id": list("1234") * 2,
        ...                        "value": [.5, .1, .4, .3, .3, .2, .2, .4]})
        >>> in_a = np.array([[1, 1, 0, 0], [1, 0, 1, 0], [1, 0, 0, 1]], dtype=bool)
        >>> rates = swap_rates(scores, splits=(in_a, ~in_a))
        >>> rates[["bin", "comparisons", "swaps"]].values.tolist()
        [[5, 2, 0], [20, 1, 1]]
    """
    import pandas as pd

    _, topics, matrices = _score_matrices(scores)
    if splits is None:
        splits = topic_splits(len(topics), samples, rng=rng)
    in_a, in_b = (np.asarray(s, dtype=bool) for s in splits)
    if in_a.shape != in_b.shape or in_a.shape[1] != len(topics):
        raise InsufficientDataError(
            f"swap rates: splits have shape {in_a.shape} and {in_b.shape}; "
            f"expected (samples, {len(topics)})"
        )
    frames = []
    for measure, matrix in matrices.items():
        comparisons, swaps = _bin_counts(matrix, in_a, in_b, bin_width)
        populated = np.nonzero(comparisons)[0]
        frames.append(
            pd.DataFrame(
                {
                    "measure": measure,
                    "bin": populated.astype(np.int64),
                    "bin_lower": np.round(populated * bin_width, 10),
                    "bin_upper": np.round((populated + 1) * bin_width, 10),
                    "comparisons": comparisons[populated],
                    "swaps": swaps[populated],
                    "error_rate": swaps[populated] / comparisons[populated],
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def swap_summary(
    rates: pd.DataFrame, scores: pd.DataFrame, *, threshold: float = THRESHOLD
) -> pd.DataFrame:
    """Summarise swap rates per measure: ``d*``, ``d*`` relative to the best run, ``sigma``.

    ``d*`` is the smallest bin lower edge whose error rate is at most ``threshold`` for that
    bin and every larger populated bin (methods §8.2, §9.34). ``sigma`` is the standard
    deviation (n - 1) of the run means over all topics; ``sigma / d*`` is larger when typical
    differences between runs exceed the needed difference more often.

    Args:
        rates: The output of :func:`swap_rates`.
        scores: The per-topic values the rates came from (long form, optional ``measure``).
        threshold: The largest acceptable error rate.

    Returns:
        One row per measure: ``measure, n_runs, n_pairs, d_star, best_mean, d_star_pct,
        sigma, sigma_over_d_star`` (``d_star`` is NaN when no bin qualifies).

    Examples:
        >>> import pandas as pd
        >>> rates = pd.DataFrame({"measure": ["AP"] * 3, "bin": [0, 1, 2], "bin_lower": [0.0, 0.01, 0.02],
        ...                       "comparisons": [10, 10, 10], "error_rate": [0.3, 0.04, 0.05]})
        >>> scores = pd.DataFrame({"measure": "AP", "run_id": ["x", "y"], "query_id": "1", "value": [0.2, 0.4]})
        >>> swap_summary(rates, scores)[["d_star", "best_mean", "d_star_pct"]].round(4).values.tolist()
        [[0.01, 0.4, 2.5]]
    """
    import pandas as pd

    frame = scores if "measure" in scores.columns else scores.assign(measure="value")
    run_means = frame.groupby(["measure", "run_id"], sort=False)["value"].mean()
    rows = []
    for measure, part in rates.groupby("measure", sort=False):
        part = part[part["comparisons"] > 0].sort_values("bin")
        rate = part["error_rate"].to_numpy(dtype=float)
        # the worst error rate at or above each bin: a bin qualifies when it is <= threshold
        worst_above = np.maximum.accumulate(rate[::-1])[::-1]
        qualifying = np.nonzero(worst_above <= threshold)[0]
        d_star = float(part["bin_lower"].iloc[qualifying[0]]) if qualifying.size else float("nan")
        means = run_means.loc[measure].to_numpy(dtype=float)
        best = float(np.nanmax(means))
        sigma = float(np.nanstd(means, ddof=1))
        n_runs = int(np.isfinite(means).sum())
        rows.append(
            {
                "measure": measure,
                "n_runs": n_runs,
                "n_pairs": n_runs * (n_runs - 1) // 2,
                "d_star": d_star,
                "best_mean": best,
                "d_star_pct": 100 * d_star / best if best else float("nan"),
                "sigma": sigma,
                "sigma_over_d_star": sigma / d_star if d_star else float("nan"),
            }
        )
    return pd.DataFrame(rows)


def run_swap_rates(
    wh: Store,
    collection: str,
    measures: list[str],
    *,
    samples: int = 1000,
    seed: int = 1,
    qrels_id: str = "default",
    rel: int = 1,
    cap: int = 1000,
    share: float = 0.95,
    bin_width: float = BIN_WIDTH,
    threshold: float = THRESHOLD,
    experiment_id: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, pd.DataFrame]:
    """Run the swap-rate experiment on a collection and keep its results in the warehouse.

    Runs are excluded first (:func:`evalwh.methods.experiments.exclusion.run_exclusion`); the
    measures are evaluated per topic on the retained runs with the qrels set ``qrels_id``;
    ``samples`` topic-set pairs are drawn once from ``numpy.random.default_rng(seed)``.

    Args:
        wh: The warehouse (opened for writing).
        collection: The collection.
        measures: Measure specs (``MAP``, ``bpref-10``, ``RankEff``, ...).
        samples: Number of topic-set pairs ``B``.
        seed: Seed of the generator the splits are drawn from.
        qrels_id: The qrels set to evaluate against.
        rel: Relevance threshold.
        cap: Documents per topic counted by the exclusion rule.
        share: Share of ``|T| * cap`` a run must retrieve to be retained.
        bin_width: Width of the ``|dA|`` bins.
        threshold: Error rate that ``d*`` must not exceed.
        experiment_id: Name under which results are stored (replacing an earlier run of the
            same name); derived from seed and samples when None.
        progress: Called with (steps done, steps in all).

    Returns:
        ``{"exclusion", "rates", "summary"}``: tidy frames, also stored in the
        ``experiment_runs``, ``swap_rates`` and ``swap_summary`` tables.
    """
    from evalwh.methods.experiments._store import replace_experiment
    from evalwh.methods.experiments.exclusion import retained_runs, run_exclusion

    experiment_id = experiment_id or f"swap-rates-seed{seed}-b{samples}"
    total = len(measures) + 2
    if progress:
        progress(0, total)
    exclusion = run_exclusion(wh, collection, qrels_id=qrels_id, rel=rel, cap=cap, share=share)
    runs = retained_runs(exclusion)
    if len(runs) < 2:
        raise InsufficientDataError(
            f"swap rates on {collection!r}: {len(runs)} run(s) pass the exclusion rule; "
            f"need at least 2 (runs shorter than {cap} documents per topic need a lower --cap; "
            "see evalwh experiment exclusions)"
        )
    scores = evaluate(wh, 
        measures, collection=collection, runs=runs, per_query=True, qrels_id=qrels_id, rel=rel,
        typed_names=True,
    )
    scores = scores[["measure", "run_id", "query_id", "value"]]
    if progress:
        progress(1, total)
    topics = sorted(scores["query_id"].unique())
    splits = topic_splits(len(topics), samples, rng=seed)
    parts = []
    for done, measure in enumerate(scores["measure"].unique(), start=2):
        parts.append(
            swap_rates(scores[scores["measure"] == measure], splits=splits, bin_width=bin_width)
        )
        if progress:
            progress(done, total)
    import pandas as pd

    rates = pd.concat(parts, ignore_index=True)
    summary = swap_summary(rates, scores, threshold=threshold)
    summary.insert(3, "samples", samples)
    summary.insert(4, "topics_per_set", len(topics) // 2)
    params = {
        "measures": list(measures),
        "samples": samples,
        "seed": seed,
        "rel": rel,
        "cap": cap,
        "share": share,
        "bin_width": bin_width,
        "threshold": threshold,
    }
    replace_experiment(
        wh,
        collection,
        experiment_id,
        kind="swap-rates",
        qrels_id=qrels_id,
        params=params,
        frames={"experiment_runs": exclusion, "swap_rates": rates, "swap_summary": summary},
    )
    if progress:
        progress(total, total)
    return {"exclusion": exclusion, "rates": rates, "summary": summary}
