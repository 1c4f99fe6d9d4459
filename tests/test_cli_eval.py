"""The eval and metrics commands, end to end through typer's CliRunner."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from typer.testing import CliRunner

from evalwh import Warehouse
from evalwh.cli import app

QRELS = pd.DataFrame(
    {
        "query_id": ["1", "1", "1", "1", "2", "2", "3"],
        "doc_id": ["a", "b", "c", "d", "a", "e", "z"],
        "relevance": [1, 0, 2, 0, 1, 0, 0],  # topic 3 has no relevant document
    }
)
RUNS = pd.DataFrame(
    {
        "run_id": ["r1"] * 5 + ["r2"] * 3,
        "query_id": ["1", "1", "1", "1", "2", "1", "1", "1"],
        "doc_id": ["a", "x", "b", "c", "e", "c", "a", "y"],
        "score": [5.0, 4.0, 3.0, 2.0, 1.0, 3.0, 2.0, 1.0],
    }
)


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "wh.duckdb"
    with Warehouse(path) as wh:
        wh.ingest_qrels(QRELS, collection="c")
        wh.ingest_runs(RUNS, collection="c")
    return path


runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, list(args), env={"COLUMNS": "200", "TERMINAL_WIDTH": "200"})


def test_eval_csv_means(db):
    result = invoke("eval", "-c", "c", "--db", str(db), "-m", "P@2", "-m", "AP", "--format", "csv")
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(io.StringIO(result.stdout))
    got = {(r.run_id, r.measure): r.value for r in frame.itertuples()}
    # r1: topic 1 = a(rel) x b c(rel): P@2 = 1/2, AP = (1/1 + 2/4)/2 = 0.75; topic 2 = e: 0, 0
    # r2: topic 1 = c(rel) a(rel) y: P@2 = 1, AP = (1 + 1)/2 = 1; topic 2 missing: 0, 0
    assert got == pytest.approx(
        {("r1", "P@2"): 0.25, ("r1", "AP"): 0.375, ("r2", "P@2"): 0.5, ("r2", "AP"): 0.5}
    )
    assert set(frame["n_topics"]) == {2}  # topic 3 has no relevant document: not in T


def test_eval_trec_format_compat_averaging(db):
    result = invoke(
        "eval", "-c", "c", "--db", str(db), "-m", "P@2", "-m", "NumRet", "-r", "r2",
        "--averaging", "trec_eval_c", "--format", "trec", "--per-query",
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "P_2                   \t1\t1.0000",
        "num_ret               \t1\t3",
        "P_2                   \t2\t0.0000",
        "num_ret               \t2\t0",
        "P_2                   \t3\t0.0000",
        "num_ret               \t3\t0",
        "runid                 \tall\tr2",
        "num_q                 \tall\t3",
        "P_2                   \tall\t0.3333",
        "num_ret               \tall\t3",
    ]


def test_eval_depth_profile_table(db):
    result = invoke("eval", "-c", "c", "--db", str(db), "-m", "P", "-m", "A_p", "--depths", "1,4")
    assert result.exit_code == 0, result.output
    # not a terminal: the long form, one measure per line, in the order of the depth profile
    lines = [line.split() for line in result.stdout.splitlines()]
    assert lines[1] == ["run_id", "measure", "value"]
    assert [line[1] for line in lines[2:] if line[0] == "r1"] == ["P@1", "P@4", "A_p@1", "A_p@4"]


def test_eval_store_keeps_results(db):
    result = invoke("eval", "-c", "c", "--db", str(db), "-m", "P@2", "--store", "--format", "csv")
    assert result.exit_code == 0, result.output
    with Warehouse(db, read_only=True) as wh:
        stored = wh.query(
            "SELECT run_id, query_id, value FROM results WHERE measure = 'P@2' ORDER BY run_id, query_id"
        )
    assert stored.values.tolist() == [
        ["r1", "1", 0.5], ["r1", "2", 0.0], ["r1", "all", 0.25],
        ["r2", "1", 1.0], ["r2", "2", 0.0], ["r2", "all", 0.5],
    ]


def test_stored_means_are_the_evaluations_own(db):
    """The stored topic-``all`` rows are the means the evaluation returns: the geometric mean
    for gm_map (not the arithmetic one), the sum for counts, with or without per-topic output."""
    import math

    with Warehouse(db) as wh:
        means = wh.evaluate(["gm_map", "AP", "num_rel_ret"], collection="c", store=True)
        stored = wh.query("SELECT run_id, measure, value, n_topics FROM results WHERE query_id = 'all' "
                          "ORDER BY run_id, measure")  # fmt: skip
        per_topic = wh.evaluate(["AP", "num_rel_ret"], collection="c", per_query=True)
        wh.evaluate(["gm_map"], collection="c", store=True, per_query=True)
        again = wh.query("SELECT run_id, value FROM results WHERE query_id = 'all' AND measure = 'gm_map' "
                         "ORDER BY run_id")  # fmt: skip
    got = {(r.run_id, r.measure): (r.value, r.n_topics) for r in stored.itertuples()}
    assert got == {(r.run_id, r.measure): (r.value, r.n_topics) for r in means.itertuples()}
    for run, rows in per_topic.groupby("run_id"):
        ap = rows.loc[rows["measure"] == "AP", "value"].tolist()
        # trec_eval's gm_map: exp of the mean log of max(AP, 0.00001)
        assert got[(run, "gm_map")][0] == pytest.approx(math.exp(sum(math.log(max(v, 1e-5)) for v in ap) / len(ap)))
        assert got[(run, "AP")][0] == pytest.approx(sum(ap) / len(ap))
        assert got[(run, "NumRelRet")][0] == rows.loc[rows["measure"] == "NumRelRet", "value"].sum()
    assert got[("r1", "gm_map")][0] < got[("r1", "AP")][0]  # a topic with AP 0: the two means differ
    assert dict(again.values.tolist()) == {run: value for (run, m), (value, _) in got.items() if m == "gm_map"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-m", "nDGC@10"], "Error: Unknown metric 'nDGC'. Did you mean nDCG or binG or SDCG? (evalwh metrics lists them all)"),
        (["-m", "Success"], "Error: Success: Success needs @k, e.g. Success@10"),
        (["-m", "P@0"], "Error: P@0: parameter k='0' must be a positive integer"),
        (["-m", "RBP(q=1)@5"], "Error: RBP(q=1)@5: RBP has no parameter 'q' (it has: p, k, rel, judged_only)"),
        (["-m", "A_p@10", "--unjudged", "condensed"],
         "Error: A_p@10: assessment measures are undefined on condensed lists (every remaining "
         "document is judged); use --unjudged nonrelevant"),
        (["-m", "P@5", "-r", "nope"], "Error: collection 'c' has no run(s) ['nope']"),
        (["-m", "P@5", "--qrels-id", "x"], "Error: collection 'c' has no qrels set 'x' (it has: default)"),
        (["-m", "P@5", "--depths", "a,b"], "Error: --depths 'a,b': expected comma-separated integers, e.g. 10,30,100"),
    ],
)
def test_eval_errors(db, args, message):
    result = invoke("eval", "-c", "c", "--db", str(db), *args)
    assert result.exit_code == 1
    assert result.stderr.strip() == message


def test_unknown_collection(db):
    result = invoke("eval", "-c", "nope", "--db", str(db))
    assert result.exit_code == 1
    assert result.stderr.strip().startswith("Error: no collection 'nope' in ")


def test_metrics_lists_registry():
    from evalwh.measures import catalog

    result = invoke("metrics", "--format", "csv")
    assert result.exit_code == 0
    frame = pd.read_csv(io.StringIO(result.stdout))
    assert list(frame["name"]) == [m.name for m in catalog.metrics()]
    assert {"P", "AP", "nDCG", "bpref", "RankEff", "A_p", "RBP"} <= set(frame["name"])


# -- evalwh eval --qrels QRELS RUN...: run files evaluated directly --------------------------------


@pytest.fixture
def files(tmp_path):
    """The same collection as TREC files: the qrels and one file per run."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{r.query_id} 0 {r.doc_id} {r.relevance}\n" for r in QRELS.itertuples()))
    runs = []
    for run_id, rows in RUNS.groupby("run_id"):
        path = tmp_path / f"{run_id}.txt"
        path.write_text("".join(f"{r.query_id} Q0 {r.doc_id} {i} {r.score} {run_id}\n" for i, r in enumerate(rows.itertuples())))
        runs.append(str(path))
    return str(qrels), runs


def test_eval_files_give_the_warehouse_output_in_every_format(db, files):
    qrels, runs = files
    for fmt in ("csv", "trec"):
        args = ["-m", "P@2", "-m", "AP", "-m", "NumRet", "--averaging", "trec_eval_c", "--per-query", "--format", fmt]
        direct = invoke("eval", "--qrels", qrels, *runs, *args)
        stored = invoke("eval", "-c", "c", "--db", str(db), *args)
        assert direct.exit_code == 0, direct.output
        if fmt == "csv":
            got, expected = (pd.read_csv(io.StringIO(r.stdout)).drop(columns="collection_id") for r in (direct, stored))
            pd.testing.assert_frame_equal(got, expected)
        else:
            assert direct.stdout == stored.stdout
    assert "P_2                   \t1\t0.5000" in direct.stdout  # r1, topic 1: a x | b c


def test_eval_files_table_names_the_qrels(files):
    qrels, runs = files
    result = invoke("eval", "--qrels", qrels, *runs, "-m", "P@2")
    assert result.exit_code == 0, result.output
    assert "qrels.txt" in result.stdout.replace("\n", "")
    assert [line.split() for line in result.stdout.splitlines() if line.startswith("r")][1:] == [
        ["r1", "P@2", "0.2500"], ["r2", "P@2", "0.5000"],
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--qrels", "QRELS", "-c", "c"], "Error: give either --collection (a warehouse) or --qrels with run files, not both"),
        (["--qrels", "QRELS"], "Error: --qrels needs run files: evalwh eval --qrels QRELS RUN [RUN ...]"),
        (["--qrels", "QRELS", "RUN", "--store"],
         "Error: --run, --store and --qrels-id apply to a warehouse (--collection), not to --qrels"),
        (["-c", "c", "RUN"], "Error: run files as arguments go with --qrels; ingest them to evaluate a collection"),
        (["--qrels", "QRELS", "BAD"], "Error: BAD:2: score 'high' is not a finite number"),
    ],
)
def test_eval_files_errors(db, files, tmp_path, args, message):
    bad = tmp_path / "bad.txt"
    bad.write_text("1 Q0 a 1 2 r\n1 Q0 b 2 high r\n")
    names = {"QRELS": files[0], "RUN": files[1][0], "BAD": str(bad)}
    result = invoke("eval", "--db", str(db), *[names.get(a, a) for a in args])
    assert result.exit_code == 1
    assert result.stderr.strip() == message.replace("BAD", str(bad))
