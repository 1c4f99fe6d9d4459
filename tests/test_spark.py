"""The transpiled metric SQL on a real local Spark session agrees with DuckDB, per query.

Every metric in the registry is evaluated by DuckDB on the warehouse and by Spark (local
mode) on an evalwh Parquet export, under two option sets; every per-query value must agree
to floating-point rounding (the engines may sum in another order).
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import pytest
from small_collection import catalog_specs, fill

from evalwh import Warehouse, spark
from evalwh.measures import catalog
from evalwh.store import transfer
from evalwh.store.context import Options, Unjudged

pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::FutureWarning"),  # pyspark's notice about pandas 3
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
]


def _specs(condensed: bool) -> list[str]:
    """Every registered metric Spark evaluates (small_collection.catalog_specs, without the
    judged share by source)."""
    return catalog_specs(condensed=condensed, sources=False)


@pytest.fixture(scope="module")
def session(spark_session, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The small collection in a warehouse and, as an evalwh Parquet export, in Spark."""
    root = tmp_path_factory.mktemp("spark")
    wh = Warehouse(root / "wh.duckdb")
    fill(wh, collection="small")
    transfer.export(wh, root / "export")
    # a tiny collection: no code generation to pay for (runtime settings, put back after)
    with spark_conf(spark_session, **{"spark.sql.codegen.wholeStage": "false", "spark.sql.codegen.factoryMode": "NO_CODEGEN"}):
        spark.register_export(spark_session, root / "export")
        yield wh, spark_session
    wh.close()


@contextmanager
def spark_conf(session, **settings: str):  # type: ignore[no-untyped-def]
    """Runtime SQL settings of the shared session for one block, put back after."""
    before = {key: session.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        session.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                session.conf.unset(key)
            else:
                session.conf.set(key, value)


OPTION_SETS = {
    "default": {},
    "condensed_rel2_cap_trec_eval_c": {
        "unjudged": "condensed",
        "rel": 2,
        "depth_cap": 12,
        "averaging": "trec_eval_c",
    },
}


@pytest.mark.parametrize("name", list(OPTION_SETS))
def test_every_metric_per_query_equals_duckdb(session, name: str) -> None:  # type: ignore[no-untyped-def]
    wh, spark_session = session
    options = OPTION_SETS[name]
    specs = _specs(options.get("unjudged") == "condensed")
    if name == "default":  # whole-list forms too
        assert len(specs) > len(catalog.metrics())
    else:  # every condensable metric once, at depth 5
        assert len(specs) == sum(m.condensable and "ev_judged_sources" not in m.file.text for m in catalog.metrics())
    duck = wh.evaluate(specs, collection="small", per_query=True, **options)[
        ["run_id", "query_id", "measure", "value"]
    ]
    other = spark.evaluate(spark_session, specs, collection="small", **options)
    assert set(other["measure"]) == set(specs)
    merged = duck.merge(
        other,
        on=["run_id", "query_id", "measure"],
        how="outer",
        suffixes=("_duckdb", "_spark"),
        indicator=True,
    )
    assert (merged["_merge"] == "both").all(), merged[merged["_merge"] != "both"]
    a, b = merged["value_duckdb"].to_numpy(), merged["value_spark"].to_numpy()
    agree = np.isclose(a, b, rtol=1e-12, atol=1e-12) | (np.isnan(a) & np.isnan(b))
    assert agree.all(), merged.loc[
        ~agree, ["run_id", "query_id", "measure", "value_duckdb", "value_spark"]
    ]
    assert np.isnan(a).sum() > 0 or name != "default"  # RankEff / AA_ret are undefined somewhere


def test_show_metric_is_spark_sql(session) -> None:  # type: ignore[no-untyped-def]
    _, spark_session = session
    script = spark.show_metric("nDCG@10", collection="small")
    statements = [s.strip().rstrip(";") for s in script.split(";\n") if s.strip()]
    assert len(statements) >= 8
    for statement in statements[:-1]:
        spark_session.sql(statement)  # every statement of the printed script runs as printed
    values = spark_session.sql(statements[-1]).collect()
    assert len(values) == 3 * 5  # 3 runs x 5 topics with a relevant document


def test_literals_are_typed_for_spark() -> None:
    sql_text = spark.metric_sql("RR")
    assert "CAST(1.0 AS DOUBLE) / f.first_rank" in sql_text
    assert "CAST(NULL AS INT) IS NULL" in sql_text
    context = dict(spark.context_sql("small", None, spark.Options()))
    assert "ARRAY_CONTAINS(CAST(NULL AS ARRAY<STRING>), r.run_id)" in context["ev_runs"]
    assert list(context)[-1] == "ev_pairs"


def test_context_variables_become_literals() -> None:
    """The context's session variables (SET VARIABLE / getvariable) are inlined for Spark."""
    options = Options(depth_cap=7, unjudged=Unjudged.condensed, rel=2)
    steps = spark.context_sql("small", None, options)
    assert not any("getvariable" in query.lower() for _, query in steps)
    judged = dict(steps)["ev_judged"]
    assert "CASE WHEN CAST(TRUE AS BOOLEAN) THEN s.judged_so_far ELSE s.rank END" in judged
    assert "s.gain >= CAST(2 AS INT) AS is_rel" in judged
    assert "s.rank <= CAST(7 AS INT)" in judged


def test_the_ranking_macro_and_list_indexes_are_written_for_spark() -> None:
    """insert_run_results.sql with trec_ranked expanded; DuckDB's 1-based list index kept 1-based."""
    from evalwh import sql

    steps = dict(
        spark.ingest_selects(
            sql.query("evalwh.queries.ingest", "insert_run_results"),
            {"collection_id": "c", "run_ids": ["a", "b"]},
        )
    )
    # the warehouse stores these by key (store_ranked.sql); Spark takes them as run_results
    # and run_topics (evalwh.spark.files)
    assert list(steps) == ["staged_ranking", "staged_results", "staged_topics"]
    ranked = steps["staged_results"]
    assert "ELEMENT_AT(ARRAY('a', 'b'), run_id + 1) AS run_id" in ranked
    # trec_ranked as schema 022 defines it, its float32_score (021) expanded in turn
    float32 = (
        "CAST((CASE WHEN ABS(score) >= CAST(3.4028235677973366e38 AS DOUBLE)"
        " THEN CAST(SIGN(score) * CAST('inf' AS DOUBLE) AS FLOAT) ELSE CAST(score AS FLOAT) END) AS DOUBLE)"
    )
    assert f"ORDER BY CASE WHEN FALSE THEN {float32} ELSE score END DESC, doc_id DESC" in ranked
    assert "FROM staged_ranking) AS trec_ranked" in ranked and "trec_ranked(" not in ranked.lower()
    context = dict(spark.context_sql("small", None, Options(float32_ties=True)))
    assert f"CASE WHEN TRUE THEN {float32}" in context["ev_ranked_float32"]
    assert "FROM ev_source" in context["ev_ranked_float32"]


def test_ordered_sums_add_in_their_order_on_spark(session) -> None:  # type: ignore[no-untyped-def]
    """``sum(x ORDER BY k)``, which Spark lacks, written for it: the same bits as DuckDB's ordered
    sum where the order of addition matters (1e16 + 1 - 1e16), NULL terms left out, NULL for a
    group without a term, keys compared in turn, descending keys; mixed directions refused."""
    import duckdb
    import sqlglot

    from evalwh.errors import EvalWhError
    from evalwh.spark import _ordered_sums

    _, spark_session = session
    rows = [("a", 1, 1, 1e16), ("a", 2, 1, 1.0), ("a", 3, 1, -1e16), ("a", 2, 0, 2.0), ("b", 1, 1, None),
            ("c", 3, 1, 1.0), ("c", 2, 1, -1e16), ("c", 1, 1, 1e16)]  # fmt: skip
    values = ", ".join(f"('{g}', {a}, {b}, {'NULL' if x is None else repr(x)})" for g, a, b, x in rows)
    found = {}
    for order in ("a, b", "a DESC, b DESC"):
        query = (f"SELECT g, sum(x ORDER BY {order}) AS s FROM (VALUES {values}) AS t(g, a, b, x) "
                 "GROUP BY g ORDER BY g")  # fmt: skip
        expected = duckdb.sql(query).fetchall()
        written = sqlglot.parse_one(query, read="duckdb").transform(_ordered_sums).sql(dialect="spark")
        got = [tuple(r) for r in spark_session.sql(written).collect()]
        assert got == expected
        found[order] = expected
    assert found["a, b"][1] == ("b", None)
    # the order of addition shows: group c sums to 0 one way and to 1 the other
    assert found["a, b"][2] == ("c", 1.0) and found["a DESC, b DESC"][2] == ("c", 0.0)
    with pytest.raises(EvalWhError, match="all ascending or all descending"):
        sqlglot.parse_one("SELECT sum(x ORDER BY a, b DESC) FROM t", read="duckdb").transform(_ordered_sums)
