"""What runs on Spark's executors without Spark, and the suite without Java.

* evalwh's reader as the executors run it (evalwh.spark.executors.mapper, the function
  ``mapInArrow`` is given), called here on Arrow batches as Spark would call it: its judged rows,
  running counts, line counts and digests are those the warehouse stores for the same files,
  and every file it does not take comes back with a reason (so Spark SQL reads it), also on
  an executor without evalwh.
* The README's test command on a machine without a Java runtime: the Spark tests skip, and
  pytest ends with one banner that names them and the install line.
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from test_ingest import write

from evalwh.io import formats
from evalwh.spark import executors
from evalwh.warehouse import Warehouse

QRELS = "1 0 a 2\n1 0 b 0\n1 0 c 1\n2 0 a 1\n2 0 d 0\n2 0 e -1\n"
PLAIN = "1 Q0 x 1 3 p\n1 Q0 a 2 2.5 p\n1 Q0 b 3 2.5 p\n1 Q0 c 4 1 p\n2 Q0 d 1 2 p\n2 Q0 a 2 1e0 p\n"
TABS = "2\tQ0\ta\t1\t0.5\tt\n2\tQ0\tz\t2\t0.5\tt\n1\tQ0\tc\t1\t9\tt\n"


class _Broadcast:
    """What a broadcast variable is to the function on the executor: its ``value``."""

    def __init__(self, value: bytes) -> None:
        self.value = value


def _run(contents: list[tuple[bytes, bool]], qrels: pa.Table, rel: int = 1) -> pa.Table:
    read = executors.mapper(_Broadcast(executors.serialise(qrels)), rel, False, False, formats.MAX_LINE)
    batches = [
        pa.RecordBatch.from_pydict(
            {"file_index": [i], "gz": [gz], "content": [data]},
            schema=pa.schema([("file_index", pa.int32()), ("gz", pa.bool_()), ("content", pa.binary())]),
        )
        for i, (data, gz) in enumerate(contents)
    ]
    return pa.Table.from_batches(list(read(iter(batches))))


def _judgments(text: str) -> pa.Table:
    rows = [line.split() for line in text.splitlines()]
    return pa.table(
        {
            "query_id": [r[0] for r in rows],
            "doc_id": [r[2] for r in rows],
            "grade": pa.array([int(r[3]) for r in rows], pa.int32()),
        }
    )


@pytest.mark.parametrize("rel", [1, 2])
def test_the_executors_reader_gives_what_the_warehouse_stores(tmp_path: Path, rel: int) -> None:
    """Judged rows with running counts, topics' line counts and SHA-256, for plain and .gz files."""
    files = [write(tmp_path, "p.txt", PLAIN), write(tmp_path, "t.txt.gz", TABS)]
    # the reader takes non-negative grades only (evalwh.spark.files sends every file to Spark
    # SQL otherwise, as judgments_table says): the pooled-unjudged line is left out here
    qrels = "".join(line + "\n" for line in QRELS.splitlines() if not line.endswith("-1"))
    out = _run([(f.read_bytes(), f.suffix == ".gz") for f in files], _judgments(qrels), rel).to_pylist()
    wh = Warehouse(":memory:")
    wh.ingest_qrels(write(tmp_path, "q.txt", qrels), collection="c")
    wh.ingest_runs(files, collection="c")
    run_of = {0: "p", 1: "t"}
    heads = [r for r in out if r["kind"] == executors.FILE]
    stored = dict(wh.con.execute("SELECT run_id, sha256 FROM runs").fetchall())
    assert [(run_of[r["file_index"]], r["tag"], r["sha256"], r["reason"]) for r in heads] == [
        ("p", "p", stored["p"], None),
        ("t", "t", stored["t"], None),
    ]
    topics = sorted((run_of[r["file_index"]], r["query_id"], r["num_ret"]) for r in out if r["kind"] == executors.TOPIC)
    assert topics == sorted(wh.con.execute("SELECT run_id, query_id, num_ret FROM run_topics").fetchall())
    judged = sorted(
        (run_of[r["file_index"]], r["query_id"], r["rank"], r["gain"], r["judged_so_far"], r["relevant_so_far"])
        for r in out
        if r["kind"] == executors.JUDGED
    )
    expected = wh.con.execute(
        """SELECT r.run_id, r.query_id, r.rank, CAST(q.relevance AS INT),
                  CAST(row_number() OVER w AS INT), CAST(sum(CAST(q.relevance >= $rel AS INT)) OVER w AS INT)
           FROM run_results AS r JOIN qrels AS q USING (collection_id, query_id, doc_id)
           WINDOW w AS (PARTITION BY r.run_id, r.query_id ORDER BY r.rank)
           ORDER BY ALL""",
        {"rel": rel},
    ).fetchall()
    assert judged == [tuple(row) for row in expected]
    assert len(judged) == 7  # (b above a: their scores tie, doc ids descending)
    wh.close()


def test_files_the_reader_does_not_take_come_back_with_a_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    """A comment, a bad score, a duplicate, a broken .gz: a reason each, no rows (Spark SQL reads them)."""
    qrels = _judgments("1 0 a 1\n")
    contents = [
        (b"# a comment\n1 Q0 a 1 1 r\n", False),
        (b"1 Q0 a 1 high r\n", False),
        (b"1 Q0 a 1 1 r\n1 Q0 a 2 0.5 r\n", False),
        (b"not gzip", True),
        (gzip.compress(b"1 Q0 a 1 1 r\n"), True),
    ]
    out = _run(contents, qrels).to_pylist()
    heads = {r["file_index"]: r for r in out if r["kind"] == executors.FILE}
    assert sorted(heads) == [0, 1, 2, 3, 4]
    assert all(heads[i]["reason"] for i in range(4)) and heads[4]["reason"] is None
    assert heads[0]["reason"] == "a comment (first line)"
    assert {r["file_index"] for r in out if r["kind"] != executors.FILE} == {4}
    # an executor whose environment switches the reader off (spark.executorEnv.EVALWH_NO_READER):
    # every file comes back, and this process says as much for a local master's executors
    assert executors.reader_here()
    monkeypatch.setenv(executors.NO_READER, "1")
    out = _run(contents, qrels).to_pylist()
    assert [r["reason"] for r in out] == [executors.SWITCHED_OFF] * len(contents)
    assert not executors.reader_here()
    monkeypatch.delenv(executors.NO_READER)
    # an executor without evalwh: every file comes back, none fails the task
    monkeypatch.setitem(sys.modules, "evalwh.io._runlines", None)
    out = _run(contents, qrels).to_pylist()
    assert [r["reason"] for r in out] == [executors.NOT_INSTALLED] * len(contents)
    assert not executors.reader_here()
    assert set(executors.WITHOUT_READER) == {executors.NOT_INSTALLED, executors.SWITCHED_OFF}


def test_negative_or_fractional_grades_leave_every_file_to_spark_sql() -> None:
    class Qrels:  # the qrels view as judgments_table reads it
        def __init__(self, grades: list[float]) -> None:
            self.grades = grades

        def selectExpr(self, *columns: str) -> Qrels:  # noqa: N802 (pyspark's name)
            return self

        def toArrow(self) -> pa.Table:  # noqa: N802
            n = len(self.grades)
            return pa.table({"query_id": ["1"] * n, "doc_id": [f"d{i}" for i in range(n)], "relevance": self.grades})

    assert executors.judgments_table(Qrels([0.0, 1.0, 2.0])).column("grade").to_pylist() == [0, 1, 2]
    assert executors.judgments_table(Qrels([0.0, -1.0])) is None
    assert executors.judgments_table(Qrels([0.5, 1.0])) is None


def test_without_java_the_spark_tests_skip_with_one_banner(tmp_path: Path) -> None:
    """JAVA_HOME pointing nowhere and no java on the PATH: skipped, named, the install line shown."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    os.symlink(sys.executable, bin_dir / "python")
    path = os.pathsep.join(
        p for p in [str(bin_dir), *os.environ.get("PATH", "").split(os.pathsep)] if p and not shutil.which("java", path=p)
    )
    env = {**os.environ, "JAVA_HOME": "/nonexistent", "PATH": path}
    env.pop("CI", None)
    tests = Path(__file__).parent
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
               f"{tests / 'test_transfer.py'}::test_export_opens_in_spark"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tests.parent, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 skipped" in done.stdout
    assert "no Java runtime" in done.stdout
    assert "apt-get install openjdk-17-jre-headless" in done.stdout
    assert "tests/test_transfer.py" in done.stdout
    ci = subprocess.run(command, capture_output=True, text=True, env={**env, "CI": "true"}, cwd=tests.parent, check=False)
    assert ci.returncode != 0
    assert "no Java runtime for the Spark tests (CI=true)" in ci.stdout + ci.stderr
