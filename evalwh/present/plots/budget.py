"""The figure of a judging-budget replay (methods §5.6): what each strategy buys, budget on x.

Drawn on a :class:`matplotlib.figure.Figure` with the Agg canvas, never through pyplot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

PANELS = (
    ("relevant_share", "share of the relevant documents found"),
    ("kendall_tau_b", "Kendall tau_b against the complete set"),
    ("tau_ap", "tau_ap against the complete set"),
    ("significant_kept", "significant pairs kept"),
)


def budget_figure(summary: pd.DataFrame, *, title: str | None = None) -> Figure:
    """Four panels, budget share on x, one line per strategy (means over seeds).

    Args:
        summary: :func:`evalwh.methods.budget.summarise` output: ``strategy, budget,
            budget_share`` and the panels' columns.
        title: Figure title.

    Returns:
        The figure: relevant found, tau_b, tau_ap and significant pairs kept.

    Examples:
        >>> import pandas as pd
        >>> s = pd.DataFrame({"strategy": ["depth", "depth"], "budget": [10, 20], "budget_share": [0.1, 0.2],
        ...     "relevant_share": [0.3, 0.5], "kendall_tau_b": [0.8, 0.9], "tau_ap": [0.7, 0.8],
        ...     "significant_kept": [0.9, 0.95]})
        >>> len(budget_figure(s).axes)
        4
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(12, 3.6), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(1, len(PANELS))
    markers = "osD^vP*X"
    for i, (strategy, part) in enumerate(summary.groupby("strategy", sort=False)):
        part = part.sort_values("budget_share")
        for ax, (column, _) in zip(axes, PANELS, strict=True):
            ax.plot(100 * part["budget_share"], part[column], marker=markers[i % len(markers)], label=str(strategy))
    for ax, (_, label) in zip(axes, PANELS, strict=True):
        ax.set_xlabel("budget (% of the pool judged)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize="small")
    if title:
        figure.suptitle(title)
    return figure
