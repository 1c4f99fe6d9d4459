"""Reduced qrels at level a% and the measures on them (methods §8.4, §8.5; S4 §4).

For each topic, the relevant and the judged non-relevant documents are two strata. Each
stratum gets one seeded random permutation; level ``a`` keeps its first ``k`` documents, with

    k_rel = min(R, max(1,  round_half_up(a/100 * R)))
    k_non = min(N, max(10, round_half_up(a/100 * N)))

so the samples are nested (a lower level is a subset of a higher one) and every topic keeps a
relevant document. Each level is stored as a derived qrels set (``reduced-a10-seed1``) in the
qrels table, so every metric can be evaluated against it with ``qrels_id``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from evalwh import sql
from evalwh.errors import EvalWhError, NotFoundError
from evalwh.measures.evaluation import evaluate

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.store.connection import Store

_QUERIES = "evalwh.queries.experiments"
DEFAULT_LEVELS: tuple[int, ...] = (*range(100, 9, -5), *range(9, 0, -1))
TAU_THRESHOLD = 0.9
MIN_RELEVANT = 1
MIN_NONRELEVANT = 10


def _stratum_size(size: Any, level: Any, minimum: Any) -> Any:
    """``min(size, max(minimum, round_half_up(level/100 * size)))`` in exact integer arithmetic."""
    # floor(a*n/100 + 1/2) == (a*n + 50) // 100 for integers; no float rounding at .5
    share = (np.asarray(level, dtype=np.int64) * np.asarray(size, dtype=np.int64) + 50) // 100
    return np.minimum(size, np.maximum(minimum, share))


def sample_sizes(num_rel: Any, num_nonrel: Any, level: Any) -> tuple[Any, Any]:
    """The numbers of relevant and non-relevant documents kept at ``level`` percent.

    Args:
        num_rel: R per topic (scalar or array).
        num_nonrel: N per topic (scalar or array).
        level: The level a, an integer percentage (scalar or array).

    Returns:
        ``(k_rel, k_non)`` as numpy integers or arrays.

    Examples:
        >>> [int(k) for k in sample_sizes(10, 8, 25)]
        [3, 8]
        >>> [int(k) for k in sample_sizes(40, 200, 3)]
        [1, 10]
    """
    return (
        _stratum_size(num_rel, level, MIN_RELEVANT),
        _stratum_size(num_nonrel, level, MIN_NONRELEVANT),
    )


def _check_levels(levels: Sequence[int]) -> list[int]:
    checked = []
    for level in levels:
        if isinstance(level, bool) or int(level) != level or not 1 <= int(level) <= 100:
            raise EvalWhError(
                f"reduced qrels: level {level!r} must be an integer percentage from 1 to 100"
            )
        checked.append(int(level))
    if not checked:
        raise EvalWhError(
            "reduced qrels: no levels given; give integer percentages such as 100, 50, 10"
        )
    return sorted(set(checked), reverse=True)


def reduced_sample(
    judgments: pd.DataFrame,
    *,
    levels: Sequence[int] = DEFAULT_LEVELS,
    rel: int = 1,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Draw nested stratified samples of a qrels set at every level.

    One random permutation is drawn per (topic, stratum) from ``rng``, in the order topic,
    stratum, doc_id, so a seed gives the same sample whatever the row order of the input.
    Level ``a`` keeps the first ``k_rel`` (``k_non``) documents of the permutation. Rows with
    a negative grade are unjudged and dropped.

    Args:
        judgments: ``query_id, doc_id, relevance`` (other columns pass through).
        levels: Integer percentages from 1 to 100.
        rel: Relevance threshold: grade >= rel is the relevant stratum.
        rng: A numpy Generator, a seed, or None.

    Returns:
        The kept judgments with a ``level`` column, one row per (level, topic, document),
        levels descending.

    Examples:
        >>> import pandas as pd
        >>> qrels = pd.DataFrame({"query_id": "1", "doc_id": [f"d{i:02}" for i in range(24)],
        ...                       "relevance": [1] * 4 + [0] * 20})
        >>> sample = reduced_sample(qrels, levels=[100, 50, 10], rng=7)
        >>> sample.groupby("level")["relevance"].agg(["sum", "size"]).values.tolist()
        [[1, 11], [2, 12], [4, 24]]
    """
    import pandas as pd

    checked = _check_levels(levels)
    missing = [c for c in ("query_id", "doc_id", "relevance") if c not in judgments.columns]
    if missing:
        raise EvalWhError(f"reduced qrels: judgments is missing columns {missing}")
    frame = judgments[judgments["relevance"] >= 0].assign(is_rel=lambda f: f["relevance"] >= rel)
    frame = frame.sort_values(["query_id", "is_rel", "doc_id"], kind="stable").reset_index(
        drop=True
    )
    generator = np.random.default_rng(rng)
    n = len(frame)
    if n == 0:
        return frame.drop(columns="is_rel").assign(level=pd.Series(dtype="int64"))
    topic = frame["query_id"].to_numpy()
    is_rel = frame["is_rel"].to_numpy(dtype=bool)
    new_group = np.ones(n, dtype=bool)
    new_group[1:] = (topic[1:] != topic[:-1]) | (is_rel[1:] != is_rel[:-1])
    group = np.cumsum(new_group) - 1
    sizes = np.bincount(group)
    starts = np.flatnonzero(new_group)
    # one permutation per (topic, stratum): sort by group, then by a uniform key
    keys = generator.random(n)
    order = np.lexsort((keys, group))
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n) - starts[group[order]]
    minimum = np.where(is_rel[starts], MIN_RELEVANT, MIN_NONRELEVANT)
    level_array = np.asarray(checked, dtype=np.int64)
    kept = _stratum_size(sizes[None, :], level_array[:, None], minimum[None, :])  # levels x groups
    level_index, row_index = np.nonzero(position[None, :] < kept[:, group])
    sample = frame.iloc[row_index].drop(columns="is_rel").reset_index(drop=True)
    sample["level"] = level_array[level_index]
    return sample


def reduced_qrels_id(level: int, seed: int, parent: str = "default") -> str:
    """The qrels id of a reduced set: ``reduced-a10-seed1`` (prefixed by a non-default parent).

    Examples:
        >>> reduced_qrels_id(10, 1), reduced_qrels_id(5, 2, "depth10")
        ('reduced-a10-seed1', 'depth10-reduced-a5-seed2')
    """
    name = f"reduced-a{level}-seed{seed}"
    return name if parent == "default" else f"{parent}-{name}"


def store_reduced_qrels(
    wh: Store,
    collection: str,
    *,
    seed: int,
    levels: Sequence[int] = DEFAULT_LEVELS,
    qrels_id: str = "default",
    rel: int = 1,
) -> pd.DataFrame:
    """Draw reduced qrels from ``qrels_id`` and store each level as a derived qrels set.

    A set whose parent content, level, seed and threshold are unchanged is left as it is;
    otherwise it is replaced. Everything is written in one transaction.

    Args:
        wh: The warehouse (opened for writing).
        collection: The collection.
        seed: Seed of ``numpy.random.default_rng``; part of each set's id.
        levels: Integer percentages from 1 to 100.
        qrels_id: The full qrels set to sample from.
        rel: Relevance threshold defining the two strata.

    Returns:
        One row per level: ``level, qrels_id, judged, relevant, status`` (written | unchanged).

    Examples:
        >>> import pandas as pd
        >>> from evalwh import Warehouse
        >>> wh = Warehouse(":memory:")
        >>> _ = wh.ingest_qrels(pd.DataFrame({"query_id": "1", "doc_id": [f"d{i}" for i in range(30)],
        ...                                    "relevance": [1] * 10 + [0] * 20}), collection="demo")
        >>> store_reduced_qrels(wh, "demo", seed=1, levels=[50, 25]).values.tolist()
        [[50, 'reduced-a50-seed1', 15, 5, 'written'], [25, 'reduced-a25-seed1', 13, 3, 'written']]
    """
    import pandas as pd

    from evalwh.store.connection import params_json, sha256_text

    checked = _check_levels(levels)
    wh.require_collection(collection)
    parent = wh.con.execute(
        "SELECT sha256 FROM qrels_sets WHERE collection_id = ? AND qrels_id = ?",
        [collection, qrels_id],
    ).fetchone()
    if parent is None:
        raise NotFoundError(
            f"collection {collection!r} has no qrels set {qrels_id!r}; ingest it first"
        )
    sets = pd.DataFrame({"level": checked})
    sets["qrels_id"] = [reduced_qrels_id(level, seed, qrels_id) for level in checked]
    sets["params"] = [
        params_json(
            {
                "method": "stratified-nested",
                "level": level,
                "seed": seed,
                "rel": rel,
                "parent": qrels_id,
            }
        )
        for level in checked
    ]
    sets["sha256"] = [sha256_text(f"{parent[0]}\n{p}") for p in sets["params"]]
    existing = dict(
        wh.con.execute(
            "SELECT qrels_id, sha256 FROM qrels_sets"
            " WHERE collection_id = ? AND list_contains(?, qrels_id)",
            [collection, sets["qrels_id"].tolist()],
        ).fetchall()
    )
    sets["status"] = [
        "unchanged" if existing.get(q) == s else "written"
        for q, s in zip(sets["qrels_id"], sets["sha256"], strict=True)
    ]
    judgments = wh.df(
        sql.query(_QUERIES, "reduced_source"),
        {"collection_id": collection, "qrels_id": qrels_id, "rel": rel},
    )
    sample = reduced_sample(judgments, levels=checked, rel=rel, rng=seed)
    counts = (
        sample.assign(relevant=sample["relevance"] >= rel)
        .groupby("level")
        .agg(judged=("doc_id", "size"), relevant=("relevant", "sum"))
    )
    sets = sets.join(counts, on="level")
    to_write = sets[sets["status"] == "written"]
    if not to_write.empty:
        rows = sample.merge(to_write[["level", "qrels_id"]], on="level")
        rows = rows[["qrels_id", "query_id", "iteration", "doc_id", "relevance"]]
        staged_sets = to_write.assign(
            source_file=[
                f"stratified sample of {qrels_id!r} at {level}% (seed {seed})"
                for level in to_write["level"]
            ],
            line_count=to_write["judged"],
        )[["qrels_id", "source_file", "sha256", "line_count", "params"]]
        with wh.transaction():
            wh.con.register("reduced_rows", rows)
            wh.con.register("reduced_sets", staged_sets)
            try:
                wh.run(
                    sql.query(_QUERIES, "insert_reduced_qrels"),
                    {"collection_id": collection, "parent_qrels_id": qrels_id},
                )
            finally:
                wh.con.unregister("reduced_rows")
                wh.con.unregister("reduced_sets")
    out = sets[["level", "qrels_id", "judged", "relevant", "status"]].copy()
    out[["judged", "relevant"]] = out[["judged", "relevant"]].fillna(0).astype("int64")
    return out.reset_index(drop=True)


def level_summary(full_means: pd.DataFrame, level_means: pd.DataFrame) -> pd.DataFrame:
    """Mean values and Kendall tau_b against the full qrels, per measure and level.

    Args:
        full_means: Run means on the full qrels, ``measure, run_id, value``.
        level_means: Run means on the reduced qrels, ``measure, level, run_id, value``.

    Returns:
        One row per (measure, level), levels descending: ``measure, level, n_runs,
        mean_value, full_mean, change_pct, tau, tau_p_value``. ``mean_value`` is the mean
        over runs of the run means (methods §8.5); ``change_pct`` is its change relative to
        the full qrels in percent.

    Examples:
        >>> import pandas as pd
        >>> full = pd.DataFrame({"measure": "AP", "run_id": ["a", "b", "c"], "value": [0.4, 0.2, 0.3]})
        >>> reduced = full.assign(level=10, value=[0.2, 0.2, 0.1])
        >>> level_summary(full, reduced)[["mean_value", "change_pct", "tau"]].round(4).values.tolist()
        [[0.1667, -44.4444, 0.0]]
    """
    import pandas as pd

    from evalwh.methods.experiments.tau import kendall_tau

    rows = []
    for (measure, level), part in level_means.groupby(["measure", "level"], sort=False):
        full = full_means[full_means["measure"] == measure].set_index("run_id")["value"]
        reduced = part.set_index("run_id")["value"]
        tau, p_value, n_runs = kendall_tau(full, reduced)
        full_mean = float(full.mean())
        mean_value = float(reduced.mean())
        rows.append(
            {
                "measure": measure,
                "level": int(level),
                "n_runs": n_runs,
                "mean_value": mean_value,
                "full_mean": full_mean,
                "change_pct": 100 * (mean_value - full_mean) / full_mean
                if full_mean
                else float("nan"),
                "tau": tau,
                "tau_p_value": p_value,
            }
        )
    frame = pd.DataFrame(rows)
    frame["level"] = frame["level"].astype("int64")
    order = {m: i for i, m in enumerate(level_means["measure"].unique())}
    frame = frame.assign(_order=frame["measure"].map(order)).sort_values(
        ["_order", "level"], ascending=[True, False]
    )
    return frame.drop(columns="_order").reset_index(drop=True)


def first_level_below(levels: pd.DataFrame, *, threshold: float = TAU_THRESHOLD) -> pd.DataFrame:
    """Per measure, the highest level at which tau falls below ``threshold`` (methods §8.3).

    Args:
        levels: The output of :func:`level_summary` (``measure, level, tau``).
        threshold: The tau below which a ranking counts as changed.

    Returns:
        One row per measure: ``measure, level_below, tau_at_level, min_tau`` (``level_below``
        is missing when tau never falls below the threshold).

    Examples:
        >>> import pandas as pd
        >>> levels = pd.DataFrame({"measure": "AP", "level": [100, 50, 10, 5], "tau": [1.0, 0.95, 0.85, 0.91]})
        >>> first_level_below(levels).values.tolist()
        [['AP', 10, 0.85, 0.85]]
    """
    import pandas as pd

    rows = []
    for measure, part in levels.groupby("measure", sort=False):
        part = part.sort_values("level", ascending=False)
        below = part[part["tau"] < threshold]
        rows.append(
            {
                "measure": measure,
                "level_below": int(below["level"].iloc[0]) if len(below) else None,
                "tau_at_level": float(below["tau"].iloc[0]) if len(below) else None,
                "min_tau": float(part["tau"].min()),
            }
        )
    frame = pd.DataFrame(rows)
    frame["level_below"] = frame["level_below"].astype("Int64")
    return frame


def run_reduced_qrels(
    wh: Store,
    collection: str,
    measures: list[str],
    *,
    seed: int = 1,
    levels: Sequence[int] = DEFAULT_LEVELS,
    qrels_id: str = "default",
    rel: int = 1,
    cap: int = 1000,
    share: float = 0.95,
    threshold: float = TAU_THRESHOLD,
    experiment_id: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, pd.DataFrame]:
    """Run the reduced-qrels experiment of S4 on a collection and keep its results.

    The runs that pass the exclusion rule are evaluated with every measure on the full qrels
    and on the reduced qrels of every level (stored as derived qrels sets); then the mean
    values, their change (§8.5), Kendall tau_b against the full-qrels ranking per level and
    tau between the measures on the full qrels (§8.3) are computed.

    Args:
        wh: The warehouse (opened for writing).
        collection: The collection.
        measures: Measure specs (``MAP``, ``bpref-10``, ``RankEff``, ...).
        seed: Seed of the reduced samples.
        levels: Integer percentages from 1 to 100.
        qrels_id: The full qrels set.
        rel: Relevance threshold.
        cap: Documents per topic counted by the exclusion rule.
        share: Share of ``|T| * cap`` a run must retrieve to be retained.
        threshold: Tau threshold of the ``level_below`` summary.
        experiment_id: Name under which results are stored (replacing an earlier run of the
            same name); ``reduced-qrels-seed<seed>`` when None.
        progress: Called with (levels done, levels in all).

    Returns:
        ``{"exclusion", "qrels", "measure_tau", "levels", "level_below", "run_means"}``;
        all but ``qrels`` and ``level_below`` are stored in the experiment tables.
    """
    import pandas as pd

    from evalwh.methods.experiments._store import replace_experiment
    from evalwh.methods.experiments.exclusion import retained_runs, run_exclusion
    from evalwh.methods.experiments.tau import measure_tau

    checked = _check_levels(levels)
    experiment_id = experiment_id or f"reduced-qrels-seed{seed}"
    exclusion = run_exclusion(wh, collection, qrels_id=qrels_id, rel=rel, cap=cap, share=share)
    runs = retained_runs(exclusion)
    if len(runs) < 2:
        raise EvalWhError(
            f"reduced qrels on {collection!r}: {len(runs)} run(s) pass the exclusion rule; "
            f"need at least 2 (runs shorter than {cap} documents per topic need a lower --cap; "
            "see evalwh experiment exclusions)"
        )
    qrels = store_reduced_qrels(
        wh, collection, seed=seed, levels=checked, qrels_id=qrels_id, rel=rel
    )
    total = len(checked) + 1
    if progress:
        progress(0, total)
    columns = ["measure", "run_id", "value"]
    full = evaluate(wh, measures, collection=collection, runs=runs, qrels_id=qrels_id, rel=rel, typed_names=True)[
        columns
    ]
    if progress:
        progress(1, total)
    parts = []
    level_ids = dict(zip(qrels["level"], qrels["qrels_id"], strict=True))
    for done, (level, level_qrels) in enumerate(level_ids.items(), start=2):
        means = evaluate(wh, 
            measures, collection=collection, runs=runs, qrels_id=level_qrels, rel=rel, typed_names=True
        )[columns]
        parts.append(means.assign(level=int(level), qrels_id=level_qrels))
        if progress:
            progress(done, total)
    run_means = pd.concat(parts, ignore_index=True)[
        ["measure", "level", "qrels_id", "run_id", "value"]
    ]
    levels_frame = level_summary(full, run_means)
    levels_frame.insert(2, "qrels_id", levels_frame["level"].map(level_ids))
    pairs = measure_tau(full).assign(qrels_id=qrels_id)
    below = first_level_below(levels_frame, threshold=threshold)
    params = {
        "measures": list(measures),
        "seed": seed,
        "levels": checked,
        "rel": rel,
        "cap": cap,
        "share": share,
        "threshold": threshold,
    }
    replace_experiment(
        wh,
        collection,
        experiment_id,
        kind="reduced-qrels",
        qrels_id=qrels_id,
        params=params,
        frames={
            "experiment_runs": exclusion,
            "measure_tau": pairs,
            "reduced_run_means": run_means,
            "reduced_levels": levels_frame,
        },
    )
    return {
        "exclusion": exclusion,
        "qrels": qrels,
        "measure_tau": pairs,
        "levels": levels_frame,
        "level_below": below,
        "run_means": run_means,
    }


def stored_levels(
    wh: Store, collection: str, *, experiment_id: str | None = None
) -> pd.DataFrame:
    """The per-level results of a stored reduced-qrels experiment (the latest when None).

    Returns:
        The rows of ``reduced_levels``: ``experiment_id, measure, level, qrels_id, n_runs,
        mean_value, full_mean, change_pct, tau, tau_p_value``.

    Raises:
        NotFoundError: if the collection has no such experiment.
    """
    wh.require_collection(collection)
    frame = wh.df(
        sql.query(_QUERIES, "stored_levels"),
        {"collection_id": collection, "experiment_id": experiment_id},
    )
    if frame.empty:
        which = f"experiment {experiment_id!r}" if experiment_id else "reduced-qrels experiment"
        raise NotFoundError(
            f"collection {collection!r} has no stored {which}; "
            "run evalwh experiment reduced-qrels first"
        )
    return frame
