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


# DuckDB's catalog functions, read whole (every column they have now or gain) except what
# names or counts the database rather than describes the schema: object ids, the database's
# name and a table's estimated row count.
_CATALOG = {
    "schemas": "duckdb_schemas() WHERE NOT internal",
    "types": "duckdb_types() WHERE NOT internal",
    "tables": "duckdb_tables()",
    "columns": "duckdb_columns()",
    "constraints": "duckdb_constraints()",
    "views": "duckdb_views() WHERE NOT internal",
    "indexes": "duckdb_indexes()",
    "sequences": "duckdb_sequences()",
    "macros": "duckdb_functions() WHERE NOT internal",
}
_NOT_SCHEMA = re.compile(r"oid$|^database_name$|^estimated_size$")


def _catalog(con: duckdb.DuckDBPyConnection, *, comments: bool = True) -> dict[str, list[str]]:
    """Every schema, type, table, column, constraint, view, index, sequence and macro of a
    database, with every property DuckDB reports (comments, unless ``comments=False``,
    defaults, SQL text included), and the schema steps it records."""
    # A view keeps the column types it had when it was made until it is bound again: 007's
    # topic_judgments says max_relevance INTEGER until something reads it after 012 made the
    # grades DOUBLE. Reading each once gives every view the types a query sees.
    views = con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()
    for (view,) in views:
        con.execute(f"SELECT * FROM {sql.identifier(view)} LIMIT 0").fetchall()
    catalog = {}
    for kind, relation in _CATALOG.items():
        described = con.execute(f"DESCRIBE SELECT * FROM {relation}").fetchall()
        columns = [name for name, *_ in described if not _NOT_SCHEMA.search(name)]
        columns = [name for name in columns if comments or name != "comment"]
        listed = ", ".join(map(sql.identifier, columns))
        rows = con.execute(f"SELECT {listed} FROM {relation}").fetchall()
        catalog[kind] = sorted(repr(dict(zip(columns, row, strict=True))) for row in rows)
    steps = con.execute("SELECT name FROM schema_migrations ORDER BY name").fetchall()
    catalog["steps"] = [name for (name,) in steps]
    return catalog


def _by_steps(con: duckdb.DuckDBPyConnection, until: str | None = None) -> None:
    """Apply the shipped steps one after another, each recorded as Store._migrate records it
    (up to and including ``until``), as every warehouse was made before the baseline."""
    con.execute(
        "CREATE TABLE schema_migrations ("
        " name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)"
    )
    for name, file in sql.load_package("evalwh.schema").items():
        con.execute(file.text)
        con.execute("INSERT INTO schema_migrations (name) VALUES (?)", [name])
        if name == until:
            break


def _baseline() -> dict[str, sql.SqlFile]:
    return sql.load_package("evalwh.schema.baseline")


def test_the_baseline_is_the_schema_the_steps_make():
    """schema/baseline/ alone (no step run after it) makes the catalog that applying every
    shipped step one by one makes, and records every step: a new step that does not update
    the baseline (or its descriptions) fails here."""
    stepwise = duckdb.connect()
    _by_steps(stepwise)
    baseline = duckdb.connect()
    for name in ("warehouse", "descriptions"):
        baseline.execute(_baseline()[name].text)
    expected, found = _catalog(stepwise), _catalog(baseline)
    assert found["steps"] == list(sql.load_package("evalwh.schema"))
    for kind in expected:  # (one kind at a time: a failure names what differs)
        ours, theirs = set(found[kind]), set(expected[kind])
        assert sorted(ours - theirs) == [], f"{kind} only in the baseline"
        assert sorted(theirs - ours) == [], f"{kind} missing from the baseline"
        assert found[kind] == expected[kind], kind
    assert len(found["tables"]) > 30 and len(found["views"]) >= 10 and len(found["macros"]) == 3
    described = [row for row in found["tables"] + found["views"] if "'comment': None" not in row]
    assert len(described) == len(found["tables"]) + len(found["views"]) - 1  # (schema_migrations)
    stepwise.close()
    baseline.close()


def test_a_new_warehouse_is_the_baseline_and_records_every_step(tmp_path):
    """Warehouse(":memory:") and a new file both come from the baseline: the steps' catalog."""
    stepwise = duckdb.connect()
    _by_steps(stepwise)
    expected = _catalog(stepwise)
    with Warehouse(":memory:") as wh:
        assert wh.upgrade() == list(sql.load_package("evalwh.schema"))
        assert _catalog(wh.con) == expected
    Warehouse(tmp_path / "new.duckdb").close()
    con = duckdb.connect(str(tmp_path / "new.duckdb"), read_only=True)
    assert _catalog(con) == expected
    con.close()


def test_a_step_the_baseline_lacks_is_applied_after_it():
    """A step shipped after the baseline was last updated is applied on top of it (as on an
    older file), and recorded."""
    from evalwh.store import connection

    files = dict(sql.load_package("evalwh.schema"))
    later = "CREATE TABLE later_step (collection_id VARCHAR NOT NULL);"
    files["099_later_step"] = sql.SqlFile("evalwh.schema", "099_later_step", {}, later)
    con = duckdb.connect()
    connection._create_schema(con, files)
    steps = con.execute("SELECT name FROM schema_migrations ORDER BY name").fetchall()
    assert [name for (name,) in steps] == list(files)
    assert con.execute("SELECT count(*) FROM later_step").fetchall() == [(0,)]
    con.close()


@pytest.mark.parametrize("step", ["001_core", "012_float_grades", "021_float32_order"])
def test_a_file_at_an_older_step_migrates_to_the_baseline(tmp_path, step):
    """A warehouse file an older evalwh made (its steps up to ``step``) takes the later steps
    when opened for writing, and then has the catalog of a new warehouse."""
    old = tmp_path / "old.duckdb"
    con = duckdb.connect(str(old))
    _by_steps(con, until=step)
    con.close()
    shipped = list(sql.load_package("evalwh.schema"))
    with Warehouse(old) as wh:
        assert wh.upgrade() == shipped[shipped.index(step) + 1 :]
    with Warehouse(":memory:") as wh:
        expected = _catalog(wh.con)
    con = duckdb.connect(str(old), read_only=True)
    assert _catalog(con) == expected
    con.close()


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
# 026 gives documents new keys and moves the lines to them: once.
_ONE_WAY = {"013_keyed_results", "014_judged_spans", "015_judgment_provenance", "026_document_keys"}


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


# -- descriptions: every warehouse has them, but evalwh.evaluate's throw-away one -------------


def _descriptions(con: duckdb.DuckDBPyConnection) -> int:
    """How many tables, views and columns carry a description (COMMENT ON)."""
    counts = [
        con.execute(f"SELECT count(comment) FROM {relation}").fetchone()[0]
        for relation in ("duckdb_tables()", "duckdb_views()", "duckdb_columns()")
    ]
    return sum(counts)


def test_a_warehouse_has_every_description_and_a_throw_away_one_none(tmp_path):
    from evalwh.store.connection import Store

    shipped = _baseline()["descriptions"].text.count("\nCOMMENT ON ")
    assert shipped == 78
    with Warehouse(":memory:") as wh:
        assert _descriptions(wh.con) == shipped
        described = _catalog(wh.con, comments=False)
    with Store(":memory:", described=False) as store:
        assert _descriptions(store.con) == 0
        # nothing else differs: the same tables, columns, views and macros, the same steps
        assert _catalog(store.con, comments=False) == described
    with Warehouse(tmp_path / "w.duckdb") as wh:  # a file always has them
        assert _descriptions(wh.con) == shipped
    with pytest.raises(ValueError, match="described=False is for an in-memory warehouse only"):
        Store(tmp_path / "v.duckdb", described=False)
    assert not (tmp_path / "v.duckdb").exists()


def test_the_direct_path_makes_an_undescribed_warehouse_and_the_same_values(tmp_path, monkeypatch):
    """The direct path (evalwh.evaluate, compare, eval --qrels) makes an undescribed warehouse;
    every value, from a qrels file (means) and a qrels DataFrame (per topic), is what the
    warehouse path gives in a described one."""
    import pandas as pd

    import evalwh
    from evalwh.io.demo_data import write_demo
    from evalwh.store import connection

    demo = write_demo(tmp_path)
    measures = ["P@10", "AP", "nDCG@10", "A_p@10", "bpref"]
    made = []
    real = connection._create_schema

    def recording(con, files, *, described=True):
        made.append(described)
        real(con, files, described=described)

    monkeypatch.setattr(connection, "_create_schema", recording)
    qrels = pd.read_csv(demo.qrels, sep=" ", header=None, names=["query_id", "iteration", "doc_id", "relevance"],
                        dtype={"query_id": str, "doc_id": str})  # fmt: skip
    for given, per_query in ((demo.qrels, False), (qrels, True)):
        made.clear()
        found = evalwh.evaluate(given, demo.runs, measures, per_query=per_query)
        assert made == [False]
        made.clear()
        with Warehouse(":memory:") as wh:
            assert made == [True]
            wh.ingest_qrels(given, collection="c")
            wh.ingest_runs(demo.runs, collection="c")
            expected = wh.evaluate(measures, collection="c", per_query=per_query)
        assert len(found) == len(demo.runs) * len(measures) * (30 if per_query else 1)
        key = ["run_id", "measure"] + (["query_id"] if per_query else [])
        merged = found.merge(expected, on=key, suffixes=("", "_stored"), validate="1:1")
        assert len(merged) == len(found)
        assert (merged["value"] == merged["value_stored"]).all()


# -- running a shipped file: its statements parsed once per process -------------------------


def test_a_shipped_file_is_parsed_once_and_runs_as_its_text_does():
    """Store.run parses a shipped file once (connection._PARSED) and runs each statement with
    the named parameters it takes; a later call with other values computes with those."""
    from evalwh.store import connection
    from evalwh.store.connection import Store

    file = sql.SqlFile(
        "tests", "two_statements", {},
        "-- name: two\nCREATE TEMP TABLE picked AS SELECT $a AS a;\n"
        "SELECT a, $b AS b FROM picked;  -- the last statement's result is returned\n",
    )  # fmt: skip
    with Store(":memory:", described=False) as first, Store(":memory:", described=False) as second:
        assert first.run(file, {"a": 1, "b": "x"}).fetchall() == [(1, "x")]
        parsed = connection._PARSED[file]
        assert [sorted(names) for _, names in parsed] == [["a"], ["b"]]
        assert second.run(file, {"a": 2, "b": "y"}).fetchall() == [(2, "y")]
        assert connection._PARSED[file] is parsed  # (not parsed again)
        # SQL text (not a shipped file) is parsed each time and never kept
        text = "SELECT a + $c AS c FROM picked"
        assert first.run(text, {"c": 10, "b": "unused"}).fetchall() == [(11,)]
        assert all(isinstance(key, sql.SqlFile) for key in connection._PARSED)
    connection._PARSED.pop(file)


def test_an_error_in_a_shipped_file_names_it_and_points_into_its_statement():
    from evalwh.errors import QueryError
    from evalwh.store.connection import Store

    file = sql.SqlFile("tests", "broken", {}, "SELECT 1 AS fine;\nSELECT nope FROM range(3);\n")
    with Store(":memory:", described=False) as store:
        for _ in range(2):  # (parsed, then from the cache: the same message)
            with pytest.raises(QueryError) as caught:
                store.run(file, {})
            message = str(caught.value)
            assert message.startswith("tests/broken.sql failed with {}: Binder Error: Referenced")
            line, caret = message.splitlines()[-2:]
            assert line == "LINE 2: SELECT nope FROM range(3);"
            assert caret.index("^") == line.index("nope")
