"""The bounds figure: lower and upper curves of runs against depth (S3's figure)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


def plot_bounds(
    bands: pd.DataFrame,
    path: str | Path,
    *,
    pool_depth: int | None = None,
    title: str | None = None,
) -> Path:
    """Draw each run's ``[lower, upper]`` band against depth (log scale) and save it.

    Args:
        bands: Aggregated bands of one measure and aggregation, as from
            :func:`evalwh.methods.bounds.compute_bounds`: ``run_id, measure, kind, depth, lower, upper``.
        path: The figure file; the format follows the suffix (png, pdf, svg).
        pool_depth: Draw a vertical line at the pool depth, where the bands start to widen.
        title: Figure title.

    Returns:
        The path written.
    """
    from matplotlib import rcParams
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from evalwh.errors import InsufficientDataError

    if bands.empty:
        raise InsufficientDataError("plot bounds: no bands to draw; check the runs and the measure")
    measure = str(bands["measure"].iloc[0])
    scenario = "kind" in bands.columns and (bands["kind"] == "scenario").any()
    fig = Figure(figsize=(6.4, 4.0), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    colors = itertools.cycle(rcParams["axes.prop_cycle"].by_key()["color"])
    for color, (run, frame) in zip(colors, bands.groupby("run_id", sort=True), strict=False):
        frame = frame.sort_values("depth")
        upper_name = f"{measure}_allrel (scenario)" if scenario else "upper"
        ax.plot(
            frame["depth"],
            frame["lower"],
            color=color,
            linewidth=1.4,
            label=f"{run}: {measure} (lower)",
        )
        ax.plot(
            frame["depth"],
            frame["upper"],
            color=color,
            linewidth=1.4,
            linestyle="--",
            label=f"{run}: {upper_name}",
        )
        ax.fill_between(
            frame["depth"], frame["lower"], frame["upper"], color=color, alpha=0.15, linewidth=0
        )
    if pool_depth is not None:
        ax.axvline(pool_depth, color="grey", linestyle=":", linewidth=1)
        ax.annotate(
            f"pool depth {pool_depth}",
            (pool_depth, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(3, -12),
            textcoords="offset points",
            fontsize="small",
            color="grey",
        )
    ax.set_xscale("log")
    from evalwh.present.plots.experiments import plain_log_axis

    plain_log_axis(ax)
    ax.set_xlabel("depth d")
    ax.set_ylabel(measure)
    ax.set_ylim(0, 1)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize="small", loc="center left")
    if title:
        ax.set_title(title)
    fig.tight_layout()
    out = Path(path)
    from evalwh.present.plots.experiments import save_figure

    save_figure(fig, out, dpi=fig.dpi)
    return out
