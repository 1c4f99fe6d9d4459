"""evalwh spark on a real standalone cluster: a master and two workers, separate processes.

One cluster for the whole test session (``cluster``): pyspark's own ``bin/spark-class``
starts the master and the workers on 127.0.0.1 (evalwh.spark.standalone), the fixture waits
until both workers registered and stops exactly the processes it started. On it:

* ``evalwh spark eval --master spark://...`` scores all 129 TREC-8 runs read as text, per
  topic, and every value must equal the DuckDB warehouse's (the shared TREC-8 fixture);
  standard error stays quiet (no Spark or JVM warnings);
* ``spark-submit`` of evalwh's entry point (evalwh.cli.spark_submit) prints what
  ``evalwh eval --qrels`` prints for the same files.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import TREC8
from test_ingest import QRELS, RUN, write

from evalwh.warehouse import Warehouse

pytestmark = [pytest.mark.slow]

pyspark = pytest.importorskip("pyspark", reason="pyspark is in the test extra")

# the five measures of the issue, as typed
MEASURES = ["AP", "nDCG@10", "bpref", "RBP(p=0.8)@10", "A_p@10"]
BIN = Path(sys.executable).parent


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """A Spark master and two one-core workers (2 GiB each) on 127.0.0.1, for every cluster test."""
    from evalwh.spark.standalone import StandaloneCluster

    with StandaloneCluster(tmp_path_factory.mktemp("spark-cluster"), workers=2, cores=1, memory="2g", timeout=600) as running:
        assert running.alive_workers() == 2
        started = running.pids
        assert len(started) == 3
        yield running
    for pid in started:  # stopped by their ids: none of them runs on
        assert not Path(f"/proc/{pid}").exists()


def _environment() -> dict[str, str]:
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "SPARK_LOCAL_IP": "127.0.0.1"}


def _executor_settings() -> list[str]:
    # two 2 GiB workers: an executor on each (with 700 MiB, executors ran out of memory on
    # TREC-8: exit code 52 while reading and checking the 129 runs)
    return ["--conf", "spark.executor.memory=1500m", "--conf", "spark.driver.memory=1g"]


def test_trec8_on_the_cluster_equals_the_warehouse_per_query(cluster, trec8_ingest, tmp_path):  # type: ignore[no-untyped-def]
    """All 129 TREC-8 runs x the five measures on two workers, topic by topic against DuckDB."""
    out = tmp_path / "values.csv"
    measures = [arg for m in MEASURES for arg in ("-m", m)]
    result = subprocess.run(
        [str(BIN / "evalwh"), "spark", "eval", "--master", cluster.url, *_executor_settings(),
         "--qrels", str(TREC8 / "trec8.qrels"), str(TREC8 / "runs" / "input.*.gz"), *measures,
         "--per-query", "--format", "csv", "--output", str(out)],
        capture_output=True, text=True, env=_environment(), check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "WARN" not in result.stderr and "Using incubator" not in result.stderr, result.stderr
    other = pd.read_csv(out, dtype={"query_id": str})
    with Warehouse(trec8_ingest[0], read_only=True) as wh:
        duck = wh.evaluate(MEASURES, collection="trec8", per_query=True, typed_names=True)
    assert list(dict.fromkeys(other["measure"])) == MEASURES  # names as typed, in order
    assert len(duck) == len(other) == 129 * 50 * len(MEASURES)
    merged = duck.merge(other, on=["run_id", "query_id", "measure"], suffixes=("_duckdb", "_spark"))
    assert len(merged) == len(duck)
    a, b = merged["value_duckdb"].to_numpy(), merged["value_spark"].to_numpy()
    agree = np.isclose(a, b, rtol=0, atol=1e-12) | (np.isnan(a) & np.isnan(b))
    assert agree.all(), merged.loc[~agree]


def test_spark_submit_of_the_entry_point_prints_what_eval_prints(cluster, tmp_path):  # type: ignore[no-untyped-def]
    """spark-submit --master spark://... evalwh/cli/spark_submit.py eval: evalwh eval's trec layout."""
    from evalwh.cli import spark_submit

    qrels = write(tmp_path, "qrels.txt", QRELS + "403 0 d9 1\n")
    runs = [
        write(tmp_path, "a.txt.gz", RUN.replace(" r\n", " a\n")),
        write(tmp_path, "b.txt", RUN.replace(" r\n", " b\n").replace("2.5", "0.1")),
    ]
    common = ["--qrels", str(qrels), "-m", "P@2", "-m", "RBP(p=0.5)@3", "-m", "nDCG@10", "--format", "trec", "--per-query"]
    direct = subprocess.run(
        [str(BIN / "evalwh"), "eval", *common, *map(str, runs)],
        capture_output=True, text=True, env=_environment(), check=True,
    )
    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    result = subprocess.run(
        [str(submit), "--master", cluster.url, "--conf", "spark.executor.memory=512m",
         "--conf", f"spark.pyspark.python={sys.executable}", spark_submit.__file__,
         "eval", *common, *map(str, runs)],
        capture_output=True, text=True, env=_environment(), check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == direct.stdout
    assert "RBP(p=0.5)@3" in result.stdout
