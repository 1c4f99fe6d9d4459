"""Small promises of the command line's surface (issue #28's "Also" list): trec_eval's names in
``--format trec``, run files in the order given, notes on empty stored-result tables, a
description for every table, help screens that never cut a default, ``adjust`` in the shared
table format, and ``report --demo`` saying what it leaves behind."""

from __future__ import annotations

import io
import re

import pandas as pd
import pytest
from typer.testing import CliRunner

from evalwh import Warehouse
from evalwh.cli import app

QRELS = "1 0 a 1\n1 0 b 0\n1 0 c 2\n2 0 a 1\n2 0 e 0\n"
RUNS = {
    "zeta": "1 Q0 a 1 3.0 zeta\n1 Q0 b 2 2.0 zeta\n2 Q0 e 1 1.0 zeta\n",
    "alpha": "1 Q0 c 1 3.0 alpha\n1 Q0 a 2 2.0 alpha\n2 Q0 a 1 1.0 alpha\n",
    "mid": "1 Q0 b 1 3.0 mid\n2 Q0 a 1 1.0 mid\n",
}

runner = CliRunner()


def invoke(*args: str, columns: int = 200):
    return runner.invoke(app, list(args), env={"COLUMNS": str(columns), "TERMINAL_WIDTH": str(columns)})


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    paths = []
    for name, text in RUNS.items():
        path = tmp_path / f"{name}.txt"
        path.write_text(text)
        paths.append(str(path))
    return tmp_path / "qrels.txt", paths


@pytest.fixture
def db(tmp_path, files):
    qrels, runs = files
    path = tmp_path / "wh.duckdb"
    with Warehouse(path) as wh:
        wh.ingest_qrels(qrels, collection="c")
        wh.ingest_runs(runs, collection="c")
    return path


def _names(text: str) -> list[str]:
    return [line.split()[0] for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("where", ["files", "warehouse"])
def test_trec_format_prints_trec_evals_names(where, files, db):
    qrels, runs = files
    source = ["--qrels", str(qrels), *runs] if where == "files" else ["-c", "c", "--db", str(db)]
    result = invoke("eval", *source, "-m", "ndcg_cut.10", "-m", "P.5,10", "-m", "map", "-f", "trec")
    assert result.exit_code == 0, result.output
    names = set(_names(result.stdout))
    # trec_eval prints ndcg_cut_10 for -m ndcg_cut.10, and P_5, P_10 for -m P.5,10
    assert {"ndcg_cut_10", "P_5", "P_10", "map", "runid", "num_q"} == names
    # the other formats keep the name as typed when it stands for one value
    csv = invoke("eval", *source, "-m", "ndcg_cut.10", "-f", "csv")
    assert set(pd.read_csv(io.StringIO(csv.stdout))["measure"]) == {"ndcg_cut.10"}


def test_run_files_keep_the_order_given(files):
    qrels, runs = files  # zeta, alpha, mid: not sorted
    for fmt in ("csv", "trec"):
        result = invoke("eval", "--qrels", str(qrels), *runs, "-m", "P@1", "-m", "map", "-f", fmt)
        assert result.exit_code == 0, result.output
        if fmt == "csv":
            order = list(dict.fromkeys(pd.read_csv(io.StringIO(result.stdout))["run_id"]))
        else:
            order = [line.split()[2] for line in result.stdout.splitlines() if line.startswith("runid")]
        assert order == ["zeta", "alpha", "mid"]
    per_query = invoke("eval", "--qrels", str(qrels), *reversed(runs), "-m", "P@1", "-q", "-f", "csv")
    frame = pd.read_csv(io.StringIO(per_query.stdout), dtype={"query_id": str})
    assert list(dict.fromkeys(frame["run_id"])) == ["mid", "alpha", "zeta"]
    assert list(frame[frame["run_id"] == "alpha"]["query_id"]) == ["1", "2"]


def test_empty_stored_results_say_why(db):
    result = runner.invoke(app, ["sql", "SELECT * FROM run_scores", "--db", str(db), "-f", "csv"])
    assert result.exit_code == 0, result.output
    assert "note: run_scores is empty" in result.stderr and "evalwh eval --store" in result.stderr
    # after a stored evaluation the same query has rows and no note
    assert invoke("eval", "-c", "c", "--db", str(db), "-m", "P@1", "--store").exit_code == 0
    stored = runner.invoke(app, ["sql", "SELECT * FROM run_scores", "--db", str(db), "-f", "csv"])
    assert len(pd.read_csv(io.StringIO(stored.stdout))) == 3 and "note" not in stored.stderr
    # an empty answer from a table that holds rows is no surprise: no note
    plain = runner.invoke(app, ["sql", "SELECT * FROM runs WHERE run_id = 'none'", "--db", str(db)])
    assert plain.exit_code == 0 and "note" not in plain.stderr


def test_every_table_and_view_is_described(db):
    result = invoke("schema", "--db", str(db), "-f", "csv")
    frame = pd.read_csv(io.StringIO(result.stdout), keep_default_na=False)
    assert len(frame) > 30
    assert not frame[frame["description"] == ""]["relation"].tolist()
    described = dict(zip(frame["relation"], frame["description"]))
    assert "--store" in described["run_scores"] and "--store" in described["results"]


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_help_never_cuts_a_default(columns):
    result = invoke("adjust", "--help", columns=columns)
    assert result.exit_code == 0, result.output
    flat = re.sub(r"[\s│]+", "", result.stdout)
    assert "RBP_trunc(p=0.8)@10" in flat
    assert "RBP_trunc(p=0.8)@1…" not in flat


def test_adjust_prints_the_shared_table(tmp_path):
    from evalwh.io.demo_data import write_demo

    demo = write_demo(tmp_path / "demo")
    path = tmp_path / "demo.duckdb"
    with Warehouse(path) as wh:
        wh.ingest_qrels(demo.qrels, collection="demo")
        wh.ingest_runs(demo.runs, collection="demo")
        wh.build_pool(collection="demo", depth=10, runs=["bm25", "dense"], pool_id="p10")
    result = invoke("adjust", "bm25_rm3", "--pool", "p10", "--db", str(path), "--resamples", "50", "--no-store")
    assert result.exit_code == 0, result.output
    header, row = result.stdout.splitlines()[1:3]
    assert header.split()[:3] == ["run_id", "pool_id", "measure"]
    numbers = re.findall(r"\d+\.\d+", row)
    assert numbers and all(len(n.split(".")[1]) == 4 for n in numbers)  # the shared 4 decimals
    csv = invoke("adjust", "bm25_rm3", "--pool", "p10", "--db", str(path), "--resamples", "50", "--no-store", "-f", "csv")
    frame = pd.read_csv(io.StringIO(csv.stdout))
    assert len(frame) == 1 and frame["adjusted"].iloc[0] == pytest.approx(frame["unpooled"].iloc[0] + frame["a"].iloc[0])


def test_report_demo_says_what_it_leaves(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["report", "--demo", "-o", "r.html", "--db", "demo.duckdb"])
    assert result.exit_code == 0, result.output
    assert "evalwh-demo/" in result.stderr and "demo.duckdb" in result.stderr
    assert (tmp_path / "evalwh-demo").is_dir() and (tmp_path / "demo.duckdb").is_file()


def test_judged_share_by_source_on_the_direct_path(files):
    """A qrels file read by eval --qrels is one human set: its judged share is all human."""
    qrels, runs = files
    specs = ["A_p(source=human)@2", "A_p(source=llm)@2", "A_p(source=none)@2", "A_p@2"]
    result = invoke("eval", "--qrels", str(qrels), *runs, *[a for s in specs for a in ("-m", s)], "-q", "-f", "csv")
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(io.StringIO(result.stdout), dtype={"query_id": str})
    wide = frame.pivot_table(index=["run_id", "query_id"], columns="measure", values="value")
    assert (wide["A_p(source=human)@2"] == wide["A_p@2"]).all()
    assert (wide["A_p(source=llm)@2"] == 0).all()
    assert (wide["A_p(source=none)@2"] == 1 - wide["A_p@2"]).all()
    assert wide["A_p@2"].between(0, 1).all() and (wide["A_p@2"] < 1).any()
