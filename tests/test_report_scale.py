"""The report on collections of 1, 8 and 150 runs (issue 36).

Its significance is ``evalwh compare``'s (same family, test, correction, seed: equal p-values),
its defaults follow the collection (judged depth, graded labels), its flag separates only runs
below the pooled runs' own spread, every generated sentence reads at 1, 8 and 150 runs, a
float32 tie order is told, and in Chromium at 1,280 px a 150-run report sorts, fits its
containers and keeps one leaderboard row height (one browser for the file).
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from evalwh.cli import app
from typer.testing import CliRunner

from evalwh import Warehouse
from evalwh.present.report import ReportOptions, build_report, render_html, render_markdown
from evalwh.present.report import defaults
from evalwh.present.report.build import flag_rule
from evalwh.present.report.render import _unjudged_sentence
from evalwh.present.report.ties import float32_order, printed_ties_note

from report_collections import pooled_collection

runner = CliRunner(env={"COLUMNS": "200", "TERMINAL_WIDTH": "200"})
SIZES = (1, 8, 150)


@pytest.fixture(scope="module")
def collections() -> dict[int, tuple[Warehouse, object]]:
    """A generated depth-5 pool (graded labels, runs 20 deep) of 1, 8 and 150 runs, reported."""
    out = {}
    for n in SIZES:
        wh = Warehouse(":memory:")
        pooled_collection(wh, n, seed=n)
        out[n] = (wh, build_report(wh, "gen", ReportOptions(figures=False)))
    return out


def _keyed(frame: pd.DataFrame) -> pd.DataFrame:
    """Pairs keyed without orientation: (measure, the two runs sorted)."""
    a, b = frame["run_a"].astype(str), frame["run_b"].astype(str)
    low, high = a.where(a < b, b), b.where(a < b, a)
    return frame.assign(x=low, y=high).set_index(["measure", "x", "y"]).sort_index()


@pytest.mark.parametrize("n", [8, 150])
def test_p_values_are_compares(collections, n: int) -> None:  # type: ignore[no-untyped-def]
    """Default options: the report's p-values are `evalwh compare --all-runs`'s, pair for pair."""
    wh, report = collections[n]
    measures = list(report.options.measures)
    theirs = wh.compare(measures, None, collection="gen", all_runs=True).pairs
    ours = report.comparison
    assert len(ours) == len(theirs) == len(measures) * n * (n - 1) // 2
    a, b = _keyed(ours), _keyed(theirs)
    for column in ("p_value", "p_adjusted", "reject", "mean_a", "mean_b"):
        np.testing.assert_array_equal(a[column].to_numpy(), b[column].to_numpy())
    assert report.family == {
        "test": "t", "correction": "holm", "n_runs": n, "n_pairs": n * (n - 1) // 2,
        "mode": "all", "baselines": [], "notes": [],
    }  # fmt: skip


def test_baselines_and_a_resampling_test_are_compares(collections) -> None:  # type: ignore[no-untyped-def]
    """-b twice and the randomised Tukey HSD with a seed: the leaderboard's and the decision
    matrix's p-values equal compare's with the same options; listed pairs are baseline pairs."""
    wh, _ = collections[8]
    options = dict(test="randomized_tukey", resamples=199, seed=3)
    report = build_report(
        wh, "gen",
        ReportOptions(baselines=("r003", "r005"), test="randomized_tukey", n_resamples=199, seed=3, figures=False),
    )  # fmt: skip
    measures = list(report.options.measures)
    board = wh.compare(measures, None, collection="gen", baseline=["r003", "r005"], all_runs=True, **options)
    a, b = _keyed(report.comparison), _keyed(board.pairs)
    assert len(a) == len(measures) * (7 + 6)  # each run against r003, then against r005
    np.testing.assert_array_equal(a["p_adjusted"].to_numpy(), b["p_adjusted"].to_numpy())
    # the decision matrix's columns, in order (depths 5 and 10 on this depth-5 pool)
    specs = [f"{m}@{d}" for d in report.options.depths for m in ("P", "A_p")] + ["AP", "AA"]
    matrix = wh.compare(specs, None, collection="gen", baseline=["r003", "r005"], all_runs=True, **options)
    for side, prefix in (("performance", "perf"), ("assessment", "assess")):
        listed = report.pairs.rename(columns={side: "measure", f"{prefix}_p_adjusted": "p"})
        ours = _keyed(listed[["measure", "run_a", "run_b", "p"]])
        theirs = _keyed(matrix.pairs).loc[ours.index]
        np.testing.assert_array_equal(ours["p"].to_numpy(), theirs["p_adjusted"].to_numpy())
    assert set(report.pairs["run_b"]) == {"r003", "r005"}
    assert report.family["correction"] == "none"  # family-wise already
    assert all(v is None for v in report.marks.set_index("run_id").loc["r003", "vs"].iloc[0][:1])


def test_defaults_follow_the_collection(collections) -> None:  # type: ignore[no-untyped-def]
    """Depth-5 pool, graded: nDCG@10 leads (trec_eval's cutoff, marked), matrix at depths 5 and
    10; binary labels: P@10 leads; --measures wins and every measure deeper than the judged
    depth is marked; a built pool's depth is its own; Warehouse.report and plot runs' order
    are the same."""
    wh, report = collections[8]
    assert report.graded and report.overview["pool_depth"] == 5
    assert report.options.measures == ("nDCG@10", "P@10", "AP", "bpref")
    assert report.options.depths == (5, 10)
    html = render_html(report)
    assert "P@500" not in html and "P@1000" not in html and "nDCG@5" not in html
    binary = Warehouse(":memory:")
    pooled_collection(binary, 4, graded=False, pool_depth=10, depth=30, seed=2)
    found = defaults.collection_defaults(binary, "gen")
    assert (found.graded, found.judged.depth, found.measures, found.depths) == (
        False, 10, ("P@10", "AP", "nDCG@10", "bpref"), (10,),
    )  # fmt: skip
    given = build_report(wh, "gen", ReportOptions(measures=("P@20", "AP"), figures=False))
    assert given.options.measures == ("P@20", "AP")
    assert given.deeper == {"P@20": "to rank 20", "AP": "the whole ranking, to rank 20", "P@10": "to rank 10"}
    assert "P@20 †" in render_html(given) and "Past the judged depth (5)" in render_html(given)
    wh.build_pool(collection="gen", depth=3, pool_id="p3")
    pooled = defaults.collection_defaults(wh, "gen", qrels_id="p3")
    assert pooled.judged == defaults.JudgedDepth(3, "the depth of the pool evaluated (evalwh pool build)")
    assert pooled.measures[0] == "nDCG@10"
    text = wh.report(collection="gen", format="md")
    assert "| # | run | pooled | nDCG@10 † | P@10 † | MAP † | bpref † |" in text
    order = defaults.leaderboard_order(wh, "gen", "nDCG@10")
    assert order == report.leaderboard["run_id"].tolist()


def test_no_pooled_run_is_flagged_unless_below_the_pooled_spread(collections) -> None:  # type: ignore[no-untyped-def]
    for n in SIZES:
        board = collections[n][1].leaderboard
        pooled = board["pooled"].astype(bool)
        for name in ("A_p_ret@10", "A_p_ret@100"):
            share = board[name]
            q1, q3 = share[pooled].quantile([0.25, 0.75])
            fence = q1 - 1.5 * (q3 - q1)
            assert (share[board[f"low {name}"]] < fence).all()
            assert not board.loc[pooled & (share >= fence), f"low {name}"].any()
    # a pooled run far below the other pooled runs is flagged; the others are not
    share = pd.Series([1.0, 0.99, 0.98, 1.0, 0.97, 0.55, 0.60])
    low, median, fence = flag_rule(share, pd.Series([True] * 6 + [False]), 0.10)
    assert low.tolist() == [False, False, False, False, False, True, True]
    assert (round(median, 3), round(fence, 4)) == (0.985, 0.935)  # Q1 0.9725, Q3 0.9975 (linear)


def test_every_sentence_reads_at_1_8_and_150_runs(collections) -> None:  # type: ignore[no-untyped-def]
    for n in SIZES:
        report = collections[n][1]
        for text in (render_markdown(report), re.sub(r"<[^>]+>", " ", render_html(report))):
            assert not re.search(r"\b1 (runs|pairs|topics)\b|\brun\(s\)|\bNone\b|\bnan\b", text)
            assert not re.search(r"at rank (\d+)\b.*at rank \1\b(?! )", _unjudged_sentence(report))
            if n == 1:
                assert "One run: nothing to compare." in text
                assert "Significance" not in text and "pairs of the" not in text
            else:
                pairs = f"{n * (n - 1) // 2:,}"
                assert f"all {pairs} pairs of the {n} runs, paired t-test, Holm correction" in text
        assert f"{n} run{'s' if n > 1 else ''}" in render_markdown(report).splitlines()[2]
    # the sentence of the issue: 1% and 10% first reached at the same rank read once
    report = collections[8][1]
    overview = {**report.overview, "unjudged_first_at": {0.01: 1, 0.10: 1, 0.50: 37}, "unjudged_at_depths": {}}
    assert _unjudged_sentence(dataclasses.replace(report, overview=overview)) == (
        "Unjudged documents reach 10% of the lists at rank 1 and 50% at rank 37."
    )
    overview["unjudged_first_at"] = {0.01: 2, 0.10: 9, 0.50: None}
    assert _unjudged_sentence(dataclasses.replace(report, overview=overview)) == (
        "Unjudged documents reach 1% of the lists at rank 2 and 10% at rank 9."
    )


def test_float32_tie_order_is_told_once(tmp_path: Path) -> None:
    """Two scores that round to one float32 with doc ids in the other order: eval, compare and
    the report name --float32-ties, once; --float32-ties itself says nothing."""
    qrels = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "a"], "relevance": [1, 0, 1]})
    runs = pd.DataFrame(
        {
            "run_id": ["x", "x", "x", "y", "y", "y"],
            "query_id": ["1", "1", "2", "1", "1", "2"],
            "doc_id": ["a", "b", "a", "a", "b", "a"],
            # x: a (1.00000001) before b (1.0) as doubles; as float32 they tie and b > a goes first
            "score": [1.00000001, 1.0, 1.0, 2.0, 1.0, 1.0],
        }
    )
    db = tmp_path / "t.duckdb"
    with Warehouse(db) as wh:
        wh.ingest_qrels(qrels, collection="c")
        wh.ingest_runs(runs, collection="c")
        assert float32_order(wh, "c").values.tolist() == [["x", 1, 2]]
        assert float32_order(wh, "c", ["y"]).empty
        report = build_report(wh, "c", ReportOptions(figures=False))
    # (x's P@1 of topic 1 moves from 1 to 0 in float32 order: its printed means change)
    assert report.ties["run_id"].tolist() == ["x"] and report.ties_reordered == 1
    note = printed_ties_note(list(zip(report.ties["run_id"], report.ties["values"])), 1)
    assert note is not None and note.startswith("1 run prints different values") and ": x (" in note
    assert note in render_markdown(report) and "--float32-ties" in render_html(report)
    result = runner.invoke(app, ["eval", "-c", "c", "--db", str(db), "-m", "P@1"])
    assert result.exit_code == 0 and result.stderr.count("--float32-ties") == 1
    result = runner.invoke(app, ["eval", "-c", "c", "--db", str(db), "-m", "P@1", "--float32-ties"])
    assert result.exit_code == 0 and "--float32-ties reproduces" not in result.stderr
    result = runner.invoke(app, ["eval", "-c", "c", "--db", str(db), "-m", "P@1", "--run", "y"])
    assert "--float32-ties" not in result.stderr
    result = runner.invoke(app, ["compare", "x", "y", "-c", "c", "--db", str(db), "-m", "P@1"])
    assert result.exit_code == 0, result.output
    assert result.stderr.count("--float32-ties") == 1


def test_the_report_says_what_compare_says_when_topic_sets_differ() -> None:
    """y has no ranking for topic 3: compare's note (the runs' topic sets differ) is the
    report's, beside its significance marks, in HTML and Markdown; equal sets say nothing."""
    qrels = pd.DataFrame({"query_id": ["1", "1", "2", "2", "3"], "doc_id": list("abacd"), "relevance": [1, 0, 1, 1, 1]})
    runs = pd.DataFrame(
        {
            "run_id": ["x"] * 4 + ["y"] * 4,
            "query_id": ["1", "1", "2", "3", "1", "1", "2", "2"],
            "doc_id": list("abad") + list("baca"),
            "score": [2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0],
        }
    )
    wh = Warehouse(":memory:")
    wh.ingest_qrels(qrels, collection="c")
    wh.ingest_runs(runs, collection="c")
    theirs = wh.compare(["AP"], ["x"], collection="c", baseline="y").notes
    assert len(theirs) == 1 and theirs[0].startswith("the runs' topic sets differ: y has no ranking for 1 of the 3")
    report = build_report(wh, "c", ReportOptions(figures=False))
    assert report.family["notes"] == theirs
    told = "The runs' topic sets differ: y has no ranking for 1 of the 3 topics scored"
    assert told in render_markdown(report)
    assert told.replace("'", "&#39;") in render_html(report)
    same = Warehouse(":memory:")
    same.ingest_qrels(qrels, collection="c")
    same.ingest_runs(runs[runs["query_id"] != "3"], collection="c")
    quiet = build_report(same, "c", ReportOptions(figures=False))
    assert quiet.family["notes"] == [] and "topic sets differ" not in render_markdown(quiet)


# -- Chromium at 1,280 px -------------------------------------------------------------------

CHROMIUM = "/usr/bin/chromium"
WIDTH = 1280


@pytest.fixture(scope="module")
def browser():  # type: ignore[no-untyped-def]
    """One headless Chromium for the file."""
    if not os.path.exists(CHROMIUM) and not shutil.which("chromium"):
        pytest.skip("Debian's chromium is not installed (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(
            executable_path=CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium"),
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            yield chromium
        finally:
            chromium.close()


_WIDTHS = """() => Array.from(document.querySelectorAll('table'))
  .filter(t => t.offsetParent !== null)
  .map(t => [t.id, t.getBoundingClientRect().width, t.parentElement.clientWidth])"""
_HEIGHTS = """() => Array.from(document.querySelectorAll('#leaderboard-table tbody tr'))
  .map(r => r.getBoundingClientRect().height)"""
_COLUMN = """(i) => Array.from(document.querySelectorAll('#leaderboard-table tbody tr'))
  .map(r => r.cells[i].textContent)"""


@pytest.mark.parametrize("baselines", [(), ("r010",)])
def test_150_runs_in_chromium_at_1280_px(collections, browser, tmp_path: Path, baselines) -> None:  # type: ignore[no-untyped-def]
    """Sorting works, no table is wider than its container, every leaderboard row has one
    height; without JavaScript the board reads in rank order; no request leaves the file."""
    wh, report = collections[150]
    if baselines:
        report = build_report(wh, "gen", ReportOptions(baselines=baselines, figures=False))
    page_file = tmp_path / "report.html"
    page_file.write_text(render_html(report), encoding="utf-8")
    errors: list[str] = []
    page = browser.new_page(viewport={"width": WIDTH, "height": 900})
    try:
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("request", lambda r: errors.append(r.url) if not r.url.startswith(("file:", "data:")) else None)
        page.goto(page_file.as_uri(), wait_until="load")
        widths = page.evaluate(_WIDTHS)
        heights = page.evaluate(_HEIGHTS)
        board = report.leaderboard
        headers = page.eval_on_selector_all("#leaderboard-table thead th", "els => els.map(e => e.textContent)")
        lead = report.options.measures[0]
        run_col = headers.index("run")
        lead_col = next(i for i, h in enumerate(headers) if h.split()[0] == lead)  # (h may end in †)
        assert page.evaluate(_COLUMN, run_col) == board["run_id"].tolist()
        page.click(f"#leaderboard-table thead th:nth-child({run_col + 1})")
        assert page.evaluate(_COLUMN, run_col) == sorted(board["run_id"])
        page.click(f"#leaderboard-table thead th:nth-child({run_col + 1})")
        assert page.evaluate(_COLUMN, run_col) == sorted(board["run_id"], reverse=True)
        page.keyboard.press("Tab")  # (focus moves on; the headers take Enter too)
        page.click(f"#leaderboard-table thead th:nth-child({lead_col + 1})")
        lead = report.options.measures[0]
        by_lead = board.sort_values([lead], ascending=False, kind="stable")["run_id"].tolist()
        assert page.evaluate(_COLUMN, run_col) == by_lead
        still = browser.new_page(viewport={"width": WIDTH, "height": 900}, java_script_enabled=False)
        still.goto(page_file.as_uri(), wait_until="load")
        assert still.evaluate(_COLUMN, run_col) == board["run_id"].tolist()
        still.close()
    finally:
        page.close()
    assert errors == []
    assert {w[0] for w in widths} >= {"leaderboard-table"}
    assert all(width <= container + 0.5 for _, width, container in widths), widths
    assert len(heights) == 150 and max(heights) - min(heights) < 0.5, (min(heights), max(heights))


def test_conventions_are_reused_by_report_plot_runs_and_compare(tmp_path: Path) -> None:
    """`evalwh conventions` stores measures, baselines and judged depth once; report (CLI and
    Python), plot runs' defaults and compare take them where none are named; --clear removes them."""
    db = tmp_path / "c.duckdb"
    with Warehouse(db) as wh:
        pooled_collection(wh, 4, seed=4)
    args = ["conventions", "-c", "gen", "--db", str(db)]
    result = runner.invoke(app, [*args, "--measures", "P@3,AP", "-b", "r002", "--pool-depth", "3"])
    assert result.exit_code == 0, result.output
    assert "measures      P@3, AP" in result.stdout and "judged depth  3" in result.stdout
    result = runner.invoke(app, [*args, "--measures", "P@2,nope@3"])
    assert result.exit_code == 1 and "nope" in result.stderr
    result = runner.invoke(app, [*args, "-b", "r999"])
    assert result.exit_code == 1 and "has no run 'r999'" in result.stderr
    with Warehouse.open_reader(db) as wh:
        stored = defaults.read_conventions(wh, "gen")
        assert stored == defaults.Conventions(("P@3", "AP"), ("r002",), 3)  # the failed calls changed nothing
        report = build_report(wh, "gen", ReportOptions(figures=False))
        assert report.options.measures == ("P@3", "AP") and report.options.baselines == ("r002",)
        assert (report.overview["pool_depth"], report.options.depths) == (3, (10,))
        assert report.overview["pool_depth_source"].startswith("the collection's conventions")
        everything = build_report(wh, "gen", ReportOptions(all_pairs=True, figures=False))
        assert everything.family["mode"] == "all" and everything.family["n_pairs"] == 6
        found = defaults.collection_defaults(wh, "gen")
        assert (found.measures, found.judged.depth, found.depths) == (("P@3", "AP"), 3, (10,))
    result = runner.invoke(app, ["compare", "r000", "r001", "-c", "gen", "--db", str(db), "-f", "csv"])
    assert result.exit_code == 0, result.output
    assert set(pd.read_csv(__import__("io").StringIO(result.stdout))["measure"]) == {"P@3", "AP"}
    result = runner.invoke(app, [*args, "--clear"])
    assert result.exit_code == 0 and "(from the collection)" in result.stdout
    with Warehouse.open_reader(db) as wh:
        assert defaults.read_conventions(wh, "gen") == defaults.Conventions()
