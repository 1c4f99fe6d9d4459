"""evalwh ingest qrels|runs|run-metadata, collections, runs and demo through the command line.

Every error is one line on stderr, ``Error: <file>:<line>: <problem>``, with exit code 1;
usage errors keep click's exit code 2.
"""

from __future__ import annotations

import gzip
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from evalwh.cli import app
from evalwh.cli._progress import interactive, progress_bar
from typer.testing import CliRunner

from evalwh.warehouse import Warehouse

RUN = "401 Q0 d1 1 2.5 r\n401 Q0 d2 2 1.5 r\n402 Q0 d1 1 0.5 r\n"
QRELS = "401 0 d1 1\n401 0 d2 0\n402 0 d1 2\n"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner(env={"COLUMNS": "200", "TERMINAL_WIDTH": "200", "EVALWH_DB": None})


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "w.duckdb"


def write(directory: Path, name: str, content: str | bytes) -> Path:
    path = directory / name
    data = content.encode() if isinstance(content, str) else content
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return path


def invoke(runner: CliRunner, *args: object):
    return runner.invoke(app, [str(a) for a in args])


def test_ingest_qrels_and_runs(runner, db, tmp_path):
    qrels = write(tmp_path, "qrels.txt", QRELS)
    result = invoke(runner, "ingest", "qrels", qrels, "--collection", "c", "--db", db)
    assert (result.exit_code, result.stdout, result.stderr) == (
        0,
        f"qrels 'default' from {qrels}: ingested (3 lines)\n",
        "",
    )
    a, b = write(tmp_path, "a.txt.gz", RUN), write(tmp_path, "b.txt", RUN.replace(" r\n", " s\n"))
    result = invoke(runner, "ingest", "runs", a, b, "-c", "c", "--db", db)
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"run 'r' from {a}: ingested (3 lines)\n"
        f"run 's' from {b}: ingested (3 lines)\n"
        "2 of 2 runs ingested or replaced, 0 unchanged\n"
    )
    assert result.stderr == ""  # no progress bar off a terminal
    again = invoke(runner, "ingest", "runs", a, "-c", "c", "--db", db)
    assert again.stdout == (
        f"run 'r' from {a}: already ingested, unchanged\n0 of 1 runs ingested or replaced, 1 unchanged\n"
    )


BAD = [
    ("runs", "401 Q0 d1 1 2.5 r\n401 Q0 d2 2\n", "{path}:2: expected 6 fields, found 4"),
    ("runs", "401 Q0 d1 1 two r\n", "{path}:1: score 'two' is not a finite number"),
    ("runs", "401 Q0 d1 1 NaN r\n", "{path}:1: score 'NaN' is not a finite number"),
    (
        "runs",
        "401 Q0 d1 1 2 r\n401 Q0 d1 2 1 r\n",
        "{path}:2: document 'd1' appears twice for topic '401' (first on line 1)",
    ),
    (
        "runs",
        "401 Q0 d1 1 2 a\n401 Q0 d2 2 1 b\n",
        "{path}:2: tag 'b' differs from 'a' on line 1; a file holds one run (or give --run-id)",
    ),
    ("runs", "", "{path}: the file holds no run lines"),
    ("qrels", "401 0 d1\n", "{path}:1: expected 4 fields, found 3"),
    ("qrels", "401 0 d1 high\n", "{path}:1: relevance 'high' is not a number"),
    (
        "qrels",
        "401 0 d1 1\n401 0 d1 1\n",
        "{path}:2: document 'd1' is judged twice for topic '401' (first on line 1)",
    ),
    ("qrels", "", "{path}: the file holds no qrels lines"),
]


@pytest.mark.parametrize(("command", "content", "message"), BAD)
def test_bad_input_is_one_error_line_and_exit_1(runner, db, tmp_path, command, content, message):
    invoke(
        runner,
        "ingest",
        "qrels",
        write(tmp_path, "good.qrels", QRELS),
        "-c",
        "c",
        "--qrels-id",
        "good",
        "--db",
        db,
    )
    with Warehouse(db, read_only=True) as wh:
        before = wh.con.execute("SELECT count(*) FROM qrels").fetchall()
    path = write(tmp_path, "bad.txt", content)
    result = invoke(runner, "ingest", command, path, "-c", "c", "--db", db)
    assert (result.exit_code, result.stdout, result.stderr) == (
        1,
        "",
        f"Error: {message.format(path=path)}\n",
    )
    with Warehouse(db, read_only=True) as wh:
        assert wh.con.execute("SELECT count(*) FROM qrels").fetchall() == before
        assert wh.con.execute("SELECT count(*) FROM runs").fetchall() == [(0,)]


def test_missing_file_does_not_create_a_warehouse(runner, db, tmp_path):
    missing = tmp_path / "nope.txt"
    for command in ("qrels", "runs", "run-metadata"):
        result = invoke(runner, "ingest", command, missing, "-c", "c", "--db", db)
        assert (result.exit_code, result.stderr) == (1, f"Error: {missing}: no such file\n")
    assert not db.exists()


def test_clash_replace_and_run_id(runner, db, tmp_path):
    first = write(tmp_path, "run.txt", RUN)
    assert invoke(runner, "ingest", "runs", first, "-c", "c", "--db", db).exit_code == 0
    changed = write(tmp_path, "changed.txt", "401 Q0 d9 1 9 r\n")
    result = invoke(runner, "ingest", "runs", changed, "-c", "c", "--db", db)
    assert (result.exit_code, result.stderr) == (
        1,
        f"Error: {changed}: run 'r' already exists in collection 'c' with different content; "
        "use --replace to replace it\n",
    )
    result = invoke(runner, "ingest", "runs", changed, "-c", "c", "--db", db, "--replace")
    assert (
        result.stdout
        == f"run 'r' from {changed}: replaced (1 lines)\n1 of 1 runs ingested or replaced, 0 unchanged\n"
    )
    result = invoke(runner, "ingest", "runs", first, "-c", "c", "--db", db, "--run-id", "first")
    assert result.stdout.splitlines()[0] == f"run 'first' from {first}: ingested (3 lines)"
    result = invoke(runner, "runs", "-c", "c", "--db", db, "--format", "csv")
    lines = result.stdout.splitlines()
    assert (
        lines[0]
        == "run_id,topics,docs,min_depth,max_depth,group_name,run_type,pooled,source_file,sha256,"
        "float32_lists,ir_method,ir_team,ir_metadata"  # (the last three: the run file's ir_metadata block)
    )
    assert [line.split(",")[:5] + [line.split(",")[8]] for line in lines[1:]] == [
        ["first", "2", "3", "1", "2", "run.txt"],
        ["r", "1", "1", "1", "1", "changed.txt"],
    ]


def test_run_metadata_and_collections(runner, db, tmp_path):
    invoke(runner, "ingest", "qrels", write(tmp_path, "q", QRELS), "-c", "c", "--db", db)
    invoke(runner, "ingest", "runs", write(tmp_path, "r.txt", RUN), "-c", "c", "--db", db)
    table = write(tmp_path, "runs.tsv", "runtag\tgroup\ttype\tjudged_pooled\nr\tuni\tmanual\t1\n")
    result = invoke(runner, "ingest", "run-metadata", table, "-c", "c", "--db", db)
    assert (result.exit_code, result.stdout) == (0, "metadata set for 1 runs\n")
    result = invoke(runner, "collections", "--db", db, "--format", "csv")
    assert result.stdout == "collection_id,topics,judged,relevant,runs,qrels_sets,counted_set\nc,2,3,2,1,1,default\n"
    result = invoke(runner, "runs", "-c", "c", "--db", db, "--format", "json")
    assert '"group_name":"uni","run_type":"manual","pooled":true' in result.stdout
    bad = write(tmp_path, "bad.tsv", "run_id\tpooled\nr\tperhaps\n")
    result = invoke(runner, "ingest", "run-metadata", bad, "-c", "c", "--db", db)
    assert (result.exit_code, result.stderr) == (
        1,
        f"Error: {bad}:2: pooled flag 'perhaps' is not 1/0 or true/false\n",
    )


def test_db_from_the_environment(tmp_path):
    db = tmp_path / "env.duckdb"
    runner = CliRunner(env={"EVALWH_DB": str(db)})
    result = runner.invoke(app, ["ingest", "qrels", str(write(tmp_path, "q", QRELS)), "-c", "c"])
    assert result.exit_code == 0 and db.exists()
    assert (
        runner.invoke(app, ["collections", "--format", "csv"])
        .stdout.splitlines()[1]
        .startswith("c,2,3,2,")
    )


def test_reports_on_a_missing_warehouse(runner, tmp_path):
    missing = tmp_path / "missing.duckdb"
    result = invoke(runner, "collections", "--db", missing)
    assert (result.exit_code, result.stderr) == (1, f"Error: {missing}: no such warehouse file\n")
    assert not missing.exists()


def test_unknown_collection(runner, db, tmp_path):
    invoke(runner, "ingest", "qrels", write(tmp_path, "q", QRELS), "-c", "c", "--db", db)
    result = invoke(runner, "runs", "-c", "cc", "--db", db)
    assert (result.exit_code, result.stderr) == (
        1,
        f"Error: no collection 'cc' in {db} (collections: c)\n",
    )


def test_usage_errors_exit_2(runner, db, tmp_path):
    result = invoke(runner, "ingest", "runs", write(tmp_path, "r", RUN), "--db", db, "--no-such-option")
    assert result.exit_code == 2
    assert "--no-such-option" in result.stderr


def test_no_collection_to_default_to(runner, db, tmp_path):
    """Without --collection, a warehouse that does not exist yet has no collection to take."""
    result = invoke(runner, "ingest", "runs", write(tmp_path, "r", RUN), "--db", db)
    assert result.exit_code == 1
    assert result.stderr == f"Error: {db}: no such warehouse file, so no collection to default to; give --collection NAME\n"
    assert not db.exists()


def test_debug_re_raises(runner, db, tmp_path):
    result = runner.invoke(
        app,
        [
            "--debug",
            "ingest",
            "qrels",
            str(write(tmp_path, "q", "x\n")),
            "-c",
            "c",
            "--db",
            str(db),
        ],
    )
    assert result.exit_code == 1
    assert type(result.exception).__name__ == "IngestError"


def test_lock_held_by_another_process(runner, db, tmp_path):
    Warehouse(db).close()
    script = textwrap.dedent(
        f"""
        import sys
        from evalwh.warehouse import Warehouse
        wh = Warehouse({str(db)!r})
        print("ready", flush=True)
        sys.stdin.read()
        """
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        result = invoke(
            runner, "ingest", "qrels", write(tmp_path, "q", QRELS), "-c", "c", "--db", db
        )
        assert (result.exit_code, result.stderr) == (
            1,
            f"Error: {db}: the warehouse is in use by another process (process {holder.pid}); "
            "wait for it to finish, or use another --db file\n",
        )
    finally:
        holder.communicate("", timeout=30)


def test_demo(runner, db, tmp_path):
    out = tmp_path / "demo"
    result = invoke(runner, "demo", "--out", out, "--db", db)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"qrels 'default' from {out / 'qrels.txt'}: ingested (2,540 lines)"
    assert lines[1] == f"run 'bm25' from {out / 'bm25.txt'}: ingested (6,000 lines)"
    assert (
        lines[-1] == f"collection 'demo' is in {db}; try: evalwh runs --collection demo --db {db}"
    )
    again = invoke(runner, "demo", "--out", out, "--db", db)
    assert again.stdout.count("already ingested, unchanged") == len(lines) - 1
    result = invoke(runner, "collections", "--db", db, "--format", "csv")
    assert result.stdout == (
        "collection_id,topics,judged,relevant,runs,qrels_sets,counted_set\ndemo,30,2540,556,8,1,default\n"
    )


@pytest.mark.parametrize(
    "command",
    [
        [],
        ["ingest"],
        ["ingest", "qrels"],
        ["ingest", "runs"],
        ["ingest", "run-metadata"],
        ["collections"],
        ["runs"],
        ["demo"],
    ],
)
def test_help(runner, command):
    result = runner.invoke(app, [*command, "--help"])
    assert result.exit_code == 0
    assert "Usage:" in result.stdout


def test_progress_bar_only_on_a_terminal(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    assert not interactive()
    with progress_bar("x") as update:
        assert update is None
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert interactive()
    with progress_bar("x") as update:
        assert callable(update)
        update(1, 2)
    monkeypatch.setenv("CI", "true")
    assert not interactive()


def test_ingest_runs_keeps_freed_memory_for_reuse(tmp_path):
    """`ingest runs` asks its process to keep freed memory (evalwh.store.ingest.session.keep_freed_memory)."""
    from evalwh.store.ingest import KEEP_FREED

    run = tmp_path / "a.run"
    run.write_text("1 Q0 d1 1 2.0 a\n1 Q0 d2 2 1.0 a\n")
    db = tmp_path / "w.duckdb"
    # in a process of its own: the settings last as long as the process
    script = textwrap.dedent(
        f"""
        import duckdb
        from evalwh.store import ingest
        from evalwh.warehouse import Warehouse
        with Warehouse({str(db)!r}) as wh:
            before = wh.con.execute("SELECT current_setting('block_allocator_memory')").fetchone()[0]
            ingest.keep_freed_memory(wh)
            after = wh.con.execute("SELECT current_setting('block_allocator_memory')").fetchone()[0]
            wh.ingest_runs([{str(run)!r}], collection="c")
            rows = wh.con.execute("SELECT count(*) FROM run_results").fetchone()[0]
        print(before, after, rows, sep="|")
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    before, after, rows = out.stdout.strip().split("|")
    assert before == "0 bytes"
    assert after == f"{KEEP_FREED >> 20}.0 MiB"
    assert rows == "2"
