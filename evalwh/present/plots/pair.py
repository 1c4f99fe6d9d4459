"""Figures for papers: a pair of runs over depth, and all runs of a collection over depth.

Figures are drawn on a :class:`matplotlib.figure.Figure` with the Agg canvas, never through
pyplot, so nothing global is touched and no display is needed.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from evalwh.methods.decisions import PairComparison

_LABELS = {"P": "P@d", "AP": "MAP@d", "A_p": "A_p@d"}  # as the tables write it (no mathtext subscript)
_COLOURS = ("#1f77b4", "#d62728")


def _figure(width: float, height: float, rows: int) -> tuple[Figure, list[object]]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(rows, 1, sharex=True, squeeze=False)[:, 0]
    return figure, list(axes)


def _metric_label(spec: str) -> str:
    return _LABELS.get(spec.split("@", 1)[0], spec)


def plot_pair(
    comparison: PairComparison, path: str | os.PathLike[str], *, title: str | None = None
) -> Figure:
    """Draw a pair of runs: performance and assessment against depth, with error bars.

    The error bars are Bonferroni comparison intervals of the family the pair was tested in
    (:func:`evalwh.stats.significance.comparison_intervals`), cut to [0, 1]: bars that do not
    overlap mark a significant difference under the ANOVA procedure (which need not be the
    test that decided the pair's case). Each depth is annotated with the pair's case (1, 2, 3a,
    3b, 4). At one depth the two runs are drawn as points side by side, the case under them.

    Args:
        comparison: The output of :func:`evalwh.methods.decisions.compare_runs`.
        path: Where to write the figure; the format follows the suffix (png, pdf, svg).
        title: The figure title; the two run names when None.

    Returns:
        The figure (already saved).
    """
    intervals = comparison.intervals.dropna(subset=["depth"])
    pairs = comparison.pairs.dropna(subset=["depth"])
    if intervals.empty:
        from evalwh.errors import InsufficientDataError

        raise InsufficientDataError("plot compare: no depths to plot; give at least one depth")
    run_a, run_b = pairs["run_a"].iloc[0], pairs["run_b"].iloc[0]
    depths = pairs["depth"].astype(int).tolist()
    if len(set(depths)) == 1:
        figure, axes = _one_depth(intervals, pairs, run_a, run_b)
    else:
        figure, axes = _over_depths(intervals, pairs, run_a, run_b)
    figure.suptitle(title or f"{run_a} vs {run_b}")
    from evalwh.present.plots.experiments import save_figure

    save_figure(figure, path, dpi=200)
    return figure


def _bar(own: pd.DataFrame) -> tuple[object, object]:
    """Lower and upper error-bar lengths, the interval cut to [0, 1] (the measures and shares
    drawn here lie in [0, 1], so a bar beyond them would claim values no run can have)."""
    import numpy as np

    mean = own["mean"].to_numpy(dtype=float)
    half = own["half_width"].to_numpy(dtype=float)
    return np.minimum(half, np.clip(mean, 0.0, 1.0)), np.minimum(half, np.clip(1.0 - mean, 0.0, 1.0))


def _over_depths(
    intervals: pd.DataFrame, pairs: pd.DataFrame, run_a: object, run_b: object
) -> tuple[Figure, list[object]]:
    """Both runs against depth (log axis), one line per run, each depth labelled with its case."""
    from evalwh.present.plots.experiments import plain_log_axis

    figure, axes = _figure(6.0, 5.5, 2)
    for ax, kind in zip(axes, ("performance", "assessment"), strict=True):
        rows = intervals[intervals["kind"] == kind]
        for offset, (run, colour) in zip(
            (-0.03, 0.03), ((run_a, _COLOURS[0]), (run_b, _COLOURS[1])), strict=True
        ):
            own = rows[rows["run_id"] == run].sort_values("depth")
            depth = own["depth"].astype(float).to_numpy()
            # a small multiplicative offset on the log axis keeps the two runs' bars apart
            ax.errorbar(
                depth * (1.0 + offset),
                own["mean"],
                yerr=_bar(own),
                marker="o",
                markersize=4,
                capsize=3,
                color=colour,
                label=str(run),
            )
        ax.set_xscale("log")
        plain_log_axis(ax)
        ax.set_ylabel(_metric_label(str(rows["measure"].iloc[0])))
        ax.grid(True, alpha=0.3)
    depths = pairs["depth"].astype(int).tolist()
    axes[0].legend(loc="best", frameon=False)
    for depth, case, strength in zip(depths, pairs["case"], pairs["strength"], strict=True):
        axes[0].annotate(
            f"C{case}" + ("" if strength == "strong" else "*"),
            xy=(depth, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(0, 2),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize="small",
        )
    axes[-1].set_xticks(depths)
    axes[-1].set_xticklabels([str(d) for d in depths])
    axes[-1].set_xlabel("depth d (C = case, * = weak)")
    return figure, axes


def _one_depth(
    intervals: pd.DataFrame, pairs: pd.DataFrame, run_a: object, run_b: object
) -> tuple[Figure, list[object]]:
    """At one depth, the two runs as points side by side (no line to draw, no depth axis)."""
    depth = int(pairs["depth"].iloc[0])
    case, strength = pairs["case"].iloc[0], pairs["strength"].iloc[0]
    figure, axes = _figure(6.0, 4.6, 2)
    for ax, kind in zip(axes, ("performance", "assessment"), strict=True):
        rows = intervals[intervals["kind"] == kind]
        for x, (run, colour) in enumerate(((run_a, _COLOURS[0]), (run_b, _COLOURS[1]))):
            own = rows[rows["run_id"] == run]
            ax.errorbar(
                [x] * len(own), own["mean"], yerr=_bar(own), marker="o", markersize=6,
                capsize=4, color=colour, linestyle="none",
            )  # fmt: skip
        ax.set_ylabel(_metric_label(str(rows["measure"].iloc[0])))
        ax.set_xlim(-0.6, 1.6)
        ax.grid(True, axis="y", alpha=0.3)
    axes[-1].set_xticks([0, 1])
    axes[-1].set_xticklabels([str(run_a), str(run_b)])
    weak = "" if strength == "strong" else " (weak)"
    axes[-1].set_xlabel(f"depth {depth}: case C{case}{weak}")
    return figure, axes


def plot_runs(
    profile: pd.DataFrame, path: str | os.PathLike[str], *, title: str | None = None,
    order: list[str] | None = None, ranked_by: str | None = None,
) -> Figure:
    """Draw every run of a collection ranked by performance at the first depth, with A_p per depth.

    Args:
        profile: The output of :func:`evalwh.methods.decisions.run_profile`.
        path: Where to write the figure; the format follows the suffix.
        title: The figure title.
        order: The runs' order (best first), e.g. the report's leaderboard; None: by
            performance at the first depth.
        ranked_by: What ``order`` ranks by, for the axis label.

    Returns:
        The figure (already saved).
    """
    from evalwh.errors import InsufficientDataError

    if profile.empty:
        raise InsufficientDataError("plot runs: no runs to plot")
    depths = sorted(int(d) for d in profile["depth"].dropna().unique())
    wide = profile.pivot_table(index="run_id", columns=["kind", "depth"], values="value")
    if order is None:
        order = list(wide[("performance", depths[0])].sort_values(ascending=False).index)
        ranked_by = None
    wide = wide.loc[list(order)]
    x = range(1, len(order) + 1)
    figure, axes = _figure(9.0, 6.0, 2)
    from matplotlib import colormaps

    palette = colormaps["viridis"].resampled(max(len(depths), 2))
    first = {
        kind: profile[profile["kind"] == kind]["measure"].iloc[0]
        for kind in ("performance", "assessment")
    }
    for ax, kind in zip(axes, ("performance", "assessment"), strict=True):
        for i, depth in enumerate(depths):
            ax.plot(
                x,
                wide[(kind, depth)],
                marker=".",
                linewidth=0.8,
                color=palette(i),
                label=f"d = {depth}",
            )
        ax.set_ylabel(f"mean {_metric_label(str(first[kind]))}")
        ax.grid(True, alpha=0.3)
    axes[1].legend(loc="best", frameon=False, ncols=min(len(depths), 5), fontsize="small")
    if ranked_by is None:
        ranked_by = _metric_label(str(first["performance"])).removesuffix("@d") + f"@{depths[0]}"
    axes[1].set_xlabel(f"runs ranked by mean {ranked_by}")
    figure.suptitle(title or f"{len(order)} runs")
    from evalwh.present.plots.experiments import save_figure

    save_figure(figure, path, dpi=200)
    return figure
