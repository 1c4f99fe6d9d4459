"""Run, qrels and run-metadata ingest: strict, atomic, idempotent, and ranked as trec_eval ranks.

Every rejected input is checked for its exact message (``file:line: problem``) and for leaving
the warehouse exactly as it was. Hypothesis throws random (mostly malformed) lines at the run
parser and compares it with a small reference parser written here, independently of
``evalwh.io.formats``; another property compares the materialised ranks with a pure-Python sort.
"""

from __future__ import annotations

import gzip
import math
import re
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalwh.io import formats
from evalwh.errors import IngestError, NotFoundError, WarehouseLockedError
from evalwh.warehouse import Warehouse

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

RUN = "401 Q0 d1 1 2.5 r\n401 Q0 d2 2 1.5 r\n402 Q0 d1 1 0.5 r\n"
QRELS = "401 0 d1 1\n401 0 d2 0\n402 0 d1 2\n"


def write(directory: Path, name: str, content: str | bytes) -> Path:
    """Write a file (gzipped when the name ends in .gz) and return its path."""
    path = directory / name
    data = content.encode() if isinstance(content, str) else content
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return path


def stored_results(wh: Warehouse, collection: str = "c") -> list[tuple[object, ...]]:
    return wh.con.execute(
        "SELECT run_id, query_id, doc_id, score, rank_given, rank FROM run_results"
        " WHERE collection_id = ? ORDER BY run_id, query_id, rank",
        [collection],
    ).fetchall()


# -- run files: rejected inputs -------------------------------------------------------------

BAD_RUNS = {
    "too few fields": ("401 Q0 d1 1 2.5 r\n401 Q0 d2 2 1.5\n", ":2: expected 6 fields, found 5"),
    "too many fields": ("401 Q0 d1 1 2.5 r x\n", ":1: expected 6 fields, found 7"),
    "hidden seventh field": (
        "401\tQ0\td1\t1\t2\tr\n401\tQ0\td2\t2\t1\tr\t\tx\n",
        ":2: expected 6 fields, found 7",
    ),
    "non-numeric score": (
        "401 Q0 d1 1 2.5 r\n401 Q0 d2 2 high r\n",
        ":2: score 'high' is not a finite number",
    ),
    "NaN score": ("401 Q0 d1 1 nan r\n", ":1: score 'nan' is not a finite number"),
    "infinite score": (
        "401 Q0 d1 1 2 r\n401 Q0 d2 2 -Infinity r\n",
        ":2: score '-Infinity' is not a finite number",
    ),
    "overflowing score": ("401 Q0 d1 1 1e400 r\n", ":1: score '1e400' is not a finite number"),
    "comma decimal": ("401 Q0 d1 1 1,5 r\n", ":1: score '1,5' is not a finite number"),
    "two signs": ("401 Q0 d1 1 +-5 r\n", ":1: score '+-5' is not a finite number"),
    "hexadecimal": ("401 Q0 d1 1 0x10 r\n", ":1: score '0x10' is not a finite number"),
    "same document twice": (
        "401 Q0 d1 1 2 r\n401 Q0 d2 2 1 r\n401 Q0 d1 3 0.5 r\n",
        ":3: document 'd1' appears twice for topic '401' (first on line 1)",
    ),
    "two tags": (
        "401 Q0 d1 1 2 a\n401 Q0 d2 2 1 b\n",
        ":2: tag 'b' differs from 'a' on line 1; a file holds one run (or give --run-id)",
    ),
    "empty file": ("", ": the file holds no run lines"),
    "comments only": ("# nothing\n\n   \n", ": the file holds no run lines"),
    "NUL byte": (
        b"401 Q0 d1 1 2 r\n401 Q0 d\x002 2 1 r\n",
        ":2: the line holds a NUL byte; is this a binary or compressed file?",
    ),
    "carriage return inside a line": (
        b"401 Q0 d1 1 2 r\r401 Q0 d2 2 1 r\n",
        ":1: carriage return (\\r) inside the line; lines must end with \\n or \\r\\n",
    ),
    "invalid UTF-8": (
        b"401 Q0 d1 1 2 r\n401 Q0 d\xe92 2 1 r\n",
        ":2: the line is not valid UTF-8 (byte 9)",
    ),
    "comment not at line start": ("401 Q0 d1 1 2 r\n # a note\n", ":2: expected 6 fields, found 3"),
}


@pytest.mark.parametrize("name", list(BAD_RUNS))
@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gz"])
def test_bad_run_file_is_rejected_with_its_line_and_nothing_changes(
    wh, snapshot, tmp_path, name, compressed
):
    wh.ingest_qrels(write(tmp_path, "qrels", QRELS), collection="c")
    wh.ingest_runs(write(tmp_path, "good.txt", RUN.replace(" r\n", " good\n")), collection="c")
    before = snapshot(wh)
    content, problem = BAD_RUNS[name]
    path = write(tmp_path, "bad.txt.gz" if compressed else "bad.txt", content)
    with pytest.raises(IngestError) as caught:
        wh.ingest_runs(
            [write(tmp_path, "other.txt", RUN.replace(" r\n", " other\n")), path], collection="c"
        )
    assert str(caught.value) == f"{path}{problem}"
    assert snapshot(wh) == before


def test_tab_file_with_a_bad_line_deep_inside_names_it(wh, snapshot, tmp_path):
    lines = [f"7\tQ0\tdoc{i}\t{i}\t{100 - i / 7}\tdeep\n" for i in range(5000)]
    lines[4321] = "7\tQ0\tdoc4321\t4321\t1.0\n"
    path = write(tmp_path, "deep.txt", "".join(lines))
    before = snapshot(wh)
    with pytest.raises(IngestError, match=re.escape(f"{path}:4322: expected 6 fields, found 5")):
        wh.ingest_runs(path, collection="c")
    assert snapshot(wh) == before


def test_not_gzip_despite_the_name(wh, tmp_path):
    path = write(tmp_path, "run.txt", RUN)
    fake = path.rename(tmp_path / "run.gz")
    with pytest.raises(IngestError) as caught:
        wh.ingest_runs(fake, collection="c")
    assert str(caught.value).startswith(f"{fake}: cannot read the file: ")


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("missing", "{missing}: no such file"),
        ("directory", "{directory}: is a directory, not a file"),
        ("twice", "{a}: the file is given twice"),
        ("run id for two", "{a}: --run-id names one run; give exactly one file"),
        (
            "same tag",
            "{b}: run 'r' is also in {a}; run ids must be unique (the tag of the first line names the run)",
        ),
        ("nothing", "runs: no run files given"),
    ],
)
def test_bad_file_lists(wh, snapshot, tmp_path, case, message):
    a = write(tmp_path, "a.txt", RUN)
    b = write(tmp_path, "b.txt", RUN.replace("2.5", "3.5"))
    paths = {"missing": tmp_path / "missing.txt", "directory": tmp_path, "a": a, "b": b}
    calls = {
        "missing": lambda: wh.ingest_runs([a, paths["missing"]], collection="c"),
        "directory": lambda: wh.ingest_runs([tmp_path], collection="c"),
        "twice": lambda: wh.ingest_runs([a, tmp_path / "." / "a.txt"], collection="c"),
        "run id for two": lambda: wh.ingest_runs([a, b], collection="c", run_id="x"),
        "same tag": lambda: wh.ingest_runs([a, b], collection="c"),
        "nothing": lambda: wh.ingest_runs([], collection="c"),
    }
    before = snapshot(wh)
    with pytest.raises(IngestError) as caught:
        calls[case]()
    assert str(caught.value) == message.format(**paths)
    assert snapshot(wh) == before


# -- run files: accepted variants -----------------------------------------------------------


def test_accepted_formats_parse_to_the_same_rows(wh, tmp_path):
    """CRLF, tabs, mixed whitespace, no final newline, scientific and negative scores, ranks
    from 0, unsorted lines, comments (only at line start) and '#' inside a docno."""
    messy = (
        "# written by hand\r\n"
        "402\tQ0\td#1\t0\t-1.5E-1\tr\r\n"
        "401  Q0\t d2 \t 7\t1e0 r\r\n"
        "\r\n"
        "   \t \r\n"
        "401 Q0 d1 0 2.50 r\r\n"
        "#401 Q0 d9 0 9 r\r\n"
        "401\tQ0\td3\t1\t-0\tr"
    )
    clean = "401 Q0 d1 1 2.5 r\n401 Q0 d2 2 1 r\n401 Q0 d3 3 0 r\n402 Q0 d#1 1 -0.15 r\n"
    one = Warehouse(":memory:")
    one.ingest_runs(write(tmp_path, "messy.txt", messy), collection="c")
    wh.ingest_runs(write(tmp_path, "clean.txt", clean), collection="c")
    ranked = [(r[1], r[2], r[3], r[5]) for r in stored_results(one)]
    assert ranked == [(r[1], r[2], r[3], r[5]) for r in stored_results(wh)]
    assert ranked == [
        ("401", "d1", 2.5, 1),
        ("401", "d2", 1.0, 2),
        ("401", "d3", 0.0, 3),
        ("402", "d#1", -0.15, 1),
    ]
    assert [r[4] for r in stored_results(one)] == ["0", "7", "1", "0"]  # rank column as given
    assert one.con.execute("SELECT line_count, tag FROM runs").fetchall() == [(4, "r")]


@pytest.mark.parametrize("delimiter", ["\t", " "])
def test_fast_and_general_readers_agree(wh, tmp_path, delimiter):
    """A file the CSV reader splits, and the same file padded so only the general split can."""
    rows = [
        (str(400 + q), f"LA{d:06d}-{q}", d, round(10 - d / 3, 2))
        for q in range(3)
        for d in range(300)
    ]
    plain = "".join(
        delimiter.join([q, "Q0", doc, str(r), str(s), "tag"]) + "\n" for q, doc, r, s in rows
    )
    padded = "".join(
        f"  {q}{delimiter}{delimiter}Q0 {doc}\t{r}  {s} tag  \n" for q, doc, r, s in rows
    )
    wh.ingest_runs(write(tmp_path, "plain.txt", plain), collection="c", run_id="plain")
    wh.ingest_runs(write(tmp_path, "padded.txt", padded), collection="c", run_id="padded")
    results = stored_results(wh)
    assert [r[1:] for r in results if r[0] == "plain"] == [
        r[1:] for r in results if r[0] == "padded"
    ]
    assert len(results) == 2 * 900


def test_run_id_names_the_run_and_allows_several_tags(wh, tmp_path):
    path = write(tmp_path, "tags.txt", "401 Q0 d1 1 2 a\n401 Q0 d2 2 1 b\n")
    [result] = wh.ingest_runs(path, collection="c", run_id="mine")
    assert (result.name, result.status, result.lines) == ("mine", "ingested", 2)
    assert wh.con.execute("SELECT run_id, tag, source_file, line_count FROM runs").fetchall() == [
        ("mine", None, "tags.txt", 2)
    ]


def test_extra_fields_only_when_allowed(wh, tmp_path):
    path = write(tmp_path, "extra.txt", "401 Q0 d1 1 2 r extra\n401 Q0 d2 2 1 r\n")
    with pytest.raises(IngestError, match=re.escape(f"{path}:1: expected 6 fields, found 7")):
        wh.ingest_runs(path, collection="c")
    wh.ingest_runs(path, collection="c", ignore_extra_fields=True)
    assert [r[2] for r in stored_results(wh)] == ["d1", "d2"]


def test_reingesting_the_same_content_is_a_no_op_that_says_so(wh, snapshot, tmp_path):
    path = write(tmp_path, "run.txt", RUN)
    [first] = wh.ingest_runs(path, collection="c")
    assert first.message() == f"run 'r' from {path}: ingested (3 lines)"
    before = snapshot(wh)
    copy = write(tmp_path, "copy.txt.gz", RUN)  # same content, compressed, other name
    [result] = wh.ingest_runs([path], collection="c", replace=True)
    assert result.message() == f"run 'r' from {path}: already ingested, unchanged"
    [again] = wh.ingest_runs(copy, collection="c")
    assert (again.status, again.lines) == ("unchanged", 3)
    assert snapshot(wh) == before


def test_gzip_is_transparent(wh, tmp_path):
    plain = write(tmp_path, "run.txt", RUN)
    packed = write(tmp_path, "run.txt.gz", RUN)
    assert formats.scan(plain).sha256 == formats.scan(packed).sha256
    wh.ingest_runs(packed, collection="c")
    other = Warehouse(":memory:")
    other.ingest_runs(plain, collection="c")
    assert stored_results(wh) == stored_results(other)
    assert wh.runs("c")["sha256"].tolist() == other.runs("c")["sha256"].tolist()


def test_same_run_id_with_other_content_needs_replace(wh, snapshot, tmp_path):
    wh.ingest_runs(write(tmp_path, "run.txt", RUN), collection="c")
    changed = write(tmp_path, "changed.txt", "401 Q0 d9 1 9 r\n")
    before = snapshot(wh)
    with pytest.raises(IngestError) as caught:
        wh.ingest_runs(changed, collection="c")
    assert str(caught.value) == (
        f"{changed}: run 'r' already exists in collection 'c' with different content; "
        "use --replace to replace it"
    )
    assert snapshot(wh) == before
    [result] = wh.ingest_runs(changed, collection="c", replace=True)
    assert result.message() == f"run 'r' from {changed}: replaced (1 lines)"
    assert stored_results(wh) == [("r", "401", "d9", 9.0, "1", 1)]
    assert wh.con.execute("SELECT run_id, query_id, num_ret FROM run_topics").fetchall() == [
        ("r", "401", 1)
    ]
    assert wh.con.execute("SELECT count(*), min(line_count) FROM runs").fetchall() == [(1, 1)]


def test_collections_keep_runs_apart(wh, tmp_path):
    path = write(tmp_path, "run.txt", RUN)
    wh.ingest_runs(path, collection="a")
    wh.ingest_runs(path, collection="b")
    assert stored_results(wh, "a") == stored_results(wh, "b")
    assert wh.collections()[["collection_id", "runs"]].values.tolist() == [["a", 1], ["b", 1]]


def test_runs_report(wh, tmp_path):
    wh.ingest_runs(
        [write(tmp_path, "r1.txt", RUN), write(tmp_path, "r2.txt", "9 Q0 x 1 1 s\n")],
        collection="c",
    )
    report = wh.runs("c")
    assert report[
        ["run_id", "topics", "docs", "min_depth", "max_depth", "source_file"]
    ].values.tolist() == [
        ["r", 2, 3, 1, 2, "r1.txt"],
        ["s", 1, 1, 1, 1, "r2.txt"],
    ]
    assert report["sha256"].tolist()[0] == formats.scan(tmp_path / "r1.txt").sha256
    with pytest.raises(
        NotFoundError, match=re.escape("no collection 'zz' in :memory: (collections: c)")
    ):
        wh.runs("zz")


def test_progress_is_reported_per_batch(wh, tmp_path):
    calls: list[tuple[int, int]] = []
    paths = [write(tmp_path, f"r{i}.txt", RUN.replace(" r\n", f" r{i}\n")) for i in range(3)]
    wh.ingest_runs(paths, collection="c", progress=lambda done, total: calls.append((done, total)))
    assert calls[0] == (0, 3) and calls[-1] == (3, 3)


def test_bulk_setting_is_restored(wh, tmp_path):
    wh.ingest_runs(write(tmp_path, "run.txt", RUN), collection="c")
    assert wh.con.execute("SELECT current_setting('preserve_insertion_order')").fetchall() == [
        (True,)
    ]
    tables = wh.con.execute("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall()
    assert ("staged_lines",) not in tables


# -- run DataFrames -------------------------------------------------------------------------


def test_run_frame_ingests_and_ranks(wh):
    frame = pd.DataFrame(
        {
            "run_id": ["a", "a", "a", "b"],
            "query_id": [1, 1, 1, 1],
            "doc_id": ["x", "z", "y", "x"],
            "score": [1.0, 1.0, 2.0, 0.5],
        }
    )
    results = wh.ingest_runs(frame, collection="c")
    assert [(r.name, r.status, r.lines) for r in results] == [
        ("a", "ingested", 3),
        ("b", "ingested", 1),
    ]
    assert stored_results(wh) == [
        ("a", "1", "y", 2.0, "3", 1),
        ("a", "1", "z", 1.0, "2", 2),
        ("a", "1", "x", 1.0, "1", 3),
        ("b", "1", "x", 0.5, "1", 1),
    ]
    assert [
        r.status for r in wh.ingest_runs(frame.sample(frac=1, random_state=1), collection="c")
    ] == [
        "unchanged",
        "unchanged",
    ]


@pytest.mark.parametrize(
    ("frame", "kwargs", "message"),
    [
        (
            pd.DataFrame({"query_id": ["1"], "doc_id": ["d"]}),
            {},
            "DataFrame: a run DataFrame needs query_id, doc_id, score (or another layout: evalwh and "
            "ir_measures: query_id, doc_id, score; PyTerrier: qid, docno, score); found columns "
            "[query_id, doc_id], missing score",
        ),
        (
            pd.DataFrame({"query_id": ["1"], "doc_id": ["d"], "score": [1.0]}),
            {},
            "DataFrame: no run_id column; pass run_id= to name the run",
        ),
        (
            pd.DataFrame({"query_id": [], "doc_id": [], "score": []}),
            {"run_id": "r"},
            "DataFrame: the DataFrame holds no run rows",
        ),
        (
            pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["d", "e"], "score": [1, "x"]}),
            {"run_id": "r"},
            "DataFrame:2: score 'x' is not a finite number",
        ),
        (
            pd.DataFrame({"query_id": ["1"], "doc_id": ["d"], "score": [float("nan")]}),
            {"run_id": "r"},
            "DataFrame:1: score nan is not a finite number",
        ),
        (
            pd.DataFrame({"query_id": ["1"], "doc_id": ["d"], "score": [float("inf")]}),
            {"run_id": "r"},
            "DataFrame:1: score inf is not a finite number",
        ),
        (
            pd.DataFrame(
                {"query_id": ["1", "1", "1"], "doc_id": ["d", "e", "d"], "score": [3, 2, 1]}
            ),
            {"run_id": "r"},
            "DataFrame:3: document 'd' appears twice for topic '1' in run 'r' (first on row 1)",
        ),
    ],
)
def test_bad_run_frames(wh, snapshot, frame, kwargs, message):
    before = snapshot(wh)
    with pytest.raises(IngestError) as caught:
        wh.ingest_runs(frame, collection="c", **kwargs)
    assert str(caught.value) == message
    assert snapshot(wh) == before


def test_run_frame_clash_and_replace(wh, snapshot):
    frame = pd.DataFrame({"query_id": ["1"], "doc_id": ["d"], "score": [1.0]})
    wh.ingest_runs(frame, collection="c", run_id="r")
    before = snapshot(wh)
    changed = frame.assign(score=[2.0])
    with pytest.raises(IngestError) as caught:
        wh.ingest_runs(changed, collection="c", run_id="r")
    assert str(caught.value) == (
        "DataFrame: run 'r' already exists in collection 'c' with different content; use --replace to replace it"
    )
    assert snapshot(wh) == before
    assert wh.ingest_runs(changed, collection="c", run_id="r", replace=True)[0].status == "replaced"
    assert stored_results(wh) == [("r", "1", "d", 2.0, "1", 1)]


# -- qrels ----------------------------------------------------------------------------------

BAD_QRELS = {
    "too few fields": ("401 0 d1 1\n401 0 d2\n", ":2: expected 4 fields, found 3"),
    "too many fields": ("401 0 d1 1 x\n", ":1: expected 4 fields, found 5"),
    "exponent grade": ("401 0 d1 1e3\n", ":1: relevance '1e3' is not a number"),
    "word grade": ("401 0 d1 yes\n", ":1: relevance 'yes' is not a number"),
    "ten digits": ("401 0 d1 1234567890\n", ":1: relevance '1234567890' is not a number"),
    "judged twice": (
        "401 0 d1 1\n401 0 d2 0\n401 0 d1 0\n",
        ":3: document 'd1' is judged twice for topic '401' (first on line 1)",
    ),
    "empty file": ("", ": the file holds no qrels lines"),
    "comments only": ("# nothing here\n", ": the file holds no qrels lines"),
    "NUL byte": (
        b"401 0 d\x00 1\n",
        ":1: the line holds a NUL byte; is this a binary or compressed file?",
    ),
    "carriage return": (
        b"401 0 d1 1\r401 0 d2 1\n",
        ":1: carriage return (\\r) inside the line; lines must end with \\n or \\r\\n",
    ),
    "invalid UTF-8": (b"401 0 d1 1\n401 0 \xffd 1\n", ":2: the line is not valid UTF-8 (byte 7)"),
}


@pytest.mark.parametrize("name", list(BAD_QRELS))
def test_bad_qrels_file_is_rejected_and_nothing_changes(wh, snapshot, tmp_path, name):
    wh.ingest_qrels(write(tmp_path, "good", QRELS), collection="c", qrels_id="good")
    before = snapshot(wh)
    content, problem = BAD_QRELS[name]
    path = write(tmp_path, "bad.qrels", content)
    with pytest.raises(IngestError) as caught:
        wh.ingest_qrels(path, collection="c")
    assert str(caught.value) == f"{path}{problem}"
    assert snapshot(wh) == before


def test_qrels_formats_and_grades(wh, tmp_path):
    text = "# comment\r\n401\t0\td1\t1\r\n401  Q0 d2   -1\r\n\r\n402 4.5 d#3 +2\r\n402 0 d4 0"
    result = wh.ingest_qrels(write(tmp_path, "q.txt.gz", text), collection="c")
    assert (result.status, result.lines) == ("ingested", 4)
    assert wh.con.execute(
        "SELECT query_id, iteration, doc_id, relevance FROM qrels ORDER BY ALL"
    ).fetchall() == [
        ("401", "0", "d1", 1),
        ("401", "Q0", "d2", -1),
        ("402", "0", "d4", 0),
        ("402", "4.5", "d#3", 2),
    ]
    assert wh.collections()[["topics", "judged", "relevant", "qrels_sets"]].values.tolist() == [
        [2, 3, 2, 1]
    ]
    assert wh.con.execute("SELECT query_id FROM topics ORDER BY 1").fetchall() == [
        ("401",),
        ("402",),
    ]


def test_qrels_idempotent_clash_and_replace(wh, snapshot, tmp_path):
    path = write(tmp_path, "q.txt", QRELS)
    assert (
        wh.ingest_qrels(path, collection="c").message()
        == f"qrels 'default' from {path}: ingested (3 lines)"
    )
    before = snapshot(wh)
    again = wh.ingest_qrels(write(tmp_path, "q.txt.gz", QRELS), collection="c")
    assert (
        again.message()
        == f"qrels 'default' from {tmp_path / 'q.txt.gz'}: already ingested, unchanged"
    )
    assert snapshot(wh) == before
    changed = write(tmp_path, "changed.txt", "401 0 d1 0\n")
    with pytest.raises(IngestError) as caught:
        wh.ingest_qrels(changed, collection="c")
    assert str(caught.value) == (
        f"{changed}: qrels 'default' of collection 'c' already exists with different content; "
        "use --replace to replace it"
    )
    assert snapshot(wh) == before
    assert wh.ingest_qrels(changed, collection="c", replace=True).status == "replaced"
    assert wh.con.execute("SELECT query_id, doc_id, relevance FROM qrels").fetchall() == [
        ("401", "d1", 0)
    ]
    assert wh.con.execute("SELECT count(*) FROM qrels_sets").fetchall() == [(1,)]


def test_qrels_frame(wh):
    frame = pd.DataFrame(
        {"query_id": [1, 1, 2], "doc_id": ["a", "b", "a"], "relevance": [1, 0, 2.0]}
    )
    assert wh.ingest_qrels(frame, collection="c").lines == 3
    assert wh.con.execute(
        "SELECT query_id, iteration, doc_id, relevance FROM qrels ORDER BY ALL"
    ).fetchall() == [
        ("1", "0", "a", 1),
        ("1", "0", "b", 0),
        ("2", "0", "a", 2),
    ]
    assert wh.ingest_qrels(frame.iloc[::-1], collection="c").status == "unchanged"


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        (
            pd.DataFrame({"query_id": ["1"], "doc_id": ["d"]}),
            "DataFrame: a qrels DataFrame needs query_id, doc_id, relevance (or another layout: evalwh "
            "and ir_measures: query_id, doc_id, relevance; PyTerrier: qid, docno, label); found "
            "columns [query_id, doc_id], missing relevance",
        ),
        (
            pd.DataFrame({"query_id": [], "doc_id": [], "relevance": []}),
            "DataFrame: the DataFrame holds no qrels rows",
        ),
        (
            pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1, float("nan")]}),
            "DataFrame:2: relevance nan is not a number",
        ),
        (
            pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": ["high"]}),
            "DataFrame:1: relevance 'high' is not a number",
        ),
        (
            pd.DataFrame(
                {"query_id": ["1", "2", "1"], "doc_id": ["a", "a", "a"], "relevance": [1, 0, 0]}
            ),
            "DataFrame:3: document 'a' is judged twice for topic '1' (first on row 1)",
        ),
    ],
)
def test_bad_qrels_frames(wh, snapshot, frame, message):
    before = snapshot(wh)
    with pytest.raises(IngestError) as caught:
        wh.ingest_qrels(frame, collection="c")
    assert str(caught.value) == message
    assert snapshot(wh) == before


# -- run metadata ---------------------------------------------------------------------------


def test_run_metadata(wh, tmp_path):
    wh.ingest_runs(
        [write(tmp_path, "a.txt", RUN), write(tmp_path, "b.txt", "1 Q0 x 1 1 s\n")], collection="c"
    )
    table = "runtag\tgroup\ttype\tjudged_pooled\nr\tg1\tautomatic\t1\ns\tg2\tmanual\tno\nzz\tg3\tmanual\t0\n"
    path = write(tmp_path, "runs.tsv", table)
    with pytest.raises(IngestError) as caught:
        wh.ingest_run_metadata(path, collection="c")
    assert str(caught.value) == (
        f"{path}:4: run 'zz' is not in collection 'c' (ingest it first, or allow unknown runs to skip such rows)"
    )
    assert wh.ingest_run_metadata(path, collection="c", allow_unknown_runs=True) == 2
    assert wh.con.execute(
        "SELECT run_id, group_name, run_type, pooled FROM runs ORDER BY 1"
    ).fetchall() == [
        ("r", "g1", "automatic", True),
        ("s", "g2", "manual", False),
    ]
    # a frame with only some columns keeps the others
    frame = pd.DataFrame({"run_id": ["s"], "type": ["automatic"]})
    assert wh.ingest_run_metadata(frame, collection="c") == 1
    assert wh.con.execute(
        "SELECT group_name, run_type, pooled FROM runs WHERE run_id = 's'"
    ).fetchall() == [("g2", "automatic", False)]


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ("name\tgroup\nr\tg\n", ":1: no run id column (run_id or runtag) among ['name', 'group']"),
        ("run_id\tpooled\nr\t1\ns\tmaybe\n", ":3: pooled flag 'maybe' is not 1/0 or true/false"),
    ],
)
def test_bad_run_metadata(wh, snapshot, tmp_path, table, problem):
    wh.ingest_runs(write(tmp_path, "a.txt", RUN), collection="c")
    before = snapshot(wh)
    path = write(tmp_path, "runs.tsv", table)
    with pytest.raises(IngestError) as caught:
        wh.ingest_run_metadata(path, collection="c")
    assert str(caught.value) == f"{path}{problem}"
    assert snapshot(wh) == before


def test_run_metadata_needs_the_collection(wh, tmp_path):
    with pytest.raises(NotFoundError) as caught:
        wh.ingest_run_metadata(write(tmp_path, "runs.tsv", "run_id\nr\n"), collection="zz")
    assert (
        str(caught.value)
        == "no collection 'zz' in :memory: (collections: none yet; ingest qrels or runs first)"
    )


# -- a second writer ------------------------------------------------------------------------


def test_second_process_gets_a_clear_lock_message(tmp_path):
    db = tmp_path / "busy.duckdb"
    Warehouse(db).close()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import sys, time
                from evalwh.warehouse import Warehouse
                wh = Warehouse({str(db)!r})
                print("ready", flush=True)
                sys.stdin.read()
                """
            ),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        expected = (
            f"{db}: the warehouse is in use by another process (process {holder.pid}); "
            "wait for it to finish, or use another --db file"
        )
        with pytest.raises(WarehouseLockedError) as caught:
            Warehouse(db)
        assert str(caught.value) == expected
        with pytest.raises(WarehouseLockedError):
            Warehouse(db, read_only=True)
    finally:
        holder.communicate("", timeout=30)
    Warehouse(db).close()  # free again


# -- hypothesis: the parser agrees with a reference ----------------------------------------

_SEPARATOR = re.compile(rb"[ \t\x0b\x0c]+")


def reference_parse(
    data: bytes, *, one_tag: bool = True
) -> tuple[list[tuple[str, str, str, float]] | None, int | None]:
    """The run-file rules, written plainly: (rows, None) if accepted, else (None, bad line).

    Lines end at \\n; one \\r before it is dropped; a line starting with '#' or holding only
    whitespace is skipped; fields split on runs of space, tab, vertical tab and form feed.
    The bad line is None when the file is rejected as a whole (no data lines).
    """
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    rows: list[tuple[str, str, str, float]] = []
    seen: set[tuple[str, str]] = set()
    tag = None
    for number, line in enumerate(lines, start=1):
        if line.endswith(b"\r"):
            line = line[:-1]
        if number == 1 and line.startswith(b"\xef\xbb\xbf"):
            line = line[3:]
        if b"\r" in line or b"\x00" in line:
            return None, number
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            return None, number
        if line.startswith(b"#") or not line.strip(b" \t\x0b\x0c"):
            continue
        fields = [f.decode() for f in _SEPARATOR.split(line.strip(b" \t\x0b\x0c"))]
        if len(fields) != 6:
            return None, number
        query_id, _, doc_id, rank, score_text, line_tag = fields
        try:
            score = float(score_text)
        except ValueError:
            return None, number
        # the documented forms only: Python's float() also reads 1_000 and " 1", DuckDB's cast 1_000
        if re.fullmatch(r"[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?", score_text) is None:
            return None, number
        if not math.isfinite(score):
            return None, number
        if tag is None:
            tag = line_tag
        elif one_tag and line_tag != tag:
            return None, number
        if (query_id, doc_id) in seen:
            return None, number
        seen.add((query_id, doc_id))
        rows.append((query_id, doc_id, rank, score))
    if not rows:
        return None, None
    return rows, None


_TOKENS = st.sampled_from(["401", "402", "Q0", "d1", "d2", "D1", "d#", "é", "x\xa0y", "0", "1"])
_SCORES = st.sampled_from(
    [
        "1",
        "-2.5",
        "1e-3",
        "9.998186e-02",
        "+3",
        ".5",
        "5.",
        "-0",
        "0",
        "1E5",
        "00012",
        "1_000",
        "nan",
        "inf",
        "-Infinity",
        "abc",
        "1,5",
        "+-5",
        "1e400",
        "0x10",
        "1__0",
        "\u0663",
        "",
    ]
)


@st.composite
def _line(draw: st.DrawFn, separator: bytes) -> bytes:
    kind = draw(
        st.sampled_from(
            ["good"] * 8 + ["fields", "comment", "blank", "hash", "bytes", "pad", "tag"]
        )
    )
    if kind == "comment":
        return b"#" + draw(st.sampled_from([b"", b" note", b"401 Q0 d1 1 1 r"]))
    if kind == "blank":
        return draw(st.sampled_from([b"", b" ", b"\t", separator * 3, b"\x0b"]))
    if kind == "bytes":
        return draw(
            st.sampled_from([b"401 Q0 d\x001 1 1 r", b"401 Q0 d1 1 1 r\r401", b"401 Q0 \xff 1 1 r"])
        )
    fields = [
        draw(st.sampled_from(["401", "402", "7"])),
        "Q0",
        draw(st.sampled_from(["d1", "d2", "d3", "D1", "d#1", "é", "a" * 20])),
        draw(st.sampled_from(["1", "0", "-3", "x"])),
        draw(_SCORES)
        if kind != "good" or draw(st.booleans())
        else draw(st.sampled_from(["1", "2.5", "-1"])),
        "r" if kind != "tag" else draw(st.sampled_from(["r", "s"])),
    ]
    if kind == "fields":
        if draw(st.booleans()):
            del fields[draw(st.integers(0, 5))]
        else:
            fields.insert(draw(st.integers(0, 6)), draw(_TOKENS))
    if kind == "hash":
        fields[draw(st.integers(1, 5))] = "#"
    parts = (
        [f.encode() for f in fields if f != ""] if kind != "good" else [f.encode() for f in fields]
    )
    if kind == "pad":
        seps = [draw(st.sampled_from([b" ", b"\t", b"  ", b" \t", b"\x0c"])) for _ in parts]
        line = b"".join(p + s for p, s in zip(parts, seps, strict=True))
        return draw(st.sampled_from([b"", b" ", b"\t"])) + line
    return separator.join(parts)


@st.composite
def _run_file(draw: st.DrawFn) -> bytes:
    separator = draw(st.sampled_from([b" ", b"\t"]))
    lines = draw(st.lists(_line(separator), max_size=10))
    ending = draw(st.sampled_from([b"\n", b"\r\n"]))
    data = ending.join(lines)
    if lines and draw(st.booleans()):
        data += ending
    return data


_HYPOTHESIS_WH = Warehouse(":memory:")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=_run_file(), compressed=st.booleans())
def test_random_run_files_are_accepted_exactly_when_the_reference_accepts_them(
    tmp_path_factory, data, compressed
):
    directory = tmp_path_factory.mktemp("runs", numbered=True)
    path = write(directory, "run.txt.gz" if compressed else "run.txt", data)
    rows, bad_line = reference_parse(data)
    collection = directory.name
    try:
        _HYPOTHESIS_WH.ingest_runs(path, collection=collection)
    except IngestError as error:
        assert rows is None, f"rejected, but the reference accepts it: {error}"
        assert error.line == bad_line, f"{error} (reference: line {bad_line})"
        assert error.path == str(path)
    else:
        assert rows is not None, f"accepted, but the reference rejects line {bad_line}"
        stored = _HYPOTHESIS_WH.con.execute(
            "SELECT query_id, doc_id, rank_given, score FROM run_results WHERE collection_id = ? ORDER BY ALL",
            [collection],
        ).fetchall()
        assert stored == sorted(rows)


@settings(max_examples=80, deadline=None)
@given(data=_run_file())
def test_random_qrels_agree_with_the_reference(tmp_path_factory, data):
    """The same random lines as qrels: four fields, an integer grade (the run's rank column)."""
    directory = tmp_path_factory.mktemp("qrels", numbered=True)
    # keep qid, iter, docid and the rank column: a qrels line with an odd grade now and then
    qrels = b"\n".join(
        b" ".join(fields[:3] + fields[3:4])
        if len(fields := _SEPARATOR.split(line.strip())) >= 4
        else line
        for line in data.split(b"\n")
    )
    path = write(directory, "qrels.txt", qrels)
    expected_line = _reference_qrels(qrels)
    try:
        _HYPOTHESIS_WH.ingest_qrels(path, collection=directory.name)
    except IngestError as error:
        assert expected_line is not False, f"rejected, but the reference accepts it: {error}"
        assert error.line == expected_line
    else:
        assert expected_line is False
        stored = _HYPOTHESIS_WH.con.execute(
            "SELECT query_id, iteration, doc_id, relevance FROM qrels WHERE collection_id = ?"
            " ORDER BY ALL",
            [directory.name],
        ).fetchall()
        assert stored == sorted(_reference_qrels_rows(qrels))


def _reference_qrels_rows(data: bytes) -> list[tuple[str, str, str, float]]:
    """The rows of an accepted qrels file: each line split on any run of whitespace."""
    rows = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        line = line.removesuffix(b"\r")
        if number == 1:
            line = line.removeprefix(b"\xef\xbb\xbf")
        if line.startswith(b"#") or not line.strip(b" \t\x0b\x0c"):
            continue
        query, iteration, doc, grade = _SEPARATOR.split(line.strip(b" \t\x0b\x0c"))
        rows.append((query.decode(), iteration.decode(), doc.decode(), float(grade)))
    return rows


def _reference_qrels(data: bytes) -> int | None | bool:
    """False if accepted, else the bad line number (None when the file has no qrels lines)."""
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    seen = set()
    count = 0
    for number, line in enumerate(lines, start=1):
        if line.endswith(b"\r"):
            line = line[:-1]
        if b"\r" in line or b"\x00" in line:
            return number
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            return number
        if line.startswith(b"#") or not line.strip(b" \t\x0b\x0c"):
            continue
        fields = _SEPARATOR.split(line.strip(b" \t\x0b\x0c"))
        # a grade is a decimal number, fractional ones too (schema/012_float_grades.sql)
        if len(fields) != 4 or not re.fullmatch(rb"[+-]?([0-9]{1,9}(\.[0-9]*)?|\.[0-9]+)", fields[3]):
            return number
        if (fields[0], fields[2]) in seen:
            return number
        seen.add((fields[0], fields[2]))
        count += 1
    return False if count else None


# -- hypothesis: ranks equal a pure-Python sort -------------------------------------------


def _float32(value: float) -> float:
    return struct.unpack("f", struct.pack("f", value))[0]


def reference_ranks(
    rows: list[tuple[str, str, float]], *, float32: bool = False
) -> dict[tuple[str, str], int]:
    """trec_eval's order per topic: score descending, then docno descending byte-wise."""
    ranks: dict[tuple[str, str], int] = {}
    for query in {q for q, _, _ in rows}:
        ranked = sorted(
            (r for r in rows if r[0] == query),
            key=lambda r: (_float32(r[2]) if float32 else r[2], r[1].encode()),
            reverse=True,
        )
        ranks.update({(q, d): i for i, (q, d, _) in enumerate(ranked, start=1)})
    return ranks


_DOCS = st.sampled_from(
    [
        "a",
        "b",
        "B",
        "Z",
        "z",
        "é",
        "e",
        "ée",
        "a1",
        "a10",
        "a2",
        "FBIS3-1",
        "FBIS3-10",
        "ﬁ",
        "\u00a0",
    ]
)
_TIED_SCORES = st.sampled_from(
    [0.0, -0.0, 1.0, 1.5, -2.0, 1e-9, 1.0000000001, 16777217.0, 16777216.0]
)


# 40 examples of up to 30 lines with 9 scores: ties (and 16777216 against 16777217, equal
# as float32) come in nearly every example; hypothesis draws new examples on every run.
@settings(max_examples=40, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.sampled_from(["1", "2"]), _DOCS, _TIED_SCORES),
        max_size=30,
        unique_by=lambda r: r[:2],
    ),
    seed=st.integers(0, 2**16),
)
def test_ranks_equal_a_python_sort_with_heavy_ties(tmp_path_factory, rows, seed):
    if not rows:
        return
    directory = tmp_path_factory.mktemp("ranks", numbered=True)
    shuffled = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]).sample(
        frac=1, random_state=seed
    )
    text = "".join(
        f"{q} Q0 {d} {i} {s!r} run\n"
        for i, (q, d, s) in enumerate(shuffled.itertuples(index=False))
    )
    path = write(directory, "run.txt", text)
    collection = directory.name
    _HYPOTHESIS_WH.ingest_runs(path, collection=collection)
    _HYPOTHESIS_WH.ingest_runs(shuffled, collection=collection, run_id="frame")
    stored = _HYPOTHESIS_WH.con.execute(
        "SELECT run_id, query_id, doc_id, rank FROM run_results WHERE collection_id = ?",
        [collection],
    ).fetchall()
    expected = reference_ranks(rows)
    assert {(q, d): r for run, q, d, r in stored if run == "run"} == expected
    assert {(q, d): r for run, q, d, r in stored if run == "frame"} == expected
    _HYPOTHESIS_WH.con.execute(
        "CREATE OR REPLACE TEMP TABLE float32_source AS SELECT collection_id, run_id, query_id, doc_id, score"
        " FROM run_results WHERE collection_id = $c AND run_id = 'run'",
        {"c": collection},
    )
    float32 = _HYPOTHESIS_WH.con.execute(
        "SELECT query_id, doc_id, rank FROM trec_ranked('float32_source', true)"
    ).fetchall()
    assert {(q, d): r for q, d, r in float32} == reference_ranks(rows, float32=True)


# -- the real data in ../shared -------------------------------------------------------------

TREC8 = DATA / "trec8_adhoc"
needs_trec8 = pytest.mark.skipif(
    not TREC8.exists(), reason="../shared/data/trec8_adhoc is not there"
)


@pytest.fixture(scope="module")
def trec8(trec8_ingest):
    """All of TREC-8 ad hoc (qrels, 129 runs, run metadata), ingested once per session (conftest)."""
    db, results, updated, seconds = trec8_ingest
    warehouse = Warehouse(db, read_only=True)
    yield warehouse, results, updated, seconds
    warehouse.close()


@pytest.mark.slow
@needs_trec8
def test_trec8_counts_match_provenance(trec8):
    wh, results, updated, seconds = trec8
    print(f"TREC-8: 129 runs ingested in {seconds:.1f} s")
    assert len(results) == 129 and {r.status for r in results} == {"ingested"}
    assert sum(r.lines for r in results) == 6_284_293
    assert updated == 129
    assert wh.collections().drop(columns="collection_id").values.tolist() == [
        [50, 86_830, 4_728, 129, 1, "default"]
    ]
    assert wh.con.execute(
        "SELECT count(DISTINCT doc_id), count(*) FILTER (WHERE relevance = 0) FROM qrels"
    ).fetchall() == [(65_506, 82_102)]
    per_topic = wh.con.execute(
        "SELECT min(c), max(c), min(r), max(r) FROM (SELECT count(*) AS c,"
        " count(*) FILTER (WHERE relevance > 0) AS r FROM qrels GROUP BY query_id)"
    ).fetchall()
    assert per_topic == [(1_046, 2_992, 6, 347)]
    runs = wh.runs("trec8").set_index("run_id")
    assert (runs["topics"] == 50).all()
    assert runs.loc[["READWARE", "READWARE2", "1"], "docs"].tolist() == [3_060, 5_785, 31_340]
    assert (runs.drop(index=["READWARE", "READWARE2", "1"])["max_depth"] == 1000).all()
    assert wh.con.execute(
        "SELECT count(*) FILTER (WHERE pooled), count(*) FILTER (WHERE NOT pooled), count(DISTINCT group_name),"
        " count(*) FILTER (WHERE run_type = 'automatic'), count(*) FILTER (WHERE run_type = 'manual') FROM runs"
    ).fetchall() == [(71, 58, 41, 116, 13)]


@pytest.mark.slow
@needs_trec8
def test_trec8_ranks_reproduce_the_official_pool(trec8):
    """PROVENANCE.md: the judged pairs are exactly the union of the pooled runs' top 100 in
    trec_eval's order (by rank column or file order, thousands of pairs differ)."""
    wh = trec8[0]
    differences = wh.con.execute(
        """
        WITH pool AS (
            SELECT DISTINCT r.query_id, r.doc_id
            FROM run_results AS r JOIN runs AS s USING (collection_id, run_id)
            WHERE s.pooled AND r.rank <= 100
        ),
        judged AS (SELECT query_id, doc_id FROM qrels)
        SELECT
            (SELECT count(*) FROM pool),
            (SELECT count(*) FROM (SELECT * FROM pool EXCEPT SELECT * FROM judged)),
            (SELECT count(*) FROM (SELECT * FROM judged EXCEPT SELECT * FROM pool))
        """
    ).fetchall()
    assert differences == [(86_830, 0, 0)]


@pytest.mark.slow
@needs_trec8
def test_trec8_unsorted_kdd_run_and_scientific_scores(trec8):
    wh = trec8[0]
    # kdd8ps16: scientific-notation scores, not sorted in the file, rank column from 0
    top = wh.con.execute(
        "SELECT doc_id, score, rank_given, rank FROM run_results WHERE run_id = 'kdd8ps16' AND query_id = '401'"
        " AND rank <= 2 ORDER BY rank"
    ).fetchall()
    scores = wh.con.execute(
        "SELECT max(score), count(*) FROM run_results WHERE run_id = 'kdd8ps16' AND query_id = '401'"
    ).fetchall()
    assert top[0][1] == scores[0][0] and [r[3] for r in top] == [1, 2]
    assert (
        wh.con.execute(
            "SELECT count(*) FROM run_results WHERE run_id = 'kdd8ps16' AND rank_given = '0'"
        ).fetchall()[0][0]
        > 0
    )


ANSERINI = DATA / "anserini_qrels"
# file: topics, judgments, distinct docs, {grade: count}   (anserini_qrels/PROVENANCE.md)
ANSERINI_COUNTS = {
    "qrels.dl19-passage.txt": (43, 9_260, 9_139, {0: 5_158, 1: 1_601, 2: 1_804, 3: 697}),
    "qrels.dl20-passage.txt": (54, 11_386, 11_224, {0: 7_780, 1: 1_940, 2: 1_020, 3: 646}),
    "qrels.dl19-doc.txt": (43, 16_258, 16_043, {0: 9_661, 1: 4_607, 2: 1_149, 3: 841}),
    "qrels.dl20-doc.txt": (45, 9_098, 9_087, {0: 7_331, 1: 1_187, 2: 315, 3: 265}),
    "qrels.msmarco-passage.dev-subset.txt": (6_980, 7_437, 7_433, {1: 7_437}),
    "qrels.covid-complete.txt": (50, 69_318, 37_924, {-1: 2, 0: 42_652, 1: 11_055, 2: 15_609}),
    "qrels.covid-round5.txt": (50, 23_151, 17_825, {-1: 2, 0: 12_239, 1: 4_233, 2: 6_677}),
    "qrels.core17.txt": (50, 30_030, 29_080, {0: 21_028, 1: 5_549, 2: 3_453}),
    "qrels.core18.txt": (50, 26_233, 24_642, {0: 22_285, 1: 2_083, 2: 1_865}),
    "qrels.robust05.txt": (50, 37_798, 33_660, {0: 31_237, 1: 3_771, 2: 2_790}),
    "qrels.adhoc.351-400.txt": (50, 80_345, 60_623, {0: 75_671, 1: 4_674}),
}


@pytest.mark.slow
@pytest.mark.skipif(not ANSERINI.exists(), reason="../shared/data/anserini_qrels is not there")
def test_anserini_qrels_counts_match_provenance(wh):
    for name, (topics, judgments, docs, grades) in ANSERINI_COUNTS.items():
        result = wh.ingest_qrels(ANSERINI / name, collection=name)
        assert result.lines == judgments, name
        counts = wh.con.execute(
            "SELECT count(DISTINCT query_id), count(*), count(DISTINCT doc_id) FROM qrels WHERE collection_id = ?",
            [name],
        ).fetchall()
        assert counts == [(topics, judgments, docs)], name
        by_grade = dict(
            wh.con.execute(
                "SELECT relevance, count(*) FROM qrels WHERE collection_id = ? GROUP BY 1", [name]
            ).fetchall()
        )
        assert by_grade == grades, name
    assert len(wh.collections()) == len(ANSERINI_COUNTS)


def test_scan_finds_the_fast_delimiter(tmp_path):
    assert formats.scan(write(tmp_path, "t", "a\tb\r\n")).fast_delimiter == "\t"
    assert formats.scan(write(tmp_path, "s", "a b\n")).fast_delimiter == " "
    assert formats.scan(write(tmp_path, "m", "a b\tc\n")).fast_delimiter is None
    assert formats.scan(write(tmp_path, "v", "a\x0bb\n")).fast_delimiter is None
    assert not formats.scan(write(tmp_path, "crlf", b"a b\r\nc d\r")).unreadable
    assert formats.scan(write(tmp_path, "cr", b"a b\rc d\n")).unreadable
    assert formats.scan(write(tmp_path, "nul", b"a\x00b\n")).unreadable


def test_scan_carries_a_crlf_across_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(formats, "_CHUNK", 4)
    assert not formats.scan(write(tmp_path, "crlf", b"abc\r\ndef\r\n")).unreadable
    assert formats.scan(write(tmp_path, "cr", b"abc\rdef\r\n")).unreadable
    assert formats.scan(write(tmp_path, "cr2", b"abc\r\r\n")).unreadable
