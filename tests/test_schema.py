"""The warehouse schema: migrations applied once and recorded, tables, the one ranking macro."""

from __future__ import annotations

import re

import duckdb
import pytest

from evalwh import sql
from evalwh.errors import EvalWhError, NotFoundError, SchemaError
from evalwh.warehouse import Warehouse

CORE_TABLES = {
    "collections": ["collection_id", "description", "created_at"],
    "topics": ["collection_id", "query_id"],
    "qrels_sets": [
        "collection_id",
        "qrels_id",
        "kind",
        "source_file",
        "sha256",
        "line_count",
        "parent_qrels_id",
        "params",
        "created_at",
        "source",
        "judge",
        "model",
        "prompt_sha256",
        "round",
    ],
    "qrels": ["collection_id", "qrels_id", "query_id", "iteration", "doc_id", "relevance"],
    "runs": [
        "collection_id",
        "run_id",
        "tag",
        "source_file",
        "sha256",
        "line_count",
        "ingested_at",
        "group_name",
        "run_type",
        "pooled",
        "float32_lists",
        "float32_first_rank",
    ],
    "run_results": ["collection_id", "run_id", "query_id", "doc_id", "score", "rank_given", "rank"],
    "run_topics": ["collection_id", "run_id", "query_id", "num_ret", "list_key"],
}


def test_core_tables_and_columns(wh):
    for table, columns in CORE_TABLES.items():
        found = wh.con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position",
            [table],
        ).fetchall()
        assert [c for (c,) in found] == columns, table
    types = dict(
        wh.con.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'run_results'"
        ).fetchall()
    )
    assert types == {
        "collection_id": "VARCHAR",
        "run_id": "VARCHAR",
        "query_id": "VARCHAR",
        "doc_id": "VARCHAR",
        "score": "DOUBLE",
        "rank_given": "VARCHAR",
        "rank": "INTEGER",
    }


# Tables stored by key (schema/013_keyed_results.sql) reach their collection through the key.
# A judging prompt is stored once however many sets (of any collection) used it, keyed by hash.
_BY_KEY = {
    "run_rows": ("list_key", "run_topics"),
    "judged_results": ("build_key", "judged_builds"),
    "judgment_prompts": ("prompt_sha256", "qrels_sets"),
}


def test_every_table_carries_the_collection(wh):
    tables = wh.con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE NOT temporary AND table_name <> 'schema_migrations'"
    ).fetchall()
    for (table,) in tables:
        columns = wh.con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ?", [table]
        ).fetchall()
        if table in _BY_KEY:
            key, parent = _BY_KEY[table]
            assert (key,) in columns and ("collection_id",) not in columns, table
            parent_columns = wh.con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = ?", [parent]
            ).fetchall()
            assert (key,) in parent_columns and ("collection_id",) in parent_columns, parent
        else:
            assert ("collection_id",) in columns, table


def test_migrations_are_applied_once_in_order(tmp_path):
    db = tmp_path / "w.duckdb"
    Warehouse(db).close()
    with Warehouse(db) as wh:
        applied = [
            r[0]
            for r in wh.con.execute(
                "SELECT name FROM schema_migrations ORDER BY applied_at, name"
            ).fetchall()
        ]
    shipped = list(sql.load_package("evalwh.schema"))
    assert applied == shipped
    assert shipped == sorted(shipped) and shipped[0] == "001_core"
    assert all(re.fullmatch(r"\d{3}_[a-z0-9_]+", name) for name in shipped)


def _catalog(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple]]:
    """Every table, column, constraint, view, index, sequence, macro and comment of a database."""
    queries = {
        "tables": "SELECT schema_name, table_name, comment, sql FROM duckdb_tables()",
        "columns": "SELECT table_name, column_name, column_index, data_type, column_default,"
        " is_nullable, comment FROM duckdb_columns()",
        "constraints": "SELECT table_name, constraint_type, constraint_text FROM duckdb_constraints()",
        "views": "SELECT view_name, comment, sql FROM duckdb_views() WHERE NOT internal",
        "indexes": "SELECT table_name, index_name, sql FROM duckdb_indexes()",
        "sequences": "SELECT sequence_name, start_value, increment_by FROM duckdb_sequences()",
        "macros": "SELECT function_name, parameters, macro_definition FROM duckdb_functions()"
        " WHERE NOT internal AND function_type LIKE '%macro'",
    }
    return {
        kind: sorted(con.execute(query).fetchall(), key=repr) for kind, query in queries.items()
    }


def test_a_new_database_in_one_transaction_equals_the_steps_one_by_one(tmp_path):
    """Warehouse._migrate applies a new database's steps in one transaction; a file that has
    some takes the others one transaction each. Both give the same catalog and records."""
    new = tmp_path / "new.duckdb"
    Warehouse(new).close()
    # an old warehouse holding only 001_core, upgraded step by step
    stepwise = tmp_path / "old.duckdb"
    con = duckdb.connect(str(stepwise))
    con.execute(
        "CREATE TABLE schema_migrations ("
        " name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)"
    )
    con.execute(sql.load_package("evalwh.schema")["001_core"].text)
    con.execute("INSERT INTO schema_migrations (name) VALUES ('001_core')")
    con.close()
    with Warehouse(stepwise) as wh:
        upgraded = wh.upgrade()
    shipped = list(sql.load_package("evalwh.schema"))
    assert upgraded == shipped[1:]
    catalogs = []
    for path in (new, stepwise):
        con = duckdb.connect(str(path), read_only=True)
        catalogs.append(_catalog(con))
        names = [r[0] for r in con.execute("SELECT name FROM schema_migrations ORDER BY name").fetchall()]
        assert names == shipped
        con.close()
    assert catalogs[0] == catalogs[1]
    assert len(catalogs[0]["tables"]) > 10 and catalogs[0]["views"] and catalogs[0]["macros"]


def test_a_new_file_copied_from_the_process_empty_warehouse_equals_one_the_ddl_made(tmp_path, monkeypatch):
    """From a process's second new warehouse file on, the file is written as a copy of an
    empty warehouse the process made once (connection._Empty): the same catalog, the same
    steps (applied now), and a file that is there already is opened, never overwritten."""
    from evalwh.store import connection

    monkeypatch.setattr(connection._Empty, "made", 0)
    monkeypatch.setattr(connection._Empty, "image", None)
    first, second, third = (tmp_path / f"{name}.duckdb" for name in ("first", "second", "third"))
    with Warehouse(first) as wh:
        assert connection._Empty.image is None  # the first: made by the DDL, no image yet
        assert wh.upgrade() == list(sql.load_package("evalwh.schema"))
    with Warehouse(second) as wh:
        assert connection._Empty.image is not None and second.read_bytes()[8:12] == b"DUCK"
        assert wh.upgrade() == list(sql.load_package("evalwh.schema"))  # (as a new file says)
        wh.con.execute("CREATE TABLE mine (x INTEGER)")  # something only this file has
    Warehouse(third).close()
    catalogs = []
    for path in (first, second, third):
        con = duckdb.connect(str(path), read_only=True)
        catalogs.append(_catalog(con))
        steps = con.execute("SELECT name, applied_at > now() - INTERVAL 1 HOUR FROM schema_migrations ORDER BY name")
        assert steps.fetchall() == [(name, True) for name in sql.load_package("evalwh.schema")]
        con.close()
    assert catalogs[0] == catalogs[2] and catalogs[1] != catalogs[2]
    with Warehouse(second) as wh:  # opened again, as it is: not laid down a second time
        assert wh.con.execute("SELECT count(*) FROM mine").fetchall() == [(0,)]
    # no writable temporary folder for the image: every new file is made by the DDL, as before
    monkeypatch.setattr(connection._Empty, "image", None)
    monkeypatch.setattr(connection._Empty, "failed", False)  # (put back after the test)
    monkeypatch.setattr("tempfile.mkdtemp", lambda **_: (_ for _ in ()).throw(PermissionError(13, "denied")))
    fourth = tmp_path / "fourth.duckdb"
    with Warehouse(fourth) as wh:
        assert connection._Empty.failed and connection._Empty.image is None
        assert wh.upgrade() == list(sql.load_package("evalwh.schema"))
    con = duckdb.connect(str(fourth), read_only=True)
    assert _catalog(con) == catalogs[0]
    con.close()
    # a path that cannot be created is DuckDB's own error, one line, and leaves nothing
    with pytest.raises(EvalWhError, match="cannot open the warehouse"):
        Warehouse(tmp_path / "no-such-folder" / "w.duckdb")
    assert not (tmp_path / "no-such-folder").exists()


# Migrations that move data from one layout to another: each runs once, in its own
# transaction (Warehouse._migrate), so it is never half applied; a second run finds the new
# layout. tests/test_evaluation.py upgrades an old warehouse through it.
# 015 adds the provenance columns of qrels_sets and marks the sets already there: once.
_ONE_WAY = {"013_keyed_results", "014_judged_spans", "015_judgment_provenance"}


def test_schema_files_are_idempotent():
    con = duckdb.connect()
    for name, file in sql.load_package("evalwh.schema").items():
        con.execute(file.text)
        if name not in _ONE_WAY:
            con.execute(file.text)


def test_read_only_needs_an_existing_warehouse(tmp_path):
    with pytest.raises(
        NotFoundError, match=re.escape(f"{tmp_path / 'none.duckdb'}: no such warehouse file")
    ):
        Warehouse(tmp_path / "none.duckdb", read_only=True)
    assert not (tmp_path / "none.duckdb").exists()


def test_a_foreign_duckdb_file_is_not_a_warehouse(tmp_path):
    db = tmp_path / "other.duckdb"
    duckdb.connect(str(db)).execute("CREATE TABLE t (x INTEGER)").close()
    with pytest.raises(SchemaError, match=re.escape(f"{db}: not an evalwh warehouse")):
        Warehouse(db, read_only=True)


def test_trec_ranked_is_trec_eval_order(wh):
    """Score descending, then docno descending byte-wise; the file's rank column is ignored."""
    wh.con.execute(
        """
        CREATE TEMP TABLE example AS
        SELECT * FROM (VALUES
            ('c', 'r', '1', 'b', 1.0), ('c', 'r', '1', 'a', 1.0), ('c', 'r', '1', 'é', 1.0),
            ('c', 'r', '1', 'Z', 1.0), ('c', 'r', '1', 'z', 2.0), ('c', 'r', '1', 'y', 0.5),
            ('c', 'r', '2', 'a', 1.0), ('d', 'r', '1', 'a', 0.0), ('c', 's', '1', 'a', -1.0),
            ('c', 'r', '1', 'x', 1.00000001)
        ) AS t(collection_id, run_id, query_id, doc_id, score)
        """
    )
    ranked = wh.con.execute(
        "SELECT collection_id, run_id, query_id, doc_id, rank FROM trec_ranked('example', false) ORDER BY ALL"
    ).fetchall()
    # 'é' is 0xC3 0xA9 in UTF-8: above every ASCII byte, so first among the tied docnos
    assert ranked == [
        ("c", "r", "1", "Z", 6),
        ("c", "r", "1", "a", 5),
        ("c", "r", "1", "b", 4),
        ("c", "r", "1", "x", 2),
        ("c", "r", "1", "y", 7),
        ("c", "r", "1", "z", 1),
        ("c", "r", "1", "é", 3),
        ("c", "r", "2", "a", 1),
        ("c", "s", "1", "a", 1),
        ("d", "r", "1", "a", 1),
    ]
    # rounded to float32, 1.00000001 ties with 1.0 and falls back to the docno order
    float32 = dict(
        wh.con.execute(
            "SELECT doc_id, rank FROM trec_ranked('example', true)"
            " WHERE collection_id = 'c' AND run_id = 'r' AND query_id = '1'"
        ).fetchall()
    )
    assert float32 == {"z": 1, "é": 2, "x": 3, "b": 4, "a": 5, "Z": 6, "y": 7}


def test_ranked_results_view(wh):
    import pandas as pd

    wh.ingest_runs(
        pd.DataFrame(
            {"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [1.0, 2.0], "rank": [1, 2]}
        ),
        collection="c",
        run_id="r",
    )
    assert wh.con.execute(
        "SELECT collection_id, run_id, query_id, doc_id, score, rank, rank_given FROM ranked_results ORDER BY rank"
    ).fetchall() == [("c", "r", "1", "b", 2.0, 1, "2"), ("c", "r", "1", "a", 1.0, 2, "1")]
