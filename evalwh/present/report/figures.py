"""The report's figures as SVG text: three of its own, two drawn by evalwh's figure modules.

The pair figure (:func:`evalwh.present.plots.pair.plot_pair`) and the bounds figure
(:func:`evalwh.present.plots.bounds.plot_bounds`) write files; they are drawn into a temporary
directory as SVG and read back, so the report shows exactly what ``evalwh plot`` draws.
Fonts are converted to paths (matplotlib's default), so the SVG needs no font files.
"""

from __future__ import annotations

import functools
import io
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, ParamSpec, TypeVar

import pandas as pd

from evalwh.present.report.model import short_id, short_ids

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure

    from evalwh.present.report.model import Figure, ReportOptions

P = ParamSpec("P")
R = TypeVar("R")

STRONG = "#1b7f6b"
WEAK = "#d9822b"
INK = "#30363d"
MUTED = "#8b949e"
ACCENT = "#2f6fb0"
# fixed ids and no timestamp: the same data draws byte-identical SVG; 12 pt text, so that
# "small" (10 pt) labels and legends stay at least MIN_TEXT_PX on the page (below)
_RC = {"svg.hashsalt": "evalwh-report", "svg.fonttype": "path", "font.size": 12}

FIGURE_ID_SHOWN = 24
"""Ids longer than this are shortened in figures (legends and titles have less room than
tables, and their text is at least MIN_TEXT_PX): start and end, as :func:`short_id` does."""
MIN_TEXT_PX = 10
"""No text of a figure is smaller than this many CSS pixels on the page at its design width."""
COLUMN_PX = 497
"""Width of a figure's image in a two-column grid of the report at its full width (1120 px
main column, report.css.j2): (1064 - 18) / 2 minus the figure's padding and border. A figure
of W inches (W x 72 SVG units) is drawn at COLUMN_PX / (W x 72) pixels per point there."""
WIDE_PX = 860
"""Width of a wide figure's image (``figure.wide img`` in report.css.j2)."""


def _report_style(draw: Callable[P, R]) -> Callable[P, R]:
    """Draw under the report's matplotlib settings (:data:`_RC`): a text takes its size when
    it is created, so the settings must hold while the figure is drawn, not only when saved."""

    @functools.wraps(draw)
    def drawn(*args: P.args, **kwargs: P.kwargs) -> R:
        import matplotlib

        with matplotlib.rc_context(_RC):
            return draw(*args, **kwargs)

    return drawn


def _figure(width: float, height: float) -> MplFigure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure as MplFigure

    figure = MplFigure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def to_svg(figure: MplFigure) -> str:
    """The figure as an SVG document without the XML prolog (for embedding)."""
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context(_RC):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return _strip_prolog(buffer.getvalue())


def _strip_prolog(svg: str) -> str:
    """Drop ``<?xml ...?>`` and the DOCTYPE (which names an external DTD) from an SVG."""
    svg = re.sub(r"<\?xml[^>]*\?>\s*", "", svg)
    return re.sub(r"<!DOCTYPE[^>]*>\s*", "", svg)


def _drawn(draw: object, *args: object, **kwargs: object) -> str:
    """Run a figure function that writes a file, in a temporary directory, and read the SVG."""
    import matplotlib

    with tempfile.TemporaryDirectory() as tmp, matplotlib.rc_context(_RC):
        path = Path(tmp) / "figure.svg"
        draw(*args, path, **kwargs)  # type: ignore[operator]
        return _strip_prolog(path.read_text())


@_report_style
def unjudged_figure(unjudged: pd.DataFrame, pool_depth: int | None) -> Figure:
    """The unjudged share per rank (methods §2.7), with the judged depth marked (methods §14.2)."""
    from evalwh.present.plots.experiments import plain_log_axis
    from evalwh.present.report.model import Figure

    figure = _figure(6.4, 2.6)
    ax = figure.subplots()
    ax.fill_between(unjudged["rank"], unjudged["share"], color=ACCENT, alpha=0.18, linewidth=0)
    ax.plot(unjudged["rank"], unjudged["share"], color=ACCENT, linewidth=1.6)
    if pool_depth is not None:
        ax.axvline(pool_depth, color=INK, linestyle=":", linewidth=1)
        ax.annotate(
            f"judged depth {pool_depth}",
            (pool_depth, 0.95),
            xycoords=("data", "axes fraction"),
            xytext=(4, 0),
            textcoords="offset points",
            fontsize="small",
            color=INK,
            va="top",
        )
    ax.set_xscale("log")
    plain_log_axis(ax)
    ax.set_ylim(0, 1)
    ax.set_xlim(1, max(int(unjudged["rank"].max()), 2))
    ax.set_xlabel("rank k")
    ax.set_ylabel("unjudged share")
    _tidy(ax)
    caption = (
        "Share of ranked lists (every run, every qrels topic) reaching rank k whose document "
        f"at k is unjudged. {_where_unjudged(unjudged)}"
    )
    return Figure("unjudged", "Unjudged share per rank", caption, to_svg(figure))


def _where_unjudged(unjudged: pd.DataFrame) -> str:
    """What the unjudged-share curve shows about where the judgments stop: said from the curve.

    Examples:
        >>> _where_unjudged(pd.DataFrame({"rank": [1, 2, 3], "share": [0.0, 0.0, 0.2]}))
        'It leaves zero at rank 3: from there on the judgments are incomplete.'
        >>> _where_unjudged(pd.DataFrame({"rank": [1, 2], "share": [0.01, 0.3]}))
        'It is above zero from rank 1: some lists hold unjudged documents at every rank.'
        >>> _where_unjudged(pd.DataFrame({"rank": [1, 2], "share": [0.0, 0.0]}))
        'It stays at zero: every ranked document is judged.'
    """
    ordered = unjudged.sort_values("rank")
    above = ordered[ordered["share"] > 0]
    if above.empty:
        return "It stays at zero: every ranked document is judged."
    first = int(above["rank"].iloc[0])
    if first <= int(ordered["rank"].iloc[0]):
        return f"It is above zero from rank {first}: some lists hold unjudged documents at every rank."
    return f"It leaves zero at rank {first}: from there on the judgments are incomplete."


@_report_style
def topics_figure(topics: pd.DataFrame) -> Figure:
    """Judged and relevant documents per topic, topics sorted by judged documents."""
    from evalwh.present.report.model import Figure

    ordered = topics.sort_values(["judged", "query_id"], ascending=[False, True])
    x = range(len(ordered))
    figure = _figure(6.4, 2.4)
    ax = figure.subplots()
    ax.bar(x, ordered["judged"], color="#c9d6e3", width=0.85, label="judged")
    ax.bar(x, ordered["relevant"], color=ACCENT, width=0.85, label="relevant")
    ax.set_xticks([])
    ax.set_xlabel(f"{len(ordered)} topics, most judged first")
    ax.set_ylabel("documents")
    ax.legend(frameon=False, fontsize="small", loc="upper right")
    _tidy(ax)
    caption = "Judged (grade >= 0) and relevant (grade >= 1) documents of each topic."
    return Figure("topics", "Judgments per topic", caption, to_svg(figure))


LEGEND_RUNS = 12
"""The runs figure names every run in a legend beside the axes up to this many runs."""


@_report_style
def runs_figure(
    profile: pd.DataFrame, pairing: str, *, order: list[str] | None = None, ranked_by: str | None = None
) -> Figure:
    """Every run's mean performance and A_p against depth: one line per run, depths on the x-axis.

    The depths are placed evenly and labelled with their values (10, 30, 100, ...); runs are
    coloured by their rank on the leaderboard (``order``, ranked by ``ranked_by``), else at the
    first depth (darkest = best). Up to :data:`LEGEND_RUNS` runs are named in a legend beside
    the axes, never over the lines.
    """
    from evalwh.present.report.model import Figure

    perf = "P" if pairing == "P" else "MAP"
    first = int(min(profile["depth"].dropna()))
    by = ranked_by if order is not None and ranked_by is not None else f"{perf}@{first}"
    caption = (
        f"Mean {perf}@d (top) and mean A_p@d (bottom) of every run at each depth d; one line "
        f"per run, coloured by its rank on {by} (darkest = best)."
    )
    return Figure("runs", "All runs against depth", caption, to_svg(draw_runs(profile, perf, order, by)))


def draw_runs(
    profile: pd.DataFrame, perf: str, order: list[str] | None = None, ranked_by: str | None = None
) -> MplFigure:
    """The matplotlib figure of :func:`runs_figure`."""
    depths = sorted(int(d) for d in profile["depth"].dropna().unique())
    wide = profile.pivot_table(index="run_id", columns=["kind", "depth"], values="value")
    if order is None:
        order = wide[("performance", depths[0])].sort_values(ascending=False, kind="stable").index
    wide = wide.loc[list(order)]
    order = wide.index
    from matplotlib import colormaps

    palette = colormaps["viridis"].resampled(max(len(order), 2))
    named = len(order) <= LEGEND_RUNS
    figure = _figure(9.0 if named else 7.5, 5.4)
    axes = figure.subplots(2, 1, sharex=True)
    x = list(range(len(depths)))
    for ax, kind, label in zip(
        axes, ("performance", "assessment"), (f"mean {perf}@d", "mean A_p@d"), strict=True
    ):
        for i, run in enumerate(order):
            ax.plot(
                x,
                [wide.loc[run, (kind, d)] for d in depths],
                marker="." if named else None,
                linewidth=1.1 if named else 0.6,
                alpha=1.0 if named else 0.7,
                color=palette(i),
                label=short_id(run, FIGURE_ID_SHOWN),
            )
        ax.set_ylabel(label)
        _tidy(ax)
    axes[1].set_xticks(x, [str(d) for d in depths])
    axes[1].set_xlabel("depth d")
    if named:
        axes[0].legend(
            loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize="small",
            title=f"by {ranked_by or f'{perf}@{depths[0]}'}", title_fontsize="small",
        )  # fmt: skip
    return figure


CATERPILLAR_NAMED = 40
"""The caterpillar figure names every run under its axis up to this many runs."""
TIER_COLOURS = ("#2f6fb0", "#d9822b", "#1b7f6b", "#8e44ad", "#b03a2e", "#7f8c8d")


@_report_style
def caterpillar_figure(ranks: pd.DataFrame, intervals: pd.DataFrame, note: str) -> Figure:
    """Every run on the lead measure at one depth: its mean with its interval, and its rank interval.

    ``ranks`` is the lead measure's rank table (:func:`evalwh.stats.compare.rank_table`, best
    first), ``intervals`` the runs' ``run_id, ci_low, ci_high`` (the 95% t-interval of each
    run's mean, ``evalwh compare``'s ``runs``). Runs sit on the x-axis in rank order, coloured
    by tier; the top panel draws each mean with its interval, the bottom one the rank interval
    with the observed rank as a dot. Up to :data:`CATERPILLAR_NAMED` runs are named.
    """
    from evalwh.present.report.model import Figure

    measure = str(ranks["measure"].iloc[0])
    caption = (
        f"Each run's mean {measure} with the 95% t-interval of its mean (top) and the 95% bootstrap "
        f"interval of its rank, the dot its rank (bottom); runs in rank order, coloured by tier. {note}"
    )
    return Figure(
        "runs", f"All runs on {measure}: means and rank intervals", caption,
        to_svg(draw_caterpillar(ranks, intervals)),
    )  # fmt: skip


def draw_caterpillar(ranks: pd.DataFrame, intervals: pd.DataFrame) -> MplFigure:
    """The matplotlib figure of :func:`caterpillar_figure`."""
    import numpy as np

    board = ranks.merge(intervals[["run_id", "ci_low", "ci_high"]], on="run_id", how="left")
    n = len(board)
    x = np.arange(1, n + 1)
    colours = [TIER_COLOURS[(int(t) - 1) % len(TIER_COLOURS)] for t in board["tier"]]
    named = n <= CATERPILLAR_NAMED
    figure = _figure(9.0, 5.6 if named else 5.0)
    top, bottom = figure.subplots(2, 1, sharex=True, height_ratios=(1.0, 1.0))
    mean = board["mean"].to_numpy(dtype=float)
    low = board["ci_low"].to_numpy(dtype=float)
    high = board["ci_high"].to_numpy(dtype=float)
    width = 1.4 if n <= 60 else 0.9
    top.vlines(x, low, high, colors=colours, linewidth=width, alpha=0.85)
    top.scatter(x, mean, c=colours, s=14 if n <= 60 else 7, zorder=3, linewidths=0)
    top.set_ylabel(f"mean {board['measure'].iloc[0]}")
    bottom.vlines(x, board["rank_low"], board["rank_high"], colors=colours, linewidth=width, alpha=0.85)
    bottom.scatter(x, board["rank"], c=colours, s=14 if n <= 60 else 7, zorder=3, linewidths=0)
    bottom.set_ylim(n + 0.5, 0.5)  # rank 1 at the top
    bottom.set_ylabel("rank (95% interval)")
    for ax in (top, bottom):
        _tidy(ax)
    tiers = sorted(int(t) for t in board["tier"].unique())
    from matplotlib.lines import Line2D

    handles = [
        Line2D([0], [0], color=TIER_COLOURS[(t - 1) % len(TIER_COLOURS)], marker="o", linewidth=1.4,
               label=f"tier {t} ({int((board['tier'] == t).sum())})")
        for t in tiers[: len(TIER_COLOURS)]
    ]  # fmt: skip
    top.legend(handles=handles, frameon=False, fontsize="small", loc="upper right", ncols=min(len(handles), 3))
    if named:
        bottom.set_xticks(x, short_ids(board["run_id"].tolist(), FIGURE_ID_SHOWN), rotation=90, fontsize="small")
        bottom.set_xlabel("run, in rank order")
    else:
        step = 10 if n <= 200 else 50
        ticks = [1, *range(step, n + 1, step)]
        bottom.set_xticks(ticks, [str(t) for t in ticks])
        bottom.set_xlabel(f"{n} runs in rank order (position on the leaderboard)")
    bottom.set_xlim(0.3, n + 0.7)
    return figure


@_report_style
def pair_figure(
    index: int,
    rows: pd.DataFrame,
    intervals: pd.DataFrame,
    opts: ReportOptions,
    family: str = "",
    *,
    own_test: bool = False,
) -> Figure:
    """Performance and assessment of a pair against depth with comparison intervals.

    ``family`` is the report's sentence on its own test and family
    (:func:`evalwh.present.report.build.family_sentence`). With ``own_test`` the bars are the
    pair's under that test (:func:`evalwh.present.report.build._pair_intervals`); else they
    are the ANOVA's comparison intervals over every run, and the caption says that they come
    from another procedure than the one that decided the cases.
    """
    from evalwh.methods.decisions import PairComparison
    from evalwh.present.plots.pair import plot_pair
    from evalwh.present.report.model import Figure

    run_a, run_b = str(rows["run_a"].iloc[0]), str(rows["run_b"].iloc[0])
    own = _shortened(intervals[intervals["run_id"].isin([run_a, run_b])], "run_id")
    run_a, run_b = short_id(run_a, FIGURE_ID_SHOWN), short_id(run_b, FIGURE_ID_SHOWN)
    svg = _drawn(plot_pair, PairComparison(_shortened(rows, "run_a", "run_b"), own), title=f"{run_a} vs {run_b}")
    caption = _own_test_caption(rows, opts, family) if own_test else _pair_caption(rows, intervals, opts, family)
    return Figure(f"pair-{index}", f"{run_a} vs {run_b}", caption, svg)


def _own_test_caption(rows: pd.DataFrame, opts: ReportOptions, family: str) -> str:
    """The caption of bars drawn under the report's own paired t-test and correction."""
    one_depth = rows["depth"].dropna().nunique() == 1
    where = "under the runs" if one_depth else "above each depth"
    return (
        "Means with this pair's comparison bars under the report's test: half the least significant "
        "difference of the paired t-test at the pair's corrected level (alpha times p over the adjusted p), "
        f"cut to [0, 1], so the bars overlap exactly when the report finds no significant difference ({family}). "
        f"The case {where} (* = weak) combines performance and assessment. They are bars for this pair's "
        "difference, not confidence intervals of each run's mean."
    )


def _pair_caption(rows: pd.DataFrame, intervals: pd.DataFrame, opts: ReportOptions, family: str) -> str:
    """What the pair figure's bars are (the intervals of :func:`evalwh.stats.significance.comparison_intervals`
    over every run of the report), and which test decided the cases."""
    k = int(intervals["run_id"].nunique()) if "run_id" in intervals else 2
    n_pairs = k * (k - 1) // 2
    anova = "two-way ANOVA's (topics as blocks)" if opts.test == "anova2" else "one-way ANOVA's"
    pairs = "the 1 pair of the 2 runs" if n_pairs == 1 else f"all {n_pairs:,} pairs of the {k} runs"
    one_depth = rows["depth"].dropna().nunique() == 1
    where = "under the runs" if one_depth else "above each depth"
    decided = f"The cases ({where}, * = weak) are the report's test: {family}" if family else (
        f"The cases ({where}, * = weak) are the report's test"
    )
    return (
        f"Means with comparison intervals from a {anova} pooled error, Bonferroni over {pairs} at alpha "
        f"{opts.alpha}, cut to [0, 1]: two bars that do not overlap differ under that procedure. {decided}; "
        "it can find a difference where the bars overlap, and none where they do not (evalwh plot compare "
        "draws the same bars)."
    )


@_report_style
def bounds_figure(
    index: int, bands: pd.DataFrame, rows: pd.DataFrame, pool_depth: int | None
) -> Figure:
    """The P@d belief-plausibility bands of a pair against depth."""
    from evalwh.present.plots.bounds import plot_bounds
    from evalwh.present.report.model import Figure

    run_a, run_b = str(rows["run_a"].iloc[0]), str(rows["run_b"].iloc[0])
    own = _shortened(bands[bands["run_id"].isin([run_a, run_b])], "run_id")
    run_a, run_b = short_id(run_a, FIGURE_ID_SHOWN), short_id(run_b, FIGURE_ID_SHOWN)
    svg = _drawn(plot_bounds, own, pool_depth=pool_depth, title=f"P@d bounds: {run_a}, {run_b}")
    caption = (
        "Lower line P@d (belief), dashed line P@d + U@d (plausibility): P@d under any "
        "completion of the judgments lies in the band. Where the bands overlap, the "
        "judgments cannot settle the order (evalwh plot bounds)."
    )
    return Figure(f"bounds-{index}", f"Bounds: {run_a}, {run_b}", caption, svg)


def _shortened(frame: pd.DataFrame, *columns: str) -> pd.DataFrame:
    """``frame`` with its run ids as the report shows them (drawn text costs with its length)."""
    return frame.assign(**{c: frame[c].map(lambda v: short_id(v, FIGURE_ID_SHOWN)) for c in columns})


def _tidy(ax: object) -> None:
    """Light axes: no top and right spines, a faint grid."""
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)  # type: ignore[attr-defined]
    ax.grid(True, alpha=0.25, linewidth=0.6)  # type: ignore[attr-defined]
