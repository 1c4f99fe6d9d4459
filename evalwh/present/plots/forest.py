"""The forest plot of a meta-analysis: each collection's effect and interval, the pooled diamonds.

One panel per comparison (system A over system B on one measure): a row per collection with
its effect as a square sized by its random-effects weight and its interval as a line, then the
fixed-effect and random-effects pooled effects as diamonds spanning their intervals, and the
prediction interval of a new collection's effect as a thin bar under the random-effects
diamond. A vertical line marks no effect (0). Drawn on a :class:`matplotlib.figure.Figure`
with the Agg canvas, never through pyplot.
"""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from evalwh.stats.meta import MetaAnalysis

_INK = "#30363d"
_BOX = "#2f6fb0"
_POOLED = "#1b7f6b"
_EFFECT_LABEL = {"smd": "standardised effect (Hedges' g)", "dz": "paired effect d_z", "raw": "mean difference"}


def forest_figure(result: MetaAnalysis, *, width: float = 7.5, max_label: int = 28) -> Figure:
    """The forest plot of every comparison of ``result``, one panel each, stacked.

    Args:
        result: The output of :func:`evalwh.stats.meta.meta_analysis`.
        width: Figure width in inches.
        max_label: Longer collection and system names are shortened (start ... end).
    """
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Polygon

    def short(text: str) -> str:
        text = str(text)
        if len(text) <= max_label:
            return text
        half = (max_label - 1) // 2
        return f"{text[:half]}…{text[-half:]}"

    keys = list(dict.fromkeys(zip(result.pooled["measure"], result.pooled["run_a"], result.pooled["run_b"], strict=True)))
    heights = []
    for measure, a, b in keys:
        k = int(((result.effects["measure"] == measure) & (result.effects["run_a"] == a) & (result.effects["run_b"] == b)).sum())
        heights.append(k + 3.2)
    figure = Figure(figsize=(width, 0.32 * sum(heights) + 0.75 * len(keys)), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(len(keys), 1, squeeze=False, height_ratios=heights)[:, 0]
    level = round(100 * (1 - result.alpha))
    for ax, (measure, a, b) in zip(axes, keys, strict=True):
        rows = result.effects[(result.effects["measure"] == measure) & (result.effects["run_a"] == a) & (result.effects["run_b"] == b)]
        pooled = result.pooled[(result.pooled["measure"] == measure) & (result.pooled["run_a"] == a) & (result.pooled["run_b"] == b)]
        het = result.heterogeneity[(result.heterogeneity["measure"] == measure) & (result.heterogeneity["run_a"] == a)
                                   & (result.heterogeneity["run_b"] == b)].iloc[0]  # fmt: skip
        k = len(rows)
        ys = np.arange(k, 0, -1) + 2.0
        weights = rows["weight_random"].to_numpy()
        ax.hlines(ys, rows["ci_low"], rows["ci_high"], color=_INK, linewidth=1.2)
        ax.scatter(rows["effect"], ys, s=40 + 260 * weights / max(weights.max(), 1e-12), marker="s", color=_BOX, zorder=3)
        labels = [f"{short(c)}  (n={n})" for c, n in zip(rows["collection_id"], rows["n_topics"], strict=True)]
        low_values = [*rows["ci_low"], *pooled["ci_low"]]
        high_values = [*rows["ci_high"], *pooled["ci_high"]]
        for y, (_, model) in zip((1.2, 0.2), pooled.iterrows(), strict=True):
            centre, lo, hi = model["effect"], model["ci_low"], model["ci_high"]
            ax.add_patch(Polygon([(lo, y), (centre, y + 0.3), (hi, y), (centre, y - 0.3)], closed=True,
                                 color=_POOLED if model["model"] == "random" else _INK, zorder=3))  # fmt: skip
        if math.isfinite(het["pi_low"]):
            ax.hlines(-0.35, het["pi_low"], het["pi_high"], color=_POOLED, linewidth=2.5)
            low_values.append(het["pi_low"])
            high_values.append(het["pi_high"])
            labels_pooled = ["random effects", "fixed effect", "prediction interval"]
            y_pooled = [0.2, 1.2, -0.35]
        else:
            labels_pooled = ["random effects", "fixed effect"]
            y_pooled = [0.2, 1.2]
        ax.axvline(0.0, color="#8b949e", linewidth=0.9, linestyle="--", zorder=1)
        ax.set_yticks([*ys, *y_pooled], [*labels, *labels_pooled])
        low, high = min(low_values), max(high_values)
        pad = 0.06 * (high - low if high > low else 1.0)
        ax.set_xlim(min(low, 0.0) - pad, max(high, 0.0) + pad)
        ax.set_ylim(-0.9, k + 2.7)
        ax.set_title(
            f"{short(a)} over {short(b)} on {measure}: τ² = {het['tau2']:.3g}, I² = {100 * het['i2']:.0f}%, "
            f"Q = {het['q']:.2f} (p = {het['q_p_value']:.3g})", fontsize="medium", loc="left",
        )
        ax.set_xlabel(f"{_EFFECT_LABEL.get(result.effect, result.effect)} with {level}% intervals")
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    return figure


def plot_forest(result: MetaAnalysis, path: str | os.PathLike[str]) -> Figure:
    """Draw :func:`forest_figure` to ``path`` (the format follows the suffix: png, pdf, svg), atomically."""
    from evalwh.present.plots.experiments import save_figure

    figure = forest_figure(result)
    save_figure(figure, path)
    return figure
