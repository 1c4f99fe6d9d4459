"""``evalwh eval --qrels QRELS RUN... --into W``: the three-command warehouse path in one process.

It must store what ``evalwh ingest qrels`` and ``evalwh ingest runs`` store, row for row and key
for key, print what ``eval --qrels`` prints (but the collection's name), leave a warehouse
unchanged when any input is refused, and be idempotent.
"""

from __future__ import annotations

import io

import duckdb
import pandas as pd
import pytest
from typer.testing import CliRunner

from evalwh.cli import app

MEASURES = ["-m", "P@2", "-m", "AP", "-m", "nDCG@3", "-m", "bpref", "-m", "A_p@2"]
QRELS = "1 0 a 1\n1 0 b 0\n1 0 c 2\n2 0 a 1\n2 0 e 0\n3 0 z 1\n"
RUNS = {
    # the reader's way: plain lines, a tie (b and x at 3.0) and ranks that are not its order
    "r1.txt": "1 Q0 a 1 5.0 r1\n1 Q0 x 2 3.0 r1\n1 Q0 b 3 3.0 r1\n1 Q0 c 9 2.0 r1\n2 Q0 e 1 1.0 r1\n",
    # topics out of order, a document of no judgment
    "r2.txt": "2 Q0 a 1 4.0 r2\n1 Q0 c 1 3.0 r2\n1 Q0 y 2 1.0 r2\n3 Q0 q 1 0.5 r2\n",
    # tabs between fields and a comment: the general way (DuckDB's CSV reader)
    "r3.txt": "# a comment\n1\tQ0\tb\t1\t2.0\tr3\n1\tQ0\ta\t2\t1.0\tr3\n",
}
# what each table holds, by name and in an order of its own content (timestamps left out; the
# keys are numbered in the order files finish reading, two at a time, so they are compared
# through what they stand for)
TABLES = {
    "runs": "SELECT collection_id, run_id, tag, source_file, sha256, line_count FROM runs ORDER BY ALL",
    "qrels": "SELECT * FROM qrels ORDER BY ALL",
    "qrels_sets": "SELECT * EXCLUDE (created_at) FROM qrels_sets ORDER BY ALL",
    "run_topics": "SELECT * EXCLUDE (list_key) FROM run_topics ORDER BY ALL",
    "documents": "SELECT * EXCLUDE (doc_key) FROM documents ORDER BY ALL",
    "run_rows": "SELECT * FROM run_results ORDER BY ALL",
    "judged_builds": "SELECT * EXCLUDE (built_at, build_key) FROM judged_builds ORDER BY ALL",
    "judged_results": (
        "SELECT b.qrels_id, t.run_id, t.query_id, c.* EXCLUDE (build_key, list_key) FROM judged_results AS c"
        " JOIN judged_builds AS b USING (build_key) JOIN run_topics AS t USING (list_key) ORDER BY ALL"
    ),
    "keys": (  # every key once
        "SELECT (SELECT count(DISTINCT doc_key) = count(*) FROM documents),"
        " (SELECT count(DISTINCT list_key) = count(*) FROM run_topics),"
        " (SELECT count(DISTINCT build_key) = count(*) FROM judged_builds)"
    ),
}


runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    for name, text in RUNS.items():
        (tmp_path / name).write_text(text)
    return tmp_path / "qrels.txt", [tmp_path / name for name in RUNS]


def contents(path) -> dict[str, list[tuple]]:
    with duckdb.connect(str(path), read_only=True) as con:
        return {name: con.execute(query).fetchall() for name, query in TABLES.items()}


def test_into_stores_what_the_ingest_commands_store_and_prints_what_the_direct_path_prints(files, tmp_path):
    qrels, runs = files
    into = tmp_path / "into.duckdb"
    result = invoke("eval", "--qrels", qrels, *runs, "--into", into, "-c", "c", *MEASURES, "--format", "csv")
    assert result.exit_code == 0, result.output
    assert "qrels.txt: ingested (6 lines); 3 of 3 runs ingested or replaced, 0 unchanged" in result.stderr

    three = tmp_path / "three.duckdb"
    for args in (["qrels", qrels], ["runs", *runs]):
        done = invoke("ingest", *args, "-c", "c", "--db", three)
        assert done.exit_code == 0, done.output
    stored = contents(into)
    assert stored == contents(three)
    assert len(stored["run_rows"]) == 11 and len(stored["judged_builds"]) == 3  # (every run cached)
    warehouse = invoke("eval", "-c", "c", "--db", three, *MEASURES, "--format", "csv")

    direct = invoke("eval", "--qrels", qrels, *runs, *MEASURES, "--format", "csv")
    frame, alone = (pd.read_csv(io.StringIO(r.stdout)) for r in (result, direct))
    assert list(frame["collection_id"].unique()) == ["c"] and list(alone["collection_id"].unique()) == ["files"]
    pd.testing.assert_frame_equal(frame.drop(columns="collection_id"), alone.drop(columns="collection_id"))
    assert list(frame["run_id"].unique()) == ["r1", "r2", "r3"]  # the files' order
    on_three = pd.read_csv(io.StringIO(warehouse.stdout)).sort_values(["run_id", "measure"], ignore_index=True)
    pd.testing.assert_frame_equal(frame.sort_values(["run_id", "measure"], ignore_index=True), on_three)
    # r1, topic 1 in trec_eval's order: a (relevant), x, b (3.0 each: doc_id descending), c
    # (relevant) at 4; topics 2 and 3 retrieve no relevant document: AP ((1 + 2/4) / 2 + 0 + 0) / 3
    assert frame.set_index(["run_id", "measure"]).loc[("r1", "AP"), "value"] == pytest.approx(0.25)

    again = invoke("eval", "--qrels", qrels, *runs, "--into", into, *MEASURES, "--format", "csv")
    assert again.exit_code == 0, again.output  # (the warehouse's only collection, without -c)
    assert "already ingested, unchanged; 0 of 3 runs ingested or replaced, 3 unchanged" in again.stderr
    assert again.stdout == result.stdout and contents(into) == stored


def test_a_refused_run_file_leaves_the_warehouse_as_it_was(files, tmp_path):
    qrels, runs = files
    into = tmp_path / "into.duckdb"
    assert invoke("eval", "--qrels", qrels, runs[0], "--into", into, "-c", "c", "-m", "AP").exit_code == 0
    before = contents(into)
    other = tmp_path / "other.txt"  # a new qrels set's content, and a bad run beside a good one
    other.write_text(QRELS.replace("3 0 z 1", "3 0 z 2"))
    bad = tmp_path / "bad.txt"
    bad.write_text("1 Q0 a 1 5.0 r9\n1 Q0 b 2 oops r9\n")
    result = invoke("eval", "--qrels", qrels, runs[1], bad, "--into", into, "-c", "c", "-m", "AP")
    assert result.exit_code == 1
    assert "bad.txt:2: " in result.output and "'oops'" in result.output
    assert contents(into) == before
    # a qrels set or run of the same name with other content: eval --into has no --replace,
    # so the message names the command that has one (`ingest runs` says --replace); the
    # warehouse file keeps every byte
    stored = into.read_bytes()
    clash = invoke("eval", "--qrels", other, runs[1], "--into", into, "-c", "c", "-m", "AP")
    assert (clash.exit_code, clash.stderr) == (
        1,
        f"Error: {other}: qrels 'default' of collection 'c' already exists with different content; "
        "use `evalwh ingest qrels --replace` to replace it\n",
    )
    assert contents(into) == before  # (the run of the same command not stored either)
    assert into.read_bytes() == stored
    changed = tmp_path / "changed" / "r1.txt"
    changed.parent.mkdir()
    changed.write_text(RUNS["r1.txt"].replace("5.0", "6.0"))
    refused = invoke("eval", "--qrels", qrels, changed, "--into", into, "-c", "c", "-m", "AP")
    assert (refused.exit_code, refused.stderr) == (
        1,
        f"Error: {changed}: run 'r1' already exists in collection 'c' with different content; "
        "use `evalwh ingest runs --replace` to replace it\n",
    )
    assert into.read_bytes() == stored
    refused = invoke("ingest", "runs", changed, "--db", into, "-c", "c")
    assert (refused.exit_code, refused.stderr) == (
        1,
        f"Error: {changed}: run 'r1' already exists in collection 'c' with different content; "
        "use --replace to replace it\n",
    )
    assert into.read_bytes() == stored
    # `report --qrels Q RUN...`, which also stores first and has no --replace, says as eval --into
    report = invoke("report", "--db", into, "--qrels", qrels, changed, "-c", "c", "-o", tmp_path / "r.html")
    assert (report.exit_code, report.stderr.splitlines()[-1]) == (
        1,
        f"Error: {changed}: run 'r1' already exists in collection 'c' with different content; "
        "use `evalwh ingest runs --replace` to replace it",
    )
    assert into.read_bytes() == stored and not (tmp_path / "r.html").exists()
    # the advice holds: that command replaces the run
    replaced = invoke("ingest", "runs", changed, "--db", into, "-c", "c", "--replace")
    assert replaced.exit_code == 0 and f"run 'r1' from {changed}: replaced (5 lines)" in replaced.stdout

    new = tmp_path / "new.duckdb"
    failed = invoke("eval", "--qrels", qrels, bad, "--into", new, "-c", "c", "-m", "AP")
    assert failed.exit_code == 1 and not new.exists()  # a file the command created goes with it


def test_an_evaluation_that_fails_after_the_storing_stores_nothing(files, tmp_path):
    """--into stores, evaluates and writes in one transaction: an unknown measure, topics all
    dropped, an output that cannot be written leave W (or no W) as it was."""
    qrels, runs = files
    into = tmp_path / "into.duckdb"
    failing = [
        (["-m", "NOPE"], "Unknown metric 'NOPE'"),
        (["-m", "AP", "--rel", "5"], "every topic was dropped"),
        (["-m", "AP", "-o", tmp_path / "no-such-folder" / "x.csv", "-f", "csv"], "no-such-folder"),
        (["-m", "AP", "-o", tmp_path / "no-such-folder" / "x.txt", "-f", "trec"], "no-such-folder"),
    ]
    for extra, said in failing:  # a new W: not created
        result = invoke("eval", "--qrels", qrels, *runs, "--into", into, "-c", "c", *extra)
        assert result.exit_code == 1 and said in result.stderr and "ingested" not in result.stderr
        assert not into.exists()
    assert invoke("eval", "--qrels", qrels, runs[0], "--into", into, "-c", "c", "-m", "AP").exit_code == 0
    stored = into.read_bytes()
    for extra, said in failing:  # W holds r1: r2 and r3 are not stored with it
        result = invoke("eval", "--qrels", qrels, *runs, "--into", into, "-c", "c", *extra)
        assert result.exit_code == 1 and said in result.stderr
        assert into.read_bytes() == stored and not (tmp_path / "no-such-folder").exists()
    result = invoke("eval", "--qrels", qrels, *runs, "--into", into, "-c", "c", "-m", "AP", "-f", "csv")
    assert result.exit_code == 0 and "2 of 3 runs ingested or replaced, 1 unchanged" in result.stderr
    with duckdb.connect(str(into), read_only=True) as con:
        assert con.execute("SELECT run_id FROM runs ORDER BY 1").fetchall() == [("r1",), ("r2",), ("r3",)]


def test_report_from_files_stores_all_of_them_or_nothing(files, tmp_path):
    """`report --qrels Q RUN...`: the qrels, the runs and the report in one transaction."""
    qrels, runs = files
    db = tmp_path / "w.duckdb"
    assert invoke("eval", "--qrels", qrels, runs[0], "--into", db, "-c", "c", "-m", "AP").exit_code == 0
    stored = db.read_bytes()
    other = tmp_path / "other.qrels"  # a new qrels set (its own --qrels-id), then a bad run
    other.write_text(QRELS.replace("3 0 z 1", "3 0 z 2"))
    bad = tmp_path / "bad.txt"
    bad.write_text("1 Q0 a 1 5.0 r9\n1 Q0 b 2 oops r9\n")
    out = tmp_path / "r.html"
    result = invoke("report", "--db", db, "--qrels", other, "--qrels-id", "other", runs[1], bad, "-c", "c", "-o", out)
    assert result.exit_code == 1 and "bad.txt:2: " in result.stderr
    assert "ingested" not in result.stderr  # (nothing is said stored that was not)
    assert db.read_bytes() == stored and not out.exists()  # the new qrels set went with the run
    # the report cannot be written: nothing it would have stored is kept
    result = invoke("report", "--db", db, "--qrels", other, "--qrels-id", "other", runs[1], "-c", "c",
                    "-o", tmp_path / "no-such-folder" / "r.html")
    assert result.exit_code == 1 and "no-such-folder" in result.stderr
    assert db.read_bytes() == stored
    # a new file: removed again with what the command would have stored
    new = tmp_path / "new.duckdb"
    result = invoke("report", "--db", new, "--qrels", qrels, *runs, bad, "-c", "c", "-o", out)
    assert result.exit_code == 1 and not new.exists() and not out.exists()
    # and when all is well, all of it is stored and the report written
    result = invoke("report", "--db", db, "--qrels", other, "--qrels-id", "other", runs[1], "-c", "c", "-o", out)
    assert result.exit_code == 0, result.output
    assert "qrels 'other' from" in result.stderr and "1 of 1 runs ingested" in result.stderr
    assert result.stderr.splitlines()[-1].startswith(f"wrote {out} (")
    assert out.read_text().startswith("<!DOCTYPE html>")
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT DISTINCT qrels_id FROM qrels ORDER BY 1").fetchall() == [("default",), ("other",)]
        assert con.execute("SELECT run_id FROM runs ORDER BY 1").fetchall() == [("r1",), ("r2",)]


def test_every_ingest_works_inside_a_callers_transaction(files, tmp_path):
    """report --qrels stores qrels, runs and run metadata inside its own transaction: each
    ingest nested there leaves no half-read result on the connection (a DataFrame
    registered after one failed with DuckDB's 'unfinished result')."""
    from evalwh.warehouse import Warehouse

    qrels, runs = files
    metadata = tmp_path / "runs.tsv"
    metadata.write_text("run_id\tgroup\tpooled\nr1\tg\ttrue\nr2\tg\tfalse\n")
    with Warehouse(tmp_path / "w.duckdb") as wh:
        with wh.transaction():
            wh.ingest_qrels(qrels, collection="c")
            wh.ingest_runs(runs, collection="c")
            assert wh.ingest_run_metadata(metadata, collection="c") == 2
        pooled = wh.con.execute("SELECT run_id, pooled FROM runs ORDER BY run_id").fetchall()
    assert pooled == [("r1", True), ("r2", False), ("r3", None)]


def test_into_needs_qrels_and_a_collection_for_a_new_file(files, tmp_path):
    qrels, runs = files
    new = tmp_path / "new.duckdb"
    result = invoke("eval", "--qrels", qrels, *runs, "--into", new, "-m", "AP")
    assert result.exit_code == 1 and "--into a new warehouse needs --collection NAME" in result.output
    assert not new.exists()
    result = invoke("eval", "--into", new, "-c", "c", "-m", "AP")
    assert result.exit_code == 1 and "--into stores what --qrels evaluates" in result.output
    for extra in (["--store"], ["--run", "r1"], ["--qrels-id", "x"]):
        result = invoke("eval", "--qrels", qrels, *runs, "--into", new, "-c", "c", "-m", "AP", *extra)
        assert result.exit_code == 1 and "apply to a warehouse" in result.output
    assert not new.exists()


@pytest.mark.parametrize("pieces", [False, True], ids=["whole files", "in pieces"])
def test_staged_in_memory_or_as_parquet_the_same_rows(files, tmp_path, monkeypatch, pieces):
    """A small ingest of small files stages what the reader ranked as Arrow tables, a large
    one or one of large files as Parquet files (evalwh.store.ingest.keyed.STAGE_BYTES,
    STAGE_FILE_BYTES): all store the same rows under the same keys' meanings, whole files
    or plain files read a piece of whole topics at a time, with a file beside them that goes
    the general way (r3)."""
    from evalwh.store.ingest import keyed, runs

    qrels, run_files = files
    if pieces:  # (every plain file of more than 2 x 16 bytes is read in pieces)
        monkeypatch.setattr(keyed, "PIECE_BYTES", 16)
    written: list[str] = []  # the Parquet files made
    added: list[str] = []  # the tables a file read in pieces staged (8 a piece)
    new_name, add = keyed.Stored.new_name, keyed.Staging.add

    def spied_name(self):
        written.append(new_name(self))
        return written[-1]

    def spied_add(self, kind, table):
        added.append(kind)
        add(self, kind, table)

    monkeypatch.setattr(keyed.Stored, "new_name", spied_name)
    monkeypatch.setattr(keyed.Staging, "add", spied_add)
    stored = {}
    ways = (  # (the budget of the whole ingest, and of its files on average)
        ("memory", keyed.STAGE_BYTES, keyed.STAGE_FILE_BYTES),
        ("parquet", 0, keyed.STAGE_FILE_BYTES),
        ("large files", keyed.STAGE_BYTES, 0),
    )
    for way, budget, per_file in ways:
        monkeypatch.setattr(runs, "STAGE_BYTES", budget)
        monkeypatch.setattr(runs, "STAGE_FILE_BYTES", per_file)
        db = tmp_path / f"{way}.duckdb"
        assert invoke("ingest", "qrels", qrels, "-c", "c", "--db", db).exit_code == 0
        result = invoke("ingest", "runs", *run_files, "-c", "c", "--db", db)
        assert result.exit_code == 0, result.output
        stored[way] = contents(db)
        staged, tables = len(written), len(added)
        written.clear()
        added.clear()
        # Parquet files only the large ways: rows, new documents and 6 parts of judged rows
        # of each file the reader ranked (r1 and r2); a file read in pieces (more than one
        # each) adds a piece's tables to its files (a kind starts another only where a
        # column has NULLs that the file's earlier pieces did not)
        if way == "memory":
            assert staged == 0
        elif pieces:
            assert tables % 8 == 0 and tables > 16 and 16 <= staged < tables
        else:
            assert staged == 16 and tables == 0
    assert stored["memory"] == stored["parquet"] == stored["large files"]
    assert len(stored["memory"]["run_rows"]) == 11 and len(stored["memory"]["judged_builds"]) == 3


def test_a_failing_insert_of_staged_tables_names_its_own_error():
    """insert_staged reads Arrow tables through a relation's query(); when the statement fails
    inside a transaction, DuckDB's clean-up after it fails too ('transaction is aborted'):
    the error reported is the statement's own (on a full disk: the disk is full)."""
    import pyarrow as pa

    from evalwh import sql
    from evalwh.errors import QueryError
    from evalwh.store.ingest.cache import insert_staged
    from evalwh.warehouse import Warehouse

    rows = pa.table(
        {
            "list_key": pa.array([1, None], pa.int32()),  # (NOT NULL in run_rows)
            "doc_key": pa.array([1, 2], pa.int64()),
            "score": [1.0, 0.5],
            "rank": pa.array([1, 2], pa.int32()),
            "rank_given": pa.array([None, None], pa.string()),
            "given_rank": pa.array([None, None], pa.int32()),
        }
    )
    insert = sql.query("evalwh.queries.ingest", "insert_rows")
    with Warehouse(":memory:") as wh, wh.transaction():
        with pytest.raises(QueryError) as raised:
            insert_staged(wh, insert, "staged_rows", [rows])
        message = str(raised.value)
        assert message.startswith("evalwh.queries.ingest/insert_rows.sql failed: ")
        assert "NOT NULL constraint failed: run_rows.list_key" in message, message
        assert "aborted" not in message
