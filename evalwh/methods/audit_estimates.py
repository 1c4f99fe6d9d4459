"""Prediction-powered scores of runs from a random audit and its human labels (``evalwh audit estimate``, methods §15).

The audits themselves (drawing, declaring, checking, storing) are :mod:`evalwh.methods.audits`';
the estimators and intervals :mod:`evalwh.stats.ppi`'s. Here the two meet: the audited units'
human and machine values per run (:func:`_unit_matrices`: a pair's term of a linear measure, or
a topic's measure), the estimates, their differences and ranks (:func:`estimate`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from evalwh import sql
from evalwh.errors import InsufficientDataError, MetricParamError, NotFoundError
from evalwh.measures import catalog
from evalwh.methods.audits import (
    _QUERIES,
    _grade_text,
    _require_set,
    audit_record,
    check_measure,
    expected_gains,
    frame_pairs,
    gains,
    pair_values,
    rank_weights,
)

if TYPE_CHECKING:
    from evalwh.store.connection import Store

MIN_REPLICATES = 100  # fewer leave the percentile interval's tails to one or two replicates


# -- estimates (evalwh audit estimate) --------------------------------------------------------


class AuditEstimates:
    """What :func:`estimate` returns.

    Attributes:
        runs: One row per measure and run: ``measure, run_id, design, estimate, ci_low,
            ci_high, se, human, human_low, human_high, machine, weight, audited,
            effective_n`` (methods §15.4).
        pairs: With differences asked for, one row per measure and pair of runs: ``measure,
            run_a, run_b, diff, ci_low, ci_high, se, p_value, p_adjusted, reject, human_diff,
            machine_diff, weight, effective_n``; else None.
        notes: Sentences a reader must see.
        ranks: With ranks asked for, one row per measure and run, best rank first: ``measure,
            run_id, estimate, rank, rank_low, rank_high, tier`` (methods §15.5); else None.
    """

    def __init__(
        self, runs: pd.DataFrame, pairs: pd.DataFrame | None, notes: list[str], ranks: pd.DataFrame | None = None
    ) -> None:
        self.runs, self.pairs, self.notes, self.ranks = runs, pairs, notes, ranks


def _unit_matrices(
    wh: Store, collection: str, record: dict[str, Any], measure: catalog.Measure, run_ids: list[str],
    frame: pd.DataFrame, audited: pd.DataFrame, machine_gain: np.ndarray | None, human_id: str, rel: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None, Any]:  # fmt: skip
    """``(y, f, F, bound, machine, matrix)``: the audited units' human and machine values per run, the
    machine's totals, for a pairs audit the largest value a pair can have per run (its largest weight
    times the largest gain: :func:`evalwh.stats.ppi.design_estimate`'s variance floor) and for a topics
    audit the machine's value of every topic (topics x runs), each None for the other design; for a
    pairs audit the sparse (frame pairs x runs) matrix of each position's weight
    (:func:`evalwh.methods.audits.pair_values`), else None."""
    topics = frame["query_id"].nunique()
    if record["design"] == "pairs":
        k = measure.params.get("k")
        positions = wh.df(
            sql.query(_QUERIES, "positions"), {"collection_id": collection, "max_depth": k}
        )
        matrix = pair_values(positions, len(frame), len(run_ids), topics,
                             rank_weights(measure, positions["rank"].to_numpy()))  # fmt: skip
        f_gain = (
            gains(measure, frame["machine_grade"].to_numpy(float), rel)
            if machine_gain is None
            else machine_gain
        )
        rows = audited["pair_no"].to_numpy()
        sample = matrix[rows].toarray()
        h_gain = gains(measure, audited["human_grade"].to_numpy(float), rel)
        largest = max(float(np.abs(f_gain).max(initial=0.0)), float(np.abs(h_gain).max(initial=0.0)), 1.0)
        bound = np.asarray(abs(matrix).max(axis=0).todense()).ravel() * largest
        y, f = sample * h_gain[:, None], sample * f_gain[rows][:, None]
        return y, f, np.asarray(matrix.T @ f_gain).ravel(), bound, None, matrix
    from evalwh.measures.evaluation import evaluate

    def per_topic(qrels_id: str) -> pd.DataFrame:
        values = evaluate(wh, [measure.label or str(measure)], collection=collection, runs=run_ids, per_query=True,
                          qrels_id=qrels_id, rel=int(rel))  # fmt: skip
        values = values[values["query_id"] != "all"]
        return values.pivot_table(
            index="query_id", columns="run_id", values="value", aggfunc="first"
        )

    all_topics = sorted(frame["query_id"].unique())
    sampled = sorted(audited["query_id"].unique())
    machine = per_topic(record["machine_id"]).reindex(index=all_topics, columns=run_ids).fillna(0.0)
    human = per_topic(human_id).reindex(index=sampled, columns=run_ids).fillna(0.0)
    every = machine.to_numpy(float) / topics
    f = machine.loc[sampled].to_numpy(float) / topics
    return human.to_numpy(float) / topics, f, every.sum(axis=0), None, every, None


def _agreement_note(measure: catalog.Measure, y: np.ndarray, f: np.ndarray, run_ids: list[str]) -> list[str]:
    """A pairs audit's note on the runs whose carrying audited pairs all agree (methods §15.6).

    A run is carried by an audited pair where its human or machine value is not 0. Where the
    machine and the people agree on every such pair, the run's residuals show none of the
    machine's errors in its ranking, and its interval is often too narrow (the coverage bench's
    intervals of such runs held the official P@10 in 47-92% of audits): such runs are named. A run
    carried by fewer than two audited pairs is not: its variance has the floor and one degree of
    freedom (:func:`evalwh.stats.ppi.design_estimate`), and its interval is wide.
    """
    carried = (y != 0) | (f != 0)
    blind = [r for r, b in zip(run_ids, (carried.sum(axis=0) >= 2) & ~(carried & (y != f)).any(axis=0), strict=True) if b]
    if not blind:
        return []
    named = ", ".join(blind[:5]) + (f" and {len(blind) - 5} more" if len(blind) > 5 else "")
    return [f"{measure}: for {len(blind)} of {len(run_ids)} runs ({named}) the people and the machine agree on every "
            "audited pair that carries the run, so their intervals see none of the machine's errors in those runs' "
            "rankings and are often too narrow; a larger audit helps (methods §15.6)"]  # fmt: skip


def _count_groups(
    matrix: Any, measure: catalog.Measure, frame: pd.DataFrame, audited: pd.DataFrame, strata: pd.DataFrame,
    stratify: str | None, rel: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """For ``--interval beta`` (methods §15.7): per group (the audit's stratum and the machine's label)
    and run, the audited pairs people call relevant, the audited pairs and the pairs in the run's top
    ``k``, each ``(G, R)``; per group, its audited pairs and those people call relevant over all runs,
    and its stratum, each ``(G,)``."""
    from scipy import sparse

    carry = (matrix != 0).astype(float).tocsr()  # a frame pair in a run's top k (the weights of P@k)
    if stratify == "grade":
        by_label = dict(zip(strata["label"], strata["stratum"], strict=True))
        labels = frame["machine_grade"].map(_grade_text)
        unknown = ~labels.isin(list(by_label))
        if unknown.any():
            row = frame[unknown].iloc[0]
            raise InsufficientDataError(
                f"the machine's grade {labels[unknown].iloc[0]!r} of topic {row['query_id']} document {row['doc_id']} "
                f"is none of the audit's strata {sorted(by_label)}: the machine set changed since the audit was drawn"
            )
        stratum = labels.map(by_label).to_numpy(np.int64)
    else:
        stratum = np.zeros(len(frame), dtype=np.int64)
    machine = gains(measure, frame["machine_grade"].to_numpy(float), rel).astype(np.int64)
    group = stratum * 2 + machine  # (stratum, the machine's label)
    count = 2 * len(strata)
    one_hot = sparse.csr_matrix((np.ones(len(frame)), (group, np.arange(len(frame)))), shape=(count, len(frame)))
    population = np.asarray((one_hot @ carry).todense())
    rows = audited["pair_no"].to_numpy()
    human = gains(measure, audited["human_grade"].to_numpy(float), rel)
    picked, by_human = one_hot[:, rows], one_hot[:, rows].multiply(human[None, :]).tocsr()
    seen = np.asarray((picked @ carry[rows]).todense())
    relevant = np.asarray((by_human @ carry[rows]).todense())
    # a run's group no audited pair falls in takes the audit's rate of the group over all runs
    in_group, hits = np.asarray(picked.sum(axis=1)).ravel(), np.asarray(by_human.sum(axis=1)).ravel()
    return relevant, seen, population, in_group, hits, np.arange(count) // 2


def _beta_runs(
    matrix: Any, m: catalog.Measure, run_ids: list[str], frame: pd.DataFrame, audited: pd.DataFrame,
    strata: pd.DataFrame, record: dict[str, Any], e: Any, level: float, rel: float,
) -> pd.DataFrame:  # fmt: skip
    """The runs' table of ``--interval beta``: P@k as a post-stratified count over ``topics * k`` (methods §15.7)."""
    from evalwh.stats.ppi_counts import poststratified_count

    relevant, seen, population, in_group, hits, stratum = _count_groups(
        matrix, m, frame, audited, strata, record["stratify"], rel
    )
    scale = 1.0 / (frame["query_id"].nunique() * m.params["k"])

    def rate(count: np.ndarray, of: np.ndarray) -> np.ndarray:  # a group no audited pair of a run falls in
        return np.divide(count, of, out=np.full(len(of), 0.5), where=of > 0)  # takes the audit's rate over all runs

    c = poststratified_count(relevant, seen, population, fallback=rate(hits, in_group), level=level)
    # the audit alone: the groups of a stratum merged
    merge = np.zeros((len(strata), len(stratum)))
    merge[stratum, np.arange(len(stratum))] = 1.0
    h = poststratified_count(merge @ relevant, merge @ seen, merge @ population,
                             fallback=rate(merge @ hits, merge @ in_group), level=level)  # fmt: skip
    with np.errstate(divide="ignore", invalid="ignore"):
        effective = np.where(c.variance > 0, len(audited) * h.variance / c.variance,
                             np.where(h.variance > 0, np.inf, float(len(audited))))  # fmt: skip
    return pd.DataFrame({
        "measure": str(m), "run_id": run_ids, "design": record["design"], "estimate": c.estimate * scale,
        "ci_low": c.lower * scale, "ci_high": c.upper * scale, "se": np.sqrt(c.variance) * scale,
        "human": h.estimate * scale, "human_low": h.lower * scale, "human_high": h.upper * scale,
        "machine": e.machine, "weight": np.nan, "audited": len(audited), "effective_n": effective,
    })  # fmt: skip


def beta_checks(record: dict[str, Any], measures: Sequence[catalog.Measure], probabilities: bool) -> None:
    """Refuse ``--interval beta`` where its groups are not simple random samples of counts (methods §15.7)."""
    if record["design"] != "pairs":
        raise MetricParamError("--interval beta applies to a pairs audit (a topics audit's intervals are machine or t)")
    if probabilities:
        raise MetricParamError("--interval beta counts the machine's grades; leave out --probabilities")
    if record["stratify"] == "topic":
        raise MetricParamError(
            "--interval beta groups a run's pairs by stratum and the machine's label; an audit stratified by "
            "topic leaves most of a run's groups unaudited: use --interval t"
        )
    for m in measures:
        if m.metric.name != "P":
            raise MetricParamError(f"--interval beta estimates P@k (a count of relevant pairs), not {m}: use --interval t")


def _columns_of(e: Any, columns: np.ndarray) -> Any:
    """The :class:`~evalwh.stats.ppi.DesignEstimate` of some of its columns (the runs shown)."""
    import dataclasses

    return dataclasses.replace(e, **{
        f.name: getattr(e, f.name)[columns] for f in dataclasses.fields(e) if isinstance(getattr(e, f.name), np.ndarray)
    })  # fmt: skip


def _outside_note(m: catalog.Measure, e: Any, run_ids: list[str]) -> list[str]:
    """A note naming the runs whose estimate, or audit-only estimate, lies outside the measure's range,
    whose intervals were clipped to it (methods §15.4); none when the measure declares no range or
    none lies outside."""
    if m.metric.limits is None:
        return []
    low, high = m.metric.limits
    values = np.stack([e.estimate, e.human])
    inside = ((values >= low - 1e-12) & (values <= high + 1e-12)).all(axis=0)
    outside = [r for r, ok in zip(run_ids, inside, strict=True) if not ok]
    if not outside:
        return []
    named = ", ".join(outside[:5]) + (f" and {len(outside) - 5} more" if len(outside) > 5 else "")
    return [f"{m}: the estimate or the audit-only estimate of {len(outside)} of {len(run_ids)} runs ({named}) lies "
            f"outside {m.metric.name}'s range [{low:g}, {high:g}] (an unbiased estimate can, on a small audit); the "
            "intervals are clipped to the range (methods §15.4)"]


def _check_frame(
    wh: Store, collection: str, record: dict[str, Any], frame: pd.DataFrame, audited: pd.DataFrame,
    strata: pd.DataFrame, human_id: str,
) -> None:  # fmt: skip
    """Refuse an estimate whose frame is no longer the one drawn from, or whose topics' scores would
    read labels outside it.

    The strata's units (``audit_strata.population``) weight the estimate: a frame (or, for a grade
    stratum, a machine grade) changed since the draw leaves them wrong. A topics audit scores each
    topic under the people's and the machine's whole sets, so a label outside the frame would
    count in them (an extra relevant document in AP's denominator); methods §15.3 counts only the
    frame's pairs.
    """
    design, audit_id = record["design"], record["audit_id"]
    if design == "topics":
        now = pd.Series({"all": frame["query_id"].nunique()})
    elif record["stratify"] == "topic":
        now = frame.groupby("query_id").size()
    elif record["stratify"] == "grade":
        now = frame.groupby(frame["machine_grade"].map(_grade_text)).size()
    else:
        now = pd.Series({"all": len(frame)})
    drawn = strata.set_index("label")["population"]
    if not now.reindex(drawn.index).fillna(-1).astype(np.int64).equals(drawn.astype(np.int64)) or len(now) != len(drawn):
        unit = "topics" if design == "topics" else "pairs"
        raise InsufficientDataError(
            f"audit {audit_id!r} was drawn from {int(drawn.sum()):,} {unit} of frame {record['frame_id']!r} "
            f"(machine {record['machine_id']!r}); they are now {int(now.sum()):,}"
            + ("" if int(now.sum()) != int(drawn.sum()) else " in other strata")
            + ": the frame changed since the draw, and its weights no longer hold; draw the audit anew"
        )
    if design != "topics":
        return
    audited_topics = sorted(audited["query_id"].unique())
    if int(frame["query_id"].isin(audited_topics).sum()) != len(audited):
        raise InsufficientDataError(
            f"audit {audit_id!r}: its topics hold frame pairs the audit does not (the frame changed since the "
            "draw); draw the audit anew"
        )
    every_topic = sorted(frame["query_id"].unique())
    for who, qrels_id, topics in (("human", human_id, audited_topics), ("machine", record["machine_id"], every_topic)):
        found = wh.df(sql.query(_QUERIES, "outside_frame"), {"collection_id": collection, "frame_id": record["frame_id"],
                                                              "qrels_id": qrels_id, "topics": topics}).iloc[0]  # fmt: skip
        if int(found["outside"]):
            raise InsufficientDataError(
                f"{who} set {qrels_id!r} labels {int(found['outside']):,} pair(s) of the audit's topics outside its "
                f"frame {record['frame_id']!r}, e.g. topic {found['query_id']} document {found['doc_id']}: a topics "
                "audit scores each topic under the whole set, and they would count (methods §15.3); give a set "
                "of the frame's pairs alone"
            )


def estimate(
    wh: Store, collection: str, audit_id: str, human_id: str, measures: Sequence[str], *,
    runs: Sequence[str] | None = None, probabilities: bool = False, level: float = 0.95, rel: float = 1.0,
    weight: float | str = "tuned", differences: bool = False, baselines: Sequence[str] = (), all_pairs: bool = False,
    correction: str = "holm", ranks: bool = False, replicates: int | None = None, seed: int | None = None,
    interval: str = "auto",
) -> AuditEstimates:  # fmt: skip
    """Prediction-powered scores of runs from an audit and its human labels (``evalwh audit estimate``).

    Args:
        wh: The warehouse.
        collection: The collection.
        audit_id: A stored audit (:func:`draw_audit`, :func:`declare_audit`).
        human_id: The qrels set holding the people's labels of the audit's pairs.
        measures: Measure specs; a pairs audit takes P@k, RBP and dcg (methods §15.3).
        runs: The runs (None: every run).
        probabilities: Take the machine's stored probabilities (its expected gain) instead of
            its grades, for a pairs audit.
        level: The intervals' coverage.
        rel: Grades >= rel are relevant (a whole grade), for P@k and RBP without their own ``rel``
            and for a topics audit's measures; dcg takes the grades themselves.
        weight: ``tuned`` (PPI++: one weight for all the runs of a measure, methods §15.4), or a fixed
            lambda (1: PPI; 0: the audit alone).
        differences: Also estimate the paired differences of runs (the family of
            :func:`evalwh.stats.compare.family_pairs`), with p-values adjusted by ``correction``.
        baselines, all_pairs: The family, as ``evalwh compare`` takes them.
        correction: ``none``, ``bonferroni``, ``holm``, ``bh`` or ``by``.
        ranks: Also each run's rank under the estimates, its bootstrap rank interval at
            ``level`` (``replicates``, 2,000 by default, and ``seed``, 0; both refused without
            ``ranks``) and its tier from the paired differences of all pairs with ``correction``
            (methods §15.5).
        interval: How the runs' intervals are made from the estimate and its standard error:
            ``machine`` (a topics audit's default): with the points of the studentised estimate
            read off the machine's own per-topic values (:func:`evalwh.stats.ppi.machine_quantiles`,
            methods §15.4); ``t``: Student's t (a pairs audit's default); ``beta`` (a pairs audit,
            P@k only, not stratified by topic, without ``probabilities``): each run's P@k as a count
            post-stratified by the audit's strata and the machine's label, with its Jeffreys
            posterior interval (:func:`evalwh.stats.ppi_counts.poststratified_count`, methods
            §15.7; ``weight`` NaN). The differences' intervals and p-values, and the ranks, are
            prediction-powered with Student's t either way. The intervals of a measure whose SQL
            header declares its range (``Metric.limits``) are clipped to it, a difference's to
            minus to plus its width; the estimates are not (notes name the runs whose estimate lies
            outside, and count such differences; methods §15.4).

    Raises:
        NotFoundError: for an unknown audit, set or run.
        InsufficientDataError: when the human set leaves audited pairs unlabelled, when the frame
            changed since the draw, or when a topics audit's sets label pairs of its topics outside
            the frame.
        MetricParamError: for a measure the design (or ``interval``) cannot estimate.
    """
    from evalwh.stats import rank_intervals as ri
    from evalwh.stats.compare import family_pairs
    from scipy import stats

    from evalwh.stats.ppi import design_estimate, machine_quantiles, rank_intervals
    from evalwh.stats.significance import Correction, adjust_p, interval_alpha

    wh.require_collection(collection)
    record = audit_record(wh, collection, audit_id)
    _require_set(wh, collection, human_id, "human labels")
    if human_id == record["machine_id"]:
        raise MetricParamError(
            f"human set {human_id!r} is the machine set of audit {audit_id!r}: give the people's labels of its pairs"
        )
    if not isinstance(weight, str) and not np.isfinite(weight):
        raise MetricParamError(f"weight {weight!r}: give 'tuned' or a finite number")
    if not rel > 0 or not float(rel).is_integer():
        raise MetricParamError(f"relevance threshold {rel:g}: give a whole grade above 0 (1, 2, ...)")
    if not 0 < level < 1:
        raise MetricParamError(f"level {level!r}: give the intervals' coverage, between 0 and 1 (0.95)")
    Correction(correction)  # an unknown one is refused in one line, before any work
    if (baselines or all_pairs) and not differences:
        raise MetricParamError("baselines and all_pairs choose the family of differences: they apply with differences")
    if isinstance(measures, str):
        measures = [measures]
    if not measures:
        raise MetricParamError("give at least one measure (P@10, say)")
    if not ranks and (replicates is not None or seed is not None):
        raise MetricParamError("replicates and seed are the rank bootstrap's: they apply with ranks")
    replicates = 2000 if replicates is None else replicates
    seed = 0 if seed is None else seed
    if ranks and replicates < MIN_REPLICATES:
        raise MetricParamError(
            f"{replicates} bootstrap replicates: rank intervals need at least {MIN_REPLICATES} (2,000 by default)"
        )
    parsed = list({str(m): m for m in (catalog.parse(spec) for spec in measures)}.values())  # each measure once
    for m in parsed:
        check_measure(m, record["design"])
    if interval not in ("auto", "t", "machine", "beta"):
        raise MetricParamError(f"interval {interval!r}: give auto, t, machine or beta")
    if interval == "beta":
        beta_checks(record, parsed, probabilities)
    if interval == "machine" and record["design"] != "topics":
        raise MetricParamError(
            "--interval machine applies to a topics audit (a pairs audit's intervals are Student's t, methods §15.4)"
        )
    calibrated = record["design"] == "topics" and interval != "t"
    if probabilities and record["design"] != "pairs":
        raise MetricParamError(
            "--probabilities applies to a pairs audit (a topics audit scores the machine's grades)"
        )
    # every run is estimated, whatever runs are shown: the shared weight, the machine's points and the
    # differences' weight are the collection's, so that asking for fewer runs changes no number
    every_run = sorted(wh.run_ids(collection))
    run_ids = every_run if runs is None else list(dict.fromkeys(runs))
    unknown = sorted(set(run_ids) - set(every_run))
    if unknown or not run_ids:
        raise NotFoundError(
            f"collection {collection!r} has no run(s) {unknown or '(none given)'}; evalwh runs lists them"
        )
    if differences and len(run_ids) < 2:
        raise InsufficientDataError("differences need at least 2 runs")
    frame = frame_pairs(wh, collection, record["frame_id"], record["machine_id"])
    frame["pair_no"] = np.arange(len(frame))
    audited = wh.df(sql.query(_QUERIES, "audit_labels"),
                    {"collection_id": collection, "audit_id": audit_id, "human_id": human_id})  # fmt: skip
    unlabelled = audited["human_grade"].isna()
    if unlabelled.any():
        row = audited[unlabelled].iloc[0]
        raise InsufficientDataError(
            f"human set {human_id!r} leaves {int(unlabelled.sum())} of the audit's {len(audited)} pairs unlabelled, "
            f"e.g. topic {row['query_id']} document {row['doc_id']}: an audit with pairs left out is no longer "
            "a random sample; judge them, or declare the pairs judged as an audit of their own"
        )
    audited = audited.merge(
        frame[["query_id", "doc_id", "pair_no"]], on=["query_id", "doc_id"], how="left"
    )
    if audited["pair_no"].isna().any():
        raise InsufficientDataError(
            f"audit {audit_id!r} holds pairs its frame {record['frame_id']!r} no longer has"
        )
    audited["pair_no"] = audited["pair_no"].astype(np.int64)
    strata = wh.df(
        sql.query(_QUERIES, "strata"), {"collection_id": collection, "audit_id": audit_id}
    )
    _check_frame(wh, collection, record, frame, audited, strata, human_id)
    machine_probs: pd.DataFrame | None = None
    if probabilities:
        machine_probs = wh.df(sql.query(_QUERIES, "probabilities"),
                              {"collection_id": collection, "machine_id": record["machine_id"]})  # fmt: skip
        machine_probs = frame[["query_id", "doc_id"]].merge(
            machine_probs, on=["query_id", "doc_id"], how="left"
        )
        if machine_probs["probs"].isna().any():
            raise InsufficientDataError(
                f"machine set {record['machine_id']!r} has no stored probabilities for "
                f"{int(machine_probs['probs'].isna().sum())} frame pair(s); ingest its LARA file, or leave out --probabilities"
            )
    wh.con.register("audit_frame", frame[["pair_no", "query_id", "doc_id"]])
    wh.con.register(
        "audit_runs", pd.DataFrame({"run_no": np.arange(len(every_run)), "run_id": every_run})
    )
    if record["design"] == "topics":
        units = audited.drop_duplicates("query_id")
        unit_strata = np.zeros(len(units), dtype=np.int64)
    else:
        units = audited
        unit_strata = audited["stratum"].to_numpy(np.int64)
    population = strata["population"].to_numpy(float)
    if ranks and len(run_ids) < 2:
        raise InsufficientDataError("ranks need at least 2 runs")
    family = family_pairs(run_ids, baselines, all_pairs=all_pairs) if differences else []
    # tiers need every pair of runs: the family itself when it is all pairs, else a second one
    every = family_pairs(run_ids, all_pairs=True) if ranks else []
    index = {r: i for i, r in enumerate(every_run)}
    shown = np.array([index[r] for r in run_ids])
    out_runs, out_pairs, out_ranks = [], [], []
    notes: list[str] = []

    def paired(m: catalog.Measure, y: np.ndarray, f: np.ndarray, total: np.ndarray, bound: np.ndarray | None,
               pairs: list[tuple[str, str]]) -> pd.DataFrame:  # fmt: skip
        a = np.array([index[p[0]] for p in pairs])
        b = np.array([index[p[1]] for p in pairs])
        alpha = interval_alpha("t", correction, 1 - level, len(pairs))
        span = None if m.metric.limits is None else m.metric.limits[1] - m.metric.limits[0]
        # the weight of all pairs of the collection's runs (tuned on their values centred on the runs'
        # mean, methods §15.5), whatever the family and the runs shown
        tuning = (y - y.mean(axis=1, keepdims=True), f - f.mean(axis=1, keepdims=True)) if weight == "tuned" else None
        d = design_estimate(y[:, a] - y[:, b], f[:, a] - f[:, b], total[a] - total[b], strata=unit_strata,
                            population=population, weight=weight, level=1 - alpha,
                            bound=None if bound is None else bound[a] + bound[b],
                            limits=None if span is None else (-span, span), tuning=tuning)  # fmt: skip
        adjusted = adjust_p(d.p_value, correction)
        return pd.DataFrame({
            "measure": str(m), "run_a": [p[0] for p in pairs], "run_b": [p[1] for p in pairs],
            "diff": d.estimate, "ci_low": d.lower, "ci_high": d.upper, "se": d.se, "p_value": d.p_value,
            "p_adjusted": adjusted, "reject": adjusted < 1 - level, "human_diff": d.human,
            "machine_diff": d.machine, "weight": d.weight, "effective_n": d.effective_n,
        })  # fmt: skip
    try:
        for m in parsed:
            gain = (
                None
                if machine_probs is None
                else expected_gains(m, machine_probs["probs"].tolist(), rel)
            )
            y, f, total, bound, per_topic, matrix = _unit_matrices(wh, collection, record, m, every_run, frame, units,
                                                                   gain, human_id, rel)  # fmt: skip
            points = machine_quantiles(per_topic, len(units), level=level) if calibrated else None
            e_all = design_estimate(y, f, total, strata=unit_strata, population=population, weight=weight,
                                    level=level, bound=bound, quantiles=points, limits=m.metric.limits)  # fmt: skip
            e = _columns_of(e_all, shown)
            if not y.any() and not total.any():
                cut = dict(m.options).get("rel", rel)
                notes.append(f"{m}: no label of the people's or the machine's reaches relevance {cut:g}: every value is 0")
            if record["design"] == "topics" and weight == "tuned" and len(units) < 3:
                notes.append(f"{m}: the tuned weight needs an audit of 3 topics or more; with {len(units)} the estimates "
                             "are the audit alone's (weight 0, methods §15.4)")  # fmt: skip
            if calibrated:  # the runs' intervals (result.runs), also beside differences
                t = float(stats.t.ppf((1 + level) / 2, max(len(units) - 1, 1)))
                notes.append(f"{m}: intervals are estimate - u se, u from {points[0]:.2f} to {points[1]:.2f}, the points of "
                             f"the studentised estimate over 4,000 audits of {len(units)} topics of the machine's own "
                             f"values (Student's t: -{t:.2f} to {t:.2f}; methods §15.4)" if points is not None else
                             f"{m}: no audit of {len(units)} topics of the machine's values varies (a census, or a machine "
                             "constant over the topics); intervals with Student's t")  # fmt: skip
            if record["design"] == "pairs":  # (with --interval beta too: such runs are often held too narrowly)
                notes.extend(_agreement_note(m, y[:, shown], f[:, shown], run_ids))
            if interval == "beta":
                counted = _beta_runs(matrix, m, every_run, frame, units, strata, record, e_all, level, rel)
                out_runs.append(counted.iloc[shown].reset_index(drop=True))
                notes.append(f"{m}: estimates are post-stratified counts (the audit's strata and the machine's label), "
                             "intervals their Jeffreys posterior's; weight is not used (methods §15.7)"
                             + ("; differences and ranks stay prediction-powered (Student's t)" if family or ranks else ""))  # fmt: skip
            else:
                notes.extend(_outside_note(m, e, run_ids))
                out_runs.append(pd.DataFrame({
                    "measure": str(m), "run_id": run_ids, "design": record["design"], "estimate": e.estimate,
                    "ci_low": e.lower, "ci_high": e.upper, "se": e.se, "human": e.human, "human_low": e.human_lower,
                    "human_high": e.human_upper, "machine": e.machine, "weight": e.weight, "audited": e.n,
                    "effective_n": e.effective_n,
                }))  # fmt: skip
            if family:
                out_pairs.append(paired(m, y, f, total, bound, family))
                if m.metric.limits is not None:  # a difference lies within minus to plus the range's width
                    width = m.metric.limits[1] - m.metric.limits[0]
                    beyond = int((out_pairs[-1]["diff"].abs() > width + 1e-12).sum())
                    if beyond:
                        notes.append(f"{m}: the estimated difference of {beyond} of {len(family)} pairs lies outside "
                                     f"[-{width:g}, {width:g}] (an unbiased estimate can, on a small audit); the intervals "
                                     "are clipped to it (methods §15.4)")  # fmt: skip
            if ranks:
                every_pairs = out_pairs[-1] if family == every else paired(m, y, f, total, bound, every)
                found = rank_intervals(  # widened to Student's intervals, also for a topics audit (methods §15.5)
                    y[:, shown], f[:, shown], total[shown], e.weight, strata=unit_strata, population=population,
                    se=e.se, df=e.df, confidence=level, replicates=replicates, seed=seed,
                )  # fmt: skip
                table = pd.DataFrame({
                    "measure": str(m), "run_id": run_ids, "estimate": e.estimate, "rank": found.rank,
                    "rank_low": found.low, "rank_high": found.high,
                    "tier": ri.tiers(e.estimate, ri.distinguishable(every_pairs, run_ids)),
                })  # fmt: skip
                out_ranks.append(table.sort_values(["rank", "tier", "run_id"], kind="stable", ignore_index=True))
    finally:
        wh.con.unregister("audit_frame")
        wh.con.unregister("audit_runs")
    if record["declared"]:
        notes.append(
            f"audit {audit_id!r} was drawn elsewhere and declared; its check found: {record['check_note']}"
        )
    pairs = pd.concat(out_pairs, ignore_index=True) if differences else None
    if differences:
        notes.append(
            f"differences: {correction} over {len(family)} pairs per measure, alpha {1 - level:g}, Student's t"
        )
    rank_table = None
    if ranks:
        rank_table = pd.concat(out_ranks, ignore_index=True)
        unit = "topic" if record["design"] == "topics" else "pair, within its stratum"
        resampled = (
            f"(a Gaussian multiplier on each audited {unit}, the machine's totals fixed), widened to the "
            "estimates' Student's t intervals"
        )
        named = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg", "by": "Benjamini-Yekutieli"}
        over = "no correction" if correction == "none" else f"{named.get(correction, correction)} over all pairs"
        notes.append(
            f"rank interval: the {level:.0%} percentile interval of the run's rank under the prediction-powered "
            f"estimates over {replicates:,} bootstrap samples {resampled} (seed {seed}); tier: the runs the paired "
            f"prediction-powered difference ({over}, alpha {1 - level:g}) cannot tell from the tier's best run, "
            "then the same among the rest"
        )
    return AuditEstimates(pd.concat(out_runs, ignore_index=True), pairs, notes, rank_table)
