"""Evaluation: build the evaluation context, run the metric queries, average.

The context (:mod:`evalwh.store.context`, ``queries/context/*.sql``) turns one collection,
qrels set and option set into a few temporary relations: ``ev_judged`` (the judged rows of
every ranked list, with running counts) and ``ev_pairs`` (one row per evaluated run and topic
with m, R and N). Every metric query in ``queries/metrics/`` reads only those, so the options
apply to all metrics alike.
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from evalwh import sql
from evalwh.errors import MetricParamError
from evalwh.measures import catalog
from evalwh.store.context import Averaging, Options, Unjudged, build_context

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.store.connection import Store

_CONTEXT = "evalwh.queries.context"
_REPORTS = "evalwh.queries.reports"
_OPTIONS = "evalwh.queries.options"


def evaluate(
    wh: Store,
    measures: list[str],
    *,
    collection: str,
    runs: Sequence[str] | None = None,
    per_query: bool = False,
    depths: Sequence[int] | None = None,
    qrels_id: str = "default",
    rel: int = 1,
    unjudged: Unjudged | str = Unjudged.nonrelevant,
    depth_cap: int | None = None,
    float32_ties: bool = False,
    averaging: Averaging | str = Averaging.default,
    store: bool = False,
    typed_names: bool = False,
    fill: Sequence[str] = (),
) -> pd.DataFrame:
    """Evaluate runs of a collection with the given measures.

    Args:
        wh: The warehouse.
        measures: Measure specs (``P@10``, ``AP``, ``nDCG@10``, ``all_trec``, ...).
        collection: The collection.
        runs: Runs to evaluate; all runs of the collection when None.
        per_query: Return per-topic values instead of means.
        depths: Expand every spec without ``@k`` to one measure per depth.
        qrels_id: The qrels set to evaluate against.
        rel: Relevance threshold: grade >= rel is relevant (trec_eval -l).
        unjudged: ``nonrelevant`` (assumed) or ``condensed`` (removed; trec_eval -J).
        depth_cap: Keep only the first documents of each ranking (trec_eval -M).
        float32_ties: Order on scores rounded to float32 (trec_eval <= 9.0.8).
        averaging: Topic set and averaging policy (methods §0.4).
        store: Also keep the results in the warehouse's ``results`` table.
        typed_names: Report each measure under the name it was given (``map``,
            ``RBP(p=0.8)@10``) instead of its canonical one (``AP``, ``RBP@10``).
        fill: Qrels sets whose labels fill the (topic, document) pairs ``qrels_id`` did not
            judge, in order: the first set with a non-negative grade for a pair labels it
            (``queries/context/01_qrels_composed.sql``).

    Returns:
        Long form. Per topic: ``collection_id, run_id, query_id, measure, value`` plus the
        option columns. Means: ``collection_id, run_id, measure, value, n_topics,
        n_undefined`` plus the option columns. The ``qrels_id`` column names the sets used:
        ``A``, or ``A+B`` for A filled from B.

    Raises:
        UnknownMetricError, MetricParamError: for bad measure specs.
        NotFoundError: for an unknown collection, run or qrels set.

    Examples:
        >>> import pandas as pd
        >>> from evalwh import Warehouse
        >>> wh = Warehouse(":memory:")
        >>> _ = wh.ingest_qrels(pd.DataFrame({"query_id": ["1"] * 3, "doc_id": ["a", "b", "c"],
        ...                                    "relevance": [1, 0, 1]}), collection="demo")
        >>> _ = wh.ingest_runs(pd.DataFrame({"query_id": ["1"] * 3, "doc_id": ["a", "b", "x"],
        ...                                   "score": [3.0, 2.0, 1.0]}), collection="demo", run_id="r1")
        >>> wh.evaluate(["P@2", "AP", "A_p@3"], collection="demo")[["measure", "value"]].values.tolist()
        [['P@2', 0.5], ['AP', 0.5], ['A_p@3', 0.6666666666666666]]
    """
    options = Options(
        qrels_id=qrels_id,
        rel=rel,
        unjudged=Unjudged(unjudged),
        depth_cap=depth_cap,
        float32_ties=float32_ties,
        averaging=Averaging(averaging),
        fill=_fill(fill),
    )
    parsed = parse_measures(measures, depths, options)
    _import_pandas_meanwhile()  # (beside the context's queries too, not only the metrics')
    with wh.transaction():
        build_context(wh, collection, runs, options)
        return compute(
            wh, collection, parsed, options, per_query=per_query, store=store, typed_names=typed_names
        )


def _fill(fill: str | Sequence[str] | None) -> tuple[str, ...]:
    """The fill sets as a tuple (one name alone is one set, not its characters)."""
    if fill is None:
        return ()
    return (fill,) if isinstance(fill, str) else tuple(fill)


def parse_measures(
    measures: Sequence[str | catalog.Measure], depths: Sequence[int] | None, options: Options
) -> list[catalog.Measure]:
    """Parse and expand measure specs, refusing those the options leave undefined.

    A spec is a measure already parsed, or a string: ir_measures' grammar (:mod:`evalwh.measures.catalog`)
    or a trec_eval name (:mod:`evalwh.measures.trec_names`).
    """
    expanded: list[catalog.Measure] = []
    for spec in measures:
        if isinstance(spec, catalog.Measure):
            expanded.append(spec)
        else:
            found = _parse_spec(spec, depths)
            if len(found) == 1 and found[0].label is None:  # reported as typed (P_10 stays P_10)
                found = [replace(found[0], label=spec.strip())]
            expanded.extend(found)
    unique: dict[str, catalog.Measure] = {}
    for measure in expanded:
        unique.setdefault(str(measure), measure)
    parsed = list(unique.values())
    if not parsed:
        raise MetricParamError("no measures given; evalwh metrics lists them")
    if options.unjudged is Unjudged.condensed:
        bad = [str(m) for m in parsed if not m.metric.condensable]
        if bad:
            raise MetricParamError(
                f"{', '.join(bad)}: assessment measures are undefined on condensed lists "
                "(every remaining document is judged); use --unjudged nonrelevant"
            )
    return parsed


def _parse_spec(spec: str, depths: Sequence[int] | None) -> list[catalog.Measure]:
    """One spec: ir_measures' grammar (and all_trec, evalwh's share of it), else a trec_eval name."""
    from evalwh.measures import trec_names
    from evalwh.errors import UnknownMetricError

    if spec.strip() in ("official", "set"):
        return trec_names.parse(spec) or []
    try:
        return catalog.expand([spec], list(depths) if depths else None)
    except (UnknownMetricError, MetricParamError):
        trec = trec_names.parse(spec)
        if trec is None:
            raise  # (the catalog's message, with its did-you-mean)
        return trec


def _import_pandas_meanwhile() -> None:
    """Start importing pandas in a thread, unless it is imported (or being imported) already.

    The result of an evaluation is a DataFrame, and importing pandas (with pyarrow) takes a
    third of a second or more of Python: as long as the eight metric queries of the benchmark
    on TREC-8. DuckDB runs the queries without the GIL, so the import goes on beside them;
    ``import pandas`` in :func:`compute` then waits for it to finish (the import system's
    module lock). The main thread needs the GIL only briefly between queries;
    a short switch interval while the import runs keeps it from waiting 5 ms for each turn.
    """
    if "pandas" in sys.modules:
        return

    def load() -> None:
        interval = sys.getswitchinterval()
        sys.setswitchinterval(0.0005)
        try:
            importlib.import_module("pandas")
        finally:
            sys.setswitchinterval(interval)

    threading.Thread(target=load, name="evalwh-import-pandas", daemon=True).start()


def compute(
    wh: Store,
    collection: str,
    parsed: list[catalog.Measure],
    options: Options,
    *,
    per_query: bool = False,
    store: bool = False,
    typed_names: bool = False,
) -> pd.DataFrame:
    """Run the metric queries over a built context (ev_judged, ev_pairs); long-form frame.

    Measures are named canonically (``AP``), or as typed (``map``) with ``typed_names``.
    """
    import pyarrow as pa

    _import_pandas_meanwhile()
    tables = []
    base = (float(options.rel), options.unjudged is Unjudged.condensed)
    groups = _option_groups(parsed, base)
    try:
        for group, measures in groups.items():
            if group != base:
                _apply_options(wh, group, first=group == next(g for g in groups if g != base))
            tables += _measure_tables(wh, measures)
    finally:
        if any(group != base for group in groups):
            _restore_options(wh, options)

    values = pa.concat_tables(tables)
    import pandas as pd  # (waits for _import_pandas_meanwhile's thread, if it still runs)
    if per_query:
        frame = values.select(["run_id", "query_id", "measure", "value"]).to_pandas()
        means = None
    else:
        wh.con.register("ev_values", values)
        try:
            means = wh.df(sql.query(_REPORTS, "means"))
        finally:
            wh.con.unregister("ev_values")
        frame = means[["run_id", "measure", "value", "n_topics", "n_undefined"]]
    frame.insert(0, "collection_id", collection)
    for key, value in options.columns().items():
        frame[key] = value
    if store:
        _store(wh, collection, values, means, options)
    # rows in the order the measures were asked for, runs (and topics) sorted
    order = {str(m): i for i, m in enumerate(parsed)}
    keys = ["run_id", "query_id", "_order"] if per_query else ["run_id", "_order"]
    frame = frame.assign(_order=frame["measure"].map(order)).sort_values(keys, kind="stable")
    frame = frame.drop(columns="_order").reset_index(drop=True)
    if typed_names:
        frame["measure"] = frame["measure"].map({str(m): m.name for m in parsed})
    return pd.DataFrame(frame)


def wide_form(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per run (or per run and topic) and one column per measure, from the long form.

    Args:
        frame: A result of :func:`evaluate` (means or per topic).

    Returns:
        ``collection_id, run_id[, query_id]`` then a column per measure, in the order the
        measures were asked for; runs (and topics) in the long form's order. The option columns
        and the means' topic counts stay in the long form.

    Examples:
        >>> import pandas as pd
        >>> long = pd.DataFrame({"collection_id": "c", "run_id": ["a", "a", "b", "b"],
        ...                      "measure": ["P@10", "AP"] * 2, "value": [0.5, 0.25, 0.75, 1.0]})
        >>> wide_form(long).values.tolist()
        [['c', 'a', 0.5, 0.25], ['c', 'b', 0.75, 1.0]]
    """
    import pandas as pd

    keys = [k for k in ("collection_id", "run_id", "query_id") if k in frame.columns]
    order = list(dict.fromkeys(frame["measure"]))
    table = frame.pivot(index=keys, columns="measure", values="value")
    rows = frame[keys].drop_duplicates()
    table = table.reindex(pd.MultiIndex.from_frame(rows) if len(keys) > 1 else rows[keys[0]])[order]
    table.columns.name = None
    return table.reset_index()


def _measure_tables(wh: Store, measures: list[catalog.Measure]) -> list[Any]:
    """One Arrow table per measure: measure, aggregate, run_id, query_id, value."""
    import pyarrow as pa

    from evalwh.io import arrays

    tables = []
    for measure in measures:
        table = wh.arrow(measure.metric.file, measure.sql_params)
        n = table.num_rows
        # (arrays from buffers: converting Python objects would import pandas here and now)
        table = table.append_column("measure", arrays.repeated(str(measure), n))
        table = table.append_column("aggregate", arrays.repeated(measure.metric.aggregate, n))
        if table.schema.field("value").type != pa.float64():  # (a cast imports pyarrow.compute)
            value = table.column("value").cast(pa.float64())
            table = table.set_column(table.schema.get_field_index("value"), "value", value)
        tables.append(table.select(["measure", "aggregate", "run_id", "query_id", "value"]))
    return tables


def _option_groups(
    parsed: list[catalog.Measure], base: tuple[float, bool]
) -> dict[tuple[float, bool], list[catalog.Measure]]:
    """The measures by (threshold, condensed): their own rel= / judged_only=, else the evaluation's.

    The evaluation's own group comes first, so that the context is re-derived only for the others.
    """
    groups: dict[tuple[float, bool], list[catalog.Measure]] = {base: []}
    for measure in parsed:
        own = dict(measure.options)
        key = (float(own.get("rel", base[0])), bool(own.get("judged_only", base[1])))
        groups.setdefault(key, []).append(measure)
    return groups


def _apply_options(wh: Store, group: tuple[float, bool], *, first: bool) -> None:
    """Re-derive ev_judged and ev_pairs for measures with their own threshold or condensing."""
    if first:  # the evaluation's own pairs, kept for the topic set and for restore.sql
        wh.con.execute("ALTER TABLE ev_pairs RENAME TO ev_pairs_base")
    rel, condensed = group
    wh.run(sql.query(_OPTIONS, "apply"), {"rel": rel, "condensed": condensed})


def _restore_options(wh: Store, options: Options) -> None:
    """Put the evaluation's own context back (ev_pairs, the session options, ev_judged)."""
    condensed = options.unjudged is Unjudged.condensed
    wh.run(sql.query(_OPTIONS, "restore"), {"rel": options.rel, "condensed": condensed})
    wh.run(sql.query(_CONTEXT, "06_judged"), {})


def _store(wh: Store, collection: str, values: Any, means: pd.DataFrame | None, options: Options) -> None:
    """Replace stored results for the same collection, runs, measures and options: the per-topic
    values and, as topic ``all``, the means the evaluation gives (computed here for a per-topic one)."""
    wh.con.register("ev_values", values)
    try:
        if means is None:
            means = wh.df(sql.query(_REPORTS, "means"))
        wh.con.register("ev_means", means)
        params = {"collection_id": collection, **options.columns()}
        wh.run(sql.query(_REPORTS, "store_results"), params)
    finally:
        wh.con.unregister("ev_values")
        wh.con.unregister("ev_means")


def unjudged_share(
    wh: Store, collection: str, *, qrels_id: str = "default", max_rank: int = 1000, fill: Sequence[str] = ()
) -> pd.DataFrame:
    """The unjudged share per rank over all runs and qrels topics of a collection (methods §2.7).

    Args:
        wh: The warehouse.
        collection: The collection.
        qrels_id: The qrels set that decides what is judged.
        max_rank: The deepest rank reported.
        fill: Sets that fill the pairs ``qrels_id`` did not judge (as :func:`evaluate`).

    Returns:
        ``rank, lists, unjudged, share``: at each rank, the (run, topic) lists that reach it,
        how many hold an unjudged document there, and the ratio.
    """
    options = Options(qrels_id=qrels_id, averaging=Averaging.trec_eval_c, fill=_fill(fill))
    with wh.transaction():
        build_context(wh, collection, None, options)
        return wh.df(sql.query(_REPORTS, "unjudged_share"), {"max_rank": max_rank})
