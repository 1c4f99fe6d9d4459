"""The evaluation report: data (build), layout (render), command line, and a real browser."""

from __future__ import annotations

import dataclasses
import hashlib
import html as html_text
import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from evalwh.cli import app
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from evalwh import Warehouse
from evalwh.methods.decisions import decision_matrix
from evalwh.measures.evaluation import unjudged_share
from evalwh.present.report import ReportOptions, build_report, render_html, render_markdown
from evalwh.present.report.build import _leaderboard, _log_grid
from evalwh.io.demo_data import DEMO_RUNS, write_demo

runner = CliRunner(env={"COLUMNS": "200", "TERMINAL_WIDTH": "200"})
SMALL = {"topics": 8, "docs_per_topic": 80, "depth": 40, "pool_depth": 10}
UNPOOLED = {name for name, (_, pooled) in DEMO_RUNS.items() if not pooled}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    files = write_demo(tmp_path_factory.mktemp("demo"), rng=7, **SMALL)
    wh = Warehouse(":memory:")
    wh.ingest_qrels(files.qrels, collection="demo")
    wh.ingest_runs(files.runs, collection="demo")
    wh.ingest_run_metadata(files.metadata, collection="demo")
    return wh


@pytest.fixture(scope="module")
def report(demo: Warehouse):  # type: ignore[no-untyped-def]
    return build_report(demo, "demo", ReportOptions(depths=(5, 10, 40)))


def test_demo_files_are_deterministic(tmp_path: Path) -> None:
    first = write_demo(tmp_path / "a", rng=3, **SMALL)
    second = write_demo(tmp_path / "b", rng=3, **SMALL)
    assert first.qrels.read_text() == second.qrels.read_text()
    assert [p.read_text() for p in first.runs] == [p.read_text() for p in second.runs]
    lines = first.runs[0].read_text().splitlines()
    assert len(lines) == SMALL["topics"] * SMALL["depth"]
    assert lines[0].split()[1] == "Q0" and lines[0].split()[3] == "1"


def test_leaderboard_means_equal_evaluate(demo: Warehouse, report) -> None:  # type: ignore[no-untyped-def]
    means = demo.evaluate(
        ["P@10", "AP", "nDCG@10", "bpref", "A_p@10", "A_p@100"], collection="demo"
    )
    wide = means.pivot(index="run_id", columns="measure", values="value")
    board = report.leaderboard.set_index("run_id")
    for measure in wide.columns:
        np.testing.assert_allclose(
            board.loc[wide.index, measure], wide[measure], rtol=0, atol=1e-12
        )
    # graded labels: best first by nDCG@10 (the collection's lead measure), ties by run id
    assert report.graded and report.options.measures[0] == "nDCG@10"
    ordered = board.reset_index().sort_values(["nDCG@10", "run_id"], ascending=[False, True])
    assert report.leaderboard["run_id"].tolist() == ordered["run_id"].tolist()
    assert report.leaderboard["position"].tolist() == list(range(1, len(DEMO_RUNS) + 1))


def test_unpooled_runs_are_flagged(report) -> None:  # type: ignore[no-untyped-def]
    board = report.leaderboard
    assert set(board.loc[board["flagged"], "run_id"]) == UNPOOLED
    assert (
        board.loc[board["flagged"], "flag"].str.contains(r"A_p_ret@10 0\.\d\d \(median 1\.00, fence 1\.00\)").all()
    )


def test_overview_pool_depth_and_unjudged_share(demo: Warehouse, report) -> None:  # type: ignore[no-untyped-def]
    o = report.overview
    assert o["pool_depth"] == SMALL["pool_depth"]
    assert o["pool_depth_source"].startswith("inferred")
    assert (o["topics"], o["runs"], o["pooled_runs"]) == (8, len(DEMO_RUNS), 6)
    expected = unjudged_share(demo, "demo", max_rank=1000)
    pd.testing.assert_frame_equal(report.unjudged, expected)
    # pooled runs' top 10 is judged: only the two unpooled runs' lists can be unjudged there
    assert 0 < o["unjudged_at_depths"][5] <= len(UNPOOLED) / len(DEMO_RUNS)
    assert report.topics["judged"].sum() == o["judged"]


def test_given_pool_depth_wins(demo: Warehouse) -> None:
    out = build_report(demo, "demo", ReportOptions(depths=(10,), pool_depth=7, figures=False))
    assert out.overview["pool_depth"] == 7 and out.overview["pool_depth_source"].startswith("given")


def test_proportions_equal_decision_matrix(demo: Warehouse) -> None:
    """With the papers' test and correction, the report's matrix is evalwh matrix's."""
    options = ReportOptions(depths=(5, 10, 40), test="anova", correction="bonferroni", figures=False)
    report = build_report(demo, "demo", options)
    reference = decision_matrix(demo, "demo", measure="P", depths=[5, 10, 40])
    ours = report.proportions.set_index("column")
    theirs = reference.summary.set_index("column")
    cols = ["pairs", "C1", "C2", "C3", "C4", "C3a", "C3b"]
    pd.testing.assert_frame_equal(ours[cols], theirs[cols], check_dtype=False)
    # every pair at every column is listed with few runs, and verdicts match the matrix
    assert report.pair_mode == "all"
    assert len(report.pairs) == 28 * 4
    key = ["column", "run_a", "run_b"]
    merged = report.pairs.merge(reference.pairs, on=key, how="left", suffixes=("", "_ref"))
    flipped = merged["case_ref"].isna()
    ref = reference.pairs.rename(columns={"run_a": "run_b", "run_b": "run_a"})
    merged.loc[flipped, "case_ref"] = (
        report.pairs[flipped.to_numpy()]
        .merge(ref, on=key, suffixes=("", "_ref"))["case_ref"]
        .to_numpy()
    )
    assert (merged["case"] == merged["case_ref"]).all()


def test_baseline_and_summarised_pairs(demo: Warehouse, report) -> None:  # type: ignore[no-untyped-def]
    base = build_report(demo, "demo", ReportOptions(depths=(10,), baselines=("bm25",), figures=False))
    assert base.pair_mode == "baseline"
    assert set(base.pairs["run_b"]) == {"bm25"}
    assert len(base.pairs) == (len(DEMO_RUNS) - 1) * 2  # @10 and MAP/MAA
    # more pairs than max_all_pairs: the weak pairs (case 2 or 4) of all pairs, not neighbours
    near = build_report(demo, "demo", ReportOptions(depths=(10,), max_all_pairs=3, listed=2, figures=False))
    every = build_report(demo, "demo", ReportOptions(depths=(10,), figures=False))
    assert near.pair_mode == "summary" and every.pair_mode == "all"
    weak = every.pairs[every.pairs["strength"] == "weak"]
    assert set(zip(near.weak["run_a"], near.weak["run_b"])) == set(zip(weak["run_a"], weak["run_b"]))
    listed = list(dict.fromkeys(zip(near.pairs["run_a"], near.pairs["run_b"])))
    assert listed == list(zip(near.weak["run_a"], near.weak["run_b"]))[:2]
    assert near.ranks is not None and sorted(near.ranks["run_id"]) == sorted(DEMO_RUNS)


def test_figures_are_svg(report) -> None:  # type: ignore[no-untyped-def]
    keys = [f.key for f in report.figures]
    assert keys[:3] == ["unjudged", "topics", "runs"]
    assert {"pair-1", "bounds-1"} <= set(keys)
    for figure in report.figures:
        assert figure.svg.lstrip().startswith("<svg")
        assert "<!DOCTYPE" not in figure.svg


def test_unknown_baseline_is_an_error(demo: Warehouse) -> None:
    from evalwh.errors import NotFoundError

    with pytest.raises(NotFoundError, match="report: collection 'demo' has no run 'nope'"):
        build_report(demo, "demo", ReportOptions(baselines=("nope",)))


def test_html_is_self_contained(report) -> None:  # type: ignore[no-untyped-def]
    html = render_html(report)
    # nothing is fetched: every src is a data: URI, no stylesheet links, one inline script
    assert re.findall(r'src="([^"]{0,20})', html) and all(
        s.startswith("data:image/svg+xml;base64,") for s in re.findall(r'src="([^"]{0,26})', html)
    )
    assert "<link" not in html and "url(http" not in html
    assert html.count("<script") == 1 and "<script>" in html and "fetch(" not in html
    assert html.count('<tr class="flagged">') == len(UNPOOLED)
    assert html.count("<figure") == len(report.figures)
    top = report.leaderboard.iloc[0]
    assert f"{top['nDCG@10']:.4f}" in html
    assert report.qrels["sha256"].iloc[0] in html
    assert all(sha in html for sha in report.runs["sha256"])


def test_markdown(report) -> None:  # type: ignore[no-untyped-def]
    text = render_markdown(report)
    top = report.leaderboard.iloc[0]
    assert f"| 1 | {top['run_id']} | yes | {top['nDCG@10']:.4f} |" in text
    assert "### Case proportions over all pairs" in text
    assert "| @10 |" in text


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=3, max_size=12), st.floats(0, 0.5))
def test_flag_rule(values: list[float], gap: float) -> None:
    """The flag follows the judged share of what a run retrieved (A_p_ret), not A_p: below the
    runs' lower fence (no run metadata: every run is the reference) and gap below their median."""
    runs = [f"r{i}" for i in range(len(values))]
    means = pd.DataFrame(
        {
            "run_id": runs * 3,
            "measure": ["P@10"] * len(runs) + ["A_p@10"] * len(runs) + ["A_p_ret@10"] * len(runs),
            "value": values + [0.5] * len(runs) + values,
            "n_topics": 5,
        }
    )
    meta = pd.DataFrame({"run_id": runs, "pooled": None})
    board = _leaderboard(means, ["P@10"], ["A_p@10"], meta, gap)
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    share = board["P@10"]  # P@10 column = the A_p_ret values
    expected = (share < q1 - 1.5 * (q3 - q1)) & (share < median - gap)
    assert board["flagged"].tolist() == expected.tolist()
    assert board["low A_p_ret@10"].tolist() == expected.tolist()  # the value the flag is about
    assert board["P@10"].is_monotonic_decreasing


def test_short_pooled_run_whose_documents_are_judged_is_not_flagged() -> None:
    """READWARE in TREC-8: few documents per topic, all judged; A_p@100 is low, yet nothing
    it retrieved is unassessed. A run of the same length with unjudged documents is flagged."""
    docs = [f"d{i:03d}" for i in range(120)]
    topics = [str(t) for t in range(1, 6)]
    qrels = pd.DataFrame(
        [(t, d, int(i % 7 == 0)) for t in topics for i, d in enumerate(docs[:100])],
        columns=["query_id", "doc_id", "relevance"],
    )
    rows = []
    for r in range(4):  # long pooled runs: 100 judged documents each
        order = np.random.default_rng(r).permutation(100)
        rows += [(f"long{r}", t, docs[i], float(100 - k)) for t in topics for k, i in enumerate(order)]
    rows += [("short_judged", t, docs[k], float(5 - k)) for t in topics for k in range(5)]
    rows += [("short_unjudged", t, docs[100 + k], float(5 - k)) for t in topics for k in range(5)]
    wh = Warehouse(":memory:")
    wh.ingest_qrels(qrels, collection="c")
    wh.ingest_runs(pd.DataFrame(rows, columns=["run_id", "query_id", "doc_id", "score"]), collection="c")
    board = build_report(wh, "c", ReportOptions(depths=(10, 100), figures=False)).leaderboard.set_index("run_id")
    assert board.loc["short_judged", "A_p@100"] == pytest.approx(0.05)  # 5 judged of 100 positions
    assert not board.loc["short_judged", "flagged"]
    assert board.loc["short_unjudged", "flagged"]
    assert not board.loc[[f"long{r}" for r in range(4)], "flagged"].any()


@given(st.integers(1, 5000))
def test_log_grid(deepest: int) -> None:
    grid = _log_grid(deepest)
    assert grid[0] == 1 and grid[-1] == deepest and grid == sorted(set(grid))


# -- command line ---------------------------------------------------------------------------


def test_cli_report_from_files(tmp_path: Path) -> None:
    files = write_demo(tmp_path / "data", rng=1, **SMALL)
    qrels = tmp_path / "data" / "qrels.small.txt"
    files.qrels.rename(qrels)
    db, out = tmp_path / "wh.duckdb", tmp_path / "r.md"
    args = ["report", "--qrels", str(qrels), *map(str, files.runs), "--db", str(db)]
    result = runner.invoke(app, [*args, "-f", "md", "-o", str(out), "--depths", "10"])
    assert result.exit_code == 0, result.output
    assert out.read_text().startswith("# Evaluation report: qrels.small\n")
    # again from the warehouse alone, against a baseline, to standard output
    again = runner.invoke(
        app, ["report", "-c", "qrels.small", "--db", str(db), "-f", "md", "-b", "bm25"]
    )
    assert again.exit_code == 0
    assert "7 runs against the baseline **bm25**" in again.stdout


def test_cli_demo_writes_html(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["report", "--demo", "--db", "demo.duckdb", "-o", "report.html"])
    assert result.exit_code == 0, result.output
    html = (tmp_path / "report.html").read_text()
    assert "<h1>Evaluation report: demo</h1>" in html
    assert (tmp_path / "evalwh-demo" / "qrels.txt").exists()


def test_cli_errors(tmp_path: Path) -> None:
    result = runner.invoke(app, ["report", "run.txt", "--db", str(tmp_path / "x.duckdb")])
    assert result.exit_code == 1
    assert result.stderr == "Error: report: run files need their qrels; give --qrels FILE\n"
    result = runner.invoke(app, ["report", "--pair", "a", "-c", "x"])
    assert result.exit_code == 2


# -- a real browser -------------------------------------------------------------------------

CHROMIUM = "/usr/bin/chromium"
BROWSER_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.mark.slow
def test_report_in_headless_chromium(report, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    if not os.path.exists(CHROMIUM) and not shutil.which("chromium"):
        pytest.skip("Debian's chromium is not installed (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    page_file = tmp_path / "report.html"
    page_file.write_text(render_html(report), encoding="utf-8")
    url = page_file.as_uri()
    requests: list[str] = []
    refused: list[str] = []
    errors: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium"),
            args=BROWSER_ARGS,
        )
        try:
            page = browser.new_page()

            def route(r):  # type: ignore[no-untyped-def]
                if r.request.url == url or r.request.url.startswith("data:"):
                    r.continue_()
                else:
                    refused.append(r.request.url)
                    r.abort()

            page.route("**/*", route)
            page.on("request", lambda req: requests.append(req.url))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(url, wait_until="load")
            rows = page.locator("#leaderboard-table tbody tr").count()
            images = page.eval_on_selector_all(
                "figure img", "els => els.map(e => e.complete && e.naturalWidth > 0)"
            )
            title = page.title()
        finally:
            browser.close()
    assert refused == []
    assert all(u == url or u.startswith("data:") for u in requests)
    assert errors == []
    assert title == "Evaluation report: demo"
    assert rows == len(DEMO_RUNS)
    assert len(images) == len(report.figures) and all(images)


def test_means_and_p_values_are_printed_not_only_hovered(report) -> None:  # type: ignore[no-untyped-def]
    """Print and PDF drop tooltips: every listed pair's means and adjusted p-values are text."""
    from evalwh.present.report.render import _p

    html = re.sub(r'title="[^"]*"', "", render_html(report))
    table = html[html.index('id="pairs-table"') : html.index('id="proportions-table"')]
    for row in report.pairs.itertuples():
        printed = f"{row.perf_mean_a:.3f} vs {row.perf_mean_b:.3f}, p {_p(row.perf_p_adjusted)}"
        assert printed in table
        printed = f"{row.assess_mean_a:.3f} vs {row.assess_mean_b:.3f}, p {_p(row.assess_p_adjusted)}"
        assert printed in table


def test_case_proportion_bars_are_as_wide_as_the_shares(report) -> None:  # type: ignore[no-untyped-def]
    html = render_html(report)
    table = html[html.index('id="proportions-table"') :]
    for record in report.proportions.to_dict("records"):
        for case, cls in (("C1", "c1"), ("C2", "c2"), ("C3a", "c3a"), ("C3b", "c3b"), ("C4", "c4")):
            if record[case] > 0:
                assert f'class="{cls}" style="width:{record[case] * 100:.1f}%"' in table
    shares = report.proportions[["C1", "C2", "C3a", "C3b", "C4"]].sum(axis=1)
    assert np.allclose(shares, 1.0)


def test_runs_figure_labels_depths_and_keeps_the_legend_off_the_lines() -> None:
    from evalwh.present.report.figures import draw_runs

    profile = pd.DataFrame(
        {
            "run_id": ["a", "b"] * 6,
            "kind": ["performance"] * 6 + ["assessment"] * 6,
            "depth": [10, 10, 100, 100, 1000, 1000] * 2,
            "value": [0.5, 0.4, 0.3, 0.35, 0.1, 0.2, 1.0, 0.9, 0.6, 0.5, 0.3, 0.2],
        }
    )
    figure = draw_runs(profile, "P")
    figure.canvas.draw()
    top, bottom = figure.axes
    assert [t.get_text() for t in bottom.get_xticklabels()] == ["10", "100", "1000"]
    # the depths sit evenly (10, 100, 1000 at 0, 1, 2), and each run is one line over them
    assert [line.get_label() for line in top.get_lines()] == ["a", "b"]  # best at P@10 first
    assert top.get_lines()[1].get_ydata().tolist() == [0.4, 0.35, 0.2]
    legend = top.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["a", "b"]
    assert legend.get_window_extent().x0 >= top.get_window_extent().x1  # beside the axes


# -- the templates: the same report as the f-strings wrote, escaped -------------------------

GOLDEN = Path(__file__).parent / "data" / "report_golden"
PINNED = {"generated": "2024-01-01T00:00:00+00:00", "version": "0.0.0+golden", "timings": {"all": 1.0}}


def _pinned(report):  # type: ignore[no-untyped-def]
    """The report with what varies between runs and machines fixed: the time, version and
    timings, the qrels' absolute path, and each figure's SVG (it depends on matplotlib and the
    fonts) replaced by a stub naming the figure."""
    qrels = report.qrels.assign(source_file=report.qrels["source_file"].map(lambda p: Path(p).name))
    figures = [
        dataclasses.replace(f, svg=f'<svg xmlns="http://www.w3.org/2000/svg" id="{f.key}"/>')
        for f in report.figures
    ]
    return dataclasses.replace(report, qrels=qrels, figures=figures, **PINNED)


class _Canonical(HTMLParser):
    """Tags and attributes as parsed, text with entities decoded and whitespace collapsed."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []

    def _attrs(self, attrs: list[tuple[str, str | None]]) -> str:
        data_uri = re.compile(r"data:[^\"' ]+")
        return "".join(
            f' {k}="{html_text.escape(data_uri.sub(_sha256, v or ""))}"' for k, v in attrs
        )

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.out.append(f"<{tag}{self._attrs(attrs)}>")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.out.append(f"<{tag}{self._attrs(attrs)}/>")

    def handle_endtag(self, tag: str) -> None:
        self.out.append(f"</{tag}>")

    def handle_data(self, data: str) -> None:
        if text := " ".join(data.split()):
            self.out.append(html_text.escape(text))

    def handle_decl(self, decl: str) -> None:
        self.out.append(f"<!{decl}>")


def _sha256(match: re.Match[str]) -> str:
    return "data:sha256:" + hashlib.sha256(match.group().encode()).hexdigest()


def _canonical(page: str) -> list[str]:
    parser = _Canonical()
    parser.feed(page)
    parser.close()
    return parser.out


def test_html_is_the_html_from_before_the_templates(report) -> None:  # type: ignore[no-untyped-def]
    """The templates lay out what the f-strings of render.py did, up to whitespace and escaping.

    tests/data/report_golden/demo.html was first written by render.py *before* the layout moved to
    templates/ (f-strings and html.escape), from this module's demo report made deterministic
    by ``_pinned`` (time, version, timings, qrels path, and stub SVGs for the figures). Both
    pages are compared as parsed, one token a line: entities decoded (html.escape writes
    ``&#x27;`` and ``&quot;``, markupsafe ``&#39;`` and ``&#34;``), runs of whitespace
    collapsed, whitespace-only text between tags dropped, and every ``data:`` URI replaced by
    its sha256 (so a diff stays readable). When the layout changes on purpose, rewrite the
    golden from ``render_html(_pinned(report))`` and read its diff.
    """
    before = _canonical((GOLDEN / "demo.html").read_text(encoding="utf-8"))
    after = _canonical(render_html(_pinned(report)))
    assert len(before) > 2000
    assert "\n".join(after) == "\n".join(before)


def test_markdown_is_the_markdown_from_before_the_templates(report) -> None:  # type: ignore[no-untyped-def]
    """report.md.j2 writes the Markdown of the former f-strings byte for byte
    (tests/data/report_golden/demo.md, written before the templates, as demo.html)."""
    before = (GOLDEN / "demo.md").read_text(encoding="utf-8")
    assert render_markdown(_pinned(report)) == before


def test_html_escapes_run_ids() -> None:
    """Autoescaping: a run id with markup or ``&`` is text in the HTML; the Markdown keeps the id
    readable but opens no tag (issue 52, class 6: ``<`` written as ``&lt;``)."""
    docs = [f"d{i}" for i in range(30)]
    topics = ["1", "2", "3"]
    qrels = pd.DataFrame(
        [(t, d, int(i % 3 == 0)) for t in topics for i, d in enumerate(docs[:20])],
        columns=["query_id", "doc_id", "relevance"],
    )
    names = ["a<script>alert(1)</script>", "b&c", "plain"]
    rows = [
        (name, t, docs[i], float(30 - k))
        for n, name in enumerate(names)
        for t in topics
        for k, i in enumerate(np.random.default_rng(n).permutation(30))
    ]
    wh = Warehouse(":memory:")
    wh.ingest_qrels(qrels, collection="c")
    wh.ingest_runs(pd.DataFrame(rows, columns=["run_id", "query_id", "doc_id", "score"]), collection="c")
    report = build_report(wh, "c", ReportOptions(depths=(10,), figures=False))
    page = render_html(report)
    assert "<script>alert" not in page and "b&c" not in page
    # leaderboard, comparisons (as run and as vs) and provenance
    assert page.count("a&lt;script&gt;alert(1)&lt;/script&gt;") == 4
    assert page.count("b&amp;c") == 4
    markdown = render_markdown(report)
    assert "<script>" not in markdown and "a&lt;script>alert(1)&lt;/script>" in markdown


def test_template_environment() -> None:
    """Loaded once; HTML autoescaped, Markdown not; a missing variable is an error."""
    import jinja2

    from evalwh.present.report.render import _environment

    env = _environment()
    assert env is _environment()
    assert env.autoescape("report.html.j2") and env.autoescape("report.css.j2")
    assert env.autoescape("unknown.j2") and not env.autoescape("report.md.j2")
    assert set(env.list_templates()) >= {"report.html.j2", "report.css.j2", "report.md.j2"}
    with pytest.raises(jinja2.UndefinedError):
        env.get_template("report.html.j2").render({})
