"""The report reads without the papers at hand (issue #28): every flag is about a value shown
beside it, the matrix cells say which measure each line is about, the case legend and the test
sentence sit with the table, and no figure text is smaller than MIN_TEXT_PX on the page."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from evalwh import Warehouse
from evalwh.io.demo_data import write_demo
from evalwh.present.report import ReportOptions, build_report, figures, render_html, render_markdown

SMALL = {"topics": 8, "docs_per_topic": 80, "depth": 40, "pool_depth": 10}


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    files = write_demo(tmp_path_factory.mktemp("demo"), rng=7, **SMALL)
    with Warehouse(":memory:") as wh:
        wh.ingest_qrels(files.qrels, collection="demo")
        wh.ingest_runs(files.runs, collection="demo")
        wh.ingest_run_metadata(files.metadata, collection="demo")
        mp = pytest.MonkeyPatch()
        # figure text as <text> elements (not paths), so the test can read its size
        mp.setattr(figures, "_RC", {**figures._RC, "svg.fonttype": "none"})
        try:
            yield build_report(wh, "demo", ReportOptions(depths=(5, 10, 40), bounds=True))
        finally:
            mp.undo()


class _Cells(HTMLParser):
    """The leaderboard's header labels and, per row, each cell's class and text."""

    def __init__(self) -> None:
        super().__init__()
        self.table = False
        self.headers: list[str] = []
        self.rows: list[list[tuple[str, str]]] = []
        self.cell: tuple[str, list[str]] | None = None
        self.in_th = False

    def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
        attrs = dict(attrs)
        if tag == "table":
            self.table = attrs.get("id") == "leaderboard-table"
        elif self.table and tag == "tr":
            self.rows.append([])
        elif self.table and tag == "th":
            self.in_th = True
            self.headers.append("")
        elif self.table and tag == "td":
            self.cell = (attrs.get("class") or "", [], attrs.get("title") or "")

    def handle_endtag(self, tag):  # type: ignore[no-untyped-def]
        if tag == "table":
            self.table = False
        elif tag == "th":
            self.in_th = False
        elif tag == "td" and self.cell is not None:
            self.rows[-1].append((self.cell[0], "".join(self.cell[1]).strip(), self.cell[2]))
            self.cell = None

    def handle_data(self, data):  # type: ignore[no-untyped-def]
        if self.in_th:
            self.headers[-1] += data
        elif self.cell is not None:
            self.cell[1].append(data)


def test_every_flag_is_about_a_value_shown(report) -> None:  # type: ignore[no-untyped-def]
    parser = _Cells()
    parser.feed(render_html(report))
    headers = parser.headers
    # A_p_ret@10 equals A_p@10 for every run here: one column, which carries the flag
    assert "A_p_ret@10" not in headers and "A_p_ret@100" in headers and "A_p@100" in headers
    flagged = 0
    for row in (r for r in parser.rows if r):
        cells = dict(zip(headers, row, strict=True))
        low = {name for name, (cls, _, _) in cells.items() if "low" in cls.split()}
        assert low <= {"A_p@10", "A_p_ret@100"}  # red only where the flag looks
        flag = cells["⚑"][2]  # the flag's text is its cell's tooltip; the cell shows ⚑
        assert cells["⚑"][1] == ("⚑" if flag else "")
        for name, value in re.findall(r"(A_p_ret@\d+) (\d\.\d\d)", flag):
            flagged += 1
            shown = name if name in headers else name.replace("A_p_ret@", "A_p@")
            assert shown in low
            assert float(cells[shown][1]) == pytest.approx(float(value), abs=0.006)  # the value shown
        if not flag:
            assert not low
    assert flagged > 0


def test_matrix_cells_label_their_lines_and_the_legend_sits_with_the_table(report) -> None:  # type: ignore[no-untyped-def]
    page = render_html(report)
    section = page[page.index('id="comparisons"') : page.index('id="pairs-table"')]
    assert "3b</b> the\nbetter run is the less assessed one" in section or "3b</b> the better run" in section
    assert '"==" means the difference is not significant' in section.replace("&#34;", '"').replace("&quot;", '"')
    assert "paired t-test" in section and "Holm correction over the" in section
    stats = re.findall(r'<span class="stats">([^<]*)<br>([^<]*)</span>', page)
    assert stats
    for perf, assess in stats:
        assert re.match(r"(P|MAP)@?\d* \d\.\d{3} vs \d\.\d{3}, p ", perf) or perf.startswith("MAP ")
        assert assess.startswith(("A_p@", "MAA ")), assess
    markdown = render_markdown(report)
    legend = markdown.index("Cases: 1")
    assert legend < markdown.index("| run_a")  # the legend comes before the table


def _text_sizes(svg: str) -> list[float]:
    return [float(size) for size in re.findall(r"font(?:-size)?:\s*([\d.]+)px", svg)]


def test_figure_text_is_at_least_ten_pixels(report) -> None:  # type: ignore[no-untyped-def]
    kinds = {f.key.split("-")[0] for f in report.figures}
    assert {"unjudged", "topics", "runs", "pair", "bounds"} <= kinds
    for f in report.figures:
        width = float(re.search(r'viewBox="0 0 ([\d.]+) ', f.svg).group(1))  # SVG units = points
        shown = min(figures.WIDE_PX if f.key == "runs" else figures.COLUMN_PX, width * 96 / 72)
        sizes = _text_sizes(f.svg)
        assert sizes, f.key
        smallest = min(sizes) * shown / width
        assert smallest >= figures.MIN_TEXT_PX, (f.key, min(sizes), round(smallest, 1))
