"""The label-set report's figures as SVG text: the confusion matrices and kappa per topic.

Drawn with the run report's settings (:mod:`evalwh.present.report.figures`: fixed SVG ids,
fonts as paths, 12 pt text), so the two reports look alike and the same data draws the same
bytes. :func:`confusion_figure` draws each set's confusion matrix against the reference as a
heat map; :func:`topic_kappa_figure` draws Cohen's kappa per topic with its interval.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from evalwh.present.report.figures import FIGURE_ID_SHOWN, INK, MUTED, _figure, _report_style, _tidy, to_svg
from evalwh.present.report.model import short_id

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.present.report.model import Figure


def short_figure_id(name: str) -> str:
    """A set's name as figures show it (start and end of a long one)."""
    return short_id(name, FIGURE_ID_SHOWN)


PANELS_PER_ROW = 4
"""Confusion matrices side by side in one row of the heat map figure."""
SET_COLOURS = ("#2f6fb0", "#d9822b", "#1b7f6b", "#8250df")
"""The per-topic figure's colours, one per set (at most this many sets are drawn)."""


@_report_style
def confusion_figure(matrices: dict[str, pd.DataFrame], reference: str, shown_of: int = 0) -> Figure:
    """Each set's confusion matrix against ``reference`` as a heat map.

    Args:
        matrices: Per set, counts of shared pairs: rows the reference's grades (index, as
            text), columns the set's grades.
        reference: The reference set's name (the rows).
        shown_of: How many sets were compared (when ``matrices`` holds only the first of them).

    Returns:
        The figure; each cell is shaded by its share of its row (the pairs of that reference
        grade) and prints its count.
    """
    from evalwh.present.report.model import Figure

    names = list(matrices)
    columns = min(len(names), PANELS_PER_ROW)
    rows = -(-len(names) // columns)
    figure = _figure(max(2.6 * columns + 0.6, 5.6), 2.5 * rows + 0.3)  # (one panel: not blown up)
    axes = np.atleast_1d(figure.subplots(rows, columns, squeeze=False)).ravel()
    image = None
    for ax, name in zip(axes, names, strict=False):
        # the grades this set gives, and the reference's (another set's stray grade is no column here)
        block = matrices[name]
        used = [c for c in block.columns if block[c].sum() > 0 or str(c) in {str(i) for i in block.index}]
        block = block[used]
        counts = block.to_numpy(dtype=np.float64)
        totals = counts.sum(axis=1, keepdims=True)
        shares = np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)
        image = ax.imshow(shares, cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto")
        for (i, j), count in np.ndenumerate(counts):
            ax.text(j, i, f"{int(count):,}", ha="center", va="center", fontsize="small",
                    color="#fff" if shares[i, j] > 0.6 else INK)  # fmt: skip
        ax.set_xticks(range(counts.shape[1]), [str(c) for c in block.columns])
        ax.set_yticks(range(counts.shape[0]), [str(r) for r in block.index])
        ax.set_xlabel(f"{short_figure_id(name)}'s grade", fontsize="small")
        ax.set_ylabel(f"{short_figure_id(reference)}'s grade", fontsize="small")
        ax.tick_params(length=0)
    for ax in axes[len(names) :]:
        ax.set_visible(False)
    if image is not None:
        bar = figure.colorbar(image, ax=axes[: len(names)].tolist(), shrink=0.8)
        bar.set_label("share of the row", fontsize="small")
    caption = (
        f"Rows: {reference}'s grade; columns: the grades the set gives (and the reference's); each cell prints "
        "the shared pairs and is shaded by its share of the row (of the pairs the reference gave that grade). A "
        "perfect judge fills the diagonal."
    )
    if shown_of > len(names):
        caption += f" The first {len(names)} of the {shown_of} compared sets are drawn; the tables below have all."
    return Figure("confusion", "Confusion matrices", caption, to_svg(figure))


@_report_style
def topic_kappa_figure(per_topic: pd.DataFrame, topics: list[str], sets: list[str], confidence: float) -> Figure:
    """Cohen's kappa per topic and set, with its large-sample interval.

    Args:
        per_topic: ``qrels_id, query_id, kappa, kappa_low, kappa_high`` (empty kappa: undefined).
        topics: The topics, top to bottom (natural order).
        sets: The compared sets; the first :data:`SET_COLOURS` of them are drawn.
        confidence: The intervals' coverage (for the caption).
    """
    from evalwh.present.report.model import Figure

    total = len(sets)
    sets = sets[: len(SET_COLOURS)]
    height = min(0.24 * len(topics) + 1.3, 30.0)
    figure = _figure(6.4, height)
    ax = figure.subplots()
    position = {t: i for i, t in enumerate(topics)}
    step = 0.7 / max(len(sets), 1)
    for k, (name, colour) in enumerate(zip(sets, SET_COLOURS, strict=False)):
        part = per_topic[(per_topic["qrels_id"] == name) & per_topic["query_id"].isin(position)]
        part = part[part["kappa"].notna()]
        y = part["query_id"].map(position).to_numpy(dtype=np.float64) + (k - (len(sets) - 1) / 2) * step
        kappa = part["kappa"].to_numpy(dtype=np.float64)
        low = part["kappa_low"].to_numpy(dtype=np.float64)
        high = part["kappa_high"].to_numpy(dtype=np.float64)
        has = np.isfinite(low) & np.isfinite(high)
        ax.hlines(y[has], low[has], high[has], color=colour, linewidth=1.4, alpha=0.75)
        ax.plot(kappa, y, "o", color=colour, markersize=4.5, label=short_figure_id(name), linestyle="none")
    ax.axvline(0.0, color=MUTED, linewidth=0.8)
    ax.set_yticks(range(len(topics)), topics)
    ax.set_ylim(len(topics) - 0.5, -0.5)
    ax.set_xlim(-1.0, 1.0)
    ax.set_xlabel("Cohen's kappa")
    ax.set_ylabel("topic")
    if len(sets) > 1:
        ax.legend(frameon=False, fontsize="small", loc="lower left", bbox_to_anchor=(0.0, 1.0), ncols=2)
    _tidy(ax)
    caption = (
        f"Cohen's kappa of each topic's shared pairs against the reference (dots), with its {confidence:.0%} "
        "large-sample interval (Fleiss, Cohen and Everitt; cut to [-1, 1]). A topic without a dot has kappa "
        "undefined (both sides gave every pair one grade); a dot without a bar is kappa 0 by construction (one "
        "side gave one grade)."
    )
    if total > len(sets):
        caption += f" The first {len(sets)} of the {total} compared sets are drawn; the table below has more."
    return Figure("topic-kappa", "Kappa per topic", caption, to_svg(figure))
