"""trec_eval's text output: ``measure<TAB>query<TAB>value``, names padded to 22 characters."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalwh.measures import catalog

if TYPE_CHECKING:
    import pandas as pd


def _value(measure: catalog.Measure, value: float | None) -> str:
    if value is None or value != value:
        return "NaN"
    if measure.metric.aggregate == "sum":
        return str(int(round(value)))
    return f"{value:.4f}"


def format_trec(per_query: pd.DataFrame | None, means: pd.DataFrame, run_id: str, measures: list[str]) -> str:
    """Render one run's results as trec_eval prints them (``-q`` when ``per_query`` is given).

    Per-topic blocks come first, topic by topic in trec_eval's (string) order, then the
    ``all`` block with ``runid`` and ``num_q`` as trec_eval prints them.
    """
    from evalwh.store.context import Options
    from evalwh.measures.evaluation import parse_measures

    parsed = parse_measures(measures, None, Options())
    lines: list[str] = []

    def emit(name: str, query: str, text: str) -> None:
        lines.append(f"{name:<22}\t{query}\t{text}")

    if per_query is not None:
        rows = per_query[per_query["run_id"] == run_id]
        by_key = {(r.query_id, r.measure): r.value for r in rows.itertuples(index=False)}
        for query in sorted(rows["query_id"].unique()):
            for measure in parsed:
                if (query, str(measure)) in by_key:
                    emit(measure.trec_name, query, _value(measure, by_key[(query, str(measure))]))
    rows = means[means["run_id"] == run_id]
    by_measure = {r.measure: r for r in rows.itertuples(index=False)}
    emit("runid", "all", run_id)
    n_topics = int(rows["n_topics"].max()) if len(rows) else 0
    emit("num_q", "all", str(n_topics))
    for measure in parsed:
        row = by_measure.get(str(measure))
        if row is not None:
            emit(measure.trec_name, "all", _value(measure, row.value))
    return "\n".join(lines) + "\n"
