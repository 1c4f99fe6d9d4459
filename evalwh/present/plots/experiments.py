"""Figures of the incomplete-judgment experiments: the reduced-qrels curves of S4 (Figs. 5-8).

Drawn on a :class:`matplotlib.figure.Figure` with the Agg canvas, never through pyplot, so no
display and no global state are needed.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

_MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def reduced_qrels_figure(
    levels: pd.DataFrame, *, threshold: float = 0.9, title: str | None = None
) -> Figure:
    """Kendall tau against the full-qrels ranking and mean value change, against level.

    Args:
        levels: Per (measure, level) rows with ``measure, level, tau, change_pct``, as
            returned by :func:`evalwh.methods.experiments.reduced.level_summary`.
        threshold: Drawn as a dashed line on the tau panel.
        title: Figure title.

    Returns:
        A figure with two panels sharing the level axis (100% on the left, as in S4).

    Examples:
        >>> import pandas as pd
        >>> levels = pd.DataFrame({"measure": "AP", "level": [100, 10], "tau": [1.0, 0.8],
        ...                        "change_pct": [0.0, -50.0]})
        >>> len(reduced_qrels_figure(levels).axes)
        2
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6.4, 5.6), layout="constrained")
    FigureCanvasAgg(figure)
    tau_axes, change_axes = figure.subplots(2, 1, sharex=True)
    for index, (measure, part) in enumerate(levels.groupby("measure", sort=False)):
        part = part.sort_values("level")
        marker = _MARKERS[index % len(_MARKERS)]
        tau_axes.plot(part["level"], part["tau"], marker=marker, markersize=3, label=str(measure))
        change_axes.plot(
            part["level"], part["change_pct"], marker=marker, markersize=3, label=str(measure)
        )
    tau_axes.axhline(threshold, color="grey", linestyle="--", linewidth=0.8)
    tau_axes.set_ylabel("Kendall τ vs full qrels")
    change_axes.axhline(0.0, color="grey", linewidth=0.8)
    change_axes.set_ylabel("change of mean (%)")
    change_axes.set_xlabel("judgments kept, a (%)")
    change_axes.set_xscale("log")
    change_axes.set_xticks(
        [1, 2, 5, 10, 20, 50, 100], labels=["1", "2", "5", "10", "20", "50", "100"]
    )
    change_axes.invert_xaxis()
    tau_axes.legend(loc="lower left", fontsize="small")
    for axes in (tau_axes, change_axes):
        axes.grid(True, linewidth=0.3)
    if title:
        figure.suptitle(title)
    return figure


def save_figure(figure: Figure, path: str | os.PathLike[str], *, dpi: int = 100) -> None:
    """Write ``figure`` to ``path`` (format from the extension: png, pdf, svg), whole or not at all."""
    from evalwh.io.files import atomic_path

    with atomic_path(path) as part:
        figure.savefig(part, dpi=dpi)


def plain_log_axis(ax: Any) -> None:
    """Label a log-scaled x-axis with plain numbers (1, 10, 100, 1000), not powers of ten.

    Depths and ranks read as numbers; matplotlib's default writes 10² with a superscript in a
    smaller size, which is hard to read on a page. Minor ticks stay unlabelled.
    """
    from matplotlib.ticker import FuncFormatter, NullFormatter

    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
