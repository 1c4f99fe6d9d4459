"""ir_metadata blocks at the top of run files (evalwh/io/ir_metadata.py).

A run with a block ingests, shows its metadata in ``runs`` and SQL, exports and imports with
it, and evaluates byte-identically to the same run without the block: in the warehouse, on
the direct path and through ``evalwh trec_eval`` (trec_eval 10 skips a line whose first
character that is not whitespace is ``#``: get_trec_results.c).
"""

from __future__ import annotations

import gzip
import json

import pytest
from evalwh.cli import app
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from evalwh import Warehouse
from evalwh.errors import IngestError
from evalwh.io import ir_metadata

BLOCK = """# ir_metadata.start
# tag: bm25-rm3
# research goal:
#   venue:
#     name: SIGIR
# actor:
#   team: evalwh
#   name: A. Assessor
# method:
#   automatic: true
#   retrieval:
#     - name: bm25
#       method: org.terrier.matching.models.BM25
#       k1: 1.2
#
#   indexing:
#     stemmer: porter
# implementation:
#   source:
#     repository: https://example.org/evalwh
#     commit: 0a1b2c3
# data:
#   test collection:
#     name: tiny
# platform:
#   software:
#     retrieval toolkit: [pyterrier==1.1.2]
# ir_metadata.end
"""
QRELS = "1 0 a 2\n1 0 b 0\n1 0 c 1\n2 0 d 1\n2 0 e -1\n"
RUN = "1 Q0 a 1 3.0 bm25-rm3\n1 Q0 c 2 2.0 bm25-rm3\n1 Q0 x 3 2.0 bm25-rm3\n2 Q0 e 1 5.0 bm25-rm3\n2 Q0 d 2 1.0 bm25-rm3\n"
runner = CliRunner()


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "plain").write_text(RUN)
    (tmp_path / "with-block").write_text(BLOCK + RUN)
    return tmp_path


def invoke(*args):
    out = runner.invoke(app, list(args), env={"COLUMNS": "200"})
    return out


def test_block_read_and_shown(files):
    db = str(files / "w.duckdb")
    assert invoke("--db", db, "ingest", "qrels", str(files / "qrels"), "-c", "c").exit_code == 0
    out = invoke("--db", db, "ingest", "runs", str(files / "with-block"), "-c", "c")
    assert out.exit_code == 0, out.output
    with Warehouse.open_reader(db) as wh:
        row = wh.con.execute(
            "SELECT run_id, tag, team, actor, automatic, method, test_collection, repository, commit, venue"
            " FROM run_ir_metadata_fields"
        ).fetchall()
        ((metadata, lines),) = wh.con.execute(
            "SELECT metadata, block_lines FROM run_ir_metadata"
        ).fetchall()
    assert row == [("bm25-rm3", "bm25-rm3", "evalwh", "A. Assessor", True, "bm25", "tiny",
                    "https://example.org/evalwh", "0a1b2c3", "SIGIR")]  # fmt: skip
    assert lines == 28
    assert json.loads(metadata)["platform"] == {
        "software": {"retrieval toolkit": ["pyterrier==1.1.2"]}
    }
    assert list(json.loads(metadata)) == list(ir_metadata.KEYS[:1]) + [
        "research goal",
        "actor",
        "method",
        "implementation",
        "data",
        "platform",
    ]
    listed = invoke("--db", db, "runs", "--format", "json")
    (run,) = [json.loads(line) for line in listed.stdout.splitlines()]  # JSON lines
    assert (run["ir_method"], run["ir_team"]) == ("bm25", "evalwh")
    assert json.loads(run["ir_metadata"]) == json.loads(metadata)


def test_evaluates_the_same_with_and_without_the_block(files):
    """Byte-identical output: warehouse, direct path, evalwh trec_eval."""
    measures = ["-m", "all_trec"]
    qrels = str(files / "qrels")
    outputs = {}
    for name in ("plain", "with-block"):
        db = str(files / f"{name}.duckdb")
        invoke("--db", db, "ingest", "qrels", qrels, "-c", "c")
        assert invoke("--db", db, "ingest", "runs", str(files / name), "-c", "c").exit_code == 0
        stored = invoke("--db", db, "eval", *measures, "-q", "--format", "csv")
        direct = invoke(
            "eval", "--qrels", qrels, str(files / name), *measures, "-q", "--format", "csv"
        )
        trec = invoke("trec_eval", "-q", "-c", "-m", "all_trec", qrels, str(files / name))
        assert stored.exit_code == direct.exit_code == trec.exit_code == 0
        outputs[name] = (stored.stdout, direct.stdout, trec.stdout)
    assert outputs["plain"] == outputs["with-block"]
    assert "bm25-rm3" in outputs["plain"][2]


def test_export_and_import_keep_it(files):
    db, copy = str(files / "w.duckdb"), str(files / "copy.duckdb")
    invoke("--db", db, "ingest", "qrels", str(files / "qrels"), "-c", "c")
    invoke("--db", db, "ingest", "runs", str(files / "with-block"), "-c", "c")
    assert invoke("--db", db, "export", str(files / "out")).exit_code == 0
    assert invoke("--db", copy, "import", str(files / "out")).exit_code == 0
    with Warehouse.open_reader(db) as a, Warehouse.open_reader(copy) as b:
        query = "SELECT * FROM run_ir_metadata_fields"
        assert a.con.execute(query).fetchall() == b.con.execute(query).fetchall() != []


def test_replace_drops_the_old_block_and_gzip_is_read(files):
    with gzip.open(files / "with-block.gz", "wt") as handle:
        handle.write(BLOCK.replace("tag: bm25-rm3", "tag: other") + RUN)
    with Warehouse(":memory:") as wh:
        wh.ingest_runs(files / "with-block", collection="c")
        wh.ingest_runs(files / "with-block.gz", collection="c", replace=True)
        assert wh.con.execute("SELECT tag FROM run_ir_metadata_fields").fetchall() == [("other",)]
        wh.ingest_runs(
            files / "plain", collection="c", replace=True
        )  # the same lines: but no block
        assert wh.con.execute("SELECT count(*) FROM run_ir_metadata").fetchall() == [(0,)]


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        (
            "# ir_metadata.start\n# tag: x\n" + RUN,
            3,
            "the ir_metadata block opened on line 1 ends without '# ir_metadata.end'",
        ),
        # the first line that is not a comment is the first run line: its fields are checked first
        (
            "# ir_metadata.start\n# tag: x\ntag: y\n# ir_metadata.end\n" + RUN,
            3,
            "expected 6 fields, found 2",
        ),
        (
            "# ir_metadata.start\n# tag: x\n# method: [a\n# ir_metadata.end\n" + RUN,
            3,
            "ir_metadata block: YAML: expected ',' or ']'",
        ),
        (
            "# ir_metadata.start\n# - a\n# - b\n# ir_metadata.end\n" + RUN,
            2,
            "ir_metadata block: the YAML is a list, not a mapping",
        ),
    ],
)
def test_malformed_block_is_one_line(files, text, line, problem):
    bad = files / "bad.txt"
    bad.write_text(text.replace("bm25-rm3", "bad"))
    db = files / "w.duckdb"
    invoke("--db", str(db), "ingest", "runs", str(files / "plain"), "-c", "c")
    out = invoke(
        "--db", str(db), "ingest", "runs", str(files / "plain"), str(bad), "-c", "c", "--replace"
    )
    assert out.exit_code == 1
    (message,) = out.output.strip().splitlines()
    assert message.startswith(f"Error: {bad}:{line}: {problem}"), message
    with Warehouse.open_reader(db) as wh:  # nothing of the command stays
        assert wh.con.execute("SELECT count(*) FROM run_ir_metadata").fetchall() == [(0,)]


def test_not_at_the_top_is_a_comment(files):
    """A block below the first line is comments, not metadata (as trec_eval reads it)."""
    later = files / "later.txt"
    later.write_text(
        RUN.splitlines(keepends=True)[0] + BLOCK + "".join(RUN.splitlines(keepends=True)[1:])
    )
    with Warehouse(":memory:") as wh:
        wh.ingest_runs(later, collection="c")
        assert wh.con.execute("SELECT count(*) FROM run_ir_metadata").fetchall() == [(0,)]
        assert wh.con.execute("SELECT count(*) FROM run_results").fetchall() == [(5,)]


_text = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp")), max_size=12
)
_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(_text, _values, max_size=4))
def test_any_mapping_round_trips(tmp_path_factory, metadata):
    """A block written from any mapping reads back to it; the reader starts right after it."""
    import yaml

    text = yaml.safe_dump(metadata, sort_keys=False, allow_unicode=True)
    block = (
        "# ir_metadata.start\n"
        + "".join(f"# {line}\n" for line in text.splitlines())
        + "# ir_metadata.end\n"
    )
    path = tmp_path_factory.mktemp("rt") / "run.txt"
    path.write_bytes((block + RUN).encode())
    read = ir_metadata.read_block(path)
    assert read is not None
    assert read.metadata == (metadata or {})
    assert read.lines == block.count("\n")
    assert path.read_bytes()[read.end :] == RUN.encode()
    assert ir_metadata.skip_block(path.read_bytes()) == read.end


def test_skip_block_needs_the_whole_frame():
    block = b"# ir_metadata.start\r\n# a: 1\n# ir_metadata.end  \n"
    assert ir_metadata.skip_block(block + b"1 Q0 a 1 1 r\n") == len(block)
    assert ir_metadata.skip_block(b"\xef\xbb\xbf" + block) == len(block) + 3
    assert ir_metadata.skip_block(b"# ir_metadata.started\n# ir_metadata.end\n") == 0
    assert ir_metadata.skip_block(b"# ir_metadata.start\n# a: 1\n") == 0  # no end
    assert ir_metadata.skip_block(b"# ir_metadata.start\na: 1\n# ir_metadata.end\n") == 0
    assert ir_metadata.skip_block(b"1 Q0 a 1 1 r\n") == 0


def test_read_block_of_a_file_without_one(files):
    assert ir_metadata.read_block(files / "plain") is None
    (files / "x").write_bytes(b"# ir_metadata.start\n# \xff\n# ir_metadata.end\n")
    with pytest.raises(IngestError, match=r"x:2: the line is not valid UTF-8 \(byte 3\)"):
        ir_metadata.read_block(files / "x")
    (files / "y").write_bytes(b"# ir_metadata.start\n# tag: x\n")  # (the ingest says: no run lines)
    with pytest.raises(
        IngestError, match="y:1: the ir_metadata block opened here has no '# ir_metadata.end' line"
    ):
        ir_metadata.read_block(files / "y")


def test_report_shows_the_method(tmp_path):
    """The report's leaderboard has a method column when runs carry ir_metadata blocks."""
    from evalwh.io.demo_data import write_demo

    demo = write_demo(tmp_path / "demo")
    with Warehouse(":memory:") as wh:
        wh.ingest_qrels(demo.qrels, collection="d")
        for run, method in zip(demo.runs[:3], ["BM25", "BM25", "dense"], strict=True):
            block = (
                f"# ir_metadata.start\n# method:\n#   score_function: {method}\n# ir_metadata.end\n"
            )
            (tmp_path / run.name).write_text(block + run.read_text())
            wh.ingest_runs(tmp_path / run.name, collection="d")
        text = wh.report(None, format="md", resamples=99, bounds=False)
    header = next(line for line in text.splitlines() if line.startswith("| # | run |"))
    assert header.startswith("| # | run | method | ")  # then the measures
    rows = [line.split(" | ") for line in text.splitlines()[text.splitlines().index(header) + 2 :]]
    methods = {row[1]: row[2] for row in rows[:3]}
    assert methods == {"bm25": "BM25", "bm25_rm3": "BM25", "dense": "dense"}


@pytest.mark.parametrize("piece_bytes", [None, 4096])
def test_the_c_reader_starts_after_the_block(files, monkeypatch, piece_bytes):
    """A file with a block is read by the C reader (whole, or in pieces of 4 KiB, the block
    and whole topics in the first), not by the general path, and stores what the file without
    it stores."""
    from evalwh.io import runreader
    from evalwh.store.ingest import keyed, runs

    if runreader.reader() is None:
        pytest.skip("the C reader is not built")
    lines = "".join(f"{q} Q0 d{d} {d} {100 - d}.5 bm25-rm3\n" for q in range(1, 11) for d in range(40))
    (files / "plain").write_text(lines)
    (files / "with-block").write_text(BLOCK + lines)
    if piece_bytes is not None:
        monkeypatch.setattr(keyed, "PIECE_BYTES", piece_bytes)
        assert len(lines) > 2 * piece_bytes  # read in pieces

    def general(*args, **kwargs):
        raise AssertionError("the general path read the file")

    stored = {}
    for name in ("plain", "with-block"):
        with Warehouse(":memory:") as wh:
            wh.ingest_qrels(files / "qrels", collection="c")
            with monkeypatch.context() as patch:
                patch.setattr(runs, "_ingest_batch", general)
                wh.ingest_runs(files / name, collection="c")
            rows = wh.con.execute("SELECT * FROM run_results ORDER BY ALL").fetchall()
            values = wh.evaluate(["AP", "A_p@2"], collection="c")["value"].tolist()
            stored[name] = (rows, values)
    assert stored["plain"] == stored["with-block"]
    assert len(stored["plain"][0]) == 400
