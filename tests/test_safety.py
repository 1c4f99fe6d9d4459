"""Safety as a property of how connections and files are opened (docs/safety.md).

Read-only SQL cannot write a file, reach the network, load an extension or change a
setting however it is spelled; readers never lock; a failed command leaves everything as it was.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from evalwh import Warehouse
from evalwh.cli import app
from evalwh.errors import IngestError, NotFoundError

QRELS = pd.DataFrame(
    {"query_id": ["1", "1", "1", "2", "2"], "doc_id": ["a", "b", "c", "a", "e"], "relevance": [1, 0, 2, 1, 0]}
)
RUNS = pd.DataFrame(
    {
        "run_id": ["r1"] * 4 + ["r2"] * 3,
        "query_id": ["1", "1", "1", "2", "1", "1", "2"],
        "doc_id": ["a", "x", "c", "e", "c", "a", "a"],
        "score": [5.0, 4.0, 3.0, 1.0, 3.0, 2.0, 1.0],
    }
)

runner = CliRunner()


def invoke(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "W.duckdb"
    with Warehouse(path) as wh:
        wh.ingest_qrels(QRELS, collection="c")
        wh.ingest_runs(RUNS, collection="c")
    return path


def siblings(db: Path) -> list[str]:
    return sorted(p.name for p in db.parent.iterdir())


# -- 1. read-only SQL is enforced by the connection -------------------------------------------

ATTACKS = [
    # the reproduction: sqlglot cannot parse x'41', EXPLAIN ANALYZE runs the COPY
    "EXPLAIN ANALYZE COPY (SELECT 'x' AS x) TO '{db}' (FORMAT csv); SELECT x'41'",
    "EXPLAIN ANALYZE COPY (SELECT 'x' AS x) TO '{db}.wal' (FORMAT csv); SELECT x'41'",
    "EXPLAIN ANALYZE COPY (SELECT 'x' AS x) TO '{dir}/elsewhere.csv' (FORMAT csv); SELECT x'41'",
    "COPY (SELECT 'x' AS x) TO '{db}.wal' (FORMAT csv)",
    "EXPORT DATABASE '{dir}/dump'",
    "SELECT * FROM read_csv('https://example.com/x.csv')",
    "SELECT * FROM read_text('/etc/hostname')",
    "SELECT * FROM sniff_csv('/etc/hostname')",
    "SELECT * FROM glob('/etc/*')",
    "SELECT * FROM sqlite_scan('{dir}/x.db', 't')",
    "SELECT * FROM read_parquet('{db}')",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SET enable_external_access = true",
    "ATTACH '{dir}/other.duckdb' AS o",
    "SELECT 1; x'41'; DELETE FROM runs",
    "CHECKPOINT",
]


@pytest.mark.parametrize("attack", ATTACKS)
def test_read_only_sql_cannot_reach_outside_the_warehouse(attack, db, tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    before, files = digest(db), siblings(db)
    result = invoke("sql", attack.format(db=db, dir=tmp_path), "--db", db)
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("Error: ")
    assert "Traceback" not in result.output
    assert digest(db) == before
    assert siblings(db) == files  # no .wal, no CSV, no export, no other database
    assert list(home.iterdir()) == []  # no ~/.duckdb/extensions


def test_read_only_sql_still_reads(db):
    result = invoke("sql", "SELECT count(*) AS n FROM qrels", "--format", "csv", "--db", db)
    assert (result.exit_code, result.stdout) == (0, "n\n5\n")


def test_inline_sql_may_begin_with_a_comment(db):
    result = invoke("sql", "-- c\nSELECT count(*) AS n FROM qrels WHERE relevance = 1", "-f", "csv", "--db", db)
    assert (result.exit_code, result.stdout) == (0, "n\n2\n")


def qrels_rows(db: Path) -> int:
    with Warehouse(db, read_only=True) as wh:
        return int(wh.con.execute("SELECT count(*) FROM qrels").fetchone()[0])


@pytest.mark.parametrize("inside", ["COMMIT", "ROLLBACK", "BEGIN", "END", "ABORT", "DETACH memory"])
def test_write_refuses_transaction_statements(inside, db):
    result = invoke("sql", "--write", f"DELETE FROM qrels; {inside}; SELECT error('boom')", "--db", db)
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: statement 2 (")
    assert "not allowed" in result.stderr and "Traceback" not in result.output
    assert qrels_rows(db) == 5


def test_write_is_one_transaction(db):
    result = invoke("sql", "--write", "DELETE FROM qrels; SELECT error('boom')", "--db", db)
    assert (result.exit_code, result.stderr) == (1, "Error: Invalid Input Error: boom\n")
    assert qrels_rows(db) == 5
    result = invoke("sql", "--write", "DELETE FROM qrels WHERE doc_id = 'e'; SELECT count(*) AS n FROM qrels", "-f", "csv", "--db", db)
    assert (result.exit_code, result.stdout) == (0, "n\n4\n")
    assert qrels_rows(db) == 4


def test_write_cannot_write_files_or_change_settings(db, tmp_path):
    for statement in (f"COPY qrels TO '{tmp_path}/q.csv'", "SET enable_external_access = true", "INSTALL httpfs"):
        result = invoke("sql", "--write", statement, "--db", db)
        assert result.exit_code == 1, statement
    assert not (tmp_path / "q.csv").exists()


# -- #14 item 4: reads never lock ------------------------------------------------------------------

READERS = [
    ["eval", "-c", "c", "-m", "AP"],
    ["eval", "-c", "c", "-m", "AP", "--per-query", "--format", "trec"],
    ["compare", "-c", "c", "-m", "P", "--depths", "1,2", "r1", "r2"],
    ["collections"],
    ["runs", "-c", "c"],
    ["sql", "SELECT count(*) FROM runs"],
    ["schema"],
    ["unjudged", "-c", "c"],
    ["bounds", "-c", "c", "-m", "P", "--depths", "2"],
    ["pool", "list", "-c", "c"],
]


@pytest.mark.parametrize("command", READERS, ids=lambda c: " ".join(c[:2]))
def test_readers_leave_the_file_untouched_and_create_nothing(command, db, tmp_path):
    before, files = digest(db), siblings(db)
    result = invoke(*command, "--db", db)
    assert result.exit_code == 0, result.output
    assert digest(db) == before and siblings(db) == files
    missing = tmp_path / "missing.duckdb"
    result = invoke(*command, "--db", missing)
    assert (result.exit_code, result.stderr) == (1, f"Error: {missing}: no such warehouse file\n")
    assert not missing.exists() and not Path(f"{missing}.wal").exists()


def test_open_reader_creates_no_file(tmp_path):
    with pytest.raises(NotFoundError):
        Warehouse.open_reader(tmp_path / "none.duckdb")
    assert list(tmp_path.iterdir()) == []


def test_eval_without_the_cache_computes_in_memory(db):
    """A warehouse whose judged-rows cache is empty evaluates read-only with the same numbers."""
    with Warehouse(db) as wh:
        expected = wh.evaluate(["AP", "P@2", "bpref"], collection="c", per_query=True)
        wh.con.execute("DELETE FROM judged_results")
        wh.con.execute("DELETE FROM judged_builds")
        wh.con.execute("CHECKPOINT")
    before = digest(db)
    with Warehouse.open_reader(db) as wh:
        got = wh.evaluate(["AP", "P@2", "bpref"], collection="c", per_query=True)
    pd.testing.assert_frame_equal(got, expected)
    result = invoke("eval", "-c", "c", "-m", "AP", "-f", "csv", "--db", db)
    assert result.exit_code == 0, result.output
    assert digest(db) == before


def _cli(*args: object) -> list[str]:
    return [sys.executable, "-c", "from evalwh.cli import app; app()", *map(str, args)]


def test_four_concurrent_evals_all_succeed(db):
    measures = ["-m", "AP", "-m", "P@2", "-m", "nDCG@3", "-f", "csv", "--per-query"]
    processes = [
        subprocess.Popen(_cli("eval", "-c", "c", *measures, "--db", db), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    outputs = [p.communicate(timeout=120) for p in processes]
    assert [p.returncode for p in processes] == [0, 0, 0, 0], [o[1] for o in outputs]
    assert len({o[0] for o in outputs}) == 1 and "\nc,r2,2,nDCG@3," in outputs[0][0]


def test_a_writer_is_still_exclusive(db, tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 a 1\n")
    hold = f"from evalwh import Warehouse; wh = Warehouse({str(db)!r}); print('ready', flush=True); input()"
    holder = subprocess.Popen([sys.executable, "-c", hold], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "ready\n"
        result = invoke("ingest", "qrels", qrels, "-c", "d", "--db", db)
        assert result.exit_code == 1
        assert "the warehouse is in use by another process" in result.stderr
    finally:
        holder.communicate("\n", timeout=60)


@pytest.fixture
def read_only_mount(tmp_path: Path):
    """A tmpfs remounted read-only (needs root and mount; CI here has both)."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    point = tmp_path / "ro"
    point.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(point)], capture_output=True).returncode:
        pytest.skip("this machine cannot mount a tmpfs")
    try:
        yield point
    finally:
        subprocess.run(["umount", "-l", str(point)], check=False)


def test_eval_on_a_read_only_file_system(db, read_only_mount):
    shutil.copy(db, read_only_mount / "W.duckdb")
    subprocess.run(["mount", "-o", "remount,ro", str(read_only_mount)], check=True)
    target = read_only_mount / "W.duckdb"
    with pytest.raises(OSError):
        (read_only_mount / "probe").write_text("x")
    expected = invoke("eval", "-c", "c", "-m", "AP", "-m", "bpref", "-f", "csv", "--db", db)
    result = invoke("eval", "-c", "c", "-m", "AP", "-m", "bpref", "-f", "csv", "--db", target)
    assert (result.exit_code, result.stdout) == (0, expected.stdout)
    for command in (["compare", "-c", "c", "-m", "P", "--depths", "1,2", "r1", "r2"], ["sql", "SELECT count(*) FROM qrels"], ["runs", "-c", "c"]):
        assert invoke(*command, "--db", target).exit_code == 0, command
    # a writer gets one line, not a traceback
    result = invoke("eval", "-c", "c", "-m", "AP", "--store", "--db", target)
    assert result.exit_code == 1 and result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1


# -- 4. DataFrames and run metadata are as strict as files ------------------------------------


@pytest.mark.parametrize(
    ("column", "value", "problem"),
    [
        ("run_id", None, "run_id is missing (None, NaN or NA)"),
        ("doc_id", None, "doc_id is missing (None, NaN or NA)"),
        ("query_id", float("nan"), "query_id is missing (None, NaN or NA)"),
        ("query_id", pd.NA, "query_id is missing (None, NaN or NA)"),
        ("doc_id", "", "doc_id is empty"),
        ("doc_id", "d 2", "doc_id 'd 2' holds whitespace or a NUL byte, which no TREC file can hold"),
        ("doc_id", "d\n2", "doc_id 'd\\n2' holds whitespace or a NUL byte, which no TREC file can hold"),
        ("doc_id", "d\x002", "doc_id 'd\\x002' holds whitespace or a NUL byte, which no TREC file can hold"),
        ("run_id", "r\t1", "run_id 'r\\t1' holds whitespace or a NUL byte, which no TREC file can hold"),
        ("score", float("inf"), "score inf is not a finite number"),
        ("score", None, "score None is not a finite number"),
    ],
)
def test_run_frames_name_the_bad_row(column, value, problem, wh, snapshot):
    frame = RUNS.astype(object).copy()
    frame.loc[2, column] = value  # the third row: DataFrame:3
    before = snapshot(wh)
    with pytest.raises(IngestError) as caught:
        wh.ingest_runs(frame, collection="c")
    assert str(caught.value) == f"DataFrame:3: {problem}"
    assert snapshot(wh) == before


@pytest.mark.parametrize(
    ("column", "value", "problem"),
    [
        ("doc_id", None, "doc_id is missing (None, NaN or NA)"),
        ("query_id", float("nan"), "query_id is missing (None, NaN or NA)"),
        ("doc_id", "", "doc_id is empty"),
        ("doc_id", "d 2", "doc_id 'd 2' holds whitespace or a NUL byte, which no TREC file can hold"),
        ("relevance", None, "relevance None is not an integer"),
    ],
)
def test_qrels_frames_name_the_bad_row(column, value, problem, wh, snapshot):
    frame = QRELS.astype(object).copy()
    frame.loc[1, column] = value
    before = snapshot(wh)
    with pytest.raises(IngestError) as caught:
        wh.ingest_qrels(frame, collection="c")
    assert str(caught.value) == f"DataFrame:2: {problem}"
    assert snapshot(wh) == before


def test_ids_that_a_file_may_hold_pass(wh):
    """No-break space and other non-ASCII characters are data in a TREC file too."""
    frame = RUNS.assign(doc_id=["a\u00a0b", "é", "ﬁ", "#x", "c", "a", "a"])
    assert [r.lines for r in wh.ingest_runs(frame, collection="c")] == [4, 3]


@pytest.fixture
def metadata_db(db: Path) -> Path:
    return db


@pytest.mark.parametrize(
    ("table", "line", "problem"),
    [
        ("run_id\tgroup\ttype\tpooled\nr1\tg\tmanual\t1\nzz\tg\tmanual\t0\n", 3,
         "run 'zz' is not in collection 'c' (ingest it first, or allow unknown runs to skip such rows)"),
        ("run_id\tgroup\ttype\tpooled\nr1\n", 2, "1 of 4 tab-separated fields (header: run_id, group, type, pooled)"),
        ("run_id\tgroup\ttype\tpooled\nr1\tg\tmanual\t1\textra\n", 2, "5 of 4 tab-separated fields (header: run_id, group, type, pooled)"),
        ("run_id\tgroup\ttype\tpooled\nr1\t\tmanual\t1\n", 2, "no value for group (every row fills every column)"),
        ("run_id\tgroup\ttype\tpooled\nr1\tg\tmanual\t1\nr2\tg\tmanual\t1\nr1\th\tmanual\t1\n", 4,
         "run 'r1' is listed again with different values (first on line 2)"),
    ],
)
def test_bad_run_metadata_names_file_and_line(table, line, problem, metadata_db, tmp_path):
    path = tmp_path / "runs.tsv"
    path.write_text(table)
    before = digest(metadata_db)
    result = invoke("ingest", "run-metadata", path, "-c", "c", "--db", metadata_db)
    assert (result.exit_code, result.stderr) == (1, f"Error: {path}:{line}: {problem}\n")
    assert digest(metadata_db) == before


def test_run_metadata_may_skip_unknown_runs_when_asked(metadata_db, tmp_path):
    path = tmp_path / "runs.tsv"
    path.write_text("run_id\tgroup\ttype\tpooled\nr1\tg\tmanual\t1\nr1\tg\tmanual\t1\nzz\tg\tmanual\t0\n")
    result = invoke("ingest", "run-metadata", path, "-c", "c", "--allow-unknown-runs", "--db", metadata_db)
    assert (result.exit_code, result.stdout) == (0, "metadata set for 1 runs\n")
    with Warehouse(metadata_db, read_only=True) as wh:
        rows = wh.con.execute("SELECT run_id, group_name, run_type, pooled FROM runs ORDER BY 1").fetchall()
    assert rows == [("r1", "g", "manual", True), ("r2", None, None, None)]
