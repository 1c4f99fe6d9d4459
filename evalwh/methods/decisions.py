"""The decision matrix over a warehouse collection: read scores, test, classify, store.

Per-topic scores come from :func:`evalwh.measures.evaluation.evaluate` in one call per collection
(all depths and both metrics of a pairing at once); the statistics are the pure functions
of :mod:`evalwh.stats.significance` and :mod:`evalwh.stats.decision`. Pairings (methods
§2.5): ``P`` pairs P@d with A_p@d, ``MAP`` pairs AP@d (MAP@d) with A_p@d, and both tables
end with the full-list MAP/MAA column (AP with AA).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalwh import sql
from evalwh.errors import MetricParamError, NotFoundError
from evalwh.measures.evaluation import evaluate
from evalwh.store.context import composition_label

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from evalwh.store.connection import Store

DEFAULT_DEPTHS = (10, 30, 100, 500, 1000)
# the papers' names for the performance side: P@d, and MAP@d (AP@d)
PERFORMANCE = {"P": "P", "MAP": "AP", "AP": "AP"}
ASSESSMENT = "A_p"
# the full-list column of each assessment measure: AP against the whole-list assessment
FULL_ASSESSMENT = {"A_p": "AA", "A_p_ret": "AA_ret", "RBP_resid": "RBP_resid"}
FULL_COLUMN = "MAP/MAA"
_QUERIES = "evalwh.queries.decisions"

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class DecisionMatrix:
    """The result of :func:`decision_matrix`.

    Attributes:
        pairs: One row per (pairing, pair of runs), the columns of
            :func:`evalwh.stats.decision.decision_pairs` after ``collection_id, column,
            performance, assessment, depth``.
        summary: Case proportions per pairing (:func:`evalwh.stats.decision.case_proportions`).
        table: The papers' layout (:func:`evalwh.stats.decision.proportion_table`).
        run_set: Short hash of the sorted run ids tested together (the stored key).
    """

    pairs: pd.DataFrame
    summary: pd.DataFrame
    table: pd.DataFrame
    run_set: str


@dataclass(frozen=True)
class PairComparison:
    """The result of :func:`compare_runs`.

    Attributes:
        pairs: The pair's rows, one per pairing (same columns as ``DecisionMatrix.pairs``).
        intervals: ``column, kind, measure, depth, run_id, mean, half_width`` for both runs:
            Bonferroni comparison intervals of the family (for the pair figure).
    """

    pairs: pd.DataFrame
    intervals: pd.DataFrame


def pairings(
    measure: str, depths: Sequence[int] | None, *, full: bool = True, assessment: str = ASSESSMENT
) -> list[tuple[str, str, str, int | None]]:
    """The (column label, performance spec, assessment spec, depth) of each matrix column.

    ``measure`` is any measure that takes a depth, without the depth: ``P``, ``MAP`` (= AP),
    ``nDCG``, ``RBP(p=0.9)``, ``bpref``, ... ``assessment`` is ``A_p`` (the papers'),
    ``A_p_ret`` or ``RBP_resid`` (with its own ``p``, e.g. ``RBP_resid(p=0.9)``). The full-list
    column pairs AP with the assessment measure over the whole list (AA for A_p).

    Examples:
        >>> pairings("MAP", [10, 30])
        [('@10', 'AP@10', 'A_p@10', 10), ('@30', 'AP@30', 'A_p@30', 30), ('MAP/MAA', 'AP', 'AA', None)]
        >>> pairings("nDCG", [10], full=False, assessment="RBP_resid(p=0.9)")
        [('@10', 'nDCG@10', 'RBP_resid(p=0.9)@10', 10)]
    """
    chosen = list(DEFAULT_DEPTHS if depths is None else depths)
    if any(int(d) < 1 for d in chosen):
        raise MetricParamError(f"decision matrix: depths must be positive integers, got {chosen}")
    perf = _at_depth(PERFORMANCE.get(measure, measure), "performance")
    assess = _at_depth(assessment, "assessment")
    out: list[tuple[str, str, str, int | None]] = [
        (f"@{d}", perf(int(d)), assess(int(d)), int(d)) for d in dict.fromkeys(chosen)
    ]
    if full:
        from evalwh.measures import catalog

        base = catalog.parse(assessment, k=1)
        whole = FULL_ASSESSMENT[base.metric.name]
        spec = str(catalog.parse(whole + assessment[len(assessment.split("(")[0]):]))
        label = FULL_COLUMN if whole == "AA" else f"MAP/{spec}"
        out.append((label, "AP", spec, None))
    if not out:
        raise MetricParamError("decision matrix: no depths and no MAP/MAA column; nothing to test")
    return out


def assessment_inverted(spec: str) -> bool:
    """True where a higher value of the assessment measure means *less* assessed (RBP residual).

    Examples:
        >>> assessment_inverted("A_p@10"), assessment_inverted("RBP_resid@10")
        (False, True)
    """
    from evalwh.measures import catalog

    return catalog.parse(spec).metric.kind == "uncertainty"


def _at_depth(spec: str, side: str) -> Callable[[int], str]:
    """A function from a depth to the spec at that depth, after checking the spec once."""
    from evalwh.measures import catalog

    if "@" in spec:
        raise MetricParamError(
            f"decision matrix: give the {side} measure without a depth ({spec!r}); "
            "the depths come from --depths"
        )
    measure = catalog.parse(spec, k=1)  # a depth-less spec; parse it at any depth to check it
    if measure.metric.param("k") is None:
        raise MetricParamError(
            f"decision matrix: {measure.metric.name} takes no depth, so it cannot be the "
            f"{side} measure at depth d"
        )
    if side == "assessment" and measure.metric.name not in FULL_ASSESSMENT:
        raise MetricParamError(
            f"decision matrix: the assessment measure must be one of {sorted(FULL_ASSESSMENT)}, "
            f"got {measure.metric.name!r}"
        )
    return lambda d: str(catalog.parse(spec, k=d))


def run_set_key(runs: Sequence[str]) -> str:
    """A short, order-independent hash of a family of run ids (the stored key).

    Examples:
        >>> run_set_key(["b", "a"]) == run_set_key(["a", "b"])
        True
    """
    return hashlib.sha256("\n".join(sorted(runs)).encode()).hexdigest()[:12]


def decision_matrix(
    wh: Store,
    collection: str,
    *,
    measure: str = "P",
    depths: Sequence[int] | None = DEFAULT_DEPTHS,
    full: bool = True,
    assessment: str = ASSESSMENT,
    runs: Sequence[str] | None = None,
    test: str = "anova",
    correction: str = "bonferroni",
    alpha: float = 0.05,
    qrels_id: str = "default",
    fill: Sequence[str] = (),
    n_resamples: int = 9999,
    rng: np.random.Generator | int | None = None,
    store: bool = False,
    progress: Progress | None = None,
) -> DecisionMatrix:
    """Classify every pair of runs of a collection at every depth (methods §4).

    Args:
        wh: The warehouse.
        collection: The collection.
        measure: The performance measure without depth: ``P`` (P@d, the papers'), ``MAP``
            (AP@d) or any measure that takes a depth (``nDCG``, ``RBP(p=0.9)``, ``bpref``).
        depths: The depths d; the default grid when None.
        full: Add the full-list MAP/MAA column (AP with AA).
        assessment: The assessment measure without depth: ``A_p`` (default), ``A_p_ret`` or
            ``RBP_resid`` (whose outcomes are read inverted: a larger residual is less assessed).
        runs: The family of runs tested together; all runs of the collection when None.
        test: ``anova`` (default, as the papers) or any
            :class:`~evalwh.stats.significance.Procedure`.
        correction: ``bonferroni``, ``holm``, ``bh``, ``by`` or ``none`` over the pairs of a
            column (``none`` for the Tukey procedures).
        alpha: Significance level.
        qrels_id: The qrels set to evaluate against.
        fill: Sets whose labels fill the pairs ``qrels_id`` did not judge, in order
            (:func:`evalwh.measures.evaluation.evaluate`); the pairs then carry a
            ``qrels_id`` column naming the sets (``A+B``), which is also the key they are stored under.
        n_resamples: Resamples of the randomization test.
        rng: Random generator or seed (resampling tests only).
        store: Keep pairs and proportions in ``decision_pairs`` and ``decision_summary``.
        progress: Called with (columns done, columns) after each column.

    Returns:
        A :class:`DecisionMatrix`.

    Raises:
        NotFoundError: for an unknown collection, run or qrels set.
        MetricParamError: for an unknown measure or a bad depth.
        InsufficientDataError: for fewer than two runs or topics.

    Examples:
        >>> import pandas as pd
        >>> from evalwh import Warehouse
        >>> wh = Warehouse(":memory:")
        >>> qrels = pd.DataFrame({"query_id": ["1", "2", "3"] * 2, "doc_id": ["a"] * 3 + ["b"] * 3,
        ...                       "relevance": [1, 1, 1, 0, 0, 0]})
        >>> _ = wh.ingest_qrels(qrels, collection="demo")
        >>> for run, docs in {"good": ["a", "b"], "poor": ["b", "a"]}.items():
        ...     lines = pd.DataFrame({"query_id": ["1", "2", "3"] * 2, "doc_id": [docs[0]] * 3 + [docs[1]] * 3,
        ...                           "score": [2.0] * 3 + [1.0] * 3})
        ...     _ = wh.ingest_runs(lines, collection="demo", run_id=run)
        >>> dm = decision_matrix(wh, "demo", measure="P", depths=[1, 2], full=False)
        >>> dm.pairs[["column", "perf_outcome", "assess_outcome", "case"]].values.tolist()
        [['@1', '>>', '==', '3a'], ['@2', '==', '==', '1']]
    """
    import pandas as pd

    from evalwh.stats import decision

    columns = pairings(measure, depths, full=full, assessment=assessment)
    family = list(runs) if runs is not None else wh.run_ids(collection)
    scores = _per_topic(wh, collection, columns, family, qrels_id, fill)
    frames = []
    for done, (label, perf, assess, depth) in enumerate(columns, start=1):
        pairs = decision.decision_pairs(
            scores[scores["measure"] == perf],
            scores[scores["measure"] == assess],
            test=test,
            correction=correction,
            alpha=alpha,
            runs=family,
            n_resamples=n_resamples,
            rng=rng,
            invert_assessment=assessment_inverted(assess),
        )
        pairs.insert(0, "depth", depth)
        pairs.insert(0, "assessment", assess)
        pairs.insert(0, "performance", perf)
        pairs.insert(0, "column", label)
        frames.append(pairs)
        if progress is not None:
            progress(done, len(columns))
    all_pairs = pd.concat(frames, ignore_index=True)
    all_pairs["depth"] = all_pairs["depth"].astype("Int64")
    if fill:
        all_pairs.insert(0, "qrels_id", composition_label(qrels_id, fill))
    all_pairs.insert(0, "collection_id", collection)
    summary = decision.case_proportions(
        all_pairs, by=["collection_id", "column", "performance", "assessment", "depth"]
    )
    table = decision.proportion_table(summary)
    key = run_set_key(family)
    if store:
        _store(
            wh, collection, all_pairs, summary, key, len(family), test, correction, alpha,
            composition_label(qrels_id, fill),
        )
    return DecisionMatrix(all_pairs, summary, table, key)


def compare_runs(
    wh: Store,
    collection: str,
    run_a: str,
    run_b: str,
    *,
    measure: str = "P",
    depths: Sequence[int] | None = DEFAULT_DEPTHS,
    full: bool = True,
    assessment: str = ASSESSMENT,
    runs: Sequence[str] | None = None,
    test: str = "anova",
    correction: str = "bonferroni",
    alpha: float = 0.05,
    qrels_id: str = "default",
    fill: Sequence[str] = (),
    n_resamples: int = 9999,
    rng: np.random.Generator | int | None = None,
) -> PairComparison:
    """Compare two runs at every depth, tested within a family of runs (methods §4).

    With the ANOVA procedures and with a correction, a pair's verdict depends on the other
    runs tested with it (pooled error, family size), so the pair is tested within ``runs``:
    the whole collection by default, as in the papers; pass ``[run_a, run_b]`` for the pair
    alone.

    Args:
        wh: The warehouse.
        collection: The collection.
        run_a: The first run; outcomes read "run_a >> run_b".
        run_b: The second run.
        measure: The performance measure without depth, as in :func:`decision_matrix`.
        depths: The depths d; the default grid when None.
        full: Add the full-list MAP/MAA row.
        assessment: The assessment measure without depth, as in :func:`decision_matrix`.
        runs: The family tested together (must contain both runs); all runs when None.
        test: As in :func:`decision_matrix`.
        correction: As in :func:`decision_matrix`.
        alpha: Significance level.
        qrels_id: The qrels set.
        fill: Sets that fill the pairs ``qrels_id`` did not judge, as in :func:`decision_matrix`.
        n_resamples: Resamples of the randomization test.
        rng: Random generator or seed.

    Returns:
        A :class:`PairComparison`.

    Raises:
        NotFoundError: if a run is unknown or not in ``runs``.

    Examples:
        >>> import pandas as pd
        >>> from evalwh import Warehouse
        >>> wh = Warehouse(":memory:")
        >>> qrels = pd.DataFrame({"query_id": ["1", "2", "3"], "doc_id": ["a"] * 3, "relevance": [1] * 3})
        >>> _ = wh.ingest_qrels(qrels, collection="demo")
        >>> for run, doc in {"x": "a", "y": "z"}.items():
        ...     lines = pd.DataFrame({"query_id": ["1", "2", "3"], "doc_id": [doc] * 3, "score": [1.0] * 3})
        ...     _ = wh.ingest_runs(lines, collection="demo", run_id=run)
        >>> out = compare_runs(wh, "demo", "y", "x", depths=[1], full=False)
        >>> out.pairs[["run_a", "run_b", "perf_outcome", "assess_outcome", "case", "strength"]].values.tolist()
        [['y', 'x', '<<', '<<', '4', 'weak']]
    """
    import pandas as pd

    from evalwh.stats import decision, significance

    family = list(runs) if runs is not None else wh.run_ids(collection)
    for run in (run_a, run_b):
        if run not in family:
            where = "the runs given" if runs is not None else f"collection {collection!r}"
            raise NotFoundError(
                f"compare: run {run!r} is not in {where}; evalwh runs -c {collection} lists them"
            )
    if run_a == run_b:
        raise NotFoundError(f"compare: run_a and run_b are both {run_a!r}; name two different runs")
    # the pair first, so that the pair (run_a, run_b) keeps its orientation
    order = [run_a, run_b, *[r for r in family if r not in (run_a, run_b)]]
    columns = pairings(measure, depths, full=full, assessment=assessment)
    scores = _per_topic(wh, collection, columns, order, qrels_id, fill)
    rows = []
    intervals = []
    for label, perf, assess, depth in columns:
        pairs = decision.decision_pairs(
            scores[scores["measure"] == perf],
            scores[scores["measure"] == assess],
            test=test,
            correction=correction,
            alpha=alpha,
            runs=order,
            n_resamples=n_resamples,
            rng=rng,
            invert_assessment=assessment_inverted(assess),
        )
        row = pairs.iloc[[0]].copy()
        for name, value in (
            ("depth", depth),
            ("assessment", assess),
            ("performance", perf),
            ("column", label),
        ):
            row.insert(0, name, value)
        rows.append(row)
        for kind, spec in (("performance", perf), ("assessment", assess)):
            ci = significance.comparison_intervals(
                scores[scores["measure"] == spec], alpha=alpha, runs=order, blocked=test == "anova2"
            ).iloc[:2]
            ci.insert(0, "depth", depth)
            ci.insert(0, "measure", spec)
            ci.insert(0, "kind", kind)
            ci.insert(0, "column", label)
            intervals.append(ci)
    out = pd.concat(rows, ignore_index=True)
    out["depth"] = out["depth"].astype("Int64")
    if fill:
        out.insert(0, "qrels_id", composition_label(qrels_id, fill))
    out.insert(0, "collection_id", collection)
    ci_frame = pd.concat(intervals, ignore_index=True)
    ci_frame["depth"] = ci_frame["depth"].astype("Int64")
    return PairComparison(out, ci_frame)


def run_profile(
    wh: Store,
    collection: str,
    *,
    measure: str = "MAP",
    depths: Sequence[int] | None = DEFAULT_DEPTHS,
    runs: Sequence[str] | None = None,
    qrels_id: str = "default",
    fill: Sequence[str] = (),
) -> pd.DataFrame:
    """Mean performance and assessment per run and depth (the papers' collection figures).

    Returns:
        ``run_id, kind, measure, depth, value`` with kind ``performance`` or ``assessment``.

    Examples:
        >>> import pandas as pd
        >>> from evalwh import Warehouse
        >>> wh = Warehouse(":memory:")
        >>> _ = wh.ingest_qrels(pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]}), collection="demo")
        >>> _ = wh.ingest_runs(pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [2.0, 1.0]}),
        ...                    collection="demo", run_id="r")
        >>> run_profile(wh, "demo", measure="P", depths=[2])[["kind", "measure", "value"]].values.tolist()
        [['performance', 'P@2', 0.5], ['assessment', 'A_p@2', 0.5]]
    """
    columns = pairings(measure, depths, full=False)
    specs = [spec for _, perf, assess, _ in columns for spec in (perf, assess)]
    means = evaluate(wh, specs, collection=collection, runs=runs, qrels_id=qrels_id, fill=fill)
    depth_of = {spec: d for _, perf, assess, d in columns for spec in (perf, assess)}
    kind_of = {perf: "performance" for _, perf, _, _ in columns} | {
        a: "assessment" for _, _, a, _ in columns
    }
    out = means[["run_id", "measure", "value"]].copy()
    out.insert(1, "kind", out["measure"].map(kind_of))
    out.insert(3, "depth", out["measure"].map(depth_of).astype("Int64"))
    return out.reset_index(drop=True)


def rank_correlation(
    wh: Store,
    collection: str,
    *,
    x: str = "AP",
    y: str = "A_p@1000",
    runs: Sequence[str] | None = None,
    qrels_id: str = "default",
    fill: Sequence[str] = (),
) -> dict[str, Any]:
    """Kendall's tau_b between the run rankings by two measures (methods §4.5).

    Returns:
        ``x, y, tau, p_value, n_runs``.

    Examples:
        >>> import pandas as pd
        >>> from evalwh import Warehouse
        >>> wh = Warehouse(":memory:")
        >>> _ = wh.ingest_qrels(pd.DataFrame({"query_id": ["1"] * 2, "doc_id": ["a", "b"], "relevance": [1, 0]}),
        ...                     collection="demo")
        >>> for run, docs in {"r1": ["a"], "r2": ["b", "a"], "r3": ["x", "b", "a"]}.items():
        ...     lines = pd.DataFrame({"query_id": ["1"] * len(docs), "doc_id": docs,
        ...                           "score": [float(-i) for i in range(len(docs))]})
        ...     _ = wh.ingest_runs(lines, collection="demo", run_id=run)
        >>> out = rank_correlation(wh, "demo", x="AP", y="A_p@1")
        >>> round(out["tau"], 4), out["n_runs"]
        (0.8165, 3)
    """
    from evalwh.stats import significance

    means = evaluate(wh, [x, y], collection=collection, runs=runs, qrels_id=qrels_id, fill=fill)
    series = {m: g.set_index("run_id")["value"] for m, g in means.groupby("measure")}
    names = list(dict.fromkeys(means["measure"]))
    result = significance.kendall_tau(series[names[0]], series[names[-1]])
    return {"x": names[0], "y": names[-1], **result}


def strength_changes(
    wh: Store, collection: str, *, measure: str, from_depth: int, to_depth: int
) -> pd.DataFrame:
    """Stored pairs whose verdict changed strength between two depths (strong to weak or back).

    Reads ``decision_pairs``, so the matrix must have been computed with ``store=True``.

    Returns:
        ``run_a, run_b, test, correction, alpha, from_case, to_case, from_strength, to_strength``.
    """
    perf = PERFORMANCE.get(measure, measure)
    params = {
        "collection_id": collection,
        "measure": perf,
        "from_depth": from_depth,
        "to_depth": to_depth,
    }
    return wh.df(sql.query(_QUERIES, "strength_changes"), params)


def _per_topic(
    wh: Store,
    collection: str,
    columns: list[tuple[str, str, str, int | None]],
    runs: list[str],
    qrels_id: str,
    fill: Sequence[str] = (),
) -> pd.DataFrame:
    """Per-topic values of every measure of the columns, in one evaluation."""
    specs = list(dict.fromkeys(spec for _, perf, assess, _ in columns for spec in (perf, assess)))
    frame = evaluate(wh, specs, collection=collection, runs=runs, per_query=True, qrels_id=qrels_id, fill=fill)
    return frame[["run_id", "query_id", "measure", "value"]]


def _store(
    wh: Store,
    collection: str,
    pairs: pd.DataFrame,
    summary: pd.DataFrame,
    run_set: str,
    n_runs: int,
    test: str,
    correction: str,
    alpha: float,
    qrels_id: str,
) -> None:
    """Replace the stored rows of the same pairings, options and run family."""
    from evalwh.stats.significance import Correction, Procedure

    params = {
        "collection_id": collection,
        "test": Procedure(test).value,
        "correction": Correction(correction).value,
        "alpha": float(alpha),
        "qrels_id": qrels_id,
        "run_set": run_set,
        "n_runs": n_runs,
    }
    with wh.transaction():
        wh.con.register("dm_pairs", pairs)
        wh.con.register("dm_summary", summary)
        try:
            wh.run(sql.query(_QUERIES, "store_pairs"), params)
            wh.run(sql.query(_QUERIES, "store_summary"), params)
        finally:
            wh.con.unregister("dm_pairs")
            wh.con.unregister("dm_summary")
