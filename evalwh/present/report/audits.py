"""The report's audit figures: prediction-powered scores, when the collection has a random audit (methods §15).

For every stored audit (``evalwh audit draw|declare``) whose pairs some qrels set labels in
full (the smallest such set, other than the frame and the machine's, is taken as the people's
labels), one figure: per run the prediction-powered 95% interval, the audit-only interval and
the machine-only score, for P@10 (a pairs audit) or AP (a topics audit). The figure and its
caption are drawn from :func:`evalwh.methods.audit_estimates.estimate`; nothing is stored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from evalwh import sql
from evalwh.present.report.figures import FIGURE_ID_SHOWN, _figure, _report_style, _tidy, to_svg
from evalwh.present.report.model import Figure, short_ids

if TYPE_CHECKING:
    from evalwh.store.connection import Store

SHOWN_RUNS = 40  # the best runs by estimate drawn in one figure


def audit_figures(wh: Store, collection: str, evaluated: Sequence[str] = ()) -> list[Figure]:
    """One figure per stored audit (empty when the collection has none).

    The people's labels of an audit are the smallest qrels set that labels every audited pair,
    other than the frame, the machine's set, the sets the report evaluates with (``evaluated``:
    the official qrels label every pooled pair, and are not an audit's people's labels) and the
    sets an LLM or an inference made (their provenance). An audit without such a set, or one the
    estimates refuse (a frame changed since the draw), gets a caption that says why, in place of
    its figure.

    Examples:
        >>> from evalwh import Warehouse
        >>> audit_figures(Warehouse(":memory:"), "none")
        []
    """
    from evalwh.errors import InsufficientDataError, MetricParamError
    from evalwh.methods.audit_estimates import estimate
    from evalwh.methods.audits import list_audits

    if not wh.con.execute("SELECT count(*) FROM audits WHERE collection_id = ?", [collection]).fetchone()[0]:
        return []
    out = []
    for row in list_audits(wh, collection).itertuples():
        found = wh.df(sql.query("evalwh.queries.audits", "human_sets"),
                      {"collection_id": collection, "audit_id": row.audit_id, "excluded": list(evaluated)})  # fmt: skip
        if found.empty:
            out.append(_unusable(
                str(row.audit_id), None,
                "no qrels set labels every one of its audited pairs besides "
                + (f"the frame and machine set ({row.frame_id})" if row.frame_id == row.machine_id
                   else f"the frame ({row.frame_id}), the machine's ({row.machine_id})")
                + f", the report's own ({', '.join(evaluated) or 'none'}) and sets an LLM made; ingest the people's "
                "labels of its pairs (evalwh pool export, then evalwh ingest qrels)",
            ))  # fmt: skip
            continue
        human = str(found["qrels_id"].iloc[0])
        measure = "P@10" if row.design == "pairs" else "AP"
        try:
            result = estimate(wh, collection, row.audit_id, human, [measure])
        except (InsufficientDataError, MetricParamError) as error:  # e.g. a frame changed since the draw
            out.append(_unusable(str(row.audit_id), human, str(error)))
            continue
        # the measure's notes (a topics audit's points, a pairs audit's runs that saw no error of the
        # machine) and the audit's own (a declared audit's check)
        how = [n[len(measure) + 2:] for n in result.notes if n.startswith(f"{measure}: ")]
        how += [n for n in result.notes if n.startswith(f"audit {row.audit_id!r}")]
        out.append(_audit_figure(str(row.audit_id), human, measure, row, result.runs, how, collection=collection))
    return out


@_report_style
def _unusable(audit_id: str, human: str | None, reason: str) -> Figure:
    """An audit without an estimate: its heading and the reason, where its figure would be."""
    figure = _figure(7.0, 0.6)
    ax = figure.add_subplot()
    ax.text(0.0, 0.5, "no estimate: see the caption", va="center", fontsize=9)
    ax.set_axis_off()
    whose = "" if human is None else f" (people's labels from qrels set {human})"
    caption = f"Audit {audit_id}{whose} has no estimate: {reason}. See evalwh audit estimate and methods §15."
    return Figure(f"audit-{audit_id}", f"Random audit: {audit_id}", caption, to_svg(figure))


@_report_style
def _audit_figure(
    audit_id: str, human: str, measure: str, audit: Any, runs: pd.DataFrame, how: list[str] | None = None,
    *, collection: str = "COLLECTION",
) -> Figure:
    shown = runs.sort_values("estimate", ascending=False).head(SHOWN_RUNS).iloc[::-1]
    figure = _figure(7.0, 1.5 + 0.2 * len(shown))
    ax = figure.add_subplot()
    place = range(len(shown))
    ax.hlines([p - 0.2 for p in place], shown["human_low"], shown["human_high"], color="0.65", linewidth=1.2,
              label="audit alone")  # fmt: skip
    ax.hlines(list(place), shown["ci_low"], shown["ci_high"], color="black", linewidth=2.2, label="prediction-powered")
    ax.plot(shown["estimate"], list(place), "o", color="black", markersize=3)
    ax.plot(shown["machine"], list(place), "x", color="tab:red", markersize=5, label="machine alone")
    ax.set_yticks(list(place), short_ids(shown["run_id"].tolist(), FIGURE_ID_SHOWN))
    ax.set_xlabel(f"{measure}, 95% intervals")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, frameon=False)
    _tidy(ax)
    design = audit.design
    units = f"{int(audit.audited_units)} of {int(audit.frame_units)} " + (
        "pairs" if design == "pairs" else "topics"
    )
    closer = float((runs["effective_n"] / runs["audited"]).median())
    worth = f"{closer:.2f}" if np.isfinite(closer) and closer < 1e6 else "unbounded (the people and the machine agree on the audit)"
    drawn = "declared" if bool(audit.declared) else f"drawn with seed {int(audit.seed)}" if pd.notna(audit.seed) else "drawn"
    how_made = (
        "Student's t intervals" if design == "pairs" else "intervals from the machine's points (below)"
    )
    caption = (
        f"Audit {audit_id} ({design} design, {units}, {drawn}; people's labels from qrels set {human}, machine set "
        f"{audit.machine_id}): per run the prediction-powered {measure} (PPI++ with one tuned weight, "
        f"{how_made}, 95%; black), the interval from the audit alone (grey) and the machine's own score (x), "
        f"{min(len(runs), SHOWN_RUNS)} best runs of {len(runs)}. Median effective human labels per audited "
        f"unit: {worth}. Reproduce: evalwh audit estimate {audit_id} -c {collection} --human {human} -m {measure} "
        "(methods §15)."
        + "".join(f" {note[:1].upper()}{note[1:]}." for note in how or [])
    )
    return Figure(f"audit-{audit_id}", f"Random audit: {audit_id}", caption, to_svg(figure))
