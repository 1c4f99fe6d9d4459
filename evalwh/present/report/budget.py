"""The report's budget table: what each judging strategy bought, when the collection has a replay.

``evalwh experiment budget`` stores its rows in ``budget_results`` (schema/019). When a
collection holds any, the report shows, per stored experiment, the mean over seeds per
strategy and budget (:func:`budget_table`) as a figure of the four curves with the table in
its caption (:func:`budget_figures`). The report builder calls :func:`budget_figures` with one
line; nothing is computed here, only read back.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import pandas as pd

from evalwh.present.report.model import Figure

if TYPE_CHECKING:
    from evalwh.store.connection import Store

CAPTION_COLUMNS = ("strategy", "budget", "relevant_share", "kendall_tau_b", "tau_ap", "significant_kept")


def budget_table(wh: Store, collection: str) -> pd.DataFrame | None:
    """Stored budget rows, averaged over seeds: one row per (experiment, strategy, budget); None without any."""
    from evalwh.methods.budget import stored_results, summarise

    rows = stored_results(wh, collection)
    if rows.empty:
        return None
    parts = [summarise(part).assign(experiment_id=name) for name, part in rows.groupby("experiment_id", sort=True)]
    out = pd.concat(parts, ignore_index=True)
    return out[["experiment_id", *[c for c in out.columns if c != "experiment_id"]]]


def budget_figures(wh: Store, collection: str) -> list[Figure]:
    """One figure per stored budget experiment (empty when the collection has none).

    Examples:
        >>> from evalwh import Warehouse
        >>> budget_figures(Warehouse(":memory:"), "none")
        []
    """
    from evalwh.present.plots.budget import budget_figure

    if not wh.con.execute("SELECT count(*) FROM budget_results WHERE collection_id = ?", [collection]).fetchone()[0]:
        return []
    table = budget_table(wh, collection)
    out = []
    for name, part in table.groupby("experiment_id", sort=True):  # type: ignore[union-attr]
        buffer = io.StringIO()
        budget_figure(part, title=str(name)).savefig(buffer, format="svg")
        rows = [
            f"{r.strategy} at {int(r.budget)} judgments: relevant {r.relevant_share:.3f}, tau_b {r.kendall_tau_b:.3f}, "
            f"tau_ap {r.tau_ap:.3f}, significant pairs kept {r.significant_kept:.3f}"
            for r in part.itertuples()
        ]
        caption = (
            f"Stored budget experiment {name} (`evalwh experiment budget`), means over seeds: " + "; ".join(rows) + "."
        )
        out.append(Figure(key=f"budget-{name}", title=f"Judging budget: {name}", caption=caption, svg=buffer.getvalue()))
    return out
