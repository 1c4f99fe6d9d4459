"""The decision matrix: classification, the worked example, one constructed collection per case."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_stats import A, M, long

from evalwh import Warehouse
from evalwh.methods.decisions import (
    compare_runs,
    decision_matrix,
    pairings,
    rank_correlation,
    strength_changes,
)
from evalwh.errors import InsufficientDataError, MetricParamError, NotFoundError
from evalwh.stats.decision import (
    Case,
    Strength,
    case_proportions,
    classify,
    decision_pairs,
    proportion_table,
)


def test_classify_every_combination() -> None:
    p = np.array([0, 0, 0, 1, 1, 1, -1, -1, -1])
    a = np.array([0, 1, -1, 0, -1, 1, 0, 1, -1])
    cases = [c.value for c in classify(p, a)]
    assert cases == ["1", "2", "2", "3a", "3b", "4", "3a", "3b", "4"]


def test_case_groups_and_strength() -> None:
    assert [(c.group, c.strength) for c in Case] == [
        ("1", Strength.strong),
        ("2", Strength.weak),
        ("3", Strength.strong),
        ("3", Strength.strong),
        ("4", Strength.weak),
    ]


def test_worked_example_cases_and_proportions() -> None:
    pairs = decision_pairs(long(M), long(A))
    assert pairs["case"].tolist() == ["3b", "1", "4", "3b", "2", "4"]
    assert pairs["strength"].tolist() == ["strong", "strong", "weak", "strong", "weak", "weak"]
    assert pairs["perf_outcome"].tolist() == [">>", "==", ">>", "<<", "==", ">>"]
    assert pairs["assess_outcome"].tolist() == ["<<", "==", ">>", ">>", ">>", ">>"]
    summary = case_proportions(pairs)
    row = summary.iloc[0]
    assert (row["runs"], row["pairs"]) == (4, 6)
    assert [row[c] for c in ["C1", "C2", "C3", "C4"]] == pytest.approx([1 / 6, 1 / 6, 2 / 6, 2 / 6])
    assert (row["C3a"], row["C3b"]) == (0.0, pytest.approx(2 / 6))
    assert (row["strong"], row["weak"]) == (pytest.approx(0.5), pytest.approx(0.5))


def test_proportion_table_layout() -> None:
    pairs = decision_pairs(long(M), long(A))
    stacked = pd.concat([pairs.assign(column="@10"), pairs.assign(column="MAP/MAA", case="1")])
    summary = case_proportions(stacked.assign(collection_id="toy"), by=["collection_id", "column"])
    table = proportion_table(summary)
    assert list(table.columns) == ["collection_id", "runs", "pairs"] + [
        f"{c} C{i}" for c in ["@10", "MAP/MAA"] for i in range(1, 5)
    ]
    assert table.iloc[0, :3].tolist() == ["toy", 4, 6]
    assert table.iloc[0, 3:].tolist() == pytest.approx([1 / 6, 1 / 6, 2 / 6, 2 / 6, 1, 0, 0, 0])


def test_metrics_must_cover_the_same_runs() -> None:
    with pytest.raises(InsufficientDataError, match=r"different runs: \['s4'\]"):
        decision_pairs(long(M), long({k: v for k, v in A.items() if k != "s4"}))


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), test=st.sampled_from(["anova", "t", "wilcoxon"]))
def test_swapping_runs_mirrors_outcomes_and_keeps_the_case(seed: int, test: str) -> None:
    rng = np.random.default_rng(seed)
    # 16 topics: scipy's exhaustive permutation Wilcoxon (n <= 13 with ties) is slow
    perf = long({r: list(rng.uniform(0, 1, 16).round(2)) for r in ["a", "b", "c"]})
    assess = long(
        {
            r: list(np.clip(rng.normal(0.6 + 0.1 * i, 0.1, 16), 0, 1).round(2))
            for i, r in enumerate("abc")
        }
    )
    forward = decision_pairs(perf, assess, test=test, runs=["a", "b", "c"])
    backward = decision_pairs(perf, assess, test=test, runs=["c", "b", "a"])
    backward = backward.rename(columns={"run_a": "run_b", "run_b": "run_a"})
    merged = forward.merge(backward, on=["run_a", "run_b"], suffixes=("", "_r"))
    mirror = {">>": "<<", "<<": ">>", "==": "=="}
    assert len(merged) == 3
    assert (merged["perf_outcome"].map(mirror) == merged["perf_outcome_r"]).all()
    assert (merged["assess_outcome"].map(mirror) == merged["assess_outcome_r"]).all()
    assert (merged["case"] == merged["case_r"]).all()


# --- one constructed collection per case ---------------------------------------------------
# Each topic's ranking is a string of statuses at depth 4: R relevant, N judged non-relevant,
# U unjudged. Every topic also has one relevant document that no run retrieves.
CASES = {
    "1": (
        ["RRNN", "RNNN", "RRRN", "RNNU", "RRNU", "RNNN"],
        ["RNRN", "NRNN", "RRNR", "NRNU", "RURN", "NNRN"],
    ),
    "2": (
        ["RNNN", "RRNN", "RNNN", "RRNN", "RNNN", "NRNN"],
        ["RUUU", "RRUU", "RUUU", "RRUU", "RUUU", "URUU"],
    ),
    "3a": (
        ["RRRN", "RRNN", "RRRN", "RRRR", "RRNN", "RRRN"],
        ["RNNN", "NNNN", "RNNN", "RRNN", "NNNN", "RNNN"],
    ),
    "3b": (
        ["RRUU", "RRRU", "RUUU", "RRUU", "RRRU", "RRUU"],
        ["NNNN", "RNNN", "NNNN", "NNNN", "NRNN", "NNNN"],
    ),
    "4": (
        ["RRRN", "RRNN", "RRRR", "RRRN", "RRNN", "RRRN"],
        ["UUUU", "RUUU", "UUUU", "UUUU", "URUU", "UUUU"],
    ),
}


def build(wh: Warehouse, collection: str, runs: dict[str, list[str]]) -> None:
    qrels, lines = [], []
    for run, topics in runs.items():
        for t, statuses in enumerate(topics):
            for rank, status in enumerate(statuses):
                doc = f"{run}-{t}-{rank}"
                if status != "U":
                    qrels.append((str(t), doc, int(status == "R")))
                lines.append((str(t), doc, float(10 - rank), run))
    qrels += [(str(t), f"unretrieved-{t}", 1) for t in range(len(next(iter(runs.values()))))]
    wh.ingest_qrels(
        pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]), collection=collection
    )
    frame = pd.DataFrame(lines, columns=["query_id", "doc_id", "score", "run_id"])
    for run, part in frame.groupby("run_id"):
        wh.ingest_runs(part.drop(columns="run_id"), collection=collection, run_id=str(run))


@pytest.fixture(scope="module")
def cases_wh() -> Warehouse:
    wh = Warehouse(":memory:")
    for case, (a, b) in CASES.items():
        build(wh, f"case{case}", {"a": a, "b": b})
    return wh


@pytest.mark.parametrize("test", ["anova", "t"])
@pytest.mark.parametrize("case", list(CASES))
def test_each_case_from_a_constructed_collection(cases_wh: Warehouse, case: str, test: str) -> None:
    dm = decision_matrix(cases_wh, f"case{case}", measure="P", depths=[4], full=False, test=test)
    assert dm.pairs["case"].tolist() == [case]
    expected_strength = "strong" if case[0] in "13" else "weak"
    assert dm.pairs["strength"].tolist() == [expected_strength]
    assert dm.pairs["n_topics"].tolist() == [6]


@pytest.mark.parametrize(
    ("test", "correction"),
    [("wilcoxon", "bh"), ("sign", "by"), ("randomization", "holm"), ("bootstrap", "bh"),
     ("tukey", "none"), ("randomized_tukey", "none")],
)  # fmt: skip
def test_every_test_classifies_the_constructed_cases(
    cases_wh: Warehouse, test: str, correction: str
) -> None:
    found = [
        decision_matrix(
            cases_wh, f"case{case}", measure="P", depths=[4], full=False, test=test,
            correction=correction, rng=1,
        ).pairs["case"].iloc[0]
        for case in CASES
    ]  # fmt: skip
    assert found == list(CASES)


@pytest.mark.parametrize("assessment", ["A_p_ret", "RBP_resid", "RBP_resid(p=0.5)"])
@pytest.mark.parametrize("case", list(CASES))
def test_each_case_with_another_assessment_measure(
    cases_wh: Warehouse, case: str, assessment: str
) -> None:
    # every run returns 4 documents, so A_p_ret@4 is A_p@4; an RBP residual grows as
    # assessment shrinks, and its outcome is read inverted: the cases stay the same
    dm = decision_matrix(
        cases_wh, f"case{case}", measure="P", depths=[4], full=False, assessment=assessment, test="t"
    )
    assert dm.pairs["case"].tolist() == [case]
    assert dm.pairs["assessment"].str.startswith(assessment.split("(")[0]).all()


def test_any_performance_measure_pairs_with_the_assessment(cases_wh: Warehouse) -> None:
    dm = decision_matrix(
        cases_wh, "case3b", measure="RBP(p=0.5)", depths=[2, 4], assessment="RBP_resid(p=0.5)"
    )
    assert dm.pairs["performance"].tolist() == ["RBP(p=0.5)@2", "RBP(p=0.5)@4", "AP"]
    assert dm.pairs["assessment"].tolist() == [
        "RBP_resid(p=0.5)@2", "RBP_resid(p=0.5)@4", "RBP_resid(p=0.5)",
    ]  # fmt: skip
    assert dm.pairs["column"].tolist()[-1] == "MAP/RBP_resid(p=0.5)"
    # the RBP residual of run a (unjudged documents) exceeds b's: b is the better assessed
    assert dm.pairs.loc[1, ["perf_outcome", "assess_outcome", "case"]].tolist() == [">>", "<<", "3b"]
    assert dm.pairs.loc[1, "assess_mean_a"] > dm.pairs.loc[1, "assess_mean_b"]


def test_case_3b_values(cases_wh: Warehouse) -> None:
    row = decision_matrix(cases_wh, "case3b", measure="P", depths=[4], full=False).pairs.iloc[0]
    # a: 13 relevant of 24 positions, 13 assessed; b: 2 relevant, all 24 assessed
    assert (row["perf_mean_a"], row["perf_mean_b"]) == pytest.approx((13 / 24, 2 / 24))
    assert (row["assess_mean_a"], row["assess_mean_b"]) == pytest.approx((13 / 24, 1.0))
    assert (row["perf_outcome"], row["assess_outcome"]) == (">>", "<<")


def test_matrix_over_depths_and_the_full_column(cases_wh: Warehouse) -> None:
    dm = decision_matrix(cases_wh, "case4", measure="MAP", depths=[1, 4])
    assert dm.pairs["column"].tolist() == ["@1", "@4", "MAP/MAA"]
    assert dm.pairs["performance"].tolist() == ["AP@1", "AP@4", "AP"]
    assert dm.pairs["assessment"].tolist() == ["A_p@1", "A_p@4", "AA"]
    assert dm.pairs["depth"].tolist() == [1, 4, pd.NA]
    assert dm.table.iloc[0, :3].tolist() == ["case4", 2, 1]
    assert dm.pairs.loc[1, "case"] == "4"


def test_stored_results_answer_strength_changes() -> None:
    wh = Warehouse(":memory:")
    # at depth 2 run a is better with equal assessment (3a); at depth 4 b's unjudged tail
    # makes a's lead coincide with more assessment (4)
    build(wh, "c", {"a": ["RRNN", "RRNN", "RRRN", "RRNN", "RRNN", "RRRN"],
                    "b": ["NNUU", "NNUU", "RNUU", "NNUU", "NNUU", "NRUU"]})  # fmt: skip
    dm = decision_matrix(wh, "c", measure="P", depths=[2, 4], store=True)
    assert dm.pairs["case"].tolist()[:2] == ["3a", "4"]
    stored = wh.query(
        'SELECT depth, "case", strength, n_runs FROM decision_pairs ORDER BY depth NULLS LAST'
    )
    assert stored["case"].tolist() == dm.pairs["case"].tolist()
    assert stored["n_runs"].tolist() == [2, 2, 2]
    summary = wh.query(
        "SELECT depth, n_pairs, c1 + c2 + c3 + c4 AS total, c3a, c4 FROM decision_summary ORDER BY depth"
    )
    assert summary["total"].tolist() == pytest.approx([1.0, 1.0, 1.0])
    assert summary[["c3a", "c4"]].values.tolist()[:2] == [[1.0, 0.0], [0.0, 1.0]]
    changes = strength_changes(wh, "c", measure="P", from_depth=2, to_depth=4)
    assert changes[
        ["run_a", "run_b", "from_case", "to_case", "from_strength", "to_strength"]
    ].values.tolist() == [["a", "b", "3a", "4", "strong", "weak"]]
    # storing again replaces, never duplicates
    decision_matrix(wh, "c", measure="P", depths=[2, 4], store=True)
    assert wh.query("SELECT count(*) AS n FROM decision_pairs")["n"].tolist() == [3]


def test_compare_runs_keeps_the_pair_orientation(cases_wh: Warehouse) -> None:
    forward = compare_runs(cases_wh, "case3b", "a", "b", depths=[4], full=False)
    backward = compare_runs(cases_wh, "case3b", "b", "a", depths=[4], full=False)
    assert forward.pairs[["perf_outcome", "assess_outcome", "case"]].values.tolist() == [
        [">>", "<<", "3b"]
    ]
    assert backward.pairs[["perf_outcome", "assess_outcome", "case"]].values.tolist() == [
        ["<<", ">>", "3b"]
    ]
    intervals = forward.intervals
    assert intervals[["kind", "run_id"]].values.tolist() == [
        ["performance", "a"], ["performance", "b"], ["assessment", "a"], ["assessment", "b"]
    ]  # fmt: skip
    assert intervals["mean"].tolist() == pytest.approx([13 / 24, 2 / 24, 13 / 24, 1.0])


def test_errors_name_the_problem(cases_wh: Warehouse) -> None:
    with pytest.raises(NotFoundError, match="compare: run 'zz' is not in collection 'case1'"):
        compare_runs(cases_wh, "case1", "a", "zz")
    with pytest.raises(MetricParamError, match="give the performance measure without a depth"):
        pairings("nDCG@10", [10])
    with pytest.raises(MetricParamError, match="RR takes no depth|assessment measure must be"):
        pairings("P", [10], assessment="P")
    with pytest.raises(MetricParamError, match="depths must be positive"):
        pairings("P", [0])


def test_rank_correlation(cases_wh: Warehouse) -> None:
    build(cases_wh, "three", {"a": CASES["3a"][0], "b": CASES["3a"][1], "c": CASES["4"][1]})
    out = rank_correlation(cases_wh, "three", x="P@4", y="A_p@4")
    # P@4: a > b > c; A_p@4: a = b (1.0) > c, so tau_b = 2 / sqrt(3 * 2)
    assert out["x"] == "P@4" and out["n_runs"] == 3
    assert out["tau"] == pytest.approx(2 / np.sqrt(6))
