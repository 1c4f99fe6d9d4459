"""Uncertainty bounds from incomplete judgments: Dempster-Shafer masses, residuals, scenarios.

Per run, topic and depth ``d`` the positions of the top ``d`` are relevant, judged
non-relevant, or unassessed (unjudged, or missing past the end of a short run). On the frame
``Theta = {R, N}`` they give the masses ``m({R}) = P@d``, ``m({N})`` and
``m(Theta) = U@d = 1 - A_p@d`` (methods §7.1), and the interval
``[Bel({R}), Pl({R})] = [P@d, P@d + U@d]`` that holds precision under every completion of the
judgments. RBP splits its rank weights the same way: ``[base@d, base@d + resid@d]``. AP, nDCG
and recall have no such bound; for them evalwh reports the *scenario* value ``M_allrel@d``
(every unjudged document of the top ``d`` relabelled relevant, methods §3.3), labelled
``kind = 'scenario'``.

The per-topic masses come from SQL (``queries/bounds/``) for the whole depth grid at once.
Across topics they are aggregated by mean masses (the default, methods §7.3) or by Dempster's
rule of combination (:func:`dempster`), which is undefined under total conflict.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from evalwh.measures import catalog
from evalwh import sql
from evalwh.errors import Choice, InsufficientDataError, MetricParamError

if TYPE_CHECKING:
    from evalwh.store.connection import Store

_BOUNDS = "evalwh.queries.bounds"
DEFAULT_DEPTHS = (10, 30, 100, 500, 1000)
MASSES = ["m_rel", "m_nonrel", "m_theta"]
TOTAL_CONFLICT = "total conflict (K = 1): Dempster's rule is undefined"


class Aggregation(Choice):
    """How per-topic masses are combined across the topics of a run."""

    mean = "mean"  # mean masses: [mean lower, mean upper]; the default for plots
    dempster = "dempster"  # Dempster's rule of combination, topics as independent sources


class Kind(str, enum.Enum):
    """Whether ``[lower, upper]`` is a guaranteed interval or a scenario pair."""

    bound = "bound"  # holds the value under every completion of the judgments
    scenario = "scenario"  # M@d and M_allrel@d: not ordered, not guaranteed


class Outcome(str, enum.Enum):
    """The interval comparison of two runs at one depth (methods §7.4)."""

    first_better = "first certainly better"  # Bel(first) > Pl(second)
    second_better = "second certainly better"
    open = "open"  # the intervals overlap
    undefined = "undefined"  # an interval is NULL (Dempster's rule under total conflict)


@dataclass(frozen=True)
class _Family:
    """One bound family: its SQL file, kind and whether it needs rank-weighted prefix sums."""

    file: str
    kind: Kind
    running: bool  # True: one window pass over the judged positions (segments_running.sql)


_FAMILIES = {
    "p": _Family("p", Kind.bound, running=False),
    "rbp": _Family("rbp", Kind.bound, running=True),
    "ap": _Family("ap", Kind.scenario, running=True),
    "ndcg": _Family("ndcg", Kind.scenario, running=True),
    "recall": _Family("recall", Kind.scenario, running=False),
}


def combine(first: Any, second: Any) -> np.ndarray:
    """Dempster's rule of combination for two mass functions on ``{R, N}``.

    Masses are ``(m({R}), m({N}), m(Theta))`` along the last axis; any leading axes broadcast.
    The conflict ``K = m1(R) m2(N) + m1(N) m2(R)`` is normalised away (methods §7.3).

    Args:
        first: Masses of the first source, shape ``(..., 3)``, each row summing to 1.
        second: Masses of the second source, same layout.

    Returns:
        The combined masses, shape ``(..., 3)``; NaN rows where the conflict is total (K = 1).

    Examples:
        >>> combine([0.3, 0.3, 0.4], [0.5, 0.2, 0.3]).round(6).tolist()
        [0.556962, 0.291139, 0.151899]
        >>> combine([1.0, 0.0, 0.0], [0.0, 1.0, 0.0]).tolist()
        [nan, nan, nan]
    """
    a = np.asarray(first, dtype=float)
    b = np.asarray(second, dtype=float)
    rel = a[..., 0] * b[..., 0] + a[..., 0] * b[..., 2] + a[..., 2] * b[..., 0]
    nonrel = a[..., 1] * b[..., 1] + a[..., 1] * b[..., 2] + a[..., 2] * b[..., 1]
    theta = a[..., 2] * b[..., 2]
    # 1 - K, computed as the sum of the non-conflicting products (exact zero on total conflict)
    norm = rel + nonrel + theta
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.stack([rel, nonrel, theta], axis=-1) / norm[..., None]
    return np.where((norm > 0)[..., None], out, np.nan)


def dempster(masses: pd.DataFrame, *, by: Sequence[str] = ("run_id", "depth")) -> pd.DataFrame:
    """Combine the per-topic masses of each group by Dempster's rule, folded over the topics.

    On the two-element frame the fold has a closed form through the commonality function
    ``Q(A) = sum of m(B) over B containing A``, which multiplies under the (unnormalised)
    rule: ``Q({R}) = prod Pl_t({R})``, ``Q({N}) = prod Pl_t({N})``, ``Q(Theta) = prod m_t(Theta)``,
    then ``m({R}) = Q({R}) - Q(Theta)`` and so on, normalised by their sum ``1 - K``. The
    products are taken as sums of logarithms, so hundreds of topics neither underflow nor
    need a Python loop. The result equals folding :func:`combine` over the topics in any order.

    Args:
        masses: One row per topic and group: the ``by`` columns and ``m_rel, m_nonrel, m_theta``.
        by: The grouping columns.

    Returns:
        One row per group: the ``by`` columns, ``m_rel, m_nonrel, m_theta`` (NULL on total
        conflict), ``conflict`` (the combination's K, rounded to 1.0 when it is within
        float precision of 1), ``n_topics`` and ``note`` (the reason for a NULL, else None).

    Raises:
        InsufficientDataError: if columns are missing.

    Examples:
        >>> frame = pd.DataFrame({"run_id": ["s", "s"], "depth": [10, 10], "m_rel": [0.3, 0.5],
        ...                       "m_nonrel": [0.3, 0.2], "m_theta": [0.4, 0.3]})
        >>> dempster(frame)[["m_rel", "m_nonrel", "m_theta", "conflict"]].round(6).values.tolist()
        [[0.556962, 0.291139, 0.151899, 0.21]]
    """
    keys = list(by)
    _require_columns(masses, [*keys, *MASSES], "masses")
    rel, nonrel, theta = (masses[c].to_numpy(dtype=float) for c in MASSES)
    topics = (
        masses["query_id"].astype(str)
        if "query_id" in masses.columns
        else pd.Series("?", index=masses.index)
    )
    rows = {key: masses[key].to_numpy() for key in keys}
    for name, q in (("rel", rel + theta), ("nonrel", nonrel + theta), ("theta", theta)):
        with np.errstate(divide="ignore"):
            rows[f"log_q_{name}"] = np.where(q > 0, np.log(np.where(q > 0, q, 1.0)), 0.0)
        rows[f"zero_q_{name}"] = (q <= 0).astype(int)
    rows["n_topics"] = np.ones(len(masses), dtype=int)
    rows["certain_rel"] = np.where(rel >= 1.0, topics, None)
    rows["certain_nonrel"] = np.where(nonrel >= 1.0, topics, None)
    grouped = pd.DataFrame(rows).groupby(keys, sort=True, observed=True)
    logs = grouped.agg(
        {
            **{
                f"{kind}_q_{name}": "sum"
                for kind in ("log", "zero")
                for name in ("rel", "nonrel", "theta")
            },
            "n_topics": "sum",
            "certain_rel": "first",
            "certain_nonrel": "first",
        }
    ).reset_index()
    return _dempster_from_logs(logs, keys)


def _dempster_from_logs(
    logs: pd.DataFrame, keys: Sequence[str] = ("run_id", "depth")
) -> pd.DataFrame:
    """Normalise the log commonalities of ``queries/bounds/aggregates.sql`` into masses."""
    columns = {}
    for name in ("rel", "nonrel", "theta"):
        value = logs[f"log_q_{name}"].astype(float).fillna(0.0).to_numpy()
        columns[name] = np.where(logs[f"zero_q_{name}"].to_numpy() > 0, -np.inf, value)
    combined, conflict = _normalise(columns["rel"], columns["nonrel"], columns["theta"])
    out = logs[list(keys)].copy()
    for i, column in enumerate(MASSES):
        out[column] = combined[:, i]
    out["conflict"] = conflict
    out["n_topics"] = logs["n_topics"].astype("int32")
    total = np.isnan(combined[:, 0])
    notes = (
        TOTAL_CONFLICT
        + ": topic "
        + logs["certain_rel"].astype(str)
        + " is certainly relevant and topic "
        + logs["certain_nonrel"].astype(str)
        + " certainly non-relevant; use mean aggregation"
    )
    out["note"] = np.where(total, notes, None)
    return out


def _normalise(
    log_rel: np.ndarray, log_nonrel: np.ndarray, log_theta: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Masses and conflict from log commonalities; NaN masses on total conflict."""
    scale = np.maximum(log_rel, log_nonrel)  # -inf only when both are 0: total conflict
    finite = np.isfinite(scale)
    safe = np.where(finite, scale, 0.0)
    with np.errstate(invalid="ignore", over="ignore"):
        # Q(A) - Q(Theta) = Q(A) (1 - Q(Theta)/Q(A)); -expm1 keeps the difference accurate
        rel = np.where(
            np.isfinite(log_rel), np.exp(log_rel - safe) * -np.expm1(log_theta - log_rel), 0.0
        )
        nonrel = np.where(
            np.isfinite(log_nonrel),
            np.exp(log_nonrel - safe) * -np.expm1(log_theta - log_nonrel),
            0.0,
        )
        theta = np.exp(log_theta - safe)
        norm = rel + nonrel + theta
        masses = np.stack([rel, nonrel, theta], axis=-1) / norm[:, None]
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        conflict = np.where(finite, -np.expm1(safe + np.log(norm)), 1.0)
    masses[~finite] = np.nan
    return masses, conflict


def belief_plausibility(masses: pd.DataFrame) -> pd.DataFrame:
    """Add ``belief, plausibility, ignorance`` of ``{R}`` to a frame of masses (methods §7.2).

    ``Bel({R}) = m({R})``, ``Pl({R}) = m({R}) + m(Theta) = 1 - Bel({N})`` and
    ``Ign({R}) = Pl({R}) - Bel({R}) = m(Theta)``.

    Examples:
        >>> frame = pd.DataFrame({"m_rel": [0.3], "m_nonrel": [0.3], "m_theta": [0.4]})
        >>> belief_plausibility(frame)[["belief", "plausibility", "ignorance"]].values.tolist()
        [[0.3, 0.7, 0.4]]
    """
    _require_columns(masses, MASSES, "masses")
    return masses.assign(
        belief=masses["m_rel"],
        plausibility=masses["m_rel"] + masses["m_theta"],
        ignorance=masses["m_theta"],
    )


def compare(bands: pd.DataFrame, first: str, second: str) -> pd.DataFrame:
    """Interval comparison of two runs at every depth: certainly better, or open (methods §7.4).

    Run ``i`` is certainly better than run ``j`` iff ``lower_i > upper_j`` (``Bel_i > Pl_j``).
    Only bounds can be compared this way: scenario pairs (AP, nDCG, R) are refused.

    Args:
        bands: Aggregated bands as returned by :func:`compute_bounds`: ``run_id, depth, lower,
            upper`` and optionally ``measure, kind, aggregation``.
        first: One run.
        second: The other run.

    Returns:
        One row per (measure, aggregation, depth) present for both runs: ``lower_first,
        upper_first, lower_second, upper_second, outcome`` (an :class:`Outcome` value).

    Raises:
        InsufficientDataError: if a run is missing from ``bands``.
        MetricParamError: if the bands are scenario values.

    Examples:
        >>> bands = pd.DataFrame({"run_id": ["a", "b", "a", "b"], "depth": [10, 10, 100, 100],
        ...                       "lower": [0.5, 0.2, 0.3, 0.2], "upper": [0.6, 0.4, 0.7, 0.6]})
        >>> compare(bands, "a", "b")["outcome"].tolist()
        ['first certainly better', 'open']
    """
    _require_columns(bands, ["run_id", "depth", "lower", "upper"], "bands")
    if "kind" in bands.columns and (bands["kind"] == Kind.scenario.value).any():
        raise MetricParamError(
            "compare: scenario values (AP, nDCG, R) are not bounds, so no run is certainly "
            "better; compare with --measure P or RBP"
        )
    for run in (first, second):
        if not (bands["run_id"] == run).any():
            raise InsufficientDataError(
                f"compare: run {run!r} has no bands; compute bounds for it first"
            )
    keys = [c for c in ("measure", "kind", "aggregation") if c in bands.columns] + ["depth"]
    a = bands.loc[bands["run_id"] == first, [*keys, "lower", "upper"]]
    b = bands.loc[bands["run_id"] == second, [*keys, "lower", "upper"]]
    pairs = a.merge(b, on=keys, suffixes=("_first", "_second"))
    lower_a, upper_a = pairs["lower_first"].to_numpy(float), pairs["upper_first"].to_numpy(float)
    lower_b, upper_b = pairs["lower_second"].to_numpy(float), pairs["upper_second"].to_numpy(float)
    undefined = np.isnan(lower_a) | np.isnan(lower_b)
    outcome = np.select(
        [undefined, lower_a > upper_b, lower_b > upper_a],
        [Outcome.undefined.value, Outcome.first_better.value, Outcome.second_better.value],
        Outcome.open.value,
    )
    pairs.insert(0, "first", first)
    pairs.insert(1, "second", second)
    pairs["outcome"] = outcome
    return pairs.sort_values(keys, kind="stable").reset_index(drop=True)


def parse_measure(spec: str) -> tuple[str, str, dict[str, Any]]:
    """Resolve a bounds measure spec (``P``, ``RBP(p=0.9)``, ``AP``, ``nDCG``, ``R``).

    Returns:
        ``(family key, canonical label, parameters)``.

    Raises:
        MetricParamError: for a depth in the spec, a measure without bounds, or a bad ``p``.

    Examples:
        >>> parse_measure("RBP(p=0.9)")[:2], parse_measure("MAP")[:2]
        (('rbp', 'RBP(p=0.9)'), ('ap', 'AP'))
    """
    if "@" in spec:
        raise MetricParamError(
            f"bounds: measure {spec!r} has a depth; give the measure alone and the depths with "
            "--depths or --every-rank"
        )
    parsed = catalog.parse(spec, k=1)
    key = parsed.metric.key
    if key not in _FAMILIES:
        raise MetricParamError(
            f"bounds: no bounds for {parsed.metric.name}; choose one of P, RBP(p=...), AP, nDCG, R"
        )
    params = {k: v for k, v in parsed.params.items() if k != "k"}
    if key == "rbp" and not 0.0 < float(params["p"]) < 1.0:
        raise MetricParamError(
            f"bounds: {spec}: the persistence p must lie strictly between 0 and 1"
        )
    label = str(
        catalog.Measure(
            parsed.metric, tuple((k, None if k == "k" else v) for k, v in parsed.values)
        )
    )
    return key, label, params


def compute_bounds(
    wh: Store,
    *,
    collection: str,
    measure: str = "P",
    runs: Sequence[str] | None = None,
    depths: Sequence[int] | None = None,
    every_rank: bool = False,
    max_depth: int = 1000,
    aggregation: Aggregation | str | None = None,
    per_query: bool = False,
    qrels_id: str = "default",
    rel: int = 1,
    depth_cap: int | None = None,
    store: bool = False,
    fill: Sequence[str] = (),
) -> pd.DataFrame:
    """Lower and upper values of a measure per run across a depth grid, computed in SQL.

    Args:
        wh: The warehouse.
        collection: The collection.
        measure: ``P`` or ``RBP(p=...)`` (true bounds, with masses), or ``AP``, ``nDCG``, ``R``
            (the scenario ``[M@d, M_allrel@d]``, no masses).
        runs: Runs to include; all runs of the collection when None.
        depths: The depth grid; :data:`DEFAULT_DEPTHS` when None and not ``every_rank``.
        every_rank: Use every depth ``1..max_depth`` instead of ``depths``.
        max_depth: The deepest depth with ``every_rank``.
        aggregation: ``mean`` or ``dempster``; both when None (Dempster only for bounds).
        per_query: Return the per-topic values instead of the aggregates.
        qrels_id: The qrels set.
        rel: Relevance threshold; also the gain a relabelled document gets in nDCG_allrel.
        depth_cap: Keep only the first documents of each ranking (trec_eval -M).
        store: Keep the aggregates in the ``bounds`` table (replacing the same key).
        fill: Sets whose labels fill the pairs ``qrels_id`` did not judge, in order
            (:func:`evalwh.measures.evaluation.evaluate`): fewer holes, narrower bounds. The
            rows then carry a ``qrels_id`` column naming the sets (``A+B``), the key they are
            stored under.

    Returns:
        Aggregates: ``collection_id, run_id, measure, kind, depth, aggregation, lower, upper,
        m_rel, m_nonrel, m_theta, conflict, n_topics, note``. Per topic: ``collection_id,
        run_id, query_id, measure, kind, depth, lower, upper, m_rel, m_nonrel, m_theta``.

    Raises:
        MetricParamError: for a bad measure, depth or aggregation.
        NotFoundError: for an unknown collection, run or qrels set.

    Examples:
        >>> from evalwh import Warehouse
        >>> wh = Warehouse(":memory:")
        >>> _ = wh.ingest_qrels(pd.DataFrame({"query_id": ["1"] * 3, "doc_id": ["a", "b", "c"],
        ...                                    "relevance": [1, 0, 1]}), collection="demo")
        >>> run = pd.DataFrame({"query_id": ["1"] * 3, "doc_id": ["a", "x", "b"],
        ...                     "score": [3.0, 2.0, 1.0]})
        >>> _ = wh.ingest_runs(run, collection="demo", run_id="r1")
        >>> b = compute_bounds(wh, collection="demo", depths=[2, 4], aggregation="mean")
        >>> b[["depth", "lower", "upper"]].values.tolist()
        [[2.0, 0.5, 1.0], [4.0, 0.25, 0.75]]
    """
    from evalwh.store.context import Options, build_context

    key, label, params = parse_measure(measure)
    family = _FAMILIES[key]
    grid = _grid(depths, every_rank, max_depth)
    wanted = _aggregations(aggregation, family, label)
    options = Options(qrels_id=qrels_id, rel=rel, depth_cap=depth_cap, fill=tuple(fill))
    query_params: dict[str, Any] = {
        "depths": grid,
        "max_depth": max(grid),
        "p": float(params.get("p", 0.8)),
        "allrel_gain": rel,
    }
    segments = "segments_running" if family.running else "segments"
    with wh.transaction():
        build_context(wh, collection, runs, options)
        for name in ("depths", "positions", segments, "cells", family.file):
            wh.run(sql.query(_BOUNDS, name), query_params)
        if per_query:
            frame = wh.df(sql.query(_BOUNDS, "topics"))
            frame.insert(0, "collection_id", collection)
            frame.insert(3, "measure", label)
            frame.insert(4, "kind", family.kind.value)
            if fill:
                frame.insert(1, "qrels_id", options.qrels_label)
            return frame
        # one pass over the (never stored) cells yields both aggregations
        aggregates = wh.df(sql.query(_BOUNDS, "aggregates"))
        parts = []
        if Aggregation.mean in wanted:
            means = aggregates[["run_id", "depth", "lower", "upper", *MASSES, "n_topics"]].copy()
            means["aggregation"] = Aggregation.mean.value
            means["conflict"] = np.nan
            means["note"] = None
            parts.append(means)
        if Aggregation.dempster in wanted:
            combined = _dempster_from_logs(aggregates)
            combined["lower"] = combined["m_rel"]
            combined["upper"] = combined["m_rel"] + combined["m_theta"]
            combined["aggregation"] = Aggregation.dempster.value
            parts.append(combined)
        frame = pd.concat(parts, ignore_index=True)
        frame["kind"] = family.kind.value
        frame = frame[
            [
                "run_id",
                "kind",
                "depth",
                "aggregation",
                "lower",
                "upper",
                *MASSES,
                "conflict",
                "n_topics",
                "note",
            ]
        ]
        frame = frame.sort_values(["run_id", "aggregation", "depth"], kind="stable").reset_index(
            drop=True
        )
        if store:
            _store(wh, collection, label, frame, options)
    frame.insert(0, "collection_id", collection)
    frame.insert(2, "measure", label)
    if fill:
        frame.insert(1, "qrels_id", options.qrels_label)
    return frame


def _store(wh: Store, collection: str, label: str, frame: pd.DataFrame, options: Any) -> None:
    wh.con.register("bd_values", frame)
    try:
        wh.run(
            sql.query(_BOUNDS, "store"),
            {
                "collection_id": collection,
                "measure": label,
                "qrels_id": options.qrels_label,
                "rel": options.rel,
                "depth_cap": options.depth_cap,
            },
        )
    finally:
        wh.con.unregister("bd_values")


def _grid(depths: Sequence[int] | None, every_rank: bool, max_depth: int) -> list[int]:
    if every_rank:
        if max_depth < 1:
            raise MetricParamError(f"bounds: max depth {max_depth} must be a positive integer")
        return list(range(1, max_depth + 1))
    grid = sorted({int(d) for d in (depths if depths else DEFAULT_DEPTHS)})
    if grid[0] < 1:
        raise MetricParamError(f"bounds: depths {grid} must be positive integers")
    return grid


def _aggregations(
    aggregation: Aggregation | str | None, family: _Family, label: str
) -> list[Aggregation]:
    if aggregation is None:
        return [Aggregation.mean] if family.kind is Kind.scenario else list(Aggregation)
    try:
        chosen = Aggregation(aggregation)
    except ValueError:
        raise MetricParamError(
            f"bounds: aggregation {aggregation!r} must be mean or dempster"
        ) from None
    if chosen is Aggregation.dempster and family.kind is Kind.scenario:
        raise MetricParamError(
            f"bounds: Dempster's rule needs masses, and {label} has only scenario values; "
            "use --aggregation mean (or --measure P or RBP)"
        )
    return [chosen]


def _require_columns(frame: pd.DataFrame, columns: list[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InsufficientDataError(f"{what} is missing columns {missing}; expected {columns}")
