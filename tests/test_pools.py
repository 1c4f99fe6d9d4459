"""Pools as data, unique contributions, leave-one-out re-pooling (methods §3.4, §5)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from evalwh.methods import pools
from evalwh.errors import EvalWhError, MetricParamError, NotFoundError
from evalwh.warehouse import Warehouse

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec8_adhoc"


def _runs_frame(runs: dict[str, str], query_id: str = "1") -> pd.DataFrame:
    """Runs as strings of one-letter documents, best first (scores strictly falling)."""
    rows = [(run, query_id, doc, 10.0 - i) for run, docs in runs.items() for i, doc in enumerate(docs)]
    return pd.DataFrame(rows, columns=["run_id", "query_id", "doc_id", "score"])


@pytest.fixture
def example() -> Warehouse:
    """Methods §5.4: one topic, s1 = a b, s2 = a c, s3 = e f, new run r = b g; a, b, f relevant."""
    wh = Warehouse(":memory:")
    qrels = pd.DataFrame({"query_id": ["1"] * 5, "doc_id": list("abfce"), "relevance": [1, 1, 1, 0, 0]})
    wh.ingest_qrels(qrels, collection="ex")
    wh.ingest_runs(_runs_frame({"s1": "ab", "s2": "ac", "s3": "ef", "r": "bg"}), collection="ex")
    pools.build_pool(wh, "ex", depth=2, runs=["s1", "s2", "s3"], pool_id="P")
    return wh


def test_pool_qrels_are_the_restricted_judgments(example: Warehouse) -> None:
    stored = example.query("SELECT doc_id, relevance FROM qrels WHERE qrels_id = 'P' ORDER BY doc_id")
    assert stored.values.tolist() == [["a", 1], ["b", 1], ["c", 0], ["e", 0], ["f", 1]]
    row = example.query("SELECT kind, parent_qrels_id, params FROM qrels_sets WHERE qrels_id = 'P'").iloc[0]
    assert (row["kind"], row["parent_qrels_id"]) == ("derived", "default")
    assert '"depth": 2' in row["params"]
    assert example.query("SELECT run_id FROM pool_runs ORDER BY run_id")["run_id"].tolist() == ["s1", "s2", "s3"]


def test_pooled_but_unjudged_documents_get_grade_minus_one(example: Warehouse) -> None:
    info = pools.build_pool(example, "ex", depth=2, runs_from="all", pool_id="all2").iloc[0]
    assert (info["pooled"], info["judged"], info["unjudged"], info["runs"]) == (6, 5, 1, 4)
    grade = example.query("SELECT relevance FROM qrels WHERE qrels_id = 'all2' AND doc_id = 'g'")
    assert grade["relevance"].tolist() == [-1]


def test_pool_depth_one_keeps_only_the_first_documents(example: Warehouse) -> None:
    pools.build_pool(example, "ex", depth=1, runs=["s1", "s2", "s3"], pool_id="P1")
    docs = example.query("SELECT doc_id FROM qrels WHERE qrels_id = 'P1' ORDER BY doc_id")["doc_id"].tolist()
    assert docs == ["a", "e"]


def test_pool_ties_follow_trec_eval_order() -> None:
    # equal scores: trec_eval breaks the tie by doc_id descending, so "z" is ranked before "a"
    wh = Warehouse(":memory:")
    wh.ingest_qrels(pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "z"], "relevance": [1, 0]}), collection="c")
    runs = pd.DataFrame({"run_id": ["t", "t"], "query_id": ["1", "1"], "doc_id": ["a", "z"], "score": [1.0, 1.0]})
    wh.ingest_runs(runs, collection="c")
    pools.build_pool(wh, "c", depth=1, runs=["t"], pool_id="tie")
    assert wh.query("SELECT doc_id FROM qrels WHERE qrels_id = 'tie'")["doc_id"].tolist() == ["z"]


def test_every_metric_runs_on_the_pool(example: Warehouse) -> None:
    scores = example.evaluate(["P@2"], collection="ex", runs=["r"], qrels_id="P")
    assert scores["value"].tolist() == [0.5]  # b relevant, g unjudged


def test_name_clash_and_replace(example: Warehouse) -> None:
    with pytest.raises(EvalWhError, match="already has a qrels set 'P' \\(derived\\); give --replace"):
        pools.build_pool(example, "ex", depth=1, runs=["s1"], pool_id="P")
    with pytest.raises(EvalWhError, match="'default' \\(ingested\\); choose another id"):
        pools.build_pool(example, "ex", depth=1, runs=["s1"], pool_id="default")
    pools.build_pool(example, "ex", depth=1, runs=["s1"], pool_id="P", replace=True)
    assert pools.pool_members(example, "ex", "P") == (["s1"], 1, "default")


def test_errors_name_what_exists(example: Warehouse) -> None:
    with pytest.raises(NotFoundError, match=r"no pool 'Q' \(pools: P\)"):
        pools.pool_members(example, "ex", "Q")
    with pytest.raises(NotFoundError, match=r"no run\(s\) \['zz'\]"):
        pools.build_pool(example, "ex", depth=2, runs=["zz"])
    with pytest.raises(NotFoundError, match="no run is flagged as pooled"):
        pools.build_pool(example, "ex", depth=2)
    with pytest.raises(EvalWhError, match="depth 0: expected a whole number >= 1"):
        pools.build_pool(example, "ex", depth=0, runs=["s1"])


def test_unique_contributions_of_the_worked_example(example: Warehouse) -> None:
    frame = pools.contributions(example, "ex", pool_id="P").set_index("run_id")
    assert frame.loc[["s1", "s2", "s3"], "unique_docs"].tolist() == [1, 1, 2]
    assert frame.loc[["s1", "s2", "s3"], "unique_relevant"].tolist() == [1, 0, 1]
    assert frame.loc[["s1", "s2", "s3"], "pooled_relevant"].tolist() == [2, 1, 1]


def test_group_contributions() -> None:
    wh = Warehouse(":memory:")
    wh.ingest_qrels(pd.DataFrame({"query_id": ["1"] * 4, "doc_id": list("abcd"), "relevance": [1, 1, 0, 1]}), collection="g")
    wh.ingest_runs(_runs_frame({"x1": "ab", "x2": "ac", "y1": "ad"}), collection="g")
    meta = pd.DataFrame({"run_id": ["x1", "x2", "y1"], "group": ["X", "X", "Y"]})
    wh.ingest_run_metadata(meta, collection="g")
    by_run = pools.contributions(wh, "g", depth=2, runs_from="all").set_index("run_id")
    assert by_run["unique_docs"].to_dict() == {"x1": 1, "x2": 1, "y1": 1}
    by_group = pools.contributions(wh, "g", depth=2, runs_from="all", by="group").set_index("group_name")
    # X pooled a, b, c; only Y also has a: X's unique documents are b and c, one relevant
    assert by_group.loc["X", ["runs", "unique_docs", "unique_relevant"]].tolist() == [2, 2, 1]
    assert by_group.loc["Y", ["unique_docs", "unique_relevant"]].tolist() == [1, 1]


def test_leave_one_out_worked_example(example: Warehouse) -> None:
    refined = pools.leave_one_out(example, "ex", "P", ["P@2"], new_run="r")
    assert refined["delta"].tolist() == [0.0, 0.0, 0.5]
    plain = pools.leave_one_out(example, "ex", "P", ["P@2"])
    assert plain["delta"].tolist() == [0.5, 0.0, 0.5]
    assert plain["pooled"].tolist() == [1.0, 0.5, 0.5]


def test_leave_one_out_rejects_per_query_ideal_metrics(example: Warehouse) -> None:
    with pytest.raises(MetricParamError, match="nDCG@2: not available on per-run pool qrels"):
        pools.leave_one_out(example, "ex", "P", ["nDCG@2"])
    with pytest.raises(EvalWhError, match="run 's1' is a member of pool 'P'"):
        pools.leave_one_out(example, "ex", "P", ["P@2"], new_run="s1")


def test_completion_adds_returned_documents_as_nonrelevant(example: Warehouse) -> None:
    row = pools.complete_qrels(example, "ex").iloc[0]
    assert (row["judged"], row["added"], row["relevant"]) == (6, 1, 3)
    grade = example.query("SELECT relevance FROM qrels WHERE qrels_id = 'default-completed' AND doc_id = 'g'")
    assert grade["relevance"].tolist() == [0]


# --- the set-wise scorers agree with rebuilding every pool and evaluating ---------------

DOCS = list("abcdefghij")
ranking = st.lists(st.sampled_from(DOCS), min_size=0, max_size=6, unique=True)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    runs=st.lists(st.tuples(ranking, ranking), min_size=3, max_size=4),
    grades=st.lists(st.sampled_from([0, 1, 2]), min_size=10, max_size=10),
    depth=st.integers(1, 3),
    unjudged=st.sampled_from(["nonrelevant", "condensed"]),
)
def test_setwise_leave_one_out_equals_rebuilt_pools(
    runs: list[tuple[list[str], list[str]]], grades: list[int], depth: int, unjudged: str
) -> None:
    wh = Warehouse(":memory:")
    qrels = pd.DataFrame({"query_id": ["1"] * 5 + ["2"] * 5, "doc_id": DOCS[:5] + DOCS[5:], "relevance": grades})
    wh.ingest_qrels(qrels, collection="h")
    frames = [_runs_frame({f"s{i}": "".join(q1)}, "1") for i, (q1, _) in enumerate(runs)]
    frames += [_runs_frame({f"s{i}": "".join(q2)}, "2") for i, (_, q2) in enumerate(runs)]
    frame = pd.concat(frames, ignore_index=True)
    if frame.empty:
        return
    wh.ingest_runs(frame, collection="h")
    members = wh.run_ids("h")
    if len(members) < 2:
        return
    pools.build_pool(wh, "h", depth=depth, runs=members, pool_id="P")
    measures = ["P@3", "AP", "RBP_trunc(p=0.8)@3", "bpref"]
    setwise = pools.leave_one_out(wh, "h", "P", measures, unjudged=unjudged)
    for run in members:
        others = [m for m in members if m != run]
        pools.build_pool(wh, "h", depth=depth, runs=others, pool_id="loo", replace=True)
        rebuilt = wh.evaluate(measures, collection="h", runs=[run], per_query=True, qrels_id="loo", unjudged=unjudged)
        # the topic set is the full pool's: align on the topics both have
        mine = setwise[setwise["run_id"] == run].merge(rebuilt, on=["query_id", "measure"])
        assert len(mine) == len(rebuilt[rebuilt["query_id"].isin(setwise["query_id"])])
        pd.testing.assert_series_equal(mine["left_out"], mine["value"], check_names=False, atol=1e-12)
    # pooled_scores with the full member set reproduces evaluation on the stored pool
    spec = pd.DataFrame([(f"e-{r}", r, m) for r in members for m in members], columns=["eval_id", "run_id", "member_id"])
    scores = pools.pooled_scores(wh, "h", spec, measures, depth=depth, unjudged=unjudged)
    stored = wh.evaluate(measures, collection="h", per_query=True, qrels_id="P", unjudged=unjudged)
    stored["eval_id"] = "e-" + stored["run_id"]
    both = scores.merge(stored, on=["eval_id", "query_id", "measure"])
    pd.testing.assert_series_equal(both["value_x"], both["value_y"], check_names=False, atol=1e-12)


# --- TREC-8 ------------------------------------------------------------------------------


@pytest.fixture
def trec8(trec8_copy) -> Warehouse:
    """TREC-8 with run metadata (the 71 pooled runs are flagged), a private writable copy."""
    wh = Warehouse(trec8_copy)
    yield wh
    wh.close()


@pytest.mark.slow
def test_trec8_official_pool_is_the_top_100_of_the_71_pooled_runs(trec8: Warehouse) -> None:
    info = pools.build_pool(trec8, "trec8", depth=100, runs_from="pooled", pool_id="official").iloc[0]
    assert (info["runs"], info["topics"], info["pooled"], info["judged"], info["unjudged"]) == (71, 50, 86830, 86830, 0)
    difference = trec8.query(
        "SELECT count(*) AS n FROM ("
        " (SELECT query_id, doc_id FROM qrels WHERE qrels_id = 'default'"
        "  EXCEPT SELECT query_id, doc_id FROM qrels WHERE qrels_id = 'official')"
        " UNION ALL"
        " (SELECT query_id, doc_id FROM qrels WHERE qrels_id = 'official'"
        "  EXCEPT SELECT query_id, doc_id FROM qrels WHERE qrels_id = 'default'))"
    )
    assert difference["n"].tolist() == [0]
    relevant = trec8.query("SELECT count(*) AS n FROM qrels WHERE qrels_id = 'official' AND relevance > 0")
    assert relevant["n"].tolist() == [4728]


# --- CLI ---------------------------------------------------------------------------------


def test_cli_pool_build_list_contributions(tmp_path: Path) -> None:
    from evalwh.cli import app

    db = tmp_path / "w.duckdb"
    with Warehouse(db) as wh:
        wh.ingest_qrels(pd.DataFrame({"query_id": ["1"] * 5, "doc_id": list("abfce"), "relevance": [1, 1, 1, 0, 0]}), collection="ex")
        wh.ingest_runs(_runs_frame({"s1": "ab", "s2": "ac", "s3": "ef", "r": "bg"}), collection="ex")
    runner = CliRunner()
    env = {"COLUMNS": "200", "TERMINAL_WIDTH": "200"}
    built = runner.invoke(app, ["pool", "build", "-c", "ex", "--depth", "2", "--runs", "s1,s2,s3", "--pool-id", "P", "--db", str(db), "-f", "csv"], env=env)
    assert built.exit_code == 0, built.output
    assert built.output.splitlines()[1] == "P,2,default,list,depth,,,,3,1,5,5,3,0"
    listed = runner.invoke(app, ["pool", "list", "-c", "ex", "--db", str(db), "-f", "csv"], env=env)
    assert listed.output.splitlines()[1].startswith("P,2,default,list,depth,,,,3")
    unique = runner.invoke(app, ["pool", "contributions", "-c", "ex", "--pool", "P", "--db", str(db), "-f", "csv"], env=env)
    assert unique.output.splitlines()[1:] == ["s3,,2,1,2,1,1", "s1,,2,2,1,1,1", "s2,,2,1,1,0,1"]
    adjusted = runner.invoke(app, ["adjust", "r", "-c", "ex", "--pool", "P", "-m", "P@2", "--db", str(db), "-f", "csv"], env=env)
    assert adjusted.exit_code == 0, adjusted.output
    header, row = adjusted.output.splitlines()
    values = dict(zip(header.split(","), row.split(","), strict=True))
    assert (values["unpooled"], round(float(values["a"]), 6), round(float(values["adjusted"]), 6)) == ("0.5", 0.166667, 0.666667)
    missing = runner.invoke(app, ["adjust", "r", "-c", "ex", "--pool", "Q", "--db", str(db)], env=env)
    assert missing.exit_code == 1
    assert missing.output.strip() == "Error: collection 'ex' has no pool 'Q' (pools: P)"
    for command in (["pool", "build"], ["pool", "list"], ["pool", "contributions"], ["pool", "complete"], ["adjust"]):
        helped = runner.invoke(app, [*command, "--help"], env=env)
        assert helped.exit_code == 0 and "Example: evalwh" in helped.output


def test_default_pool_ids_name_a_strategy_option_off_its_default(example: Warehouse) -> None:
    """Two rbp pools with other persistences (or bandit pools with other discounts) get two ids, not a clash."""
    build = pools.build_pool
    ids = [
        build(example, "ex", depth=2, runs_from="all", strategy="rbp").iloc[0]["pool_id"],
        build(example, "ex", depth=2, runs_from="all", strategy="rbp", rbp_p=0.5).iloc[0]["pool_id"],
        build(example, "ex", depth=2, runs_from="all", strategy="rrf", rrf_k=30, budget=1).iloc[0]["pool_id"],
        build(example, "ex", depth=2, runs_from="all", strategy="bandit", gamma=1.0).iloc[0]["pool_id"],
        build(example, "ex", depth=2, runs_from="all", strategy="mtf", rel=2, seed=3).iloc[0]["pool_id"],
    ]
    assert ids == ["rbp-pool2-all", "rbp-p0.5-pool2-all", "rrf1topic-k30-pool2-all", "bandit-gamma1-pool2-all-seed0",
                   "mtf-rel2-pool2-all-seed3"]  # fmt: skip
    stored = example.sql("SELECT pool_id, params FROM pools WHERE pool_id LIKE 'rbp%' ORDER BY pool_id")
    assert [json.loads(p)["p"] for p in stored["params"]] == [0.5, 0.8]


def test_default_pool_ids_name_a_list_of_members_and_the_parent_set(example: Warehouse, tmp_path: Path) -> None:
    """From a review of the budgets page: every member list was named ``list`` and the parent set not
    at all, so a second list or parent clashed with the first (and --replace overwrote it)."""
    from evalwh.cli import app
    from evalwh.store.connection import sha256_text

    example.ingest_qrels(pd.DataFrame({"query_id": ["1"] * 3, "doc_id": list("abe"), "relevance": [0, 1, 1]}),
                         collection="ex", qrels_id="other")  # fmt: skip
    one = pools.build_pool(example, "ex", depth=2, runs=["s1", "s2"], strategy="take", budget=2).iloc[0]["pool_id"]
    two = pools.build_pool(example, "ex", depth=2, runs=["s2", "s3"], strategy="take", budget=2).iloc[0]["pool_id"]
    parent = pools.build_pool(example, "ex", depth=2, runs=["s2", "s1"], strategy="take", budget=2,
                              qrels_id="other").iloc[0]["pool_id"]  # fmt: skip
    digest = sha256_text("s1\ns2")[:8]
    assert (one, two, parent) == (f"take2topic-pool2-list{digest}", f"take2topic-pool2-list{sha256_text('s2' + chr(10) + 's3')[:8]}",
                                  f"take2topic-pool2-list{digest}-of-other")  # fmt: skip
    db = tmp_path / "w.duckdb"
    with Warehouse(db) as wh:
        wh.ingest_qrels(pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]}), collection="ex")
        wh.ingest_runs(_runs_frame({"s1": "ab"}), collection="ex")
    result = CliRunner().invoke(app, ["pool", "build", "-c", "ex", "--runs-from", "all", "--per", "total", "--db", str(db)])
    assert result.exit_code == 1
    assert result.output.strip() == "Error: pool build: --per says how --budget is counted; give --budget N with it"
    with Warehouse.open_reader(db) as wh:
        assert wh.sql("SELECT count(*) AS n FROM pools")["n"].iloc[0] == 0
