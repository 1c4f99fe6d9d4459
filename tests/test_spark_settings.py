"""The settings evalwh gives a new Spark session: a local master's JVM and UI, a cluster's untouched.

The pure part (evalwh.spark.session.session_settings, is_local) runs without a JVM; one test
asks the JVM of the tests' shared local session, which evalwh's start() started
(conftest.py, spark_session), which options it runs with.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evalwh.spark import session as spark_session_module
from evalwh.spark.session import LOCAL_JAVA_OPTIONS, SECOND_TIER_ROWS, is_local, lean_for, session_settings

QUIET = f"-Dlog4j2.configurationFile={spark_session_module.LOG_CONFIG.as_uri()}"


@pytest.mark.parametrize(
    ("master", "local"),
    [("local", True), ("local[2]", True), ("local[*]", True), ("local[4, 2]", True),
     ("local-cluster[2, 1, 1024]", False), ("spark://127.0.0.1:7077", False), ("yarn", False),
     ("k8s://https://host:6443", False), ("sc://host:15002", False)],
)
def test_is_local_names_the_masters_whose_executors_are_the_drivers_jvm(master: str, local: bool) -> None:
    assert is_local(master) is local


def test_without_a_master_the_session_is_local_unless_spark_submit_or_connect_started_it(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for name in ("PYSPARK_GATEWAY_PORT", "SPARK_REMOTE", "PYSPARK_SUBMIT_ARGS"):
        monkeypatch.delenv(name, raising=False)
    assert is_local(None) is True  # (local[*])
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--master spark://h:7077 pyspark-shell")
    assert is_local(None) is False
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--master local[3] pyspark-shell")
    assert is_local(None) is True
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "40000")
    assert is_local(None) is False


def test_a_local_session_gets_the_lean_jvm_and_no_ui_a_cluster_keeps_sparks_defaults() -> None:
    local = session_settings("local[2]")
    assert local["spark.ui.enabled"] == "false"
    assert local["spark.driver.extraJavaOptions"] == f"{LOCAL_JAVA_OPTIONS} {QUIET}"
    assert LOCAL_JAVA_OPTIONS.split() == ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]
    cluster = session_settings("spark://127.0.0.1:7077", {"spark.executor.memory": "4g"})
    assert cluster == {"spark.executor.memory": "4g", "spark.driver.extraJavaOptions": QUIET}
    assert session_settings("yarn", verbose=True) == {}
    assert session_settings("local[2]", verbose=True) == {
        "spark.ui.enabled": "false", "spark.driver.extraJavaOptions": LOCAL_JAVA_OPTIONS,
    }


def test_a_local_jvm_that_goes_through_every_line_itself_keeps_the_second_jit_tier() -> None:
    """Spark SQL's reader, or an export of SECOND_TIER_ROWS ranked rows or more read as
    Parquet: Spark's default JVM, quiet; evalwh's reader (the judged rows only) or a smaller
    export: the lean one, unless the C reader cannot be used (Spark SQL reads every line
    then). A configured JVM option wins either way."""
    assert lean_for("evalwh") and not lean_for("spark")
    assert not lean_for("evalwh", c_reader=False)
    assert lean_for("spark", SECOND_TIER_ROWS - 1) and not lean_for("spark", SECOND_TIER_ROWS)
    assert session_settings("local[2]", lean_jvm=True)["spark.driver.extraJavaOptions"] == f"{LOCAL_JAVA_OPTIONS} {QUIET}"
    many = session_settings("local[2]", lean_jvm=False)
    assert many == {"spark.ui.enabled": "false", "spark.driver.extraJavaOptions": QUIET}
    assert session_settings("local[2]", lean_jvm=False, verbose=True) == {"spark.ui.enabled": "false"}
    given = {"spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1"}
    assert session_settings("local[2]", given, lean_jvm=False)["spark.driver.extraJavaOptions"].startswith("-XX:Tiered")
    assert "spark.driver.extraJavaOptions" not in session_settings("yarn", lean_jvm=True, verbose=True)


def test_the_rows_of_an_export_are_its_manifests(tmp_path: Path) -> None:
    """spark eval --runs-parquet counts the collection's ranked rows from the export's manifest."""
    import pandas as pd

    from evalwh import Warehouse
    from evalwh.spark import export_rows as _export_rows

    wh = Warehouse(":memory:")
    for name, topics in (("a", ["1", "2"]), ("b", ["1"])):
        qrels = pd.DataFrame({"query_id": topics, "doc_id": "d", "relevance": 1})
        wh.ingest_qrels(qrels, collection=name)
        lines = pd.DataFrame({"query_id": topics * 3, "doc_id": ["d", "e", "f"] * len(topics), "score": 1.0})
        lines["doc_id"] = [f"{d}{i}" for i, d in enumerate(lines["doc_id"])]
        wh.ingest_runs(lines, collection=name, run_id="r")
    wh.export(tmp_path / "out")
    assert _export_rows(str(tmp_path / "out"), "a") == 6
    assert _export_rows(str(tmp_path / "out"), "b") == 3
    assert _export_rows(str(tmp_path / "out"), None) == 9


def test_configured_settings_win_over_evalwhs() -> None:
    given = session_settings(
        "local[2]", {"spark.ui.enabled": "true", "spark.driver.extraJavaOptions": "-XX:+UseG1GC -Xss4m"}
    )
    assert given["spark.ui.enabled"] == "true"
    # the configured options replace evalwh's JIT and collector choice; quiet logging is added
    assert given["spark.driver.extraJavaOptions"] == f"-XX:+UseG1GC -Xss4m {QUIET}"
    # an empty value: the JVM's own defaults (as bench/spark.py compares them)
    assert session_settings("local[2]", {"spark.driver.extraJavaOptions": ""}, verbose=True)[
        "spark.driver.extraJavaOptions"
    ] == ""


def test_a_local_session_started_by_evalwh_runs_its_jvm_with_those_options(spark_session) -> None:  # type: ignore[no-untyped-def]
    """The tests' shared local session is started by evalwh.spark.session.start (conftest.py)
    with settings that name neither the JVM's options nor the UI: its JVM runs lean and quiet,
    without a web UI, and computes."""
    from conftest import SPARK_TEST_SETTINGS

    assert not {"spark.driver.extraJavaOptions", "spark.ui.enabled"} & set(SPARK_TEST_SETTINGS)
    context = spark_session.sparkContext
    arguments = list(context._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments())
    assert {"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", QUIET} <= set(arguments)
    assert context.uiWebUrl is None  # (no web UI)
    assert spark_session.range(5).selectExpr("sum(id) AS s").collect()[0]["s"] == 10


def test_the_session_modules_examples_hold() -> None:
    import doctest

    failures, tried = doctest.testmod(spark_session_module)
    assert tried >= 2 and failures == 0
