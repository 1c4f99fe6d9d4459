"""Lay a :class:`~evalwh.present.report.model.Report` out as one self-contained HTML file, or Markdown.

The layout lives in Jinja2 templates shipped with the package, in
``evalwh/present/report/templates/``: ``report.html.j2`` (one block per section),
``report.css.j2`` (inlined into its ``<style>``, so the HTML stays one file) and
``report.md.j2``. The HTML has inline CSS, no scripts, and its figures as ``data:`` URIs (SVG):
it opens offline and requests nothing. Colour carries meaning only: green for strong verdicts,
orange for weak ones, red for runs whose rankings are much less assessed than the others'.

This module keeps what a template should not do: format the numbers, choose the classes, put
the rows together (``_html_context``, ``_markdown_context``), and write the sentences both
formats print. The HTML environment autoescapes; the only values marked safe
(:class:`markupsafe.Markup`) are the figures' ``data:`` URIs. A variable a template names but
the context lacks is an error (``StrictUndefined``), not an empty string.
"""

from __future__ import annotations

import base64
import functools
import json
import math
from typing import TYPE_CHECKING, Any

import pandas as pd
from markupsafe import Markup

from evalwh.present.report.judgments import judgments_context
from evalwh.present.report.ranks import (
    disagreements_display,
    disagreements_sentence,
    rank_of,
    rank_sentence,
    tiers_display,
    tiers_sentence,
)
from evalwh.present.report.model import short_id

if TYPE_CHECKING:
    import jinja2

    from evalwh.present.report.model import Figure, Report

_MEASURE_LABEL = {"AP": "MAP", "AA": "MAA"}
_GLANCE_FIGURES = ("unjudged", "topics")  # drawn in the glance section, not under Figures


def render_html(report: Report) -> str:
    """The report as one self-contained HTML document (template ``report.html.j2``).

    Args:
        report: The output of :func:`evalwh.present.report.build.build_report`.

    Returns:
        The HTML text (UTF-8 safe, no external references).
    """
    return _environment().get_template("report.html.j2").render(_html_context(report))


def render_markdown(report: Report) -> str:
    """The report's tables and methods as Markdown (template ``report.md.j2``; no figures).

    Args:
        report: The output of :func:`evalwh.present.report.build.build_report`.

    Returns:
        Markdown text with pipe tables.
    """
    return _environment(markdown=True).get_template("report.md.j2").render(_markdown_context(report))


@functools.cache
def _environment(markdown: bool = False) -> jinja2.Environment:
    """The templates' environment, built once per process (one for HTML, one for Markdown).

    Autoescaping is on for every template but the Markdown one (``*.md.j2``), including any
    template name it does not know. In Markdown every value is escaped by
    :func:`evalwh.io.printable.markdown` (``finalize``): a run id, a set's name, a judge or
    an ir_metadata block brings no HTML tag and no control character or line break into the
    file; tables (``md_table``) escape their cells so.
    """
    import jinja2

    env = jinja2.Environment(
        finalize=_markdown_value if markdown else None,
        loader=jinja2.PackageLoader("evalwh.present.report", "templates"),
        autoescape=jinja2.select_autoescape(
            enabled_extensions=("html.j2", "css.j2"),
            disabled_extensions=("md.j2",),
            default_for_string=True,
            default=True,
        ),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["md_table"] = _markdown_table
    env.filters["short_id"] = short_id
    env.filters["id_tip"] = _id_with_tip
    return env


def _id_with_tip(text: object) -> Markup:
    """A long id shortened, with the full id in a tooltip (HTML); a short one as it is."""
    from markupsafe import escape

    full = str(text)
    shown = short_id(full)
    if shown == full:
        return Markup(escape(full))
    return Markup(f'<span title="{escape(full)}">{escape(shown)}</span>')


def _html_context(report: Report) -> dict[str, Any]:
    o = report.overview
    figures = [_figure_context(f) for f in report.figures]
    return {
        "title": f"Evaluation report: {report.collection}",
        "runs": _count_of(o["runs"], "run"),
        "topics": _count_of(o["topics"], "topic"),
        "version": report.version,
        "generated": report.generated,
        "built_in": f"{sum(report.timings.values()):.1f}",
        "glance": _glance_context(report, [f for f in figures if f["key"] in _GLANCE_FIGURES]),
        "board": _leaderboard_context(report),
        "pairs": _comparisons_context(report),
        "proportions": _proportions_context(report),
        "figures": [f for f in figures if f["key"] not in _GLANCE_FIGURES],
        "methods": report.methods,
        "provenance": _provenance_context(report),
        "judgments": judgments_context(report.judgments),
    }


def _markdown_context(report: Report) -> dict[str, Any]:
    o = report.overview
    return {
        "collection": report.collection,
        "runs": _count_of(o["runs"], "run"),
        "topics": _count_of(o["topics"], "topic"),
        "version": report.version,
        "generated": report.generated,
        "glance_facts": _glance_facts(report),
        "unjudged": _unjudged_sentence(report),
        "leaderboard": _leaderboard_display(report),
        "leaderboard_note": _leaderboard_note(report),
        "leaderboard_notes": [
            t
            for t in (_significance_note(report), rank_sentence(report), _deeper_note(report), _ties_sentence(report))
            if t
        ],
        "pairs_heading": _pairs_heading(report),
        "pairs_test": _test_sentence(report),
        "pairs": _pairs_display(report),
        "tiers_note": tiers_sentence(report),
        "tiers": tiers_display(report),
        "disagree_note": disagreements_sentence(report),
        "disagree": disagreements_display(report),
        "proportions": _proportions_display(report),
        "methods": report.methods,
        "provenance_facts": _provenance_facts(report),
        "run_files": _runs_provenance(report),
        "judgments": judgments_context(report.judgments),
    }


# -- sections -------------------------------------------------------------------------------


def _glance_facts(report: Report) -> list[tuple[str, str]]:
    o = report.overview
    judged, relevant = o["judged_per_topic"], o["relevant_per_topic"]
    pooled = "" if o["pooled_runs"] is None else f" ({o['pooled_runs']} pooled)"
    depth = "unknown" if o["pool_depth"] is None else str(o["pool_depth"])
    return [
        ("Topics", f"{o['topics']} ({o['topics_with_relevant']} with a relevant document)"),
        ("Judged documents", f"{o['judged']:,} (per topic {_spread(judged)})"),
        ("Relevant documents", f"{o['relevant']:,} (per topic {_spread(relevant)})"),
        ("Runs", f"{o['runs']}{pooled}, deepest ranking {o['deepest_run']}"),
        ("Judged depth", o.get("pool_depth_sentence") or f"{depth}, {o['pool_depth_source']}"),
    ]


def _spread(s: dict[str, float]) -> str:
    return f"mean {s['mean']:.1f}, median {s['median']:g}, {s['min']}–{s['max']}"


def _unjudged_sentence(report: Report) -> str:
    """Where the unjudged share first reaches 1%, 10%, 50%: one clause per rank, the largest
    share reached there (1% and 10% first reached at rank 1 read "10% of the lists at rank 1")."""
    o = report.overview
    by_rank: dict[int, float] = {}
    for share, rank in o["unjudged_first_at"].items():
        if rank:
            by_rank[rank] = max(share, by_rank.get(rank, 0.0))
    clauses = [
        f"{share:.0%}{' of the lists' if i == 0 else ''} at rank {rank}"
        for i, (rank, share) in enumerate(sorted(by_rank.items()))
    ]
    at = ", ".join(
        f"{share:.1%} at rank {depth}"
        for depth, share in o["unjudged_at_depths"].items()
        if share is not None
    )
    if not clauses:
        head = "Every ranked document is judged."
    elif len(clauses) == 1:
        head = f"Unjudged documents reach {clauses[0]}."
    else:
        head = f"Unjudged documents reach {', '.join(clauses[:-1])} and {clauses[-1]}."
    return f"{head} Unjudged share: {at}." if at else head


def _glance_context(report: Report, figures: list[dict[str, Any]]) -> dict[str, Any]:
    o = report.overview
    cards = [
        (f"{o['topics']}", "topics"),
        (f"{o['judged']:,}", "judged documents"),
        (f"{o['relevant']:,}", "relevant documents"),
        (
            f"{o['runs']}",
            ("run" if o["runs"] == 1 else "runs") + ("" if o["pooled_runs"] is None else f" ({o['pooled_runs']} pooled)"),
        ),
        ("–" if o["pool_depth"] is None else str(o["pool_depth"]), "judged depth"),
    ]
    cards += [
        (f"{share:.0%}" if share is not None else "–", f"unjudged at rank {depth}")
        for depth, share in list(o["unjudged_at_depths"].items())[-2:]
    ]
    return {
        "cards": cards,
        "facts": _glance_facts(report),
        "unjudged": _unjudged_sentence(report),
        "figures": figures,
    }


_BOARD_META = {"position", "run_id", "pooled", "method", "n_topics", "flag", "flagged"}


def _board_measures(report: Report) -> list[str]:
    """The leaderboard's value columns, without an A_p_ret@d equal to A_p@d for every run."""
    board = report.leaderboard
    shown = []
    for m in board.columns:
        if m in _BOARD_META or m.startswith("low "):
            continue
        twin = m.replace("A_p_ret@", "A_p@")
        if m.startswith("A_p_ret@") and twin in board.columns and _same(board[m], board[twin]):
            continue  # (its flag then marks the A_p@d cell, the same value)
        shown.append(m)
    return shown


def _same(a: pd.Series, b: pd.Series) -> bool:
    return bool((a - b).abs().fillna(0.0).le(1e-12).all())


def _low(record: dict[str, Any], measure: str) -> bool:
    """Whether a cell is the flagged value: A_p_ret@d's, or A_p@d's when they are the same column."""
    retrieved = measure.replace("A_p@", "A_p_ret@")
    return bool(record.get(f"low {retrieved}", False))


def _mark_of(report: Report) -> dict[tuple[str, str], dict[str, Any]]:
    """(measure, run) -> its significance marks (empty without a comparison)."""
    if report.marks is None:
        return {}
    return {(r["measure"], r["run_id"]): r for r in report.marks.to_dict("records")}


def _versus(vs: tuple[Any, ...]) -> str:
    """A cell's marks against the baselines, in order: ▲ better, ▼ worse, · not distinguishable."""
    symbols = {1: "▲", -1: "▼", 0: "·"}
    if all(v is None for v in vs):
        return "base"
    return "".join(symbols[int(v)] if v is not None else "–" for v in vs)


def _leaderboard_display(report: Report) -> pd.DataFrame:
    board = report.leaderboard
    measures = _board_measures(report)
    lead = _lead(report)
    marks = _mark_of(report)
    baselines = report.options.baselines
    out = pd.DataFrame({"#": board["position"], "run": board["run_id"]})
    if board["pooled"].notna().any():
        out["pooled"] = board["pooled"].map({True: "yes", False: "no"}).fillna("")
    if "method" in board:
        out["method"] = board["method"].fillna("")
    for m in measures:
        values = board[m].map(_number)
        if marks and baselines and (m, board["run_id"].iloc[0]) in marks:
            values = values + " " + board["run_id"].map(lambda r, m=m: _versus(marks[(m, r)]["vs"]))
        out[_header(report, m)] = values
    if marks and not baselines:
        out[f"> ({_label(lead)})"] = board["run_id"].map(lambda r: marks[(lead, r)]["better"])
        out[f"< ({_label(lead)})"] = board["run_id"].map(lambda r: marks[(lead, r)]["worse"])
    ranks = rank_of(report)
    if ranks:
        out[f"rank 95% ({_label(lead)})"] = board["run_id"].map(lambda r: ranks[r]["interval"])
        out["tier"] = board["run_id"].map(lambda r: ranks[r]["tier"])
    out["topics"] = board["n_topics"]
    out["flag"] = board["flag"]
    return out


def _label(measure: str) -> str:
    return _MEASURE_LABEL.get(measure, measure)


def _header(report: Report, measure: str) -> str:
    """A column's label: MAP for AP, and † when the measure cuts deeper than the judged depth."""
    return _label(measure) + (" †" if measure in report.deeper else "")


def _lead(report: Report) -> str:
    """The measure that ranks the leaderboard (its first value column)."""
    return _board_measures(report)[0]


def _count_of(n: int, noun: str) -> str:
    """``1 run``, ``2 runs``, ``1,234 topics``."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _leaderboard_note(report: Report) -> str:
    flagged = int(report.leaderboard["flagged"].sum())
    gap = report.options.flag_gap
    pooled = report.leaderboard["pooled"]
    against = "the pooled runs'" if pooled.fillna(False).astype(bool).any() else "the runs'"
    head = "No run is flagged" if flagged == 0 else f"{_count_of(flagged, 'run')} flagged ⚑"
    return (
        f"{head}: ⚑ marks a run when the share of the documents it retrieved that is judged "
        f"(mean A_p_ret@10 or A_p_ret@100, the red cells) lies below the lower fence of "
        f"{against} own shares (first quartile minus 1.5 interquartile ranges) and more than "
        f"{gap:.2f} below their median; a flagged run's comparisons with better-assessed runs "
        "are the ones to distrust. A low A_p@d beside a high A_p_ret@d is a short run, not "
        "flagged: what it returned was judged."
    )


def _significance_note(report: Report) -> str:
    """What the leaderboard's marks say, and under which family (empty for one run)."""
    if report.marks is None:
        return "One run: nothing to compare."
    from evalwh.present.report.build import family_sentence

    family = family_sentence(report.options, report.family)
    if report.options.baselines:
        names = ", ".join(report.options.baselines)
        return (
            f"Beside each mean, against the baseline{'s' if len(report.options.baselines) > 1 else ''} "
            f"{names} in order: ▲ significantly better, ▼ significantly worse, · not "
            f"distinguishable; base marks the baseline ({family})."
        ) + _family_notes(report)
    lead = _label(_lead(report))
    return (
        f"> and <: how many runs each run is significantly better and worse than on {lead}; "
        f"shaded means are the top group of their measure, runs no other run is significantly "
        f"better than ({family})."
    ) + _family_notes(report)


def _family_notes(report: Report) -> str:
    """``evalwh compare``'s notes on the family (e.g. the runs' topic sets differ), as sentences."""
    notes = report.family.get("notes") or []
    return "".join(f" Note: {n[0].upper()}{n[1:]}." for n in notes)


def _deeper_note(report: Report) -> str:
    from evalwh.present.report.defaults import deeper_note

    return deeper_note(report.deeper, report.overview["pool_depth"], _label)


def _ties_sentence(report: Report) -> str:
    from evalwh.present.report.ties import printed_ties_note

    if report.ties is None:
        return ""
    changed = list(zip(report.ties["run_id"], report.ties["values"].astype(int), strict=True))
    return printed_ties_note(changed, report.ties_reordered) or ""


def _leaderboard_context(report: Report) -> dict[str, Any]:
    """The leaderboard's rows with their cells formatted and classed: ``best`` for the best
    value of a performance measure, ``low`` for a flagged assessment value, ``top`` for a run
    of its measure's top group, and a bar as wide as the lead measure's value (40 px for the
    best). Every cell has its sort key (``data-v``) for the page's sorting script."""
    board = report.leaderboard
    measures = _board_measures(report)
    assess = [m for m in measures if m.startswith(("A_p@", "A_p_ret@"))]
    perf = [m for m in measures if m not in assess]
    best = {m: board[m].max() for m in perf}
    top = float(board[perf[0]].max()) or 1.0
    marks = _mark_of(report)
    baselines = report.options.baselines
    counts = bool(marks) and not baselines
    ranks = rank_of(report)
    lead = perf[0]
    # A_p@d columns whose A_p_ret@d twin is shown (else the A_p@d cell carries the flag)
    shown_twins = {m.replace("A_p_ret@", "A_p@") for m in measures if m.startswith("A_p_ret@")}
    rows = []
    for record in board.to_dict("records"):
        cells = []
        for m in measures:
            value = record[m]
            classes = []
            if m in best and not _missing(value) and value == best[m]:
                classes.append("best")
            if m in assess and (
                record.get(f"low {m}", False) or (m.startswith("A_p@") and m not in shown_twins and _low(record, m))
            ):
                classes.append("low")
            mark = marks.get((m, record["run_id"]))
            sign = ""
            if mark is not None and baselines:
                sign = _versus(mark["vs"])
            elif mark is not None and mark["top"]:
                classes.append("top")
            bar = None
            if m == perf[0] and not _missing(value):
                bar = f"{max(0.0, float(value)) / top * 40:.0f}"
            cells.append(
                {
                    "classes": " ".join(classes),
                    "bar": bar,
                    "value": _number(value),
                    "sign": sign,
                    "key": "" if _missing(value) else f"{float(value):.12g}",
                }
            )
        pooled = record["pooled"]
        lead_mark = marks.get((lead, record["run_id"]))
        rank = ranks.get(record["run_id"])
        rows.append(
            {
                "position": record["position"],
                "run": record["run_id"],
                "pooled": "" if _missing(pooled) else ("yes" if pooled else "no"),
                "method": "" if _missing(record.get("method")) else record["method"],
                "cells": cells,
                "better": lead_mark["better"] if counts and lead_mark else None,
                "worse": lead_mark["worse"] if counts and lead_mark else None,
                "topics": record["n_topics"],
                "flagged": bool(record["flagged"]),
                "flag": record["flag"],
                "rank": rank,
            }
        )
    return {
        "ranked_by": _label(perf[0]),
        "has_pooled": bool(board["pooled"].notna().any()),
        "has_method": "method" in board,  # ir_metadata's method of the runs
        "measures": [_header(report, m) for m in measures],
        "counts": counts,
        "ranked": bool(ranks),
        "ranks_note": rank_sentence(report),
        "lead": _label(lead),
        "rows": rows,
        "note": _leaderboard_note(report),
        "significance": _significance_note(report),
        "deeper": _deeper_note(report),
        "ties": _ties_sentence(report),
    }


def _pairs_heading(report: Report) -> str:
    if report.pairs.empty and report.pair_mode != "summary":
        return "One run: no pairs to compare."
    n = len(report.pairs) // max(report.pairs["column"].nunique(), 1) if not report.pairs.empty else 0
    if report.pair_mode == "baseline":
        names = ", ".join(f"**{b}**" for b in report.options.baselines)
        if len(report.options.baselines) > 1:
            return f"{_count_of(n, 'pair')}: every other run against each of the baselines {names}, per depth."
        return f"{_count_of(n, 'run')} against the baseline {names}, per depth."
    if report.pair_mode == "all":
        return "The one pair, per depth." if n == 1 else f"All {n} pairs, per depth."
    total = report.family.get("n_pairs", 0)
    weak = 0 if report.weak is None else len(report.weak)
    if weak == 0:
        return (
            f"No pair of the {total:,} is weak (case 2 or 4) at any depth: every decision the "
            "tests make is one the judgments support."
        )
    shown = min(n, weak)
    return (
        f"{weak:,} of the {total:,} pairs are weak (case 2 or 4: the judgments cannot support the "
        f"comparison) at some depth; the first {shown} down the leaderboard"
        + (":" if shown == weak else f" (all pairs: `evalwh matrix --layout pairs`):")
    )


def _pairs_display(report: Report) -> pd.DataFrame:
    pairs = report.pairs
    if pairs.empty:
        return pd.DataFrame()
    columns = list(dict.fromkeys(pairs["column"]))
    keys = list(dict.fromkeys(zip(pairs["run_a"], pairs["run_b"], strict=True)))
    cell = pairs.set_index(["run_a", "run_b", "column"])
    out = pd.DataFrame({"run_a": [a for a, _ in keys], "run_b": [b for _, b in keys]})
    for column in columns:
        values = []
        for a, b in keys:
            row = cell.loc[(a, b, column)]
            text = f"{row['case']}{'' if row['strength'] == 'strong' else '*'}"
            values.append(f"{text} {row['perf_outcome']}/{row['assess_outcome']}")
        out[column] = values
    return out


def _comparisons_context(report: Report) -> dict[str, Any]:
    """The listed pairs, one row per pair and one cell per column: the case and its strength
    (the cell's class), the outcomes, and the means with adjusted p-values, printed as well as
    in the tooltip (hover alone is lost on paper). In summary mode also the tiers and the pairs
    the measures disagree on."""
    pairs = report.pairs
    tiers = tiers_display(report)
    disagree = disagreements_display(report)
    summary = {
        "summary": report.pair_mode == "summary",
        "tiers_note": tiers_sentence(report),
        "tiers": [[str(v) for v in row] for row in tiers.itertuples(index=False)],
        "tiers_columns": list(tiers.columns),
        "disagree_note": disagreements_sentence(report),
        "disagree": [[str(v) for v in row] for row in disagree.itertuples(index=False)],
        "disagree_columns": list(disagree.columns),
    }
    if pairs.empty:
        return {
            "heading": _pairs_heading(report), "test": _test_sentence(report) if summary["summary"] else "",
            "columns": [], "rows": [], **summary,
        }  # fmt: skip
    columns = list(dict.fromkeys(pairs["column"]))
    rows = []
    for (a, b), group in pairs.groupby(["run_a", "run_b"], sort=False):
        by_column = group.set_index("column")
        cells = []
        for c in columns:
            row = by_column.loc[c]
            tip = (
                f"{row['performance']}: {row['perf_mean_a']:.4f} vs {row['perf_mean_b']:.4f}, "
                f"adjusted p {_p(row['perf_p_adjusted'])}; {row['assessment']}: "
                f"{row['assess_mean_a']:.4f} vs {row['assess_mean_b']:.4f}, adjusted p "
                f"{_p(row['assess_p_adjusted'])}; {row['n_topics']} topics"
            )
            cells.append(
                {
                    "tip": tip,
                    "strength": row["strength"],
                    "case": row["case"],
                    "perf_outcome": row["perf_outcome"],
                    "assess_outcome": row["assess_outcome"],
                    "perf": f"{_short(row['performance'])} {row['perf_mean_a']:.3f} vs "
                    f"{row['perf_mean_b']:.3f}, p {_p(row['perf_p_adjusted'])}",
                    "assess": f"{_short(row['assessment'])} {row['assess_mean_a']:.3f} vs "
                    f"{row['assess_mean_b']:.3f}, p {_p(row['assess_p_adjusted'])}",
                }
            )
        rows.append({"a": a, "b": b, "cells": cells})
    return {
        "heading": _pairs_heading(report).replace("**", ""),
        "test": _test_sentence(report),
        "columns": [_column_label(pairs, c, report.deeper) for c in columns],
        "rows": rows,
        **summary,
    }


def _short(measure: object) -> str:
    """A measure's name for a cell's label: MAP for AP, as the columns say."""
    return _MEASURE_LABEL.get(str(measure), str(measure))


def _test_sentence(report: Report) -> str:
    """Which family, test and correction decided every outcome, and what "==" means under them."""
    if report.pairs.empty and report.pair_mode != "summary":
        return ""
    from evalwh.present.report.build import family_sentence

    opts = report.options
    family = family_sentence(opts, report.family)
    from evalwh.present.report.defaults import depths_phrase

    pairing = "P@d with A_p@d" if opts.pairing == "P" else "MAP@d with A_p@d"
    lead = (opts.measures or ("",))[0]
    return (
        f"Tested as evalwh compare tests them: {family}; the decision matrix pairs {pairing} at "
        f"{depths_phrase(opts.depths or ())}, and MAP with MAA (the leaderboard is ranked by "
        f"{_label(lead)}). "
        f"\"==\" means the difference is not significant at alpha {opts.alpha} after the "
        "correction, not that the runs are equal."
    )


def _column_label(pairs: pd.DataFrame, column: str, deeper: dict[str, str] | None = None) -> str:
    """A decision-matrix column's label (``P@10``, ``MAP / MAA``), † when deeper than judged."""
    perf = str(pairs.loc[pairs["column"] == column, "performance"].iloc[0])
    label = "MAP / MAA" if column.startswith("MAP") else f"{perf.split('@')[0]}{column}"
    return label + (" †" if deeper and perf in deeper else "")


def _proportions_display(report: Report) -> pd.DataFrame:
    p = report.proportions
    if p.empty:
        return pd.DataFrame({"column": [], "pairs": []})
    out = pd.DataFrame({"column": p["column"], "pairs": p["pairs"].astype(int)})
    for name in ["C1", "C2", "C3", "C4", "C3a", "C3b", "strong", "weak"]:
        out[name] = p[name].map(lambda v: f"{v:.2f}")
    return out


def _proportions_context(report: Report) -> dict[str, Any]:
    """One row per column: the shares, and the bar's segments (C1, C3a, C3b, C2, C4), each as
    wide as its share and labelled when there is room for the label."""
    names = ["C1", "C2", "C3", "C4", "C3a", "C3b", "strong", "weak"]
    segments = [("C1", "c1"), ("C3a", "c3a"), ("C3b", "c3b"), ("C2", "c2"), ("C4", "c4")]
    rows = []
    if report.proportions.empty:
        return {"names": names, "rows": rows}
    for record in report.proportions.to_dict("records"):
        shares = {name: float(record[name]) for name in names}
        rows.append(
            {
                "label": _column_label(report.proportions, record["column"], report.deeper),
                "pairs": int(record["pairs"]),
                "segments": [
                    {
                        "cls": cls,
                        "width": f"{shares[name] * 100:.1f}",
                        "title": f"{name} {shares[name]:.2f}",
                        "label": name if shares[name] >= 0.08 else "",
                    }
                    for name, cls in segments
                    if shares[name] > 0
                ],
                "shares": [f"{shares[n]:.2f}" for n in names],
            }
        )
    return {"names": names, "rows": rows}


def _figure_context(figure: Figure) -> dict[str, Any]:
    data = base64.b64encode(figure.svg.encode()).decode()
    return {
        "key": figure.key,
        "wide": figure.key == "runs",
        "title": figure.title,
        "caption": figure.caption,
        # safe as it stands: the base64 alphabet holds nothing HTML would escape
        "src": Markup(f"data:image/svg+xml;base64,{data}"),
    }


def _provenance_facts(report: Report) -> list[tuple[str, str]]:
    from evalwh.present.report.model import options_record

    q = report.qrels.iloc[0]
    return [
        ("evalwh version", report.version),
        ("Generated (UTC)", report.generated),
        ("Collection", report.collection),
        (
            "Qrels",
            f"{q['qrels_id']} ({q['kind']}) from {q['source_file']}, "
            f"{_count(q['line_count'])} lines, sha256 {q['sha256']}",
        ),
        *([("Excluded documents", report.overview["excluded"])] if report.overview.get("excluded") else []),
        ("Options", json.dumps(options_record(report.options), sort_keys=True)),
    ]


def _runs_provenance(report: Report) -> pd.DataFrame:
    runs = report.runs
    return pd.DataFrame(
        {
            "run": runs["run_id"],
            "source_file": runs["source_file"],
            "sha256": runs["sha256"],
            "topics": runs["topics"],
            "depth": runs["max_depth"],
        }
    )


def _provenance_context(report: Report) -> dict[str, Any]:
    runs = _runs_provenance(report)
    return {
        "facts": _provenance_facts(report),
        "columns": list(runs.columns),
        "rows": [[str(v) for v in r] for r in runs.itertuples(index=False)],
    }


# -- small helpers --------------------------------------------------------------------------


def _markdown_table(frame: pd.DataFrame) -> Markup:
    """A pipe table; names and cells escaped for pipes, HTML and control characters."""
    from evalwh.io.printable import markdown

    head = "| " + " | ".join(markdown(c) for c in frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    body = ["| " + " | ".join(markdown(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return Markup("\n".join([head, rule, *body]))


def _markdown_value(value: object) -> object:
    """A value printed into the Markdown report: escaped unless it is a table (Markup)."""
    from evalwh.io.printable import markdown

    if isinstance(value, Markup) or not isinstance(value, str):
        return value
    return markdown(value).replace("\\|", "|")


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


def _number(value: object) -> str:
    if _missing(value):
        return ""
    return f"{float(value):.4f}"  # type: ignore[arg-type]


def _p(value: float) -> str:
    return "n/a" if _missing(value) else (f"{value:.2g}" if value < 0.001 else f"{value:.3f}")


def _count(value: object) -> str:
    return "?" if _missing(value) else f"{int(value):,}"  # type: ignore[call-overload]
