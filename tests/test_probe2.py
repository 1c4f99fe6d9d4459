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
import signal
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from evalwh import Warehouse, sql
from evalwh.errors import EvalWhError, IngestError, SchemaError
from evalwh.io.files import DatabaseTargetError, write_text

# the small collection, the CLI runner and the one-line check of the first probe's tests
from test_safety import QRELS, RUNS, digest, invoke, one_line_error, sigint_as_at_a_terminal  # noqa: E402


def siblings(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir())


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
    done = subprocess.run(
        cli("ingest", "runs", *files, "-c", "c", "--db", db), env=env, capture_output=True, text=True, timeout=300,
        preexec_fn=sigint_as_at_a_terminal,
    )
    with Warehouse.open_reader(db) as wh:
        stored = wh.run_ids("c")
    # (the child's standard output and the runs it left say which way it went if this fails)
    assert (done.returncode, done.stderr) == (130, message), (done.stdout, stored)
    assert len(stored) == runs


def test_a_command_started_with_sigint_ignored_is_not_interrupted(db, tmp_path):
    """``evalwh ingest runs ... &`` in a script ignores Ctrl-C, as the shell asked: the SIGINT
    at the commit neither refuses the commit nor stops the command."""
    for point, lines in (("before-commit", 200), ("after-commit", 100)):
        files = _run_files(tmp_path / point, 3, lines)  # (new runs, then the same runs replaced)
        env = {**os.environ, "EVALWH_TEST_INTERRUPT": point}
        done = subprocess.run(
            cli("ingest", "runs", *files, "-c", "c", "--replace", "--db", db), env=env, capture_output=True, text=True,
            timeout=300, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
        )
        assert (done.returncode, done.stderr) == (0, ""), point
        with Warehouse.open_reader(db) as wh:
            assert len(wh.run_ids("c")) == 5
            assert int(wh.query("SELECT count(*) AS n FROM run_results WHERE run_id = 'run0'").n[0]) == 2 * lines


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



# -- 6, 9. run metadata: a byte-order mark is ignored; misspelt and repeated columns are errors ---


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\ufeffrun_id\tgroup\nr1\tuni\n", None),
        ("run_id\tgoup\nr1\tuni\n", ":1: unknown column 'goup'; did you mean 'group'?"),
        ("run_id\tgroup\tgroup\nr1\tuni\tuni\n", ":1: column 'group' appears twice in the header"),
        ("run_id\tgroup\tgroup_name\nr1\tuni\tuni\n", ":1: columns 'group' and 'group_name' both give the group"),
        ("runtag\tgroup\ttopic_fields_TDN\nr1\tuni\t010\n", None),  # TREC's other columns are ignored
    ],
)
def test_run_metadata_header(text, expected, db, tmp_path):
    table = tmp_path / "runs.tsv"
    table.write_text(text, encoding="utf-8")
    result = invoke("ingest", "run-metadata", table, "-c", "c", "--db", db)
    if expected is None:
        assert (result.exit_code, result.stdout) == (0, "metadata set for 1 runs\n"), result.output
        with Warehouse.open_reader(db) as wh:
            assert wh.runs("c").set_index("run_id").loc["r1", "group_name"] == "uni"
    else:
        assert one_line_error(result, f"{table}{expected}"), result.output


# -- 7. DataFrame column types ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("column", "values", "problem"),
    [
        ("query_id", [1.5] * 7, "DataFrame:1: query_id 1.5 is not a whole number, so not an id"),
        ("score", list(pd.to_datetime(["2020-01-01"] * 7)), "DataFrame:1: score Timestamp('2020-01-01 00:00:00') is a Timestamp, not a number"),
        ("doc_id", [["a"]] + ["b", "c", "d", "e", "f", "g"], "DataFrame:1: doc_id ['a'] is a list, not a string or an integer"),
        ("score", [True, False, True, False, True, False, True], "DataFrame:1: score True is a bool, not a number"),
        ("score", [1.0, 2.0, True, 3.0, 4.0, 5.0, 6.0], "DataFrame:3: score True is a bool, not a number"),
        ("query_id", [True] * 7, "DataFrame:1: query_id True is a bool, not a string or an integer"),
        ("run_id", list(pd.to_datetime(["2020-01-01"] * 7)), "DataFrame:1: run_id Timestamp('2020-01-01 00:00:00') is a Timestamp, not a string or an integer"),
    ],
)
def test_dataframe_columns_of_another_type_are_refused(column, values, problem, wh, snapshot):
    before = snapshot(wh)
    with pytest.raises(IngestError) as caught:
        wh.ingest_runs(RUNS.assign(**{column: values}), collection="c")
    assert str(caught.value) == problem
    assert snapshot(wh) == before


def test_whole_number_float_ids_are_read_exactly(wh):
    # pandas makes an integer column float once one value is missing: 401.0 is topic 401
    qrels = pd.DataFrame({"query_id": [401.0, 401.0, 402.0], "doc_id": ["a", "b", "a"], "relevance": [1, 0, 1]})
    run = pd.DataFrame({"query_id": [401.0, 401.0, 402.0], "doc_id": ["a", "b", "a"], "score": [2.0, 1.0, 1.0]})
    wh.ingest_qrels(qrels, collection="c")
    wh.ingest_runs(run, collection="c", run_id="r")
    assert sorted(wh.query("SELECT DISTINCT query_id FROM run_results").query_id) == ["401", "402"]
    assert wh.evaluate("AP").value.tolist() == [1.0]
    with pytest.raises(IngestError, match="DataFrame:2: query_id is missing"):
        wh.ingest_runs(run.assign(query_id=[401.0, None, 402.0]), collection="c", run_id="r2")


# -- 8. names from options are as strict as ids in files; scores only in the documented forms ------


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (["ingest", "runs", "{run}", "-c", "c", "--run-id", ""], "run id argument: the run id is empty"),
        (["ingest", "runs", "{run}", "-c", "c", "--run-id", "a b"], "run id argument: 'a b' holds whitespace"),
        (["ingest", "runs", "{run}", "-c", ""], "collection argument: the collection is empty"),
        (["ingest", "qrels", "{qrels}", "-c", ""], "collection argument: the collection is empty"),
        (["ingest", "qrels", "{qrels}", "-c", "c", "--qrels-id", "a b"], "qrels id argument: 'a b' holds whitespace"),
        (["ingest", "qrels", "{qrels}", "-c", "c", "--qrels-id", "a\tb"], "qrels id argument: 'a\\tb' holds whitespace"),
        (["pool", "build", "-c", "c", "--depth", "2", "--runs", "r1", "--pool-id", "p 1"], "pool id argument: 'p 1' holds whitespace"),
    ],
)
def test_names_from_options_follow_the_id_rules(command, message, db, tmp_path):
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run.write_text("1 Q0 a 1 1.5 t\n")
    qrels.write_text("1 0 a 1\n")
    before = digest(db)
    result = invoke(*[str(a).format(run=run, qrels=qrels) for a in command], "--db", db)
    assert one_line_error(result, message), result.output
    assert digest(db) == before


@pytest.mark.parametrize(
    ("score", "value"),
    [("12", 12.0), ("-3.5", -3.5), (".5", 0.5), ("5.", 5.0), ("+1.5", 1.5), ("9.998186e-02", 0.09998186), ("1E+05", 1e5),
     ("1_000", None), ("0x10", None), ("1,5", None), ("Infinity", None), ("nan", None), ("1e400", None), ("1d5", None)],
)
def test_scores_only_in_the_documented_forms(score, value, db, tmp_path):
    run = tmp_path / "run.txt"
    run.write_text(f"1 Q0 a 1 {score} t\n1 Q0 b 2 0 t\n")
    result = invoke("ingest", "runs", run, "-c", "c", "--db", db)
    if value is None:
        assert one_line_error(result, f"{run}:1: score {score!r} is not a finite number"), result.output
    else:
        assert result.exit_code == 0, result.output
        with Warehouse.open_reader(db) as wh:
            stored = wh.query("SELECT score FROM run_results WHERE run_id = 't' AND doc_id = 'a'").score
        assert stored.tolist() == [value]


# -- 9. trec_eval's -l as trec_eval reads it; standard input read once -----------------------------


@pytest.fixture
def trec_files(tmp_path):
    qrels, run, run2 = tmp_path / "q.txt", tmp_path / "r.txt", tmp_path / "r2.txt"
    qrels.write_text("1 0 a 1\n1 0 b 0\n2 0 a 2\n")
    run.write_text("1 Q0 a 1 2 r\n1 Q0 b 2 1 r\n2 Q0 b 1 1 r\n2 Q0 a 2 0.5 r\n")
    run2.write_text("1 Q0 b 1 2 s\n1 Q0 a 2 1 s\n2 Q0 a 1 1 s\n")
    return qrels, run, run2


def _trec_eval(*args: object, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(cli("trec_eval", *args), input=stdin, capture_output=True, timeout=120)


@pytest.mark.parametrize(("level", "expected"), [("99999999999999999999", "0.0000"), ("-99999999999999999999", "0.7500"), ("3", "0.0000"), ("1", "0.7500")])
def test_trec_eval_level_as_trec_eval_reads_it(level, expected, trec_files):
    qrels, run, _ = trec_files
    # (in this process: how -l is read is not about the process; the test below starts one)
    done = invoke("trec_eval", "-m", "map", "-l", level, qrels, run)
    assert (done.exit_code, done.stderr, done.stdout) == (0, "", f"map                   \tall\t{expected}\n")


def test_trec_eval_reads_standard_input_once(trec_files):
    qrels, run, run2 = trec_files
    # the reference from files, in this process; the process itself is what reads standard input
    from_file = invoke("trec_eval", "-q", "-m", "map", qrels, run2, run)
    assert from_file.exit_code == 0 and from_file.stdout.count("\tall\t") == 2
    for name in ("-", "/dev/stdin"):
        piped = _trec_eval("-q", "-m", "map", qrels, run2, name, stdin=run.read_bytes())
        assert (piped.returncode, piped.stdout.decode()) == (0, from_file.stdout), name


# -- 10, 12. evalwh sql: DDL with --write; every error one line; no file text echoed ----------------


def test_write_ddl_is_not_taken_for_an_unknown_table(db):
    result = invoke("sql", "--write", "CREATE TABLE notes AS SELECT 1 AS a; INSERT INTO notes VALUES (2)", "--db", db)
    assert result.exit_code == 0, result.output
    assert invoke("sql", "SELECT count(*) AS n, max(a) AS m FROM notes", "-f", "csv", "--db", db).stdout == "n,m\n2,2\n"
    # a misspelt table is still named, with --write too
    assert one_line_error(invoke("sql", "--write", "DELETE FROM qrel", "--db", db), "unknown table 'qrel'. Did you mean qrels?")


@pytest.mark.parametrize(
    ("sql_text", "expected"),
    [
        ("SELECT getenv('HOME')", "Scalar Function with name getenv does not exist! Did you mean"),
        ("SELECT *\nFROM runs WHERE", "syntax error at line 2, column 11 near 'WHERE'"),
        ("SELECT nosuch(1) FROM runs", "Scalar Function with name nosuch does not exist!"),
        ("SELECT x'41' FROM", "syntax error"),
    ],
)
def test_sql_errors_are_one_line(sql_text, expected, db):
    result = invoke("sql", sql_text, "--db", db)
    assert one_line_error(result, expected), result.output
    assert "LINE 1" not in result.stderr and "^" not in result.stderr


def test_a_sql_file_that_is_not_sql_is_never_echoed(db, tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("root:$6$s3cr3tHASH:19000:0:99999:7:::\nsecond line\n")
    (tmp_path / "x.sql").symlink_to(secret)
    result = invoke("sql", tmp_path / "x.sql", "--db", db)
    assert one_line_error(result, "the file is not SQL evalwh can parse (its text is not shown)"), result.output
    assert "s3cr3t" not in result.output and "second line" not in result.output
    binary = tmp_path / "b.sql"
    binary.write_bytes(b"\xff\xfe s3cr3t")
    result = invoke("sql", binary, "--db", db)
    assert one_line_error(result, "not a UTF-8 text file") and "s3cr3t" not in result.output
    if os.geteuid() != 0:  # (root reads any file)
        secret.chmod(0)
        assert one_line_error(invoke("sql", tmp_path / "x.sql", "--db", db), "Permission denied")


# -- 11. a closed standard output, a reader that goes away -------------------------------------------


def test_closed_standard_output_is_one_line(db):
    done = subprocess.run(
        ["bash", "-c", f'"{sys.executable}" -m evalwh eval -c c -m AP --db "{db}" >&-'],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("Error: standard output is closed") and done.stderr.count("\n") == 1, done.stderr
    # a command that prints nothing to standard output still works
    done = subprocess.run(["bash", "-c", f'"{sys.executable}" -m evalwh upgrade --db "{db}" >&-'], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("fmt", ["table", "csv"])
def test_a_reader_that_goes_away_is_normal(fmt, db):
    rows = 200_000
    # the output (the csv's, the narrower) cannot fit in a pipe of the largest size Linux allows,
    # so the command meets the closed pipe before it has written all, whatever the pipe's size
    # (traced: 200,000 and 2,000,000 rows end alike, after the same 73,735 bytes of csv)
    largest = int(Path("/proc/sys/fs/pipe-max-size").read_text()) if Path("/proc/sys/fs/pipe-max-size").exists() else 1 << 20
    assert sum(len(str(i)) + 1 for i in range(rows)) > largest + 64 * 1024  # (+ what head may read)
    big = f"SELECT range AS i FROM range({rows})"
    done = subprocess.run(
        ["bash", "-c", f'set -o pipefail; "{sys.executable}" -m evalwh sql "{big}" -f {fmt} --db "{db}" | head -1'],
        capture_output=True, text=True, timeout=300,
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert done.stdout.strip() in ("i", "i".rjust(7))


# -- 13. a report of a very long run id --------------------------------------------------------------


def test_a_report_does_not_grow_with_the_length_of_an_id(tmp_path):
    long_id = "x" * 200_000
    path = tmp_path / "L.duckdb"
    with Warehouse(path) as wh:
        wh.ingest_qrels(QRELS, collection="c")
        wh.ingest_runs(RUNS.assign(run_id=RUNS.run_id.map({"r1": "r1", "r2": long_id})), collection="c")
        html = wh.report(tmp_path / "L.html", depths=[1, 2], pairs=[("r1", long_id)])
    with Warehouse(tmp_path / "S.duckdb") as wh:
        wh.ingest_qrels(QRELS, collection="c")
        wh.ingest_runs(RUNS, collection="c")
        short = wh.report(depths=[1, 2], pairs=[("r1", "r2")])
    # the full id only where the run is listed (tooltips of the leaderboard and the provenance)
    # and in the record of the options, which name the pair asked for
    assert html.count(long_id) == 3
    assert len(html) - len(short) < 3 * len(long_id) + 50_000
    shown = "x" * 59 + "…" + "x" * 20  # tables: short_id's 80 characters
    assert f'title="{long_id}"' in html and html.count(shown) >= 3
    drawn = "x" * 17 + "…" + "x" * 6  # figure titles and legends: FIGURE_ID_SHOWN, 24
    assert html.count(drawn) >= 2


# -- Also: threads, read-only writers, spreadsheet formulas -------------------------------------------


def test_one_warehouse_shared_by_four_threads(db):
    import threading

    with Warehouse(db) as wh:
        expected = wh.evaluate(["AP", "P@2"]).value.tolist()
        results: list[object] = []

        def job(store: bool) -> None:
            try:
                results.append(wh.evaluate(["AP", "P@2"], store=store).value.tolist())
            except Exception as error:  # noqa: BLE001 (the test names any error)
                results.append(repr(error))

        threads = [threading.Thread(target=job, args=(i % 2 == 0,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert results == [expected] * 4


def test_ids_that_look_like_formulas_are_written_as_they_are(db, tmp_path):
    # evalwh's CSV is data for programs: no spreadsheet guard alters an id (docs/safety.md)
    with Warehouse(db) as wh:
        wh.ingest_runs(RUNS[RUNS.run_id == "r1"].assign(run_id="=1+1"), collection="c")
    result = invoke("eval", "-c", "c", "-m", "AP", "-f", "csv", "--run", "=1+1", "--db", db)
    assert result.exit_code == 0, result.output
    assert pd.read_csv(__import__("io").StringIO(result.stdout)).run_id.tolist() == ["=1+1"]
