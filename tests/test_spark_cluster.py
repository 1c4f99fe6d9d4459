"""evalwh spark on a real standalone cluster: a master and two workers, separate processes.

One cluster for the whole test session (``cluster``): pyspark's own ``bin/spark-class``
starts the master and the workers on 127.0.0.1 (evalwh.spark.standalone), the fixture waits
until both workers registered and stops exactly the processes it started. On it:

``spark-submit`` of evalwh's entry point (evalwh.cli.spark_submit), with evalwh shipped to
the executors as an archive (``--archives``, docs/spark.md) and read there by its C reader,
prints what ``evalwh eval --qrels`` prints for a few TREC-8 runs cut to a few topics, byte for
byte. One test on a few runs and topics (what it proves is the path, not the size): the
full-size measurement (all 129 runs, every process's CPU) is ``bench/spark.py --master
cluster``.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TREC8, needs_java
from test_ingest import RUN, write

pytestmark = [pytest.mark.slow]

pyspark = pytest.importorskip("pyspark", reason="pyspark is in the test extra")
from evalwh.spark.session import LOCAL_JAVA_OPTIONS  # noqa: E402

# the five measures of the issue, as typed
MEASURES = ["AP", "nDCG@10", "bpref", "RBP(p=0.8)@10", "A_p@10"]
BIN = Path(sys.executable).parent
# Every JVM of the test runs lean (C1 JIT only, the serial collector; no UI), as a local
# session's does (evalwh.spark.session): the test proves the path on a few runs, which never
# pay back C2's compiling. With Spark's default JVMs it took 210 CPU s instead of 118.
LEAN = LOCAL_JAVA_OPTIONS


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """A Spark master and two one-core workers (2 GiB each) on 127.0.0.1, for every cluster test."""
    from evalwh.spark.standalone import StandaloneCluster

    needs_java()
    with contextlib.ExitStack() as stack:
        with pytest.MonkeyPatch.context() as patch:  # the master's and the workers' JVMs (spark-class)
            patch.setenv("SPARK_DAEMON_JAVA_OPTS", LEAN)
            running = stack.enter_context(
                StandaloneCluster(tmp_path_factory.mktemp("spark-cluster"), workers=2, cores=1, memory="2g", timeout=600)
            )
        assert running.alive_workers() == 2
        started = running.pids
        assert len(started) == 3
        assert all(LEAN in Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode() for pid in started)
        yield running
    for pid in started:  # stopped by their ids: none of them runs on
        assert not Path(f"/proc/{pid}").exists()


def _environment() -> dict[str, str]:
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "SPARK_LOCAL_IP": "127.0.0.1"}


def _executor_settings() -> list[str]:
    # two 2 GiB workers: an executor on each (with 700 MiB, executors ran out of memory on
    # TREC-8: exit code 52 while reading and checking the 129 runs)
    return [
        "--conf", "spark.executor.memory=1500m", "--conf", "spark.driver.memory=1g",
        "--driver-java-options", LEAN, "--conf", f"spark.executor.extraJavaOptions={LEAN}",
        "--conf", "spark.ui.enabled=false",
    ]


def _packed_evalwh(directory: Path) -> Path:
    """evalwh as --archives ships it: the installed package, its compiled reader included.

    (What ``pip install --no-deps --target evalwh_pkg evalwh-*.whl`` lays out, taken from
    this installation; docs/spark.md.)
    """
    import tarfile

    import evalwh

    archive = directory / "evalwh_pkg.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(Path(evalwh.__file__).parent, arcname="evalwh", filter=lambda t: None if "__pycache__" in t.name else t)
    return archive


def _executor_python() -> str:
    """The executors' interpreter: the base Python under this virtual environment where it has
    pyarrow and numpy but not evalwh (so that only the archive brings evalwh's reader), else
    this one."""
    base = getattr(sys, "_base_executable", sys.executable)
    probe = "import pyarrow, numpy, importlib.util as u; raise SystemExit(u.find_spec('evalwh') is not None)"
    done = subprocess.run([base, "-c", probe], capture_output=True, cwd="/", check=False)
    return base if done.returncode == 0 else sys.executable


# the TREC-8 topics the test keeps: its qrels lines and the runs' lines for them, nothing else
TOPICS = {"401", "402", "403", "404", "405"}


def _cut(source: Path, target: Path) -> Path:
    """The lines of a TREC-8 file (gzip-compressed or not) for TOPICS only, written alike."""
    opener = gzip.open if source.suffix == ".gz" else open
    with opener(source, "rt") as lines:
        kept = "".join(line for line in lines if line.split(maxsplit=1)[0] in TOPICS)
    with opener(target, "wt") as out:
        out.write(kept)
    return target


def test_spark_submit_with_evalwh_shipped_to_the_executors_prints_what_eval_prints(cluster, tmp_path):  # type: ignore[no-untyped-def]
    """spark-submit --archives evalwh_pkg.tar.gz ... eval: evalwh eval's trec layout.

    Three TREC-8 runs (gzip-compressed, as shipped) and the qrels cut to five topics, and a
    small run file the reader leaves (Spark SQL reads it), x the five measures, per topic,
    byte for byte; the executors read with evalwh's C reader (the default) from the shipped archive. (All
    129 runs and 50 topics on the cluster: bench/spark.py --master cluster.)
    """
    from evalwh.cli import spark_submit

    if not TREC8.is_dir():
        pytest.skip(f"{TREC8} is not there")
    runs = [str(_cut(run, tmp_path / run.name)) for run in sorted((TREC8 / "runs").glob("input.*.gz"))[:3]]
    runs.append(str(write(tmp_path, "hand.txt", "# by hand\n" + RUN)))
    qrels = _cut(TREC8 / "trec8.qrels", tmp_path / "trec8-401-405.qrels")
    measures = [arg for m in MEASURES for arg in ("-m", m)]
    common = ["--qrels", str(qrels), *measures, "--format", "trec", "--per-query"]
    direct = subprocess.run(
        [str(BIN / "evalwh"), "eval", *common, *runs], capture_output=True, text=True, env=_environment(), check=True
    )
    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    result = subprocess.run(
        [str(submit), "--master", cluster.url, *_executor_settings(),
         "--archives", f"{_packed_evalwh(tmp_path)}#evalwh_pkg",
         "--conf", "spark.executorEnv.PYTHONPATH=evalwh_pkg",
         "--conf", f"spark.pyspark.python={_executor_python()}",
         "--conf", f"spark.pyspark.driver.python={sys.executable}",
         spark_submit.__file__, "eval", *common, *runs],
        capture_output=True, text=True, env=_environment(), check=False,
    )
    assert result.returncode == 0, result.stderr
    # spark-submit merges its Python driver's standard error into its standard output
    lines = result.stdout.splitlines(keepends=True)
    said = [line for line in lines if line.startswith("evalwh's reader read")]
    assert len(said) == 1, result.stdout
    assert said[0] == (
        "evalwh's reader read 3 of 4 run files on the executors; Spark SQL read the others "
        f"(not in the reader's plain form; the first, {runs[-1]}: a comment (first line))\n"
    )
    assert "".join(line for line in lines if line not in said) == direct.stdout
    assert "\nRBP@10 " in result.stdout  # RBP(p=0.8)@10: p = 0.8 is the default, not repeated in the name
    # standard error is Spark's own log under spark-submit (its log4j2 configuration, not
    # evalwh's: docs/spark.md); what evalwh answers is standard output, checked above
