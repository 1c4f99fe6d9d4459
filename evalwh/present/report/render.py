"""Lay a :class:`~evalwh.report.build.Report` out as one self-contained HTML file, or Markdown.

The HTML has inline CSS, no scripts, and its figures as ``data:`` URIs (SVG): it opens
offline and requests nothing. Colour carries meaning only: green for strong verdicts, orange
for weak ones, red for runs whose rankings are much less assessed than the others'.
"""

from __future__ import annotations

import base64
import json
import math
from html import escape
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from evalwh.report.build import Report

_CSS = """
:root { --ink:#1f2328; --muted:#656d76; --line:#d8dee4; --soft:#f6f8fa; --accent:#2f6fb0;
  --strong:#1b7f6b; --strong-bg:#e3f4ef; --weak:#b4630f; --weak-bg:#fdf0e1;
  --flag:#b42318; --flag-bg:#fdecea; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff;
  font: 15px/1.55 -apple-system, "Segoe UI", "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1120px; margin: 0 auto; padding: 0 28px 64px; }
header.top { background: #0f2a44; color: #fff; padding: 28px 0 22px; margin-bottom: 8px; }
header.top .inner { max-width: 1120px; margin: 0 auto; padding: 0 28px; }
header.top h1 { margin: 0 0 4px; font-size: 26px; font-weight: 650; letter-spacing: -0.01em; }
header.top p { margin: 0; color: #b8c7d9; font-size: 13.5px; }
nav { position: sticky; top: 0; background: rgba(255,255,255,0.96);
  border-bottom: 1px solid var(--line);
  padding: 8px 0; margin-bottom: 12px; z-index: 2; font-size: 13.5px; }
nav a { color: var(--accent); text-decoration: none; margin-right: 18px; }
h2 { font-size: 20px; margin: 36px 0 10px; padding-bottom: 6px;
  border-bottom: 1px solid var(--line); }
h3 { font-size: 16px; margin: 24px 0 8px; }
p.note, .caption { color: var(--muted); font-size: 13px; margin: 6px 0 12px; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(125px, 1fr));
  gap: 12px; margin: 14px 0; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px;
  background: var(--soft); }
.card .value { font-size: 24px; font-weight: 650; font-variant-numeric: tabular-nums; }
.card .label { color: var(--muted); font-size: 12.5px; }
table { border-collapse: collapse; font-size: 13.5px; font-variant-numeric: tabular-nums;
  margin: 8px 0 4px; }
th, td { padding: 5px 10px; border-bottom: 1px solid var(--line); text-align: right;
  white-space: nowrap; }
th { font-weight: 600; background: var(--soft); }
td.text, th.text { text-align: left; }
tbody tr:hover { background: #f0f5fb; }
.scroll { overflow-x: auto; }
td.best { font-weight: 700; }
tr.flagged td:first-child { box-shadow: inset 3px 0 0 var(--flag); }
td.low { color: var(--flag); background: var(--flag-bg); font-weight: 600; }
.flag { color: var(--flag); font-size: 12.5px; white-space: normal; text-align: left; }
.case { display: inline-block; min-width: 2.6em; padding: 1px 6px; border-radius: 10px;
  font-weight: 600;
  font-size: 12.5px; text-align: center; }
.case.strong { color: var(--strong); background: var(--strong-bg); }
.case.weak { color: var(--weak); background: var(--weak-bg); }
.out { color: var(--muted); font-size: 12px; margin-left: 4px; }
.stats { display: block; color: var(--muted); font-size: 11px; line-height: 1.35;
  margin-top: 2px; }
.cases { display: flex; width: 320px; height: 22px; border-radius: 4px; overflow: hidden;
  border: 1px solid var(--line); }
.cases span { display: flex; align-items: center; justify-content: center; font-size: 11px;
  font-weight: 600; overflow: hidden; white-space: nowrap; }
.cases .c1 { background: #1b7f6b; color: #fff; } .cases .c3a { background: #5fb3a0; color: #fff; }
.cases .c3b { background: #a8d8cc; color: #1f2328; } .cases .c2 { background: #d9822b; color: #fff; }
.cases .c4 { background: #f2c38f; color: #1f2328; }
@media print { .scroll { overflow: visible; } nav { position: static; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; } }
.legend span { margin-right: 14px; }
.bar { display: inline-block; height: 8px; border-radius: 2px; vertical-align: middle;
  margin-right: 6px; }
.figures { display: grid; grid-template-columns: repeat(auto-fit, minmax(460px, 1fr));
  gap: 18px; }
figure { margin: 0; border: 1px solid var(--line); border-radius: 8px; padding: 12px;
  background: #fff; }
figure img { width: 100%; height: auto; display: block; }
figure.wide { grid-column: 1 / -1; }
figure.wide img { max-width: 860px; margin: 0 auto; }
figcaption { margin-top: 6px; }
figcaption b { display: block; font-size: 14px; }
dl.methods dt { font-weight: 600; margin-top: 10px; }
dl.methods dd { margin: 2px 0 0; color: #3d444d; font-size: 14px; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: 12.5px; }
details summary { cursor: pointer; color: var(--accent); margin: 8px 0; }
footer { margin-top: 40px; color: var(--muted); font-size: 12.5px; }
"""

_MEASURE_LABEL = {"AP": "MAP"}


def render_html(report: Report) -> str:
    """The report as one self-contained HTML document.

    Args:
        report: The output of :func:`evalwh.report.build.build_report`.

    Returns:
        The HTML text (UTF-8 safe, no external references).
    """
    o = report.overview
    title = f"Evaluation report: {report.collection}"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>",
        f'<header class="top"><div class="inner"><h1>{escape(title)}</h1>',
        f"<p>{o['runs']} runs · {o['topics']} topics · evalwh {escape(report.version)} · "
        f"generated {escape(report.generated)}</p></div></header>",
        '<main><nav><a href="#glance">At a glance</a><a href="#leaderboard">Leaderboard</a>'
        '<a href="#comparisons">Comparisons</a><a href="#figures">Figures</a>'
        '<a href="#methods">How it was computed</a><a href="#provenance">Provenance</a></nav>',
        _glance_html(report),
        _leaderboard_html(report),
        _comparisons_html(report),
        _figures_html(report),
        _methods_html(report),
        _provenance_html(report),
        f"<footer>evalwh {escape(report.version)} · one file, no external requests · "
        f"built in {sum(report.timings.values()):.1f} s</footer>",
        "</main></body></html>",
    ]
    return "\n".join(parts)


def render_markdown(report: Report) -> str:
    """The report's tables and methods as Markdown (figures are in the HTML report only).

    Args:
        report: The output of :func:`evalwh.report.build.build_report`.

    Returns:
        Markdown text with pipe tables.
    """
    o = report.overview
    lines = [
        f"# Evaluation report: {report.collection}",
        "",
        f"{o['runs']} runs, {o['topics']} topics; evalwh {report.version}, "
        f"generated {report.generated}.",
        "",
        "## At a glance",
        "",
        *[f"- {label}: {value}" for label, value in _glance_facts(report)],
        "",
        _unjudged_sentence(report),
        "",
        "## Leaderboard",
        "",
        _markdown_table(_leaderboard_display(report)),
        "",
        _leaderboard_note(report),
        "",
        "## Comparisons",
        "",
        _pairs_heading(report),
        "",
        _markdown_table(_pairs_display(report, markdown=True)),
        "",
        "Cell: case, then the outcomes on performance / assessment (`>>` better, `<<` worse, "
        "`==` no significant difference). Strong: 1, 3a, 3b; weak (marked `*`): 2, 4.",
        "",
        "### Case proportions over all pairs",
        "",
        _markdown_table(_proportions_display(report)),
        "",
        "## How it was computed",
        "",
        *[f"- **{what}**: {how}" for what, how in report.methods],
        "",
        "## Provenance",
        "",
        *[f"- {label}: {value}" for label, value in _provenance_facts(report)],
        "",
        _markdown_table(_runs_provenance(report)),
        "",
        "Figures are in the HTML report (`--format html`).",
        "",
    ]
    return "\n".join(lines)


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
        ("Pool depth", f"{depth}: {o['pool_depth_source']}"),
    ]


def _spread(s: dict[str, float]) -> str:
    return f"mean {s['mean']:.1f}, median {s['median']:g}, {s['min']}–{s['max']}"


def _unjudged_sentence(report: Report) -> str:
    o = report.overview
    first = o["unjudged_first_at"]
    reached = [f"{share:.0%} of the lists at rank {rank}" for share, rank in first.items() if rank]
    at = ", ".join(
        f"{share:.1%} at rank {depth}"
        for depth, share in o["unjudged_at_depths"].items()
        if share is not None
    )
    head = (
        "Unjudged documents reach " + ", ".join(reached) + "."
        if reached
        else "Every ranked document is judged."
    )
    return f"{head} Unjudged share: {at}." if at else head


def _glance_html(report: Report) -> str:
    o = report.overview
    cards = [
        (f"{o['topics']}", "topics"),
        (f"{o['judged']:,}", "judged documents"),
        (f"{o['relevant']:,}", "relevant documents"),
        (
            f"{o['runs']}",
            "runs" + ("" if o["pooled_runs"] is None else f" ({o['pooled_runs']} pooled)"),
        ),
        ("–" if o["pool_depth"] is None else str(o["pool_depth"]), "pool depth"),
    ]
    cards += [
        (f"{share:.0%}" if share is not None else "–", f"unjudged at rank {depth}")
        for depth, share in list(o["unjudged_at_depths"].items())[-2:]
    ]
    html = ['<section id="glance"><h2>The collection at a glance</h2><div class="cards">']
    html += [
        f'<div class="card"><div class="value">{escape(v)}</div>'
        f'<div class="label">{escape(label)}</div></div>'
        for v, label in cards
    ]
    html.append("</div><ul>")
    html += [f"<li><b>{escape(k)}</b>: {escape(v)}</li>" for k, v in _glance_facts(report)]
    html.append(f"</ul><p>{escape(_unjudged_sentence(report))}</p>")
    html.append('<div class="figures">')
    html += [_figure_html(f) for f in report.figures if f.key in ("unjudged", "topics")]
    html.append("</div></section>")
    return "".join(html)


def _leaderboard_display(report: Report) -> pd.DataFrame:
    board = report.leaderboard
    measures = [c for c in board.columns if c not in _BOARD_META and not c.startswith("low ")]
    out = pd.DataFrame({"#": board["position"], "run": board["run_id"]})
    if board["pooled"].notna().any():
        out["pooled"] = board["pooled"].map({True: "yes", False: "no"}).fillna("")
    for m in measures:
        out[_MEASURE_LABEL.get(m, m)] = board[m].map(_number)
    out["topics"] = board["n_topics"]
    out["flag"] = board["flag"]
    return out


_BOARD_META = {"position", "run_id", "pooled", "n_topics", "flag", "flagged"}


def _leaderboard_note(report: Report) -> str:
    flagged = int(report.leaderboard["flagged"].sum())
    gap = report.options.flag_gap
    return (
        f"{flagged} run(s) flagged: of the documents they retrieved, a share judged (mean "
        f"A_p_ret@10 or A_p_ret@100) more than {gap:.2f} below the median run's. Their "
        "comparisons with better-assessed runs are the ones to distrust."
    )


def _leaderboard_html(report: Report) -> str:
    board = report.leaderboard
    measures = [c for c in board.columns if c not in _BOARD_META and not c.startswith("low ")]
    assess = [m for m in measures if m.startswith("A_p@")]
    perf = [m for m in measures if m not in assess]
    best = {m: board[m].max() for m in perf}
    head = ['<th class="text">#</th>', '<th class="text">run</th>']
    has_pooled = board["pooled"].notna().any()
    if has_pooled:
        head.append('<th class="text">pooled</th>')
    head += [f"<th>{escape(_MEASURE_LABEL.get(m, m))}</th>" for m in measures]
    head += ["<th>topics</th>", '<th class="text">flag</th>']
    top = float(board[perf[0]].max()) or 1.0
    rows = []
    for record in board.to_dict("records"):
        cells = [
            f'<td class="text">{record["position"]}</td>',
            f'<td class="text mono">{escape(str(record["run_id"]))}</td>',
        ]
        if has_pooled:
            pooled = record["pooled"]
            cells.append(
                f'<td class="text">{"" if _missing(pooled) else ("yes" if pooled else "no")}</td>'
            )
        for m in measures:
            value = record[m]
            classes = []
            if m in best and not _missing(value) and value == best[m]:
                classes.append("best")
            if m in assess and record.get(f"low {m}", False):
                classes.append("low")
            bar = ""
            if m == perf[0] and not _missing(value):
                width = max(0.0, float(value)) / top * 60
                bar = f'<span class="bar" style="width:{width:.0f}px;background:#9fbfe0"></span>'
            cls = f' class="{" ".join(classes)}"' if classes else ""
            cells.append(f"<td{cls}>{bar}{_number(value)}</td>")
        cells.append(f"<td>{record['n_topics']}</td>")
        cells.append(
            f'<td class="flag">{"⚑ " if record["flagged"] else ""}{escape(record["flag"])}</td>'
        )
        row_class = ' class="flagged"' if record["flagged"] else ""
        rows.append(f"<tr{row_class}>{''.join(cells)}</tr>")
    return (
        '<section id="leaderboard"><h2>Leaderboard</h2>'
        f'<p class="note">Ranked by mean {escape(_MEASURE_LABEL.get(perf[0], perf[0]))}; the '
        "best value of each measure in bold. A_p@d (share of the top d that is judged) sits "
        "beside each run: red cells and ⚑ mark runs whose retrieved documents are much less "
        "assessed than the others'.</p>"
        f'<div class="scroll"><table id="leaderboard-table"><thead><tr>{"".join(head)}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
        f'<p class="note">{escape(_leaderboard_note(report))}</p></section>'
    )


def _pairs_heading(report: Report) -> str:
    n = len(report.pairs) // max(report.pairs["column"].nunique(), 1)
    if report.pair_mode == "baseline":
        return f"{n} runs against the baseline **{report.options.baseline}**, per depth."
    if report.pair_mode == "all":
        return f"All {n} pairs, per depth."
    return (
        f"{n} pairs: each run against the next one down the leaderboard (all pairs are in "
        "the proportions below and in `evalwh matrix --layout pairs`)."
    )


def _pairs_display(report: Report, *, markdown: bool) -> pd.DataFrame:
    pairs = report.pairs
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


def _comparisons_html(report: Report) -> str:
    pairs = report.pairs
    columns = list(dict.fromkeys(pairs["column"]))
    labels = {c: _column_label(pairs, c) for c in columns}
    head = '<th class="text">run</th><th class="text">vs</th>' + "".join(
        f"<th>{escape(labels[c])}</th>" for c in columns
    )
    body = []
    for (a, b), group in pairs.groupby(["run_a", "run_b"], sort=False):
        by_column = group.set_index("column")
        cells = [
            f'<td class="text mono">{escape(str(a))}</td>',
            f'<td class="text mono">{escape(str(b))}</td>',
        ]
        for c in columns:
            row = by_column.loc[c]
            tip = (
                f"{row['performance']}: {row['perf_mean_a']:.4f} vs {row['perf_mean_b']:.4f}, "
                f"adjusted p {_p(row['perf_p_adjusted'])}; {row['assessment']}: "
                f"{row['assess_mean_a']:.4f} vs {row['assess_mean_b']:.4f}, adjusted p "
                f"{_p(row['assess_p_adjusted'])}; {row['n_topics']} topics"
            )
            # means and adjusted p-values printed in the cell (hover alone is lost on paper)
            detail = (
                f"{row['perf_mean_a']:.3f} vs {row['perf_mean_b']:.3f}, p {_p(row['perf_p_adjusted'])}"
                f"<br>{row['assess_mean_a']:.3f} vs {row['assess_mean_b']:.3f}, "
                f"p {_p(row['assess_p_adjusted'])}"
            )
            cells.append(
                f'<td title="{escape(tip)}"><span class="case {row["strength"]}">'
                f'{escape(str(row["case"]))}</span><span class="out">'
                f"{escape(row['perf_outcome'])} {escape(row['assess_outcome'])}</span>"
                f'<span class="stats">{detail}</span></td>'
            )
        body.append(f"<tr>{''.join(cells)}</tr>")
    heading = _pairs_heading(report).replace("**", "")
    legend = (
        '<p class="legend note"><span><span class="case strong">1 / 3a / 3b</span> strong</span>'
        '<span><span class="case weak">2 / 4</span> weak</span>'
        "<span>outcomes: performance then assessment; &gt;&gt; better, &lt;&lt; worse, == no "
        "significant difference. Under each case: the two runs' means and the adjusted "
        "p-value, on performance (first line) and on assessment (second line).</span></p>"
    )
    return (
        '<section id="comparisons"><h2>Comparisons: significance and the decision matrix</h2>'
        f'<p class="note">{escape(heading)} {escape(_test_sentence(report))}</p>{legend}'
        f'<div class="scroll"><table id="pairs-table"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
        "<h3>Case proportions over all pairs</h3>"
        f"{_proportions_html(report)}</section>"
    )


def _test_sentence(report: Report) -> str:
    opts = report.options
    return (
        f"Test {opts.test}, {opts.correction} correction, alpha {opts.alpha}; pairing "
        f"{'P@d with A_p@d' if opts.pairing == 'P' else 'MAP@d with A_p@d'}, and MAP with MAA."
    )


def _column_label(pairs: pd.DataFrame, column: str) -> str:
    perf = str(pairs.loc[pairs["column"] == column, "performance"].iloc[0])
    return "MAP / MAA" if column.startswith("MAP") else f"{perf.split('@')[0]}{column}"


def _proportions_display(report: Report) -> pd.DataFrame:
    p = report.proportions
    out = pd.DataFrame({"column": p["column"], "pairs": p["pairs"].astype(int)})
    for name in ["C1", "C2", "C3", "C4", "C3a", "C3b", "strong", "weak"]:
        out[name] = p[name].map(lambda v: f"{v:.2f}")
    return out


def _proportions_html(report: Report) -> str:
    p = report.proportions
    names = ["C1", "C2", "C3", "C4", "C3a", "C3b", "strong", "weak"]
    segments = [("C1", "c1"), ("C3a", "c3a"), ("C3b", "c3b"), ("C2", "c2"), ("C4", "c4")]
    head = (
        '<th class="text">depth</th><th>pairs</th><th class="text">cases</th>'
        + "".join(f"<th>{n}</th>" for n in names)
    )
    rows = []
    for record in p.to_dict("records"):
        # one bar per depth, 320 px for all pairs: every case a segment as wide as its share,
        # labelled when there is room for the label
        bar = "".join(
            f'<span class="{cls}" style="width:{float(record[name]) * 100:.1f}%" '
            f'title="{name} {float(record[name]):.2f}">'
            f"{name if float(record[name]) >= 0.08 else ''}</span>"
            for name, cls in segments
            if float(record[name]) > 0
        )
        cells = [
            f'<td class="text">{escape(_column_label(report.pairs, record["column"]))}</td>',
            f"<td>{int(record['pairs'])}</td>",
            f'<td class="text"><div class="cases">{bar}</div></td>',
        ]
        cells += [f"<td>{float(record[n]):.2f}</td>" for n in names]
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return (
        f'<div class="scroll"><table id="proportions-table"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
        '<p class="note">Share of the pairs in each case; the bar shows C1, C3a, C3b (strong, '
        "greens) and C2, C4 (weak, oranges) side by side. C3 = C3a + C3b; strong = C1 + C3, "
        "weak = C2 + C4 (Baillie, Azzopardi and Ruthven).</p>"
    )


def _figures_html(report: Report) -> str:
    figures = [f for f in report.figures if f.key not in ("unjudged", "topics")]
    return (
        '<section id="figures"><h2>Figures</h2><div class="figures">'
        + "".join(_figure_html(f) for f in figures)
        + "</div></section>"
    )


def _figure_html(figure: Any) -> str:
    data = base64.b64encode(figure.svg.encode()).decode()
    wide = ' class="wide"' if figure.key == "runs" else ""
    return (
        f'<figure id="figure-{escape(figure.key)}"{wide}><img alt="{escape(figure.title)}" '
        f'src="data:image/svg+xml;base64,{data}"><figcaption><b>{escape(figure.title)}</b>'
        f'<span class="caption">{escape(figure.caption)}</span></figcaption></figure>'
    )


def _methods_html(report: Report) -> str:
    items = "".join(
        f"<dt>{escape(what)}</dt><dd>{escape(how)}</dd>" for what, how in report.methods
    )
    return (
        '<section id="methods"><h2>How it was computed</h2>'
        f'<dl class="methods">{items}</dl></section>'
    )


def _provenance_facts(report: Report) -> list[tuple[str, str]]:
    from evalwh.report.build import options_record

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


def _provenance_html(report: Report) -> str:
    facts = "".join(
        f'<li><b>{escape(k)}</b>: <span class="mono">{escape(v)}</span></li>'
        for k, v in _provenance_facts(report)
    )
    runs = _runs_provenance(report)
    head = "".join(f'<th class="text">{escape(c)}</th>' for c in runs.columns)
    rows = "".join(
        "<tr>" + "".join(f'<td class="text mono">{escape(str(v))}</td>' for v in r) + "</tr>"
        for r in runs.itertuples(index=False)
    )
    return (
        f'<section id="provenance"><h2>Provenance</h2><ul>{facts}</ul>'
        f"<details><summary>{len(runs)} run files with their sha256</summary>"
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody>'
        "</table></div></details></section>"
    )


# -- small helpers --------------------------------------------------------------------------


def _markdown_table(frame: pd.DataFrame) -> str:
    """A pipe table; cells escaped for pipes."""
    head = "| " + " | ".join(str(c) for c in frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    body = [
        "| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |"
        for row in frame.itertuples(index=False)
    ]
    return "\n".join([head, rule, *body])


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
