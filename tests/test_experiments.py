"""Measures for incomplete judgments and their meta-evaluation (methods §1.6-§1.9, §8)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from scipy import stats
from typer.testing import CliRunner

from evalwh import Warehouse
from evalwh.errors import EvalWhError, InsufficientDataError, NotFoundError
from evalwh.methods.experiments.exclusion import retained_runs, run_exclusion
from evalwh.methods.experiments.reduced import (
    DEFAULT_LEVELS,
    first_level_below,
    reduced_sample,
    run_reduced_qrels,
    sample_sizes,
    store_reduced_qrels,
    stored_levels,
)
from evalwh.methods.experiments.swap import run_swap_rates, swap_rates, swap_summary, topic_splits
from evalwh.methods.experiments.tau import kendall_tau, measure_tau

TREC8 = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec8_adhoc"
ENV = {"COLUMNS": "200", "TERMINAL_WIDTH": "200"}


def _ranked(docs: list[str]) -> list[tuple[str, float]]:
    """Documents in rank order, with descending scores."""
    return [(doc, float(len(docs) - i)) for i, doc in enumerate(docs)]


def _frames(
    topics: dict[str, tuple[list[str], list[str], dict[str, list[str]]]],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Qrels and runs DataFrames from {topic: (relevant, non-relevant, {run: ranking})}."""
    qrels, runs = [], []
    for topic, (relevant, nonrelevant, rankings) in topics.items():
        qrels += [(topic, f"{topic}-{d}", 1) for d in relevant] + [
            (topic, f"{topic}-{d}", 0) for d in nonrelevant
        ]
        for run, ranking in rankings.items():
            runs += [(run, topic, f"{topic}-{d}", score) for d, score in _ranked(ranking)]
    return (
        pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]),
        pd.DataFrame(runs, columns=["run_id", "query_id", "doc_id", "score"]),
    )


@pytest.fixture(scope="module")
def memory_wh() -> Warehouse:
    wh = Warehouse(":memory:")
    yield wh
    wh.close()


def _per_query(
    wh: Warehouse, collection: str, measures: list[str]
) -> dict[tuple[str, str, str], float]:
    frame = wh.evaluate(measures, collection=collection, per_query=True)
    return {(r.run_id, r.query_id, r.measure): r.value for r in frame.itertuples()}


# -- methods §1.9 (b)-(f): the bpref family and RankEff ---------------------------------------

N = [f"n{i}" for i in range(1, 29)]
R = [f"r{i}" for i in range(1, 7)]
WORKED = {
    # (b) trec_eval's bpref_bug example: R = 6, N = 4, run n1 r1 r2 r3 r4
    "b": (R[:6], N[:4], {"first": ["n1", "r1", "r2", "r3", "r4"]}),
    # (c) N < R: ranking n1 n2 r1 r2
    "c": (R[:4], N[:2], {"first": ["n1", "n2", "r1", "r2"]}),
    # (d) S4's illustration: M2 does not retrieve two known non-relevant documents
    "d": (
        R[:2],
        N[:4],
        {"first": ["r1", "r2", "n1", "n2", "n3", "n4"], "second": ["r1", "r2", "n1", "n2"]},
    ),
    # (e) bpref-10 and RankEff disagree
    "e": (
        R[:2],
        N[:28],
        {"first": ["r1", *N[:27], "r2", "n28"], "second": [*N[:7], "r1", "r2", *N[7:28]]},
    ),
    # (f) SWAP: r1 trades places with n12
    "f": (R[:1], N[:12], {"first": [*N[:12], "r1"], "second": [*N[:11], "r1", "n12"]}),
}
EXPECTED = [
    ("first", "b", "bpref", 0.5),
    ("first", "b", "bpref_BV04", 0.555556),
    ("first", "b", "bpref10", 0.625),
    ("first", "b", "RankEff", 0.5),
    ("first", "c", "bpref", 0.0),
    ("first", "c", "bpref_BV04", 0.25),
    ("first", "c", "bpref10", 2 * (1 - 2 / 14) / 4),
    ("first", "c", "RankEff", 0.0),
    ("first", "d", "RankEff", 1.0),
    ("second", "d", "RankEff", 1.0),
    ("first", "e", "bpref10", 0.5),
    ("first", "e", "RankEff", 0.517857),
    ("second", "e", "bpref10", 0.416667),
    ("second", "e", "RankEff", 0.75),
    ("first", "f", "bpref10", 0.0),
    ("first", "f", "bpref", 0.0),
    ("first", "f", "RankEff", 0.0),
    ("second", "f", "bpref10", 0.0),
    ("second", "f", "bpref", 0.0),
    ("second", "f", "RankEff", 0.083333),
]


@pytest.fixture(scope="module")
def worked_values(memory_wh: Warehouse) -> dict[tuple[str, str, str], float]:
    qrels, runs = _frames(WORKED)
    memory_wh.ingest_qrels(qrels, collection="worked")
    memory_wh.ingest_runs(runs, collection="worked")
    return _per_query(memory_wh, "worked", ["bpref", "bpref_BV04", "bpref-10", "RankEff"])


@pytest.mark.parametrize(
    ("run", "topic", "measure", "expected"),
    EXPECTED,
    ids=[f"{t}-{r}-{m}" for r, t, m, _ in EXPECTED],
)
def test_worked_examples_1_9(
    worked_values: dict, run: str, topic: str, measure: str, expected: float
) -> None:
    assert worked_values[(run, topic, measure)] == pytest.approx(expected, abs=1e-6)


def test_worked_example_e_orders_the_runs_differently(worked_values: dict) -> None:
    """§1.8(3): bpref-10 ranks M1 above M2, RankEff ranks M2 above M1."""
    assert worked_values[("first", "e", "bpref10")] > worked_values[("second", "e", "bpref10")]
    assert worked_values[("first", "e", "RankEff")] < worked_values[("second", "e", "RankEff")]


# -- methods §1.8: the SWAP property (S4 appendix) and the N <= R corollary ---------------------


@st.composite
def swap_topic(draw: st.DrawFn) -> tuple[list[str], list[str], list[str], list[str]]:
    """A ranking of judged and unjudged documents, and the same after one SWAP."""
    n_rel = draw(st.integers(1, 4))
    n_non = draw(st.integers(1, 14))
    n_unj = draw(st.integers(0, 3))
    relevant = [f"r{i}" for i in range(n_rel)]
    nonrelevant = [f"n{i}" for i in range(n_non)]
    ranking = draw(st.permutations(relevant + nonrelevant + [f"u{i}" for i in range(n_unj)]))
    pairs = [
        (j, i)
        for i, doc in enumerate(ranking)
        if doc.startswith("r")
        for j in range(i)
        if ranking[j].startswith("n")
    ]
    assume(pairs)
    j, i = draw(st.sampled_from(pairs))
    swapped = list(ranking)
    swapped[i], swapped[j] = swapped[j], swapped[i]
    return relevant, nonrelevant, list(ranking), swapped


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(topics=st.lists(swap_topic(), min_size=1, max_size=8))
def test_swap_property(memory_wh: Warehouse, topics: list) -> None:
    """Moving a relevant document above a judged non-relevant one: AP and RankEff strictly
    increase; bpref-10 and bpref never decrease (they may stay equal)."""
    collection = f"swap{abs(hash(str(topics)))}"
    spec = {
        f"t{k}": (rel, non, {"before": before, "after": after})
        for k, (rel, non, before, after) in enumerate(topics)
    }
    qrels, runs = _frames(spec)
    memory_wh.ingest_qrels(qrels, collection=collection)
    memory_wh.ingest_runs(runs, collection=collection)
    values = _per_query(memory_wh, collection, ["AP", "RankEff", "bpref-10", "bpref"])
    for topic, (rel, non, _) in spec.items():
        before = {m: values[("before", topic, m)] for m in ("AP", "RankEff", "bpref10", "bpref")}
        after = {m: values[("after", topic, m)] for m in ("AP", "RankEff", "bpref10", "bpref")}
        assert after["AP"] > before["AP"]
        assert after["RankEff"] > before["RankEff"]
        assert after["bpref10"] >= before["bpref10"] - 1e-12
        assert after["bpref"] >= before["bpref"] - 1e-12
        if len(non) <= len(rel):
            # §1.7 corollary: with N <= R, trec_eval bpref equals RankEff
            assert before["bpref"] == pytest.approx(before["RankEff"], abs=1e-12)


# -- methods §8.1: run exclusion ---------------------------------------------------------------


@pytest.fixture(scope="module")
def exclusion_wh(memory_wh: Warehouse) -> Warehouse:
    """50 topics, cap 100: the threshold is 0.95 x 50 x 100 = 4750 (the §8.1 example, scaled)."""
    topics = [f"q{t:02}" for t in range(50)]
    qrels = pd.DataFrame(
        {"query_id": [*topics, "q_norel"], "doc_id": "d0", "relevance": [1] * 50 + [0]}
    )
    counts = {
        "kept": [100] * 45 + [50] * 5,  # 4750: kept
        "short": [100] * 45 + [50] * 4 + [49],  # 4749: excluded
        "gap": [0] + [100] * 49,  # 4900, but nothing for q00: excluded
        "long": [150] + [100] * 49,  # 150 capped to 100: 5000
    }
    rows = [
        (run, topic, f"d{i}", float(-i))
        for run, per_topic in counts.items()
        for topic, n in zip(topics, per_topic, strict=True)
        for i in range(n)
    ]
    rows += [("long", "q_norel", f"d{i}", float(-i)) for i in range(100)]  # not in T: not counted
    memory_wh.ingest_qrels(qrels, collection="excl")
    memory_wh.ingest_runs(
        pd.DataFrame(rows, columns=["run_id", "query_id", "doc_id", "score"]), collection="excl"
    )
    return memory_wh


def test_run_exclusion_threshold_is_strict(exclusion_wh: Warehouse) -> None:
    result = run_exclusion(exclusion_wh, "excl", cap=100).set_index("run_id")
    assert result.loc["kept", "threshold"] == pytest.approx(4750.0)
    assert result["total_retrieved"].to_dict() == {
        "short": 4749,
        "gap": 4900,
        "kept": 4750,
        "long": 5000,
    }
    assert result["topics_empty"].to_dict() == {"short": 0, "gap": 1, "kept": 0, "long": 0}
    assert result["excluded"].to_dict() == {
        "short": True,
        "gap": True,
        "kept": False,
        "long": False,
    }
    assert result.loc["short", "reason"] == "retrieved 4749 < 4750 = 0.95 x 50 topics x 100"
    assert result.loc["gap", "reason"] == "nothing for 1 of 50 topics"
    assert result.loc["kept", "reason"] is None
    assert retained_runs(result.reset_index()) == ["kept", "long"]


@pytest.mark.slow
def test_trec8_excludes_the_seven_short_runs(trec8_ingest) -> None:
    """S4 excluded 7 TREC-8 runs; the same 7 fall below 47,500 documents (checked against the
    files). On the session's TREC-8 warehouse (conftest): of all 129 runs, exactly these 7."""
    short = ["READWARE", "READWARE2", "1", "iit99ma1", "disco1", "ibmg99c", "Scai8Adhoc"]
    near = ["iit99au2", "plt8ah4", "mds08a1"]
    files = [TREC8 / "runs" / f"input.{run}.gz" for run in short + near]
    with Warehouse(trec8_ingest[0], read_only=True) as wh:
        result = run_exclusion(wh, "trec8").set_index("run_id")
    assert len(result) == 129
    assert sorted(result.index[result["excluded"]]) == sorted(short)
    for run, path in zip(short + near, files, strict=True):
        with gzip.open(path, "rt") as handle:
            per_topic = pd.Series(
                [line.split()[0] for line in handle if line.strip()]
            ).value_counts()
        assert result.loc[run, "total_retrieved"] == int(per_topic.clip(upper=1000).sum())
    assert result.loc["Scai8Adhoc", "total_retrieved"] == 47182
    assert result.loc["iit99au2", "total_retrieved"] == 47813


# -- methods §8.2: swap rates -------------------------------------------------------------------

WORKED_SCORES = pd.DataFrame(
    {
        "run_id": ["x"] * 4 + ["y"] * 4,
        "query_id": list("1234") * 2,
        "value": [0.5, 0.1, 0.4, 0.3, 0.3, 0.2, 0.2, 0.4],
    }
)


def test_swap_worked_example_8_2() -> None:
    in_a = np.array([[1, 1, 0, 0], [1, 0, 1, 0], [1, 0, 0, 1]], dtype=bool)
    rates = swap_rates(WORKED_SCORES, splits=(in_a, ~in_a))
    assert rates[["bin", "comparisons", "swaps", "error_rate"]].values.tolist() == [
        [5, 2, 0, 0.0],
        [20, 1, 1, 1.0],
    ]
    assert rates["bin_lower"].tolist() == [0.05, 0.2]


def test_swap_binning_survives_float_division() -> None:
    """|dA| = 0.29 lands in bin 29 (0.29 / 0.01 is 28.999999999999996 in floating point)."""
    scores = pd.DataFrame(
        {
            "run_id": ["x", "x", "y", "y"],
            "query_id": ["1", "2"] * 2,
            "value": [0.29, 0.29, 0.0, 0.0],
        }
    )
    rates = swap_rates(scores, samples=5, rng=1)
    assert rates[["bin", "comparisons", "swaps"]].values.tolist() == [[29, 5, 0]]


def test_zero_difference_is_a_comparison_but_not_a_swap() -> None:
    scores = pd.DataFrame(
        {"run_id": ["x", "x", "y", "y"], "query_id": ["1", "2"] * 2, "value": [0.5, 0.1, 0.5, 0.3]}
    )
    in_a = np.array([[True, False], [False, True]])
    rates = swap_rates(scores, splits=(in_a, ~in_a))
    # split 1: dA = 0 (bin 0, no swap); split 2: dA = -0.2, dB = 0 (bin 20, no swap)
    assert rates[["bin", "comparisons", "swaps"]].values.tolist() == [[0, 1, 0], [20, 1, 0]]


def test_topic_splits_are_disjoint_halves_and_seeded() -> None:
    a, b = topic_splits(7, 200, rng=3)
    assert a.shape == b.shape == (200, 7)
    assert (a.sum(axis=1) == 3).all() and (b.sum(axis=1) == 3).all()
    assert not (a & b).any()
    again_a, again_b = topic_splits(7, 200, rng=np.random.default_rng(3))
    assert (again_a == a).all() and (again_b == b).all()
    other, _ = topic_splits(7, 200, rng=4)
    assert not (other == a).all()
    # every topic lands in T_A about 3/7 of the time
    assert np.allclose(a.mean(axis=0), 3 / 7, atol=0.12)


def test_swap_rates_match_a_direct_loop() -> None:
    """Differential test: the vectorised counts equal a plain loop over samples and pairs."""
    rng = np.random.default_rng(11)
    runs, topics = 6, 10
    values = rng.random((runs, topics)).round(2)
    values[2, 3] = np.nan  # an undefined topic value is left out of that half's mean
    scores = pd.DataFrame(
        [(f"r{i}", f"t{j:02}", values[i, j]) for i in range(runs) for j in range(topics)],
        columns=["run_id", "query_id", "value"],
    )
    in_a, in_b = topic_splits(topics, 40, rng=5)
    rates = swap_rates(scores, splits=(in_a, in_b)).set_index("bin")
    comparisons: dict[int, int] = {}
    swaps: dict[int, int] = {}
    for s in range(40):
        for x in range(runs):
            for y in range(x + 1, runs):
                d_a = np.nanmean(values[x, in_a[s]]) - np.nanmean(values[y, in_a[s]])
                d_b = np.nanmean(values[x, in_b[s]]) - np.nanmean(values[y, in_b[s]])
                k = int(np.floor(round(abs(d_a) * 100, 8)))
                comparisons[k] = comparisons.get(k, 0) + 1
                swaps[k] = swaps.get(k, 0) + int(d_a * d_b < 0)
    assert rates["comparisons"].to_dict() == comparisons
    assert rates["swaps"].to_dict() == swaps
    assert rates["comparisons"].sum() == 40 * 15


def test_swap_summary_needs_every_larger_bin_below_threshold() -> None:
    rates = pd.DataFrame(
        {
            "measure": "AP",
            "bin": [0, 1, 2, 3, 5],
            "bin_lower": [0.0, 0.01, 0.02, 0.03, 0.05],
            "comparisons": [10, 10, 10, 10, 10],
            "error_rate": [0.3, 0.04, 0.06, 0.05, 0.0],
        }
    )
    scores = pd.DataFrame(
        {"measure": "AP", "run_id": ["a", "b", "c"], "query_id": "1", "value": [0.1, 0.2, 0.6]}
    )
    summary = swap_summary(rates, scores).iloc[0]
    assert summary["d_star"] == 0.03  # bin 1 passes, but bin 2 above it does not
    assert summary["best_mean"] == 0.6
    assert summary["d_star_pct"] == pytest.approx(5.0)
    assert summary["sigma"] == pytest.approx(np.std([0.1, 0.2, 0.6], ddof=1))
    assert summary["sigma_over_d_star"] == pytest.approx(summary["sigma"] / 0.03)
    never = swap_summary(rates.assign(error_rate=0.5), scores).iloc[0]
    assert np.isnan(never["d_star"]) and np.isnan(never["sigma_over_d_star"])


def test_swap_rates_need_two_runs() -> None:
    with pytest.raises(InsufficientDataError, match="need at least 2 runs"):
        swap_rates(WORKED_SCORES[WORKED_SCORES["run_id"] == "x"], samples=3, rng=1)


# -- methods §8.3: Kendall tau -------------------------------------------------------------------


def test_tau_is_scipy_tau_b_over_shared_runs() -> None:
    first = pd.Series({"a": 0.1, "b": 0.2, "c": 0.2, "d": 0.4, "e": 0.3})
    second = pd.Series({"a": 0.2, "b": 0.1, "c": 0.3, "d": 0.5, "e": 0.5, "f": 0.9})
    tau, p_value, n = kendall_tau(first, second)
    expected = stats.kendalltau([0.1, 0.2, 0.2, 0.4, 0.3], [0.2, 0.1, 0.3, 0.5, 0.5], variant="b")
    assert n == 5
    assert tau == pytest.approx(expected.statistic) and p_value == pytest.approx(expected.pvalue)
    # 7 concordant, 1 discordant, one tie in each ranking: (7 - 1) / sqrt((10 - 1) * (10 - 1))
    assert tau == pytest.approx(2 / 3)
    means = pd.concat(
        [first.rename("value").rename_axis("run_id").reset_index().assign(measure="AP"),
         second.rename("value").rename_axis("run_id").reset_index().assign(measure="RankEff")]
    )  # fmt: skip
    table = measure_tau(means)
    assert table[["measure_a", "measure_b", "n_runs"]].values.tolist() == [["AP", "RankEff", 5]]
    assert table["tau"].iloc[0] == pytest.approx(tau)


# -- methods §8.4: reduced qrels -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("num_rel", "num_nonrel", "level", "k_rel", "k_non"),
    [(40, 200, 95, 38, 190), (40, 200, 3, 1, 10), (40, 200, 1, 1, 10), (10, 8, 25, 3, 8)],
)
def test_sample_sizes_table_8_4(
    num_rel: int, num_nonrel: int, level: int, k_rel: int, k_non: int
) -> None:
    assert tuple(int(k) for k in sample_sizes(num_rel, num_nonrel, level)) == (k_rel, k_non)


def test_sample_sizes_round_half_up_exactly() -> None:
    # 15% of 10 = 1.5 and 35% of 10 = 3.5 round up, though 0.15 * 10 and 0.35 * 10 are inexact floats
    assert [int(k) for k in sample_sizes(np.array([10, 10, 30]), 0, np.array([15, 35, 5]))[0]] == [
        2,
        4,
        2,
    ]


def _judgments() -> pd.DataFrame:
    rows = [("t1", f"r{i:02}", 1) for i in range(40)] + [("t1", f"n{i:03}", 0) for i in range(200)]
    rows += [("t2", f"r{i}", 2) for i in range(10)] + [("t2", f"n{i}", 0) for i in range(8)]
    rows += [("t2", "pooled", -1), ("t3", "only", 0)]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])


def test_reduced_sample_sizes_nesting_and_seed() -> None:
    judgments = _judgments()
    levels = [95, 25, 3, 1]
    sample = reduced_sample(judgments, levels=levels, rng=42)
    assert "pooled" not in set(sample["doc_id"])  # negative grades are unjudged
    counts = (
        sample.assign(rel=sample["relevance"] >= 1)
        .groupby(["level", "query_id", "rel"])
        .size()
        .to_dict()
    )
    assert counts[(95, "t1", True)] == 38 and counts[(95, "t1", False)] == 190
    assert counts[(3, "t1", True)] == 1 and counts[(3, "t1", False)] == 10
    assert counts[(25, "t2", True)] == 3 and counts[(25, "t2", False)] == 8
    assert counts[(1, "t3", False)] == 1  # only one non-relevant document exists
    kept = {
        level: set(zip(part["query_id"], part["doc_id"], strict=True)) for level, part in sample.groupby("level")
    }
    assert kept[1] <= kept[3] <= kept[25] <= kept[95]  # nested
    shuffled = judgments.sample(frac=1.0, random_state=0)
    again = reduced_sample(shuffled, levels=levels, rng=np.random.default_rng(42))
    assert {
        level: set(zip(p["query_id"], p["doc_id"], strict=True)) for level, p in again.groupby("level")
    } == kept
    other = reduced_sample(judgments, levels=levels, rng=43)
    assert (
        set(zip(other[other["level"] == 25]["query_id"], other[other["level"] == 25]["doc_id"], strict=True))
        != kept[25]
    )


@settings(max_examples=25, deadline=None)
@given(
    sizes=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 60)), min_size=1, max_size=5),
    levels=st.lists(st.integers(1, 100), min_size=1, max_size=6),
    seed=st.integers(0, 2**32 - 1),
)
def test_reduced_sample_properties(
    sizes: list[tuple[int, int]], levels: list[int], seed: int
) -> None:
    rows = []
    for t, (n_rel, n_non) in enumerate(sizes):
        rows += [(f"t{t}", f"r{i}", 1) for i in range(n_rel)] + [
            (f"t{t}", f"n{i}", 0) for i in range(n_non)
        ]
    judgments = pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])
    sample = reduced_sample(judgments, levels=levels, rng=seed)
    previous: set | None = None
    for level in sorted(set(levels), reverse=True):
        part = sample[sample["level"] == level]
        for t, (n_rel, n_non) in enumerate(sizes):
            topic = part[part["query_id"] == f"t{t}"]
            k_rel, k_non = sample_sizes(n_rel, n_non, level)
            assert (topic["relevance"] == 1).sum() == k_rel
            assert (topic["relevance"] == 0).sum() == k_non
        current = set(part["doc_id"] + "/" + part["query_id"])
        if previous is not None:
            assert current <= previous
        previous = current


def test_bad_levels_are_rejected() -> None:
    with pytest.raises(EvalWhError, match="level 0 must be an integer percentage from 1 to 100"):
        reduced_sample(_judgments(), levels=[50, 0], rng=1)


def test_default_levels() -> None:
    assert DEFAULT_LEVELS[:3] == (100, 95, 90) and DEFAULT_LEVELS[17:] == (
        15,
        10,
        9,
        8,
        7,
        6,
        5,
        4,
        3,
        2,
        1,
    )
    assert len(DEFAULT_LEVELS) == 28


# -- end to end on a small synthetic collection ----------------------------------------------------


def _synthetic(seed: int = 7, runs: int = 6, topics: int = 8) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    qrels, results = [], []
    for t in range(topics):
        grades = rng.permutation([1] * 6 + [0] * 24)
        qrels += [(f"q{t}", f"d{d:02}", int(g)) for d, g in enumerate(grades)]
        for r in range(runs):
            # runs differ in how strongly they favour relevant documents
            scores = rng.random(40) + (r / runs) * np.r_[grades, np.zeros(10)]
            results += [(f"run{r}", f"q{t}", f"d{d:02}", float(s)) for d, s in enumerate(scores)]
    return (
        pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]),
        pd.DataFrame(results, columns=["run_id", "query_id", "doc_id", "score"]),
    )


@pytest.fixture(scope="module")
def small_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("experiments") / "small.duckdb"
    qrels, runs = _synthetic()
    with Warehouse(path) as wh:
        wh.ingest_qrels(qrels, collection="small")
        wh.ingest_runs(runs, collection="small")
    return path


@pytest.fixture
def small_wh(small_db: Path, tmp_path: Path) -> Warehouse:
    copy = tmp_path / "small.duckdb"
    shutil.copy(small_db, copy)
    wh = Warehouse(copy)
    yield wh
    wh.close()


def test_reduced_qrels_are_derived_qrels_sets(small_wh: Warehouse) -> None:
    sets = store_reduced_qrels(small_wh, "small", seed=3, levels=[100, 50, 10])
    assert sets[["level", "qrels_id", "judged", "relevant", "status"]].values.tolist() == [
        [100, "reduced-a100-seed3", 240, 48, "written"],
        [50, "reduced-a50-seed3", 8 * (3 + 12), 24, "written"],
        [10, "reduced-a10-seed3", 8 * (1 + 10), 8, "written"],
    ]
    row = small_wh.query(
        "SELECT kind, parent_qrels_id, params, line_count FROM qrels_sets WHERE qrels_id = 'reduced-a50-seed3'"
    ).iloc[0]
    assert (row["kind"], row["parent_qrels_id"], row["line_count"]) == ("derived", "default", 120)
    assert json.loads(row["params"]) == {
        "level": 50,
        "method": "stratified-nested",
        "parent": "default",
        "rel": 1,
        "seed": 3,
    }
    again = store_reduced_qrels(small_wh, "small", seed=3, levels=[100, 50, 10])
    assert again["status"].tolist() == ["unchanged"] * 3
    assert (
        small_wh.query("SELECT count(*) AS n FROM qrels WHERE qrels_id LIKE 'reduced-%'")["n"].iloc[
            0
        ]
        == 240 + 120 + 88
    )
    # any metric runs against a reduced set; level 100 is the full qrels again
    full = small_wh.evaluate(["AP", "RankEff"], collection="small")
    at_100 = small_wh.evaluate(["AP", "RankEff"], collection="small", qrels_id="reduced-a100-seed3")
    assert np.allclose(full["value"], at_100["value"])
    at_10 = small_wh.evaluate(["NumRel"], collection="small", qrels_id="reduced-a10-seed3")
    assert (at_10["value"] == 8).all()  # one relevant document kept per topic, summed over 8 topics


def test_run_reduced_qrels_end_to_end(small_wh: Warehouse) -> None:
    result = run_reduced_qrels(
        small_wh, "small", ["MAP", "bpref-10", "RankEff"], seed=1, levels=[100, 50, 10], cap=40
    )
    levels = result["levels"]
    assert levels[["measure", "level"]].values.tolist() == [
        [m, lv] for m in ("MAP", "bpref-10", "RankEff") for lv in (100, 50, 10)
    ]  # the names as given
    at_full = levels[levels["level"] == 100]
    assert np.allclose(at_full["tau"], 1.0) and np.allclose(at_full["change_pct"], 0.0)
    # the change is taken against the full-qrels mean of the same runs
    means = small_wh.evaluate(["MAP"], collection="small", qrels_id="reduced-a10-seed1")[
        "value"
    ].mean()
    ap10 = levels[(levels["measure"] == "MAP") & (levels["level"] == 10)].iloc[0]
    assert ap10["mean_value"] == pytest.approx(means)
    assert ap10["change_pct"] == pytest.approx(100 * (means / ap10["full_mean"] - 1))
    pairs = result["measure_tau"]
    assert pairs[["measure_a", "measure_b"]].values.tolist() == [
        ["MAP", "bpref-10"],
        ["MAP", "RankEff"],
        ["bpref-10", "RankEff"],
    ]
    stored = stored_levels(small_wh, "small")
    assert len(stored) == 9 and set(stored["experiment_id"]) == {"reduced-qrels-seed1"}
    # running again replaces the stored rows instead of adding to them
    run_reduced_qrels(
        small_wh, "small", ["MAP", "bpref-10", "RankEff"], seed=1, levels=[100, 50, 10], cap=40
    )
    counts = (
        small_wh.query(
            "SELECT (SELECT count(*) FROM reduced_levels) AS levels, (SELECT count(*) FROM reduced_run_means) AS means,"
            " (SELECT count(*) FROM measure_tau) AS pairs, (SELECT count(*) FROM experiment_runs) AS runs"
        )
        .iloc[0]
        .tolist()
    )
    assert counts == [9, 3 * 3 * 6, 3, 6]


def test_first_level_below_reports_none_when_tau_stays_high() -> None:
    levels = pd.DataFrame(
        {"measure": ["AP", "AP", "RankEff"], "level": [100, 10, 100], "tau": [1.0, 0.95, 1.0]}
    )
    assert first_level_below(levels)["level_below"].isna().all()


def test_run_swap_rates_end_to_end(small_wh: Warehouse) -> None:
    result = run_swap_rates(small_wh, "small", ["MAP", "RankEff"], samples=200, seed=5, cap=40)
    summary = result["summary"].set_index("measure")
    assert summary.loc["MAP", ["n_runs", "n_pairs", "samples", "topics_per_set"]].tolist() == [
        6,
        15,
        200,
        4,
    ]
    rates = result["rates"]
    assert rates.groupby("measure")["comparisons"].sum().tolist() == [200 * 15, 200 * 15]
    stored = small_wh.query("SELECT measure, d_star FROM swap_summary ORDER BY measure")
    assert stored["measure"].tolist() == ["MAP", "RankEff"]
    # same seed, same splits, same rates
    again = run_swap_rates(small_wh, "small", ["MAP", "RankEff"], samples=200, seed=5, cap=40)
    pd.testing.assert_frame_equal(again["rates"], rates)
    assert small_wh.query("SELECT count(*) AS n FROM swap_summary")["n"].iloc[0] == 2


def test_missing_experiment_is_reported(small_wh: Warehouse) -> None:
    with pytest.raises(
        NotFoundError,
        match="no stored reduced-qrels experiment; run evalwh experiment reduced-qrels",
    ):
        stored_levels(small_wh, "small")


# -- CLI -------------------------------------------------------------------------------------------


def test_cli_experiment_commands(small_db: Path, tmp_path: Path) -> None:
    from evalwh.cli import app
    from evalwh.cli.plot import app as plot_app

    db = tmp_path / "cli.duckdb"
    shutil.copy(small_db, db)
    runner = CliRunner()
    out = runner.invoke(
        app,
        [
            "experiment",
            "exclusions",
            "-c",
            "small",
            "--cap",
            "40",
            "--db",
            str(db),
            "--all",
            "-f",
            "csv",
        ],
        env=ENV,
    )
    assert out.exit_code == 0, out.output
    assert (
        out.stdout.splitlines()[0]
        == "run_id,total_retrieved,topics_empty,threshold,excluded,reason"
    )
    out = runner.invoke(
        app,
        [
            "experiment",
            "swap-rates",
            "-c",
            "small",
            "-m",
            "MAP",
            "-m",
            "RankEff",
            "--samples",
            "50",
            "--cap",
            "40",
            "--db",
            str(db),
            "-f",
            "csv",
        ],
        env=ENV,
    )
    assert out.exit_code == 0, out.output
    assert "6 runs retained, 0 excluded" in out.stderr
    assert out.stdout.splitlines()[0].startswith(
        "measure,n_runs,n_pairs,samples,topics_per_set,d_star"
    )
    out = runner.invoke(
        app,
        [
            "experiment",
            "reduced-qrels",
            "-c",
            "small",
            "-m",
            "MAP",
            "--levels",
            "100,20",
            "--cap",
            "40",
            "--db",
            str(db),
            "-f",
            "csv",
        ],
        env=ENV,
    )
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert lines[0] == "measure,level,qrels_id,n_runs,mean_value,change_pct,tau"
    first = lines[1].split(",")
    assert first[:4] == ["MAP", "100", "reduced-a100-seed1", "6"]
    assert float(first[5]) == 0.0 and float(first[6]) == pytest.approx(1.0)
    png = tmp_path / "tau.png"
    out = runner.invoke(
        plot_app, ["reduced-qrels", "-c", "small", "-o", str(png), "--db", str(db)], env=ENV
    )
    assert out.exit_code == 0, out.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out = runner.invoke(
        app,
        [
            "experiment",
            "reduced-qrels",
            "-c",
            "small",
            "-m",
            "MAP",
            "--levels",
            "0",
            "--db",
            str(db),
        ],
        env=ENV,
    )
    assert out.exit_code == 1
    assert (
        out.stderr == "Error: reduced qrels: level 0 must be an integer percentage from 1 to 100\n"
    )


@pytest.mark.parametrize("command", ["exclusions", "swap-rates", "reduced-qrels"])
def test_cli_help(command: str) -> None:
    from evalwh.cli import app

    out = CliRunner().invoke(app, ["experiment", command, "--help"], env=ENV)
    assert out.exit_code == 0
    assert f"Example: evalwh experiment {command}" in out.stdout
