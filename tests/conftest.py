"""Shared fixtures: an in-memory warehouse, table snapshots, and TREC-8 ingested once per session."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalwh.sql import identifier
from evalwh.warehouse import Warehouse


@pytest.fixture
def wh() -> Iterator[Warehouse]:
    """A fresh in-memory warehouse with the schema applied."""
    warehouse = Warehouse(":memory:")
    yield warehouse
    warehouse.close()


@pytest.fixture
def snapshot():
    """The function :func:`take_snapshot`, for comparing a warehouse before and after."""
    return take_snapshot


def take_snapshot(warehouse: Warehouse) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table of the warehouse (temporary tables excluded), sorted.

    Two snapshots are equal exactly when the warehouse holds the same data; tests take one
    before and one after a rejected ingest.
    """
    tables = [
        row[0]
        for row in warehouse.con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE NOT temporary AND database_name = current_database()"
            " ORDER BY table_name"
        ).fetchall()
    ]
    # table names come from the catalog and are quoted as identifiers
    return {
        table: warehouse.con.execute(f"SELECT * FROM {identifier(table)} ORDER BY ALL").fetchall()
        for table in tables
    }


SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
TREC8 = SHARED_DATA / "trec8_adhoc"


# -- the golden data: ../shared beside the checkout ---------------------------------------
# Without it the golden tests (trec_eval's outputs and test suite, TREC-8) are skipped. That
# must not pass unnoticed: under CI=true the session fails at start, and elsewhere pytest ends
# with a warning naming the directory and how many tests it cost.


def pytest_sessionstart(session: pytest.Session) -> None:
    if not SHARED_DATA.is_dir() and os.environ.get("CI", "").lower() in {"true", "1"}:
        raise pytest.UsageError(
            f"{SHARED_DATA} is missing: the golden tests need ../shared beside the checkout (CI=true)"
        )


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if SHARED_DATA.is_dir():
        return
    skipped = [
        report
        for report in terminalreporter.stats.get("skipped", [])
        if "shared" in str(report.longrepr)
    ]
    terminalreporter.write_sep("!", "golden data missing", red=True, bold=True)
    terminalreporter.write_line(
        f"{SHARED_DATA} is not there: {len(skipped)} tests against trec_eval's outputs and "
        "TREC-8 were skipped. Check out ../shared beside the repository to run them.",
        red=True,
        bold=True,
    )


@pytest.fixture(scope="session")
def trec8_ingest(tmp_path_factory: pytest.TempPathFactory):
    """All of TREC-8 ad hoc (qrels, 129 runs, run metadata) ingested once per test session.

    Returns ``(path, run results, runs given metadata, seconds the runs took)``. Tests that
    only read open the file read-only; tests that write take ``trec8_copy``.
    """
    if not TREC8.is_dir():
        pytest.skip(f"{TREC8} is not there (CI checks out ../shared beside the repository)")
    db = tmp_path_factory.mktemp("trec8") / "trec8.duckdb"
    with Warehouse(db) as warehouse:
        warehouse.ingest_qrels(TREC8 / "trec8.qrels", collection="trec8")
        start = time.perf_counter()
        results = warehouse.ingest_runs(
            sorted((TREC8 / "runs").glob("input.*.gz")), collection="trec8"
        )
        seconds = time.perf_counter() - start
        updated = warehouse.ingest_run_metadata(TREC8 / "runs.tsv", collection="trec8")
    return db, results, updated, seconds


@pytest.fixture
def trec8_copy(trec8_ingest, tmp_path: Path) -> Path:
    """A private copy of the session's TREC-8 warehouse file, free to write to."""
    copy = tmp_path / "trec8.duckdb"
    shutil.copy(trec8_ingest[0], copy)
    return copy


@pytest.fixture(scope="session")
def spark_session():
    """ONE local Spark session (2 threads) for every Spark test of the session.

    Starting a JVM costs 10-30 s, so all Spark tests share it. Tuned for small inputs: few
    shuffle partitions, no adaptive planning, no UI; tests that read more (TREC-8) raise
    the shuffle partitions for their own duration only (runtime SQL settings).
    """
    pyspark_sql = pytest.importorskip("pyspark.sql", reason="pyspark is in the test extra")
    session = (
        pyspark_sql.SparkSession.builder.master("local[2]")
        .appName("evalwh-test")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
