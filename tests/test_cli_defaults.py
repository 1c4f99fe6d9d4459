"""Defaults a user expects: the only collection, --db anywhere, no silent empty evaluation."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from evalwh import Warehouse
from evalwh.cli import app

QRELS = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "a"], "relevance": [1, 0, 1]})
RUN = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "c"], "score": [2.0, 1.0, 1.0]})


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "w.duckdb"
    with Warehouse(path) as wh:
        wh.ingest_qrels(QRELS, collection="only")
        wh.ingest_runs(RUN, collection="only", run_id="r1")
    return path


def invoke(*args, env=None):
    return CliRunner().invoke(app, [str(a) for a in args], env={"EVALWH_DB": None, **(env or {})})


def test_the_only_collection_is_the_default(db):
    result = invoke("eval", "-m", "P@1", "-f", "csv", "--db", db)
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(pd.io.common.StringIO(result.stdout))
    # topic 1: a relevant at rank 1; topic 2: c unjudged at rank 1
    assert frame[["collection_id", "run_id", "measure", "value"]].values.tolist() == [["only", "r1", "P@1", 0.5]]


def test_several_collections_are_listed(db):
    with Warehouse(db) as wh:
        wh.ingest_qrels(QRELS, collection="another")
    for args in (["runs"], ["eval"], ["matrix"], ["pool", "list"], ["report"], ["ingest", "runs", db]):
        result = invoke(*args, "--db", db)
        assert result.exit_code == 1
        assert result.stderr == f"Error: {db} holds 2 collections (another, only); choose one with --collection\n"


@pytest.mark.parametrize(
    "args",
    [
        ["--db", "{db}", "runs", "-f", "csv"],
        ["runs", "-f", "csv", "--db", "{db}"],
        ["--db", "{db}", "runs", "-f", "csv", "--db", "{db}"],
    ],
)
def test_db_before_or_after_the_command(db, args):
    result = invoke(*[str(db) if a == "{db}" else a for a in args])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1].startswith("r1,")


def test_db_order_of_precedence(db, tmp_path):
    other = tmp_path / "other.duckdb"
    # the root --db wins over EVALWH_DB
    result = invoke("--db", db, "runs", "-f", "csv", env={"EVALWH_DB": str(other)})
    assert result.exit_code == 0, result.output
    # EVALWH_DB alone still works
    result = invoke("runs", "-f", "csv", env={"EVALWH_DB": str(db)})
    assert result.exit_code == 0, result.output
    # two different files are refused, not silently chosen between
    result = invoke("--db", db, "runs", "--db", other)
    assert result.exit_code == 2
    assert "given twice" in result.stderr
    assert not other.exists()


@pytest.mark.parametrize("fmt", ["table", "csv", "json", "trec"])
def test_an_evaluation_that_drops_every_topic_says_why(db, fmt):
    result = invoke("eval", "--db", db, "-l", "2", "-f", fmt)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith(
        "Error: only: qrels default: every topic was dropped: no topic has a document of relevance >= 2 (--rel); "
        "its 2 topics have grades up to 1"
    )
    assert "--averaging trec_eval_c" in result.stderr


def test_trec_eval_c_keeps_the_topics(db):
    result = invoke("eval", "--db", db, "-l", "2", "-m", "P@1", "--averaging", "trec_eval_c", "-f", "csv")
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(pd.io.common.StringIO(result.stdout))
    assert frame[["value", "n_topics"]].values.tolist() == [[0.0, 2]]


def test_direct_evaluation_that_drops_every_topic(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 a 1\n1 0 b 0\n")
    run = tmp_path / "run.txt"
    run.write_text("1 Q0 a 1 2.0 r\n")
    result = invoke("eval", "--qrels", qrels, run, "-l", "3")
    assert result.exit_code == 1
    assert "every topic was dropped: no topic has a document of relevance >= 3" in result.stderr
