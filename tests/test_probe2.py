"""The second reliability probe (issue #27): nothing lost, nothing misreported.

Each class of docs/safety.md's second probe table has its tests here: outputs that would land
on a database, interrupts and full disks decided at one point, readers that never write,
``with Warehouse(...)`` blocks that keep committed work, imports as strict as ingest, and the
faults that used to span lines.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from typer.testing import CliRunner

from evalwh import Warehouse, sql
from evalwh.cli import app
from evalwh.errors import EvalWhError, IngestError, SchemaError
from evalwh.io.files import DatabaseTargetError, write_text

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


def siblings(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir())


def one_line_error(result, text: str = "") -> bool:
    return (
        result.exit_code == 1
        and result.stderr.startswith("Error: ")
        and result.stderr.count("\n") == 1
        and text in result.stderr
        and "Traceback" not in result.output
    )


def cli(*args: object) -> list[str]:
    return [sys.executable, "-m", "evalwh", *[str(a) for a in args]]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "W.duckdb"
    with Warehouse(path) as wh:
        wh.ingest_qrels(QRELS, collection="c")
        wh.ingest_runs(RUNS, collection="c")
    return path


# -- 1. an output path that is a database is refused before anything runs -----------------------


def _outputs(db: Path) -> list[list[object]]:
    other = db.parent / "other.duckdb"
    duckdb.connect(str(other)).close()
    (db.parent / "link.csv").symlink_to(db.name)
    os.link(db, db.parent / "hard.csv")
    return [
        ["eval", "-m", "P@10", "-f", "csv", "-o", db],
        ["eval", "-m", "P@10", "-f", "trec", "-o", db],
        ["eval", "-m", "AP", "--store", "-f", "csv", "-o", db],
        ["sql", "SELECT 1 AS a", "-o", db],
        ["sql", "SELECT 1 AS a", "-f", "parquet", "-o", db],
        ["sql", "SELECT 1 AS a", "-f", "csv", "-o", f"{db}.wal"],
        ["sql", "SELECT 1 AS a", "-f", "csv", "-o", db.parent / "link.csv"],
        ["sql", "SELECT 1 AS a", "-f", "csv", "-o", db.parent / "hard.csv"],
        ["sql", "SELECT 1 AS a", "-f", "csv", "-o", other],
        ["sql", "SELECT 1 AS a", "-f", "csv", "-o", f"{other}.wal"],
        ["report", "-o", db],
        ["report", "-f", "md", "-o", f"{db}.wal"],
        ["runs", "-o", db],
        ["matrix", "-d", "1,2", "--store", "-o", db],
        ["plot", "runs", "-m", "MAP", "-o", db],
        ["export", f"{db}.wal"],
    ]


def test_an_output_over_a_database_is_refused_in_one_line(db, snapshot):
    with Warehouse(db, read_only=True) as wh:
        before = snapshot(wh)
    commands = _outputs(db)
    names = siblings(db)
    digests = {name: digest(db.parent / name) for name in names if not (db.parent / name).is_symlink()}
    for command in commands:
        result = invoke(*command, "--db", db)
        assert one_line_error(result, "refusing to write output over it"), (command, result.output)
        assert siblings(db) == names, command
        assert {n: digest(db.parent / n) for n in digests} == digests, command
    with Warehouse(db, read_only=True) as wh:
        assert snapshot(wh) == before  # eval --store and matrix --store stored nothing either


def test_the_python_api_refuses_an_output_over_its_warehouse(db):
    with Warehouse.open_reader(db) as wh:
        with pytest.raises(DatabaseTargetError, match="is the warehouse"):
            wh.report(db, format="md")
        with pytest.raises(DatabaseTargetError, match="write-ahead log"):
            wh.report(f"{db}.wal", format="md")
        with pytest.raises(DatabaseTargetError):
            wh.export(f"{db}.wal")
    assert siblings(db) == ["W.duckdb"]
    never_opened = db.parent / "other.db"
    duckdb.connect(str(never_opened)).close()
    with pytest.raises(DatabaseTargetError, match="is a DuckDB database"):
        write_text(never_opened, "x")  # any DuckDB file, opened by evalwh in this process or not
    ordinary = db.parent / "fine.csv"
    write_text(ordinary, "a\n")  # an ordinary file is written as before
    assert ordinary.read_text() == "a\n"


# -- 4. a `with Warehouse(...)` block keeps what it committed ------------------------------------


def test_an_unrelated_error_in_a_with_block_keeps_committed_work(tmp_path):
    new = tmp_path / "new.duckdb"
    with pytest.raises(OSError), Warehouse(new) as wh:
        wh.ingest_qrels(QRELS, collection="c")
        wh.ingest_runs(RUNS, collection="c")
        pd.DataFrame({"a": [1]}).to_csv(tmp_path / "no" / "such" / "x.csv")
    with Warehouse.open_reader(new) as wh:
        assert sorted(wh.run_ids("c")) == ["r1", "r2"]
        assert int(wh.query("SELECT count(*) AS n FROM qrels").n[0]) == len(QRELS)


def test_a_with_block_that_committed_nothing_leaves_no_file(tmp_path):
    new = tmp_path / "new.duckdb"
    with pytest.raises(IngestError), Warehouse(new) as wh:
        wh.ingest_qrels(QRELS.assign(doc_id=["a", "b", "c", "a", "e e"]), collection="c")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


# -- 2. Ctrl-C and full disks: the outcome decided at one point, reported truly -------------------


def _run_files(folder: Path, count: int, lines: int = 200) -> list[Path]:
    folder.mkdir(exist_ok=True)
    paths = []
    for k in range(count):
        path = folder / f"r{k}.txt"
        path.write_text("".join(f"{q} Q0 d{i} {i} {1 / i} run{k}\n" for q in (1, 2) for i in range(1, lines + 1)))
        paths.append(path)
    return paths


@pytest.mark.parametrize(
    ("point", "message", "runs"),
    [
        ("before-commit", "Interrupted; nothing was committed by the interrupted command.\n", 2),
        ("after-commit", "Interrupted after the command had committed its changes: the warehouse holds them.\n", 12),
    ],
)
def test_ctrl_c_at_the_commit_reports_what_is_true(point, message, runs, db, tmp_path):
    files = _run_files(tmp_path / "runs", 10)
    env = {**os.environ, "EVALWH_TEST_INTERRUPT": point}
    done = subprocess.run(cli("ingest", "runs", *files, "-c", "c", "--db", db), env=env, capture_output=True, text=True, timeout=300)
    assert (done.returncode, done.stderr) == (130, message)
    with Warehouse.open_reader(db) as wh:
        assert len(wh.run_ids("c")) == runs


def test_a_nested_transaction_leaves_the_outer_one_working(db):
    with Warehouse(db) as wh:
        with wh.transaction():
            wh.con.execute("DELETE FROM qrels WHERE doc_id = 'e'")
            with wh.transaction():  # inside: adds nothing, aborts nothing
                wh.con.execute("DELETE FROM qrels WHERE doc_id = 'c'")
            wh.con.execute("DELETE FROM qrels WHERE doc_id = 'b'")
        assert int(wh.query("SELECT count(*) AS n FROM qrels").n[0]) == 2
        # the caller's own BEGIN: an ingest inside it commits or rolls back with the caller
        wh.con.begin()
        wh.ingest_runs(RUNS[RUNS.run_id == "r1"].assign(run_id="r3"), collection="c")
        wh.con.rollback()
        assert wh.run_ids("c") == ["r1", "r2"]
        with pytest.raises(RuntimeError), wh.transaction():
            wh.con.execute("DELETE FROM qrels")
            raise RuntimeError("rolled back")
        assert int(wh.query("SELECT count(*) AS n FROM qrels").n[0]) == 2


@pytest.fixture
def full_disk(tmp_path: Path):
    """A small tmpfs (needs root and mount; CI here has both)."""
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


def leave_free(folder: Path, kib: int) -> None:
    """Fill the file system of ``folder`` but for ``kib`` KiB."""
    stats = os.statvfs(folder)
    with open(folder / "filler", "wb") as handle:
        handle.write(b"x" * max(stats.f_bavail * stats.f_frsize - kib * 1024, 0))


@pytest.mark.parametrize("free", [0, 300, 1500])
def test_a_full_disk_during_a_multi_file_ingest_and_an_import_is_one_true_line(free, db, full_disk, tmp_path, snapshot):
    files = _run_files(tmp_path / "runs", 10, lines=20000)
    exported = tmp_path / "exported"
    with Warehouse(tmp_path / "big.duckdb") as wh:
        wh.ingest_qrels(QRELS, collection="d")
        wh.ingest_runs(files, collection="d")
        wh.export(exported)
    target = full_disk / "W.duckdb"
    shutil.copy(db, target)
    with Warehouse(db, read_only=True) as wh:
        before = snapshot(wh)
    leave_free(full_disk, free)
    for command in (["ingest", "runs", *files, "-c", "c"], ["import", exported]):
        result = invoke(*command, "--db", target)
        assert one_line_error(result, "the disk is full"), (command, result.output)
    (full_disk / "filler").unlink()
    with Warehouse(target, read_only=True) as wh:
        assert snapshot(wh) == before


# -- 3. readers never write; an older or foreign file is refused as it is -------------------------


def older_warehouse(path: Path, lacking: int = 2) -> None:
    """A warehouse as an older evalwh left it: every shipped schema step but the last ``lacking``."""
    files = sql.load_package("evalwh.schema")
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE schema_migrations (name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)")
    for name in list(files)[:-lacking]:
        con.execute(files[name].text)
        con.execute("INSERT INTO schema_migrations (name) VALUES (?)", [name])
    con.close()


READERS = [
    ["runs", "-c", "c"], ["collections"], ["eval", "-c", "c", "-m", "AP"], ["sql", "SELECT 1"],
    ["schema"], ["matrix", "-c", "c", "-d", "1"], ["report", "-c", "c", "-f", "md"], ["export", "{dir}/out"],
]


def test_readers_refuse_an_older_warehouse_untouched_until_upgrade(tmp_path):
    old = tmp_path / "old.duckdb"
    older_warehouse(old)
    before = digest(old)
    for command in READERS:
        result = invoke(*[str(a).format(dir=tmp_path) for a in command], "--db", old)
        assert one_line_error(result, "run `evalwh upgrade --db"), (command, result.output)
    with pytest.raises(SchemaError, match="written by an older evalwh"):
        Warehouse.open_reader(old)
    assert digest(old) == before and siblings(old) == ["old.duckdb"]
    result = invoke("upgrade", "--db", old)
    assert result.exit_code == 0 and "applied 2 schema step(s)" in result.stderr
    assert invoke("upgrade", "--db", old).stderr.endswith("up to date; nothing to apply\n")
    assert invoke("collections", "--db", old).exit_code == 0


def test_a_duckdb_file_of_something_else_is_refused_untouched(tmp_path):
    app_db = tmp_path / "app.duckdb"
    con = duckdb.connect(str(app_db))
    con.execute("CREATE TABLE schema_migrations (name VARCHAR); INSERT INTO schema_migrations VALUES ('0001_users')")
    con.execute("CREATE TABLE users (id INTEGER); INSERT INTO users VALUES (1)")
    con.close()
    before = digest(app_db)
    for command in [*READERS, ["ingest", "qrels", "{dir}/q.txt", "-c", "c"], ["upgrade"], ["sql", "--write", "SELECT 1"]]:
        (tmp_path / "q.txt").write_text("1 0 a 1\n")
        result = invoke(*[str(a).format(dir=tmp_path) for a in command], "--db", app_db)
        assert one_line_error(result, "not an evalwh warehouse"), (command, result.output)
    for opener in (Warehouse, Warehouse.open_reader):
        with pytest.raises(SchemaError, match="not an evalwh warehouse"):
            opener(app_db)
    assert digest(app_db) == before
    con = duckdb.connect(str(app_db), read_only=True)
    assert con.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall() == [("schema_migrations",), ("users",)]
    con.close()


def test_matrix_stores_only_when_asked(db):
    before = digest(db)
    assert invoke("matrix", "-c", "c", "-d", "1,2", "--db", db).exit_code == 0
    assert digest(db) == before and siblings(db) == ["W.duckdb"]
    assert invoke("matrix", "-c", "c", "-d", "1,2", "--store", "--db", db).exit_code == 0
    with Warehouse.open_reader(db) as wh:
        assert int(wh.query("SELECT count(*) AS n FROM decision_pairs").n[0]) == 3  # 1 pair x (@1, @2, MAP)


def test_a_reader_asked_to_write_says_opened_read_only(db):
    with Warehouse.open_reader(db) as wh:
        for job in (lambda: wh.ingest_runs(RUNS.assign(run_id="r9"), collection="c"),
                    lambda: wh.ingest_qrels(QRELS, collection="c", qrels_id="q2"),
                    lambda: wh.evaluate("AP", store=True)):  # fmt: skip
            with pytest.raises(EvalWhError, match="opened read-only"):
                job()


# -- 5. import is as strict as ingest ---------------------------------------------------------------


@pytest.fixture
def exported(db, tmp_path) -> Path:
    folder = tmp_path / "exported"
    with Warehouse.open_reader(db, allowed_directories=[tmp_path]) as wh:
        wh.export(folder)
    return folder


def tamper(folder: Path, table: str, change, *, rows: int | None = None) -> Path:
    """Rewrite a table's first file with ``change(frame)`` and fix its checksum in the manifest."""
    manifest = json.loads((folder / "manifest.json").read_text())
    item = manifest["tables"][table]["files"][0]
    path = folder / item["path"]
    import pyarrow as pa
    import pyarrow.parquet as pq

    original = pd.read_parquet(path)
    frame = change(original)
    if (frame.dtypes == original.dtypes).all():  # the file's own types, unless the change is to them
        rewritten = pa.Table.from_pandas(frame, schema=pq.read_schema(path), preserve_index=False)
    else:
        rewritten = pa.Table.from_pandas(frame, preserve_index=False)
    pq.write_table(rewritten, path)
    item["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    if rows is not None:
        item["rows"] = manifest["tables"][table]["rows"] = rows
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return path


def _set(frame: pd.DataFrame, column: str, row: int, value: object) -> pd.DataFrame:
    frame = frame.copy()
    frame.loc[row, column] = value
    return frame


IMPORT_CASES = [
    ("duplicate qrels row", "qrels", lambda f: pd.concat([f, f.iloc[[0]]], ignore_index=True), 6, ":6: repeats the "),
    ("run id with a space", "runs", lambda f: _set(f, "run_id", 0, "r 1"), None, ":1: run_id 'r 1' holds whitespace"),
    ("empty doc id", "qrels", lambda f: _set(f, "doc_id", 2, ""), None, ":3: doc_id is empty"),
    ("infinite relevance", "qrels", lambda f: f.assign(relevance=[1.0, 0.0, float("inf"), 1.0, 0.0]), None, ":3: relevance inf is not a finite number"),
    ("columns cast to string", "qrels", lambda f: f.astype(str), None, "column 'relevance' is VARCHAR, the warehouse's is DOUBLE"),
    ("rows fewer than the manifest says", "qrels", lambda f: f.iloc[:4], None, "holds 4 rows, the manifest says 5"),
]


@pytest.mark.parametrize(("case", "table", "change", "rows", "message"), IMPORT_CASES, ids=[c[0] for c in IMPORT_CASES])
def test_import_applies_ingests_rules(case, table, change, rows, message, exported, tmp_path):
    path = tamper(exported, table, change, rows=rows)
    target = tmp_path / "target.duckdb"
    result = invoke("import", exported, "--db", target)
    assert one_line_error(result, message), result.output
    assert str(path) in result.stderr or "manifest" in result.stderr or "column" in result.stderr
    assert not target.exists()


def test_import_checks_the_manifests_row_counts(exported, tmp_path):
    manifest = json.loads((exported / "manifest.json").read_text())
    manifest["tables"]["qrels"]["rows"] += 1
    (exported / "manifest.json").write_text(json.dumps(manifest))
    result = invoke("import", exported, "--db", tmp_path / "t.duckdb")
    assert one_line_error(result, "table 'qrels' has 5 rows in its files, the manifest says 6")


@pytest.mark.parametrize("where", ["../outside/data_0.parquet", "/etc/hostname", "link/data_0.parquet"])
def test_import_reads_nothing_outside_the_export(where, exported, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    manifest = json.loads((exported / "manifest.json").read_text())
    item = manifest["tables"]["qrels"]["files"][0]
    shutil.copy(exported / item["path"], outside / "data_0.parquet")
    (exported / "link").symlink_to(outside)
    item["path"] = where
    (exported / "manifest.json").write_text(json.dumps(manifest))
    result = invoke("import", exported, "--db", tmp_path / "t.duckdb")
    assert one_line_error(result), result.output
    assert "not a path inside the export" in result.stderr or "leads outside the export folder" in result.stderr


def test_an_untampered_export_still_imports(exported, db, tmp_path):
    target = tmp_path / "t.duckdb"
    result = invoke("import", exported, "--db", target)
    assert result.exit_code == 0, result.output
    with Warehouse.open_reader(target) as wh, Warehouse.open_reader(db) as source:
        assert wh.evaluate("AP").value.tolist() == source.evaluate("AP").value.tolist()

