"""Documents keyed once per collection (schema/026_document_keys.sql), and the migration to it.

Until 026 every (collection, topic, document) pair a run retrieved had its own key and its
strings in ``documents``. A warehouse written by the two releases before it (steps up to
021_float32_order, and up to 025_audits, the last before 026) is made here as those releases
left it: the steps applied one by one, then the rows of a warehouse written today copied in,
``documents`` and ``run_rows`` laid out by pair as they were. Opened for writing, it takes the
later steps; then every line reads back as before (``run_results``), the judged-rows cache is
kept (it is keyed by list and rank, not by document), and every registered measure, per
topic, has the value it had before the migration.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd
import pytest
from small_collection import catalog_specs, fill

from evalwh import Warehouse, sql


def _specs() -> list[str]:
    """Every registered measure at depth 5, and whole-list where k is optional."""
    return catalog_specs()


def _today(path: Path, tmp_path: Path) -> None:
    """A warehouse written today: two collections sharing document ids (a DataFrame's path,
    SQL keys) and a run file read by the C reader (the dictionary's keys), rank column kept."""
    with Warehouse(path) as wh:
        fill(wh, collection="small")
        fill(wh, collection="other", seed=3, runs=2, topics=4)
        lines = [
            f"q{t} Q0 d{i:03d} {i + 1 if i != 2 else 7} {9 - (i % 4)} filed\n"
            for t in range(3)
            for i in range(12)
        ]
        (tmp_path / "filed").write_text("".join(lines))
        wh.ingest_runs([tmp_path / "filed"], collection="small")
        wh.evaluate(["AP", "nDCG@5"], collection="small")  # (the cache, built and stored)


def _by_steps(con: duckdb.DuckDBPyConnection, until: str) -> None:
    """The shipped steps up to and including ``until``, each recorded as a writer records it."""
    con.execute(
        "CREATE TABLE schema_migrations (name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)"
    )
    for name, file in sql.load_package("evalwh.schema").items():
        con.execute(file.text)
        con.execute("INSERT INTO schema_migrations (name) VALUES (?)", [name])
        if name == until:
            return


def _old(path: Path, today: Path, until: str) -> None:
    """A warehouse at step ``until`` holding today's rows, documents and lines keyed by pair."""
    con = duckdb.connect(str(path))
    _by_steps(con, until)
    con.execute(f"ATTACH '{today}' AS today (READ_ONLY)")
    tables = con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = 'old' OR database_name = current_database()"
    ).fetchall()
    for (table,) in tables:
        if table in {"schema_migrations", "documents", "run_rows"}:
            continue
        ours = [
            c
            for (c,) in con.execute(
                "SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() AND table_name = ?",
                [table],
            ).fetchall()
        ]
        theirs = {
            c
            for (c,) in con.execute(
                "SELECT column_name FROM duckdb_columns() WHERE database_name = 'today' AND table_name = ?",
                [table],
            ).fetchall()
        }
        listed = ", ".join(sql.identifier(c) for c in ours if c in theirs)
        con.execute(
            f"INSERT INTO {sql.identifier(table)} ({listed}) SELECT {listed} FROM today.{sql.identifier(table)}"
        )
    # the layout of 013-025: a key per (collection, topic, document) pair
    con.execute(
        "CREATE TEMP TABLE pairs AS SELECT collection_id, query_id, doc_id,"
        " row_number() OVER (ORDER BY collection_id, query_id, doc_id) AS pair_key"
        " FROM (SELECT DISTINCT collection_id, query_id, doc_id FROM today.run_results)"
    )
    con.execute("INSERT INTO documents SELECT collection_id, query_id, doc_id, pair_key FROM pairs")
    con.execute(
        "INSERT INTO run_rows SELECT r.list_key, p.pair_key, r.score, r.rank,"
        " coalesce(r.given_text, CAST(r.given_rank AS VARCHAR))"  # (the rank as written, text)
        " FROM today.run_rows AS r JOIN today.run_topics AS t USING (list_key)"
        " JOIN today.documents AS d USING (doc_key)"
        " JOIN pairs AS p ON p.collection_id = t.collection_id AND p.query_id = t.query_id AND p.doc_id = d.doc_id"
        " ORDER BY r.list_key, r.rank"
    )
    con.close()


@pytest.fixture(scope="module")
def today(tmp_path_factory):  # type: ignore[no-untyped-def]
    """Today's warehouse, and what it holds and evaluates to (shared by both old releases)."""
    folder = tmp_path_factory.mktemp("today")
    path = folder / "today.duckdb"
    _today(path, folder)
    with Warehouse(path, read_only=True) as wh:
        lines = wh.con.execute("SELECT * FROM run_results ORDER BY ALL").fetchall()
        values = {
            c: wh.evaluate(_specs(), collection=c, per_query=True) for c in ("small", "other")
        }
        cache = wh.con.execute("SELECT * FROM judged_cache ORDER BY ALL").fetchall()
        documents = wh.con.execute(
            "SELECT collection_id, doc_id FROM documents ORDER BY ALL"
        ).fetchall()
    return path, lines, values, cache, documents


@pytest.mark.parametrize("until", ["021_float32_order", "025_audits"])
def test_a_warehouse_keyed_by_pair_migrates_with_every_line_and_value_kept(today, tmp_path, until):
    today, lines, values, cache, documents = today
    specs = _specs()
    old = tmp_path / "old.duckdb"
    _old(old, today, until)
    with duckdb.connect(str(old), read_only=True) as con:  # (as the old release left it)
        assert con.execute("SELECT count(*) FROM documents").fetchall()[0][0] > len(documents)
        assert sorted(con.execute("SELECT * FROM run_results").fetchall()) == lines
    shipped = list(sql.load_package("evalwh.schema"))
    with Warehouse(old) as wh:
        assert wh.upgrade() == shipped[shipped.index(until) + 1 :]
        assert wh.con.execute("SELECT * FROM run_results ORDER BY ALL").fetchall() == lines
        assert (
            wh.con.execute("SELECT collection_id, doc_id FROM documents ORDER BY ALL").fetchall()
            == documents
        )
        # one key per (collection, document), every line's document stored, no other
        assert wh.con.execute(
            "SELECT count(DISTINCT doc_key) = count(*), count(DISTINCT (collection_id, doc_id)) = count(*),"
            " (SELECT count(*) FROM run_rows ANTI JOIN documents USING (doc_key)),"
            " (SELECT count(*) FROM documents ANTI JOIN run_rows USING (doc_key)) FROM documents"
        ).fetchall() == [(True, True, 0, 0)]
        assert wh.con.execute("SELECT * FROM judged_cache ORDER BY ALL").fetchall() == cache
        for collection, expected in values.items():
            got = wh.evaluate(specs, collection=collection, per_query=True)
            keep = ["run_id", "query_id", "measure", "value"]
            pd.testing.assert_frame_equal(got[keep], expected[keep])
        # and the keys go on: a new run's documents, old and new, keyed once
        (tmp_path / "later").write_text("q0 Q0 d001 1 2 later\nq0 Q0 zz9 2 1 later\n")
        wh.ingest_runs([tmp_path / "later"], collection="small")
        assert wh.con.execute(
            "SELECT count(*) = count(DISTINCT (collection_id, doc_id)) FROM documents"
        ).fetchall() == [(True,)]
        assert wh.con.execute(
            "SELECT doc_id FROM run_results WHERE run_id = 'later' ORDER BY rank"
        ).fetchall() == [("d001",), ("zz9",)]


def test_the_rank_as_written_is_kept_as_an_integer_or_as_text_and_reads_back_as_written(tmp_path):
    """run_rows keeps the rank column where it is not the rank: as an integer where it is an
    integer's own decimal, else as text; run_results gives every one back as the file wrote it."""
    given = ["1", "21", "-3", "07", "+4", "1.0", "99999999999", "x"]
    lines = "".join(f"q1 Q0 d{i} {g} {20 - i} r\n" for i, g in enumerate(given))
    for how, text in (("reader", lines), ("general", "# a comment: the general path\n" + lines)):
        (tmp_path / how).write_text(text)
        with Warehouse(":memory:") as wh:
            wh.ingest_runs([tmp_path / how], collection="c")
            back = wh.con.execute(
                "SELECT doc_id, rank_given, rank FROM run_results ORDER BY rank"
            ).fetchall()
            assert back == [(f"d{i}", g, i + 1) for i, g in enumerate(given)], how
            stored = wh.con.execute(
                "SELECT rank, given_rank, given_text FROM run_rows ORDER BY rank"
            ).fetchall()
            assert stored == [
                (1, None, None),
                (2, 21, None),
                (3, -3, None),
                (4, None, "07"),
                (5, None, "+4"),
                (6, None, "1.0"),
                (7, None, "99999999999"),
                (8, None, "x"),
            ], how
