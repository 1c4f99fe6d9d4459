"""The report's rank intervals, tiers and summarised comparisons (issue 51, items 4-6).

On a generated 150-run collection with a graded pool judged to depth 7, reported at one depth:
the leaderboard's rank intervals and tiers are ``evalwh compare --all-runs --ranks``'s; the
comparisons section lists the tiers, the weak pairs and the pairs the measures disagree on, not
149 neighbour rows; and in Chromium at 1,280 px that section takes at most a quarter of the
page and no figure is empty (each draws coloured marks, not only axes).
"""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalwh import Warehouse
from evalwh.present.report import ReportOptions, build_report, render_html, render_markdown

from report_collections import pooled_collection

CHROMIUM = "/usr/bin/chromium"
WIDTH = 1280


@pytest.fixture(scope="module")
def wide() -> tuple[Warehouse, object]:
    """150 runs, 30 topics, a depth-7 pool of graded labels, runs 20 deep; figures drawn."""
    wh = Warehouse(":memory:")
    pooled_collection(wh, 150, topics=30, pool_depth=7, depth=20, seed=51)
    return wh, build_report(wh, "gen", ReportOptions(depths=(10,), bounds=False))


def test_ranks_and_tiers_are_compares(wide) -> None:  # type: ignore[no-untyped-def]
    wh, report = wide
    lead = report.options.measures[0]
    theirs = wh.compare([lead], None, collection="gen", all_runs=True, ranks=True).ranks.set_index("run_id")
    ours = report.ranks.set_index("run_id").loc[theirs.index]
    columns = ["rank", "rank_low", "rank_high", "tier"]
    pd.testing.assert_frame_equal(ours[columns], theirs[columns])
    assert ours["tier"].nunique() > 1


def test_comparisons_summarise_without_a_baseline(wide) -> None:  # type: ignore[no-untyped-def]
    _, report = wide
    assert report.pair_mode == "summary"
    # the listed pairs are the first weak ones, nothing else; the disagreements are recomputed here
    listed = set(zip(report.pairs["run_a"], report.pairs["run_b"]))
    assert listed == set(list(zip(report.weak["run_a"], report.weak["run_b"]))[: report.options.listed])
    if not report.pairs.empty:
        weak_somewhere = report.pairs.groupby(["run_a", "run_b"])["case"].agg(lambda c: bool(set(c) & {"2", "4"}))
        assert weak_somewhere.all()
    pairs = report.comparison
    sign = np.where(pairs["reject"], np.sign(pairs["mean_a"] - pairs["mean_b"]), 0)
    key = [tuple(sorted(p)) for p in zip(pairs["run_a"], pairs["run_b"])]
    by_pair = pd.DataFrame({"key": key, "sign": np.abs(sign)}).groupby("key")["sign"].agg(["min", "max"])
    mixed = int((by_pair["min"] != by_pair["max"]).sum())
    partial = int((report.disagreements["kind"] == "partial").sum())
    assert partial == mixed
    md = render_markdown(report)
    section = md[md.index("## Comparisons") : md.index("## How it was computed")]
    assert "### Tiers" in section and "### Where the measures disagree" in section
    assert "next one down" not in section
    assert f"{report.disagreements.shape[0]:,} of the 11,175 pairs" in section


def test_one_and_eight_runs_read(tmp_path: Path) -> None:
    """One run: no rank columns and no tiers; 8 runs: rank columns, all pairs listed, no tier table."""
    for n in (1, 8):
        wh = Warehouse(":memory:")
        pooled_collection(wh, n, seed=n)
        report = build_report(wh, "gen", ReportOptions(figures=False))
        md = render_markdown(report)
        if n == 1:
            assert report.ranks is None and "rank 95%" not in md
        else:
            assert report.pair_mode == "all" and "rank 95%" in md and "### Tiers" not in md
            assert "run's rank over 2,000 bootstrap samples of the topics (seed 0)" in md


@pytest.fixture(scope="module")
def browser():  # type: ignore[no-untyped-def]
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


def _coloured_pixels(png: bytes) -> int:
    """Pixels of a screenshot with a clear hue (data marks), not white, grey or black (axes, text)."""
    from PIL import Image

    rgb = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=int)
    return int(((rgb.max(axis=2) - rgb.min(axis=2)) > 60).sum())


_RANK_COLUMN = """() => {
  const heads = Array.from(document.querySelectorAll('#leaderboard-table thead th')).map(e => e.textContent);
  const i = heads.indexOf('rank 95%'), j = heads.indexOf('tier'), r = heads.indexOf('run');
  return Array.from(document.querySelectorAll('#leaderboard-table tbody tr'))
    .map(row => [row.cells[r].textContent, row.cells[i].textContent, row.cells[j].textContent]);
}"""


@pytest.fixture(scope="module")
def weak() -> object:
    """150 runs, 30 topics, a depth-3 pool, reported at depths 3, 10 and 20: many weak pairs."""
    wh = Warehouse(":memory:")
    pooled_collection(wh, 150, topics=30, pool_depth=3, depth=20, seed=3)
    return build_report(wh, "gen", ReportOptions(depths=(3, 10, 20), bounds=False))


@pytest.mark.parametrize("case", ["one depth", "weak pairs"])
def test_150_runs_in_chromium(wide, weak, browser, tmp_path: Path, case: str) -> None:  # type: ignore[no-untyped-def]
    """At 1,280 px: comparisons at most a quarter of the page; tiers and rank intervals shown;
    every figure draws coloured marks (the runs figure at one depth is the caterpillar). The
    second collection lists ten weak pairs over three depths."""
    report = wide[1] if case == "one depth" else weak
    assert [f.key for f in report.figures][:3] == ["unjudged", "topics", "runs"]
    if case == "one depth":
        assert report.figures[2].title.endswith("means and rank intervals")
    else:
        assert len(report.weak) > report.options.listed
        assert len(report.pairs) == report.options.listed * report.pairs["column"].nunique()
    page_file = tmp_path / "report.html"
    page_file.write_text(render_html(report), encoding="utf-8")
    page = browser.new_page(viewport={"width": WIDTH, "height": 900})
    try:
        page.goto(page_file.as_uri(), wait_until="load")
        height = page.evaluate("document.documentElement.scrollHeight")
        section = page.evaluate("document.querySelector('#comparisons').getBoundingClientRect().height")
        assert section <= height / 4, (section, height)
        if case == "weak pairs":
            assert len(page.query_selector_all("#pairs-table tbody tr")) == report.options.listed
        tiers = page.eval_on_selector_all("#tiers-table tbody tr", "rows => rows.map(r => r.cells[0].textContent)")
        assert tiers == [str(t) for t in sorted(report.ranks["tier"].unique())]
        shown = page.evaluate(_RANK_COLUMN)
        expected = report.ranks.set_index("run_id")
        for run, interval, tier in shown:
            row = expected.loc[run]
            assert interval == f"{row['rank_low']}–{row['rank_high']}" and tier == str(row["tier"])
        assert len(shown) == 150
        for figure in report.figures:
            image = page.query_selector(f"#figure-{figure.key} img")
            image.scroll_into_view_if_needed()
            assert _coloured_pixels(image.screenshot()) > 150, figure.key
    finally:
        page.close()
