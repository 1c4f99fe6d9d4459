"""Safety as a property of how connections and files are opened (docs/safety.md).

Read-only SQL cannot write a file, reach the network, load an extension or change a
setting however it is spelled; readers never lock; a failed command leaves everything as it was.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import shutil
import subprocess
import sys
from pathlib import Path

import typer
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
    # the console script's entry, as a user runs `evalwh`
    return [sys.executable, "-c", "from evalwh.__main__ import main; main()", *map(str, args)]


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
        ("relevance", None, "relevance None is not a number"),
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


# -- 2. every output file is whole or absent ------------------------------------------------------


def test_atomic_output_keeps_the_old_file_on_failure(tmp_path):
    from evalwh.io.files import atomic_output, atomic_path

    out = tmp_path / "r.html"
    out.write_text("old")
    for error in (KeyboardInterrupt, OSError, MemoryError):
        with pytest.raises(error), atomic_output(out) as handle:
            handle.write("half")
            raise error
        with pytest.raises(error), atomic_path(out) as part:
            part.write_text("half")
            raise error
    assert out.read_text() == "old" and siblings(out) == ["r.html"]
    with atomic_output(out) as handle:
        handle.write("new")
    assert out.read_text() == "new" and siblings(out) == ["r.html"]


def test_a_killed_writer_leaves_the_old_file_and_the_next_write_cleans_up(db, tmp_path):
    out = tmp_path / "out.csv"
    out.write_text("old\n")
    script = (
        "import sys, time; from evalwh.io.files import atomic_output\n"
        f"with atomic_output({str(out)!r}) as h:\n"
        "    h.write('half'); h.flush(); print('ready', flush=True); time.sleep(60)\n"
    )
    writer = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert writer.stdout.readline() == "ready\n"
    writer.kill()
    writer.communicate()
    assert out.read_text() == "old\n"
    leftover = [n for n in siblings(out) if n.startswith(".out.csv.partial-")]
    assert leftover == [f".out.csv.partial-{writer.pid}.csv"]
    result = invoke("sql", "SELECT 1 AS one", "-f", "csv", "-o", out, "--db", db)
    assert result.exit_code == 0, result.output
    assert out.read_text() == "one\n1\n"
    assert not any(n.startswith(".out.csv.partial-") for n in siblings(out))


def test_export_removes_what_a_killed_export_left(db, tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    left = tmp_path / f".e.partial-{dead.pid}"
    (left / "runs").mkdir(parents=True)
    (left / "runs" / "data_0.parquet").write_bytes(b"PAR1 half")
    result = invoke("export", tmp_path / "e", "--db", db)
    assert result.exit_code == 0, result.output
    assert not left.exists() and (tmp_path / "e" / "manifest.json").is_file()


@pytest.mark.parametrize(
    "command",
    [
        ["sql", "SELECT 1 AS one", "-f", "csv"],
        ["sql", "SELECT 1 AS one", "-f", "parquet"],
        ["sql", "SELECT 1 AS one", "-f", "json"],
        ["sql", "SELECT 1 AS one", "-f", "table"],
        ["eval", "-c", "c", "-m", "AP", "-f", "trec"],
        ["eval", "-c", "c", "-m", "AP"],
        ["report", "-c", "c", "-f", "md"],
        ["plot", "runs", "-c", "c", "--depths", "1,2"],
    ],
    ids=lambda c: " ".join(c[:1] + c[-2:]),
)
def test_every_output_is_renamed_into_place(command, db, tmp_path, monkeypatch):
    """The bytes land in a temporary beside the target, which is renamed over it at the end."""
    from evalwh.io import files

    suffix = {"parquet": ".parquet", "runs": ".png"}.get(command[-1] if command[0] != "plot" else "runs", ".txt")
    out = tmp_path / f"out{suffix}"
    out.write_text("old")
    seen = []
    real = os.replace

    def spy(source, target):
        seen.append((Path(source).name, Path(target).name, Path(target).read_text() if Path(target).exists() else None))
        return real(source, target)

    monkeypatch.setattr(files.os, "replace", spy)
    result = invoke(*command, "-o", out, "--db", db)
    assert result.exit_code == 0, result.output
    assert seen == [(f".out{suffix}.partial-{os.getpid()}{suffix}", out.name, "old")]
    assert out.read_bytes() != b"old" and siblings(out) == sorted(["W.duckdb", out.name])


# -- 3. faults end in one line, exit 1 (130 for Ctrl-C), nothing lost -----------------------------


@pytest.fixture
def full_disk(tmp_path: Path):
    """A small tmpfs, to be filled up by the test (needs root and mount; CI here has both)."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    point = tmp_path / "full"
    point.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(point)], capture_output=True).returncode:
        pytest.skip("this machine cannot mount a tmpfs")
    try:
        yield point
    finally:
        subprocess.run(["umount", "-l", str(point)], check=False)


def fill(folder: Path) -> None:
    """Fill the file system of ``folder`` to the last byte."""
    handle = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        for size in (65536, 1):
            with contextlib.suppress(OSError):  # ENOSPC: full at this write size
                while True:
                    os.write(handle, b"x" * size)
    finally:
        os.close(handle)


def one_line_error(result, text: str = "") -> bool:
    return (
        result.exit_code == 1
        and result.stderr.startswith("Error: ")
        and result.stderr.count("\n") == 1
        and text in result.stderr
        and "Traceback" not in result.output
    )


def test_full_disk_outputs(db, full_disk, tmp_path):
    target = full_disk / "W.duckdb"
    shutil.copy(db, target)
    outputs = {name: full_disk / name for name in ("o.csv", "o.parquet", "o.json", "r.md", "e.txt")}
    for path in outputs.values():
        path.write_text("old")
    fill(full_disk)
    big = "SELECT range AS i, repeat('x', 40) AS s FROM range(200000)"
    for command in (
        ["sql", big, "-f", "csv", "-o", outputs["o.csv"]],
        ["sql", big, "-f", "parquet", "-o", outputs["o.parquet"]],
        ["sql", big, "-f", "json", "-o", outputs["o.json"]],
        ["report", "-c", "c", "-f", "md", "-o", outputs["r.md"]],
        ["eval", "-c", "c", "-m", "AP", "--per-query", "-f", "trec", "-o", outputs["e.txt"]],
        ["export", full_disk / "export"],
    ):
        result = invoke(*command, "--db", target)
        assert one_line_error(result, "the disk is full"), (command, result.output)
    assert all(path.read_text() == "old" for path in outputs.values())
    assert sorted(siblings(target)) == sorted(["W.duckdb", "filler", *outputs])
    assert digest(target) == digest(db)


def test_full_disk_writes_leave_the_warehouse_as_it_was(db, full_disk, tmp_path, snapshot):
    target = full_disk / "W.duckdb"
    shutil.copy(db, target)
    run = tmp_path / "big.txt"
    run.write_text("".join(f"1 Q0 d{i} {i} {1 / i} big\n" for i in range(1, 60001)))
    fill(full_disk)
    with Warehouse(db, read_only=True) as wh:
        before = snapshot(wh)
    for command in (
        ["ingest", "runs", run, "-c", "c"],
        ["sql", "--write", "INSERT INTO qrels SELECT collection_id, qrels_id, query_id, iteration, 'z' || t.i, 0 "
         "FROM qrels, range(100000) AS t(i)"],
    ):
        result = invoke(*command, "--db", target)
        assert one_line_error(result, "the disk is full"), (command, result.output)
    (full_disk / "filler").unlink()
    with Warehouse(target, read_only=True) as wh:
        assert snapshot(wh) == before


def test_a_failed_first_command_leaves_no_warehouse(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("1 Q0 a\n")
    new = tmp_path / "new.duckdb"
    for command in (["ingest", "runs", bad, "-c", "c"], ["ingest", "qrels", bad, "-c", "c"],
                    ["eval", "-c", "c", "--store"], ["sql", "--write", "SELECT error('x')"]):
        result = invoke(*command, "--db", new)
        assert one_line_error(result), (command, result.output)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt"], command


def sigint_as_at_a_terminal() -> None:
    """A child's ``preexec_fn``: SIGINT's default action, whatever this test process inherited.

    Started with SIGINT ignored (a shell's ``pytest &``), a child inherits that, and evalwh
    then takes no interrupt at all (test_probe2's test of that case).
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_during_a_query_exits_130_in_one_line(db):
    process = subprocess.Popen(
        _cli("sql", "SELECT sum(hash(range)) FROM range(100000000000)", "--db", db),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=sigint_as_at_a_terminal,
    )
    import time

    time.sleep(4)  # past the imports: the query is running in DuckDB
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert (process.returncode, out, err) == (130, "", "Interrupted; nothing was committed by the interrupted command.\n")


@pytest.mark.parametrize(
    ("error", "expected", "code"),
    [
        (MemoryError(), "Error: out of memory (MemoryError); the warehouse and the output files are as they were\n", 1),
        (OSError(28, "No space left on device"), "Error: the disk is full (or a file-size limit was reached); the warehouse and the output files are as they were\n", 1),
        (PermissionError(13, "Permission denied", "/x/out.csv"), "Error: Permission denied: /x/out.csv; the warehouse and the output files are as they were\n", 1),
        (RuntimeError("Query interrupted"), "Interrupted; nothing was committed by the interrupted command.\n", 130),
        (KeyboardInterrupt(), "Interrupted; nothing was committed by the interrupted command.\n", 130),
        (ValueError("odd\nsecond line"), "Error: unexpected ValueError: odd (run with --debug for the traceback)\n", 1),
    ],
)
def test_faults_are_one_line(error, expected, code, capsys):
    from evalwh.cli._errors import handle_errors

    @handle_errors
    def command() -> None:
        raise error

    with pytest.raises((SystemExit, typer.Exit)) as caught:
        command()
    exit_code = getattr(caught.value, "exit_code", getattr(caught.value, "code", None))
    assert (exit_code, capsys.readouterr().err) == (code, expected)


def test_duckdb_faults_are_one_line(capsys):
    import duckdb

    from evalwh.cli._errors import handle_errors

    @handle_errors
    def command() -> None:
        duckdb.connect().execute("SELECT error('a\nb')")

    with pytest.raises(typer.Exit):
        command()
    assert capsys.readouterr().err == "Error: DuckDB: Invalid Input Error: a\n"


def test_every_command_goes_through_the_one_error_path():
    import typer.main

    def commands(group, prefix=""):
        for name, command in group.commands.items():
            if hasattr(command, "commands"):
                yield from commands(command, f"{prefix}{name} ")
            else:
                yield f"{prefix}{name}", command.callback

    found = dict(commands(typer.main.get_command(app)))
    assert len(found) >= 30
    unwrapped = [name for name, callback in found.items() if not getattr(callback, "handles_errors", False)]
    assert unwrapped == []


def test_ctrl_c_while_the_cli_starts_is_one_line(monkeypatch, capsys):
    """An interrupt while the CLI's modules import (the console script's first moments)."""
    import sys

    from evalwh.__main__ import main

    class Interrupting:
        def find_spec(self, name, path=None, target=None):  # type: ignore[no-untyped-def]
            if name == "evalwh.cli":
                raise KeyboardInterrupt
            return None

    monkeypatch.delitem(sys.modules, "evalwh.cli", raising=False)
    monkeypatch.setattr(sys, "meta_path", [Interrupting(), *sys.meta_path])
    with pytest.raises(SystemExit) as caught:
        main()
    assert caught.value.code == 130
    assert capsys.readouterr().err == "Interrupted; nothing was changed.\n"


def test_the_command_ends_at_once_with_its_code_and_output(tmp_path):
    """evalwh.__main__ ends a finished command's process itself (no interpreter teardown):
    the output is all there, the exit code is the command's, and a writer's warehouse is
    closed and checkpointed (no WAL left) before."""
    run, qrels, db = tmp_path / "a.run", tmp_path / "q.txt", tmp_path / "w.duckdb"
    run.write_text("1 Q0 d1 1 2.0 a\n1 Q0 d2 2 1.0 a\n2 Q0 d1 1 1.0 a\n")
    qrels.write_text("1 0 d1 1\n1 0 d2 0\n2 0 d1 0\n")
    for command in (["ingest", "qrels", qrels, "-c", "c"], ["ingest", "runs", run, "-c", "c"]):
        done = subprocess.run(_cli(*command, "--db", db), capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        assert not Path(f"{db}.wal").exists()
    out = subprocess.run(
        _cli("eval", "-c", "c", "-m", "P@1", "-m", "AP", "-f", "csv", "--db", db),
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    rows = [line.split(",")[:4] for line in out.stdout.splitlines()]
    assert rows == [
        ["collection_id", "run_id", "measure", "value"],
        ["c", "a", "P@1", "1.0"],
        ["c", "a", "AP", "1.0"],
    ]
    bad = subprocess.run(_cli("eval", "-c", "nope", "--db", db), capture_output=True, text=True, check=False)
    assert bad.returncode == 1
    assert bad.stderr.startswith("Error: ") and bad.stderr.count("\n") == 1
