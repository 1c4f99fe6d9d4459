"""Uncertainty bounds: Dempster-Shafer masses, Dempster's rule, residual and scenario bands."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import example as case
from hypothesis import strategies as st
from typer.testing import CliRunner

from evalwh import Warehouse
from evalwh.methods.bounds import belief_plausibility, combine, compare, compute_bounds, dempster
from evalwh.errors import MetricParamError

TREC8 = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec8_adhoc"


def _example_warehouse(path: str | Path = ":memory:") -> Warehouse:
    """Topic T1 of methods §1.9 and topic T2 of §7.5 for one run ``s``."""
    wh = Warehouse(path)
    qrels = [("T1", d, 1) for d in ["d1", "d3", "d7", "d9"]]
    qrels += [("T1", d, 0) for d in ["d2", "d5", "d8", "d10", "d11"]]
    qrels += [("T2", f"e{i}", 1) for i in range(1, 6)] + [("T2", "e6", 0), ("T2", "e7", 0)]
    wh.ingest_qrels(
        pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]), collection="x"
    )
    run = [("T1", f"d{i}", 10.0 - i) for i in range(1, 9)]
    t2 = ["e1", "e6", "e2", "u1", "e3", "e7", "e4", "u2", "e5", "u3"]  # 5 rel, 2 nonrel, 3 unjudged
    run += [("T2", d, 20.0 - i) for i, d in enumerate(t2)]
    wh.ingest_runs(
        pd.DataFrame(run, columns=["query_id", "doc_id", "score"]), collection="x", run_id="s"
    )
    return wh


@pytest.fixture(scope="module")
def example() -> Warehouse:
    return _example_warehouse()


# -- worked examples ---------------------------------------------------------------------------


def test_worked_example_dempster_numbers() -> None:
    # methods §7.5: K = 0.21, combined (0.556962, 0.291139, 0.151899)
    combined = combine([0.3, 0.3, 0.4], [0.5, 0.2, 0.3])
    assert combined == pytest.approx([0.44 / 0.79, 0.23 / 0.79, 0.12 / 0.79])
    assert combined.round(6).tolist() == [0.556962, 0.291139, 0.151899]


def test_worked_example_through_the_warehouse(example: Warehouse) -> None:
    frame = compute_bounds(example, collection="x", measure="P", depths=[10])
    by = frame.set_index("aggregation")
    assert by.loc["dempster", "conflict"] == pytest.approx(0.21)
    assert by.loc["dempster", "lower"] == pytest.approx(0.556962, abs=1e-6)  # Bel12(R)
    assert by.loc["dempster", "upper"] == pytest.approx(0.708861, abs=1e-6)  # Pl12(R)
    assert by.loc["dempster", "m_theta"] == pytest.approx(0.151899, abs=1e-6)
    # mean masses (0.4, 0.25, 0.35): the band [0.4, 0.75]
    assert by.loc["mean", ["m_rel", "m_nonrel", "m_theta"]].tolist() == pytest.approx(
        [0.4, 0.25, 0.35]
    )
    assert by.loc["mean", ["lower", "upper"]].tolist() == pytest.approx([0.4, 0.75])
    assert by["n_topics"].tolist() == [2, 2]


def test_topic_t1_bounds_and_scenarios(example: Warehouse) -> None:
    def t1(measure: str) -> pd.Series:
        frame = compute_bounds(
            example, collection="x", measure=measure, depths=[10], per_query=True
        )
        return frame.set_index("query_id").loc["T1"]

    p = t1("P")
    assert (p["lower"], p["upper"], p["m_theta"]) == pytest.approx((0.3, 0.7, 0.4))  # P_up@10 = 0.7
    rbp = t1("RBP(p=0.8)")
    assert rbp["lower"] == pytest.approx(0.3804288)
    assert rbp["upper"] == pytest.approx(0.71613696)
    assert rbp["m_theta"] == pytest.approx(0.33570816)  # resid@10
    ap = t1("AP")
    assert (ap["lower"], ap["upper"]) == pytest.approx((0.523810, 0.632937), abs=1e-6)
    assert ap["kind"] == "scenario"
    recall = t1("R")
    assert (recall["lower"], recall["upper"]) == pytest.approx((0.75, 5 / 6))
    ndcg = t1("nDCG")
    dcg_up = 1 + 1 / np.log2(4) + 1 / np.log2(5) + 1 / np.log2(7) + 1 / np.log2(8)
    idcg_up = sum(1 / np.log2(i + 1) for i in range(1, 7))  # R_up = 6 documents of gain 1
    assert (ndcg["lower"], ndcg["upper"]) == pytest.approx((0.715697, dcg_up / idcg_up), abs=1e-6)


def test_scenario_can_fall_below_the_value() -> None:
    # methods §1.8 property 5: R = 1 at rank 1, an unjudged document at rank 10
    wh = Warehouse(":memory:")
    wh.ingest_qrels(
        pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "n"], "relevance": [1, 0]}),
        collection="c",
    )
    docs = ["a"] + [f"n{i}" for i in range(8)] + ["u"]
    qrels_nonrel = pd.DataFrame(
        {"query_id": "1", "doc_id": [f"n{i}" for i in range(8)], "relevance": 0}
    )
    wh.ingest_qrels(
        pd.concat(
            [pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]}), qrels_nonrel]
        ),
        collection="c",
        replace=True,
    )
    wh.ingest_runs(
        pd.DataFrame({"query_id": "1", "doc_id": docs, "score": range(10, 0, -1)}),
        collection="c",
        run_id="r",
    )
    row = compute_bounds(wh, collection="c", measure="AP", depths=[10]).iloc[0]
    assert (row["lower"], row["upper"]) == pytest.approx((1.0, 0.6))


# -- Dempster's rule: properties -------------------------------------------------------------

masses = (
    st.tuples(st.integers(0, 20), st.integers(0, 20), st.integers(0, 20))
    .filter(lambda t: sum(t) > 0)
    .map(lambda t: np.array(t, dtype=float) / sum(t))
)


@settings(max_examples=60, deadline=None)
@given(masses, masses)
def test_combination_is_commutative(a: np.ndarray, b: np.ndarray) -> None:
    np.testing.assert_allclose(combine(a, b), combine(b, a), rtol=1e-12, atol=1e-15)


@settings(max_examples=60, deadline=None)
@given(masses, masses, masses)
def test_combination_is_associative(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
    left, right = combine(combine(a, b), c), combine(a, combine(b, c))
    assert np.isnan(left).all() == np.isnan(right).all()
    if not np.isnan(left).any():
        np.testing.assert_allclose(left, right, rtol=1e-9, atol=1e-12)
        assert left.sum() == pytest.approx(1.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(masses, min_size=1, max_size=12))
def test_closed_form_equals_the_fold(topics: list[np.ndarray]) -> None:
    fold = topics[0]
    for m in topics[1:]:
        fold = combine(fold, m)
    frame = pd.DataFrame(np.array(topics), columns=["m_rel", "m_nonrel", "m_theta"])
    frame["run_id"], frame["depth"], frame["query_id"] = (
        "s",
        10,
        [f"t{i}" for i in range(len(topics))],
    )
    row = dempster(frame).iloc[0]
    got = row[["m_rel", "m_nonrel", "m_theta"]].to_numpy(dtype=float)
    if np.isnan(fold).any():
        assert np.isnan(got).all() and row["conflict"] == 1.0 and "total conflict" in row["note"]
    else:
        np.testing.assert_allclose(got, fold, rtol=1e-9, atol=1e-12)
        assert pd.isna(row["note"])
        bp = belief_plausibility(
            pd.DataFrame([got], columns=["m_rel", "m_nonrel", "m_theta"])
        ).iloc[0]
        assert bp["belief"] + got[1] <= 1 + 1e-12  # Bel({R}) + Bel({N}) <= 1
        assert bp["belief"] <= bp["plausibility"] + 1e-12


# -- per-topic masses against the metrics ----------------------------------------------------

statuses = st.lists(st.sampled_from(["rel", "non", "unj"]), min_size=0, max_size=15)
_BELIEF: list = []  # test_belief_is_precision_and_ignorance_is_one_minus_ap's warehouse, then its collections


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(statuses, min_size=1, max_size=3),
    st.lists(st.integers(1, 20), min_size=1, max_size=3, unique=True),
)
def test_belief_is_precision_and_ignorance_is_one_minus_ap(
    lists: list[list[str]], depths: list[int]
) -> None:
    # one warehouse for every example, a collection each (its schema costs more than an example)
    if not _BELIEF:
        _BELIEF.append(Warehouse(":memory:"))
    wh, h = _BELIEF[0], f"h{len(_BELIEF)}"
    _BELIEF.append(h)
    qrels, run = [], []
    for t, ranking in enumerate(lists):
        qrels.append((f"q{t}", "extra-rel", 1))  # every topic has a relevant document (in T)
        for i, status in enumerate(ranking):
            doc = f"q{t}d{i}"
            if status != "unj":
                qrels.append((f"q{t}", doc, 1 if status == "rel" else 0))
            run.append((f"q{t}", doc, 100.0 - i))
    wh.ingest_qrels(
        pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]), collection=h
    )
    if not run:
        run = [("q0", "other", 1.0)]
    wh.ingest_runs(
        pd.DataFrame(run, columns=["query_id", "doc_id", "score"]), collection=h, run_id="r"
    )
    topics = compute_bounds(wh, collection=h, measure="P", depths=depths, per_query=True)
    # P, A_p, RBP and RBP_upper in one evaluation
    metrics = wh.evaluate(
        ["P", "A_p", "RBP(p=0.8)", "RBP_upper(p=0.8)"], collection=h, depths=depths, per_query=True
    )
    values = metrics.pivot_table(index=["query_id", "measure"], values="value").squeeze("columns")
    for row in topics.itertuples():
        assert row.m_rel == pytest.approx(values[(row.query_id, f"P@{row.depth}")])
        assert row.m_theta == pytest.approx(1 - values[(row.query_id, f"A_p@{row.depth}")])
        assert row.m_rel + row.m_nonrel <= 1 + 1e-12 and row.lower <= row.upper
    rbp = compute_bounds(wh, collection=h, measure="RBP(p=0.8)", depths=depths, per_query=True)
    rbp_values = values
    for row in rbp.itertuples():
        assert row.lower == pytest.approx(rbp_values[(row.query_id, f"RBP@{row.depth}")])
        assert row.upper == pytest.approx(rbp_values[(row.query_id, f"RBP_upper@{row.depth}")])


# -- aggregation, conflict, comparison, storage ----------------------------------------------


def test_total_conflict_gives_null_with_a_reason() -> None:
    wh = Warehouse(":memory:")
    qrels = pd.DataFrame(
        {"query_id": ["1", "2", "2"], "doc_id": ["a", "b", "c"], "relevance": [1, 0, 1]}
    )
    wh.ingest_qrels(qrels, collection="c")
    wh.ingest_runs(
        pd.DataFrame({"query_id": ["1", "2"], "doc_id": ["a", "b"], "score": [1.0, 1.0]}),
        collection="c",
        run_id="r",
    )
    frame = compute_bounds(wh, collection="c", measure="P", depths=[1, 2], aggregation="dempster")
    first = frame.iloc[0]
    assert np.isnan(first["lower"]) and np.isnan(first["upper"]) and first["conflict"] == 1.0
    assert first["note"] == (
        "total conflict (K = 1): Dempster's rule is undefined: topic 1 is certainly relevant and "
        "topic 2 certainly non-relevant; use mean aggregation"
    )
    # at depth 2 both topics leave a missing position: no total conflict
    assert pd.isna(frame.iloc[1]["note"]) and frame.iloc[1]["lower"] == pytest.approx(1 / 3)


def test_sql_dempster_equals_the_pure_function(example: Warehouse) -> None:
    topics = compute_bounds(
        example, collection="x", measure="RBP(p=0.8)", depths=[3, 10], per_query=True
    )
    pure = dempster(topics)
    stored = compute_bounds(
        example, collection="x", measure="RBP(p=0.8)", depths=[3, 10], aggregation="dempster"
    )
    np.testing.assert_allclose(
        stored[["m_rel", "m_nonrel", "m_theta"]], pure[["m_rel", "m_nonrel", "m_theta"]]
    )


def test_compare_and_scenarios_refused() -> None:
    bands = pd.DataFrame(
        {
            "run_id": ["a", "b"] * 3,
            "depth": [10, 10, 30, 30, 100, 100],
            "kind": "bound",
            "lower": [0.5, 0.2, 0.3, 0.2, np.nan, 0.1],
            "upper": [0.6, 0.4, 0.7, 0.6, np.nan, 0.2],
        }
    )
    assert compare(bands, "a", "b")["outcome"].tolist() == [
        "first certainly better",
        "open",
        "undefined",
    ]
    assert compare(bands, "b", "a")["outcome"].tolist()[0] == "second certainly better"
    with pytest.raises(MetricParamError, match="scenario values"):
        compare(bands.assign(kind="scenario"), "a", "b")


def test_store_keeps_both_aggregations(example: Warehouse) -> None:
    compute_bounds(example, collection="x", measure="P", depths=[5, 10], store=True)
    compute_bounds(
        example, collection="x", measure="P", depths=[10], store=True
    )  # replaces depth 10
    rows = example.query("SELECT aggregation, depth, lower FROM bounds ORDER BY aggregation, depth")
    assert rows.values.tolist() == [
        ["dempster", 5, pytest.approx(rows.iloc[0, 2])],
        ["dempster", 10, pytest.approx(0.556962, abs=1e-6)],
        ["mean", 5, pytest.approx(0.5)],
        ["mean", 10, pytest.approx(0.4)],
    ]


@pytest.mark.parametrize(
    ("measure", "kwargs", "message"),
    [
        ("P@10", {}, "has a depth"),
        ("bpref", {}, "no bounds for bpref"),
        ("RBP(p=1.5)", {}, "p=1.5 is outside the domain 0 < p < 1"),
        ("AP", {"aggregation": "dempster"}, "needs masses, and AP has only scenario values"),
    ],
)
def test_bad_requests(example: Warehouse, measure: str, kwargs: dict, message: str) -> None:
    with pytest.raises(MetricParamError, match=message):
        compute_bounds(example, collection="x", measure=measure, **kwargs)


# -- CLI and plot ----------------------------------------------------------------------------


def test_cli_bounds_csv_and_errors(tmp_path: Path) -> None:
    from evalwh.cli import app

    db = tmp_path / "w.duckdb"
    _example_warehouse(db).close()
    runner = CliRunner()
    result = runner.invoke(
        app,
        ["bounds", "-c", "x", "--runs", "s", "--depths", "10", "--format", "json", "--db", str(db)],
    )
    assert result.exit_code == 0, result.output
    row = json.loads(result.stdout.splitlines()[0])
    assert (row["lower"], row["upper"], row["aggregation"]) == (
        pytest.approx(0.4),
        pytest.approx(0.75),
        "mean",
    )
    bad = runner.invoke(app, ["bounds", "-c", "x", "-m", "AP", "-a", "dempster", "--db", str(db)])
    assert bad.exit_code == 1
    assert (
        "Error: bounds: Dempster's rule needs masses, and AP has only scenario values" in bad.output
    )


def test_plot_bounds_writes_png(tmp_path: Path, example: Warehouse) -> None:
    from evalwh.present.plots.bounds import plot_bounds

    bands = compute_bounds(
        example, collection="x", measure="P", depths=[1, 5, 10, 20], aggregation="mean"
    )
    path = plot_bounds(bands, tmp_path / "b.png", pool_depth=10)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# -- TREC-8 ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_trec8_bands_widen_beyond_the_pool_depth(tmp_path: Path) -> None:
    wh = Warehouse(":memory:")
    wh.ingest_qrels(TREC8 / "trec8.qrels", collection="trec8")
    wh.ingest_runs([TREC8 / "runs" / "input.INQ604.gz"], collection="trec8")
    frame = compute_bounds(
        wh, collection="trec8", measure="P", depths=[10, 100, 1000], aggregation="mean"
    )
    ignorance = frame.set_index("depth")["m_theta"]
    assert ignorance[10] == 0.0 and ignorance[100] == 0.0  # a pooled run, judged to depth 100
    assert ignorance[1000] == pytest.approx(0.484)
    p = wh.evaluate(["P@1000", "A_p@1000"], collection="trec8").set_index("measure")["value"]
    assert frame.set_index("depth").loc[1000, "lower"] == pytest.approx(p["P@1000"])
    assert ignorance[1000] == pytest.approx(1 - p["A_p@1000"])


# -- the span formulation equals the previous ASOF formulation ------------------------------

REFERENCE = Path(__file__).resolve().parent / "data" / "bounds_asof"
FAMILIES = {"P": "p", "RBP(p=0.8)": "rbp", "AP": "ap", "nDCG": "ndcg", "R": "recall"}


def _reference_bounds(
    wh: Warehouse, measure: str, depths: list[int], rel: int
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Per-topic values, means and Dempster aggregates of the previous formulation."""
    from evalwh.methods.bounds import _dempster_from_logs
    from evalwh.store.context import Options, build_context

    params = {"depths": depths, "max_depth": max(depths), "p": 0.8, "allrel_gain": rel}
    build_context(wh, "g", None, Options(rel=rel))
    for name in ("depths", "positions", "cells", FAMILIES[measure]):
        for statement in wh.con.extract_statements((REFERENCE / f"{name}.sql").read_text()):
            wanted = {k: params[k] for k in statement.named_parameters}
            wh.con.execute(statement.query, wanted)
    topics = wh.con.sql(
        "SELECT run_id, query_id, depth, lower, upper, m_rel, m_nonrel, m_theta FROM ref_topics"
        " ORDER BY run_id, query_id, depth"
    ).df()
    means = wh.con.sql((REFERENCE / "mean.sql").read_text()).df()
    logs = wh.con.sql((REFERENCE / "dempster.sql").read_text()).df()
    return topics, means, _dempster_from_logs(logs)


lists = st.lists(st.sampled_from(["r2", "r1", "non", "unj"]), min_size=0, max_size=12)


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@case(  # graded gains below the threshold (nDCG's shifted ideal), a lacking topic, every rank
    runs=[
        [["r1", "unj", "r2", "non", "unj", "r1"], [], ["non", "non", "unj", "r2"]],
        [["unj"] * 3 + ["r2"], ["r1", "non"], ["r2", "r1", "r1", "non", "unj"]],
    ],
    depths=list(range(1, 9)),
    rel=2,
)
@given(
    runs=st.lists(st.lists(lists, min_size=3, max_size=3), min_size=1, max_size=3),
    depths=st.one_of(
        st.lists(st.integers(1, 16), min_size=1, max_size=4, unique=True),
        st.integers(1, 16).map(lambda m: list(range(1, m + 1))),  # every rank to m
    ),
    rel=st.sampled_from([1, 2]),
)
def test_spans_equal_the_previous_asof_formulation(
    runs: list[list[list[str]]], depths: list[int], rel: int
) -> None:
    # Graded judgments (grades 0-2, thresholds 1 and 2), short and empty rankings, and a topic
    # a run lacks: the span rewrite must give the values of the ASOF formulation.
    wh = Warehouse(":memory:")
    qrels = [(f"q{t}", f"q{t}rel", 2) for t in range(3)]  # every topic has a relevant document
    rows = []
    for r, topics in enumerate(runs):
        for t, ranking in enumerate(topics):
            for i, status in enumerate(ranking):
                doc = f"q{t}r{r}d{i}"
                if status != "unj":
                    qrels.append((f"q{t}", doc, {"r2": 2, "r1": 1, "non": 0}[status]))
                rows.append((f"run{r}", f"q{t}", doc, 100.0 - i))
    wh.ingest_qrels(
        pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]), collection="g"
    )
    rows = rows or [("run0", "q0", "other", 1.0)]
    frame = pd.DataFrame(rows, columns=["run_id", "query_id", "doc_id", "score"])
    wh.ingest_runs(frame, collection="g")
    for measure in FAMILIES:
        topics, means, combined = _reference_bounds(wh, measure, sorted(depths), rel)
        got = compute_bounds(
            wh, collection="g", measure=measure, depths=depths, rel=rel, per_query=True
        )
        columns = ["lower", "upper", "m_rel", "m_nonrel", "m_theta"]
        assert got[["run_id", "query_id", "depth"]].values.tolist() == (
            topics[["run_id", "query_id", "depth"]].values.tolist()
        )
        np.testing.assert_allclose(got[columns], topics[columns], rtol=1e-12, atol=1e-15)
        bands = compute_bounds(wh, collection="g", measure=measure, depths=depths, rel=rel)
        mean = bands[bands["aggregation"] == "mean"].reset_index(drop=True)
        assert mean[["run_id", "depth", "n_topics"]].values.tolist() == (
            means[["run_id", "depth", "n_topics"]].values.tolist()
        )
        np.testing.assert_allclose(mean[columns], means[columns], rtol=1e-12, atol=1e-15)
        if measure in ("P", "RBP(p=0.8)"):
            dempster_rows = bands[bands["aggregation"] == "dempster"].reset_index(drop=True)
            np.testing.assert_allclose(
                dempster_rows[["m_rel", "m_nonrel", "m_theta", "conflict"]],
                combined[["m_rel", "m_nonrel", "m_theta", "conflict"]],
                rtol=1e-9,
                atol=1e-12,
            )
            assert dempster_rows["note"].tolist() == combined["note"].tolist()
