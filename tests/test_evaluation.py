"""The evaluation context: judged-rows cache validity, read-only path, diagnostics."""

from __future__ import annotations

import pandas as pd
import pytest

from evalwh import Warehouse
from evalwh.measures.evaluation import unjudged_share

QRELS = pd.DataFrame(
    {"query_id": ["1", "1", "1", "2", "2"], "doc_id": ["a", "b", "c", "a", "d"], "relevance": [1, 0, 1, 1, -1]}
)
RUN = pd.DataFrame(
    {
        "run_id": ["r"] * 6,
        "query_id": ["1", "1", "1", "1", "2", "2"],
        "doc_id": ["a", "x", "b", "c", "d", "a"],
        "score": [4.0, 3.0, 2.0, 1.0, 2.0, 1.0],
    }
)


def values(wh: Warehouse, *measures: str, **options) -> dict[str, float]:
    frame = wh.evaluate(list(measures), collection="c", **options)
    return dict(zip(frame["measure"], frame["value"]))


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "wh.duckdb"
    with Warehouse(path) as wh:
        wh.ingest_qrels(QRELS, collection="c")
        wh.ingest_runs(RUN, collection="c")
    return path


def test_cache_is_rebuilt_when_qrels_or_run_change(db):
    with Warehouse(db) as wh:
        # topic 1: a(rel) x b(non) c(rel): AP = (1 + 2/4)/2 = 0.75; topic 2: d(unjudged, -1) a(rel): AP = 1/2
        assert values(wh, "AP") == pytest.approx({"AP": (0.75 + 0.5) / 2})
        assert wh.query("SELECT count(*) AS n FROM judged_results")["n"][0] == 4
        changed = QRELS.assign(relevance=[1, 1, 1, 1, -1])  # b becomes relevant
        wh.ingest_qrels(changed, collection="c", replace=True)
        # topic 1: a b c relevant at ranks 1, 3, 4: AP = (1 + 2/3 + 3/4)/3
        assert values(wh, "AP") == pytest.approx({"AP": ((1 + 2 / 3 + 3 / 4) / 3 + 0.5) / 2})
        rerun = RUN.assign(score=[1.0, 2.0, 3.0, 4.0, 1.0, 2.0])  # reversed lists
        wh.ingest_runs(rerun, collection="c", replace=True)
        # topic 1: c b x a: AP = (1 + 2/2 + 3/4)/3; topic 2: a d: AP = 1
        assert values(wh, "AP") == pytest.approx({"AP": ((1 + 1 + 3 / 4) / 3 + 1.0) / 2})
        builds = wh.query("SELECT count(*) AS n FROM judged_builds")["n"][0]
        assert builds == 1


def test_read_only_path_equals_cached_path(db):
    measures = ["P@2", "AP", "bpref", "nDCG@3", "A_p@3", "RankEff", "RBP_resid@3"]
    with Warehouse(db) as wh:
        cached = wh.evaluate(measures, collection="c", per_query=True)
        cached_condensed = wh.evaluate(["AP", "P@2"], collection="c", unjudged="condensed", per_query=True)
    with Warehouse(db, read_only=True) as wh:
        direct = wh.evaluate(measures, collection="c", per_query=True)
        direct_condensed = wh.evaluate(["AP", "P@2"], collection="c", unjudged="condensed", per_query=True)
    pd.testing.assert_frame_equal(cached, direct)
    pd.testing.assert_frame_equal(cached_condensed, direct_condensed)


def test_threshold_other_than_one_bypasses_cache(db):
    with Warehouse(db) as wh:
        graded = QRELS.assign(relevance=[2, 0, 1, 2, -1])
        wh.ingest_qrels(graded, collection="c", replace=True)
        # rel >= 2: topic 1 has only a relevant (rank 1): P@2 = 0.5; topic 2: a at rank 2: 0.5
        assert values(wh, "P@2", rel=2) == pytest.approx({"P@2": 0.5})
        # rel >= 1: topic 1 a, c relevant: P@2 = 0.5; topic 2: 0.5
        assert values(wh, "P@2") == pytest.approx({"P@2": 0.5})
        assert values(wh, "AP", rel=2) == pytest.approx({"AP": (1.0 + 0.5) / 2})


def test_float32_ties_change_order_only_when_asked():
    wh = Warehouse(":memory:")
    wh.ingest_qrels(pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]}), collection="c")
    # 1.00000001 and 1.0 differ as doubles but are equal as float32: the tie then goes to the
    # larger doc_id ('b' before 'a')
    run = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [1.00000001, 1.0]})
    wh.ingest_runs(run, collection="c", run_id="r")
    assert values(wh, "RR") == {"RR": 1.0}
    assert values(wh, "RR", float32_ties=True) == {"RR": 0.5}


def test_unjudged_share_per_rank():
    wh = Warehouse(":memory:")
    wh.ingest_qrels(QRELS, collection="c")
    wh.ingest_runs(RUN, collection="c")
    frame = unjudged_share(wh, "c")
    # lists: topic 1 (a x b c), topic 2 (d a); d has grade -1: unjudged
    assert frame.values.tolist() == [
        [1, 2, 1, 0.5],  # a judged, d unjudged
        [2, 2, 1, 0.5],  # x unjudged, a judged
        [3, 1, 0, 0.0],
        [4, 1, 0, 0.0],
    ]


def test_topic_with_only_negative_grades():
    """A qrels topic whose only grades are negative (pooled, never judged) has R = 0 and no
    judged document: left out of T by default, scored 0 under trec_eval's -c averaging."""
    wh = Warehouse(":memory:")
    qrels = pd.DataFrame({"query_id": ["1", "2"], "doc_id": ["a", "b"], "relevance": [1, -1]})
    wh.ingest_qrels(qrels, collection="c")
    run = pd.DataFrame({"query_id": ["1", "2"], "doc_id": ["a", "b"], "score": [1.0, 1.0]})
    wh.ingest_runs(run, collection="c", run_id="r")
    default = wh.evaluate(["P@1", "A_p@1"], collection="c", per_query=True)
    assert default[["query_id", "measure", "value"]].values.tolist() == [["1", "P@1", 1.0], ["1", "A_p@1", 1.0]]
    compat = wh.evaluate(["P@1", "A_p@1", "AP"], collection="c", per_query=True, averaging="trec_eval_c")
    assert compat[compat["query_id"] == "2"]["value"].tolist() == [0.0, 0.0, 0.0]



def _cache_rows(wh: Warehouse) -> list[tuple]:
    """The cached judged rows in storage order (rowid)."""
    return wh.con.execute(
        "SELECT b.collection_id, b.qrels_id, t.run_id, t.query_id, c.rank, c.gain,"
        " c.judged_so_far, c.relevant_so_far FROM judged_results AS c"
        " JOIN judged_builds AS b USING (build_key) JOIN run_topics AS t USING (list_key)"
        " ORDER BY c.rowid"
    ).fetchall()


def _in_cache_order(rows: list[tuple]) -> bool:
    """Relevant rows (grade >= 1) first, each part by rank (schema/010_judged_cache_order.sql)."""
    keys = [(row[5] < 1, row[4]) for row in rows]
    return keys == sorted(keys)


def test_cache_rows_are_stored_relevant_first_then_by_rank(db):
    with Warehouse(db) as wh:
        wh.evaluate(["AP"], collection="c")
        rows = _cache_rows(wh)
    assert len(rows) == 4 and _in_cache_order(rows)


def _old_warehouse(path, upto: str) -> None:
    """A warehouse file with the migrations before ``upto`` only, as an older evalwh made it."""
    import duckdb

    from evalwh import sql

    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE schema_migrations ("
        " name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)"
    )
    for name, file in sql.load_package("evalwh.schema").items():
        if name < upto:
            con.execute(file.text)
            con.execute("INSERT INTO schema_migrations (name) VALUES (?)", [name])
    con.close()


def test_migration_013_keys_the_results_of_an_old_warehouse(tmp_path, db):
    """An old warehouse (run_results a table of names) upgrades to keys with the same rows and values."""
    import duckdb

    measures = ["AP", "P@2", "bpref", "A_p@3", "nDCG@3"]
    with Warehouse(db) as wh:
        expected = wh.evaluate(measures, collection="c", per_query=True)
        lines = wh.con.execute("SELECT * FROM run_results ORDER BY ALL").fetchall()
        qrels = wh.con.execute("SELECT * FROM qrels").fetchall()
        runs = wh.con.execute("SELECT * EXCLUDE (float32_lists, float32_first_rank) FROM runs").fetchall()  # (021)
        topics = wh.con.execute("SELECT collection_id, run_id, query_id, num_ret FROM run_topics").fetchall()
    old = tmp_path / "old.duckdb"
    _old_warehouse(old, "013")
    con = duckdb.connect(str(old))
    con.execute("INSERT INTO collections (collection_id) VALUES ('c')")
    con.execute("INSERT INTO qrels_sets (collection_id, qrels_id, kind, sha256) VALUES ('c', 'default', 'ingested', '')")
    con.executemany("INSERT INTO qrels VALUES (?, ?, ?, ?, ?, ?)", qrels)
    con.executemany("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", runs)
    con.executemany("INSERT INTO run_topics VALUES (?, ?, ?, ?)", topics)
    # the rank as given differs from the rank on one line: it must survive as given
    changed = [(*line[:5], "07" if i == 0 else line[5], line[6]) for i, line in enumerate(lines)]
    con.executemany("INSERT INTO run_results VALUES (?, ?, ?, ?, ?, ?, ?)", changed)
    con.close()
    with Warehouse(old) as wh:
        assert wh.con.execute("SELECT * FROM run_results ORDER BY ALL").fetchall() == sorted(changed)
        assert wh.con.execute("SELECT count(*) FROM run_rows WHERE given_text = '07' AND given_rank IS NULL").fetchall() == [(1,)]
        assert wh.con.execute("SELECT count(*) FROM run_rows WHERE given_rank IS NOT NULL").fetchall() == [(0,)]
        got = wh.evaluate(measures, collection="c", per_query=True)
        # the cache was dropped by the migration and rebuilt by this (writable) evaluation
        assert wh.con.execute("SELECT count(*) FROM judged_builds").fetchall() == [(1,)]
    keep = ["run_id", "query_id", "measure", "value"]
    pd.testing.assert_frame_equal(got[keep], expected[keep])


