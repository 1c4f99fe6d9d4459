"""Figures of the pooling-bias experiments (methods §6.8; Webber & Park 2009, Fig. 1 and Tables 1-4).

Drawn on a :class:`matplotlib.figure.Figure` with the Agg canvas, never through pyplot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

_STYLE = {"nonrelevant": ("tab:red", "o"), "condensed": ("tab:blue", "s")}


def pool_bias_figure(summary: pd.DataFrame, common_topics: pd.DataFrame, *, title: str | None = None) -> Figure:
    """Three panels: bias and MAE against pool width, and MAE against the number of common topics.

    Args:
        summary: Per handling and width: ``handling, width, bias_mean, bias_q1, bias_q3,
            mae_unadjusted, mae_loo_adjusted`` (``pool_bias_summary``).
        common_topics: Per handling, width and ``n``: ``handling, width, n_common,
            mae_unadjusted, mae_adjusted`` (``pool_common_topics``).
        title: Figure title.

    Returns:
        The figure: (a) mean bias with the interquartile band per handling; (b) MAE of the
        unadjusted and Algorithm 1 estimates; (c) adjusted MAE against ``n``, one line per
        width, assumed non-relevance solid and condensed dashed.

    Examples:
        >>> import pandas as pd
        >>> s = pd.DataFrame({"handling": "nonrelevant", "width": [2, 4], "bias_mean": [-0.2, -0.1],
        ...     "bias_q1": [-0.3, -0.2], "bias_q3": [-0.1, 0.0], "mae_unadjusted": [0.2, 0.1],
        ...     "mae_loo_adjusted": [0.1, 0.05]})
        >>> c = pd.DataFrame({"handling": "nonrelevant", "width": 2, "n_common": [5, 10],
        ...     "mae_unadjusted": 0.2, "mae_adjusted": [0.05, 0.03]})
        >>> len(pool_bias_figure(s, c).axes)
        3
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(12, 3.8), layout="constrained")
    FigureCanvasAgg(figure)
    bias_axes, width_axes, topics_axes = figure.subplots(1, 3)
    for handling, part in summary.groupby("handling", sort=False):
        part = part.sort_values("width")
        color, marker = _STYLE.get(str(handling), ("black", "^"))
        bias_axes.plot(part["width"], part["bias_mean"], color=color, marker=marker, label=str(handling))
        bias_axes.fill_between(part["width"], part["bias_q1"], part["bias_q3"], color=color, alpha=0.15)
        width_axes.plot(part["width"], part["mae_unadjusted"], color=color, marker=marker, label=f"unadjusted, {handling}")
        loo = part.dropna(subset=["mae_loo_adjusted"])
        if not loo.empty:
            width_axes.plot(loo["width"], loo["mae_loo_adjusted"], color="black", marker="D", label="Algorithm 1")
    bias_axes.axhline(0.0, color="grey", linewidth=0.8)
    bias_axes.set_ylabel("bias of the unpooled run (mean, IQR)")
    width_axes.set_ylabel("MAE of the mean score")
    for axes in (bias_axes, width_axes):
        axes.set_xscale("log")
        axes.set_xlabel("pool width w")
        widths = sorted(summary["width"].unique())
        axes.set_xticks(widths, labels=[str(w) for w in widths])
        axes.minorticks_off()
    for (handling, width), part in common_topics.groupby(["handling", "width"], sort=False):
        part = part.sort_values("n_common")
        style = "-" if handling == "nonrelevant" else "--"
        topics_axes.plot(part["n_common"], part["mae_adjusted"], style, marker=".", label=f"w={width}, {handling}")
    topics_axes.set_xlabel("common topics n")
    topics_axes.set_ylabel("MAE of the adjusted mean")
    topics_axes.set_xscale("log")
    ns = sorted(common_topics["n_common"].unique())
    topics_axes.set_xticks(ns, labels=[str(n) for n in ns])
    topics_axes.minorticks_off()
    for axes in (bias_axes, width_axes, topics_axes):
        axes.grid(True, linewidth=0.3)
        axes.legend(fontsize="x-small")
    if title:
        figure.suptitle(title)
    return figure
