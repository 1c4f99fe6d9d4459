"""Uncertainty from machine labels (methods §12): identity, exact expectations, swaps, seeds, TREC-8.

The references are evalwh's own evaluation on ordinary qrels sets: with an identity confusion
the result must equal evaluating the merged set (H's labels, M's where H has none), and on a
collection small enough to enumerate every completion of the machine-only labels, the exact
expectation and swap probability are sums over completions, each scored by ``evaluate``.
"""

from __future__ import annotations

import itertools
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from evalwh import Warehouse
from evalwh.errors import InsufficientDataError, MetricParamError, NotFoundError
from evalwh.methods.label_uncertainty import (
    FewSharedPairsWarning,
    estimate_confusion,
    label_uncertainty,
    swap_probabilities,
)

MEASURES = ["P@3", "P@5", "nDCG@3", "nDCG", "AP", "AP@3"]
GRADES = [0.0, 1.0, 2.0]
# P(human grade | machine grade): rows machine 0, 1, 2; columns human 0, 1, 2
MATRIX = pd.DataFrame([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6]], index=GRADES, columns=GRADES)

# H judged these; M judged some of the same (shared) and three documents H did not (m1, m2, m3)
HUMAN = [("1", "a", 2), ("1", "b", 0), ("1", "c", 1), ("2", "a", 1), ("2", "e", 0), ("2", "f", 0)]
MACHINE = [("1", "a", 2), ("1", "b", 1), ("2", "e", 0), ("1", "m1", 1), ("1", "m2", 0), ("2", "m3", 2)]
RUNS = {
    "r1": [("1", ["a", "m1", "x", "b", "c", "m2"]), ("2", ["m3", "a", "e"])],
    "r2": [("1", ["m1", "m2", "c", "a"]), ("2", ["a", "y", "m3", "f"])],
    "r3": [("1", ["x", "a", "m2", "m1"])],  # no ranking for topic 2: an empty one
}


def _frame(rows: list[tuple[str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])


def _merged(human: pd.DataFrame, machine: pd.DataFrame) -> pd.DataFrame:
    """H's labels, and M's for the pairs H did not judge (the composed set, written by hand)."""
    known = set(zip(human.query_id, human.doc_id, strict=True))
    extra = machine[[(q, d) not in known for q, d in zip(machine.query_id, machine.doc_id, strict=True)]]
    return pd.concat([human, extra], ignore_index=True)


@pytest.fixture
def small() -> Warehouse:
    wh = Warehouse(":memory:")
    wh.ingest_qrels(_frame(HUMAN), collection="c", qrels_id="human")
    wh.ingest_qrels(_frame(MACHINE), collection="c", qrels_id="llm")
    for run_id, lists in RUNS.items():
        rows = [(q, d, float(len(docs) - i)) for q, docs in lists for i, d in enumerate(docs)]
        wh.ingest_runs(pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]), run_id=run_id)
    return wh


def _completions() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every completion of m1, m2, m3 with its probability, and its per-run means by ``evaluate``.

    All 27 completed qrels in one warehouse, completion n's topic t as topic "n:t" (the runs'
    rankings repeated under each), evaluated per topic in one call: a topic's value reads only
    its own qrels and ranking, so each is the completion's own evaluation.
    """
    machine_only = [(q, d, g) for q, d, g in MACHINE if d.startswith("m")]
    completions = list(itertools.product(GRADES, repeat=len(machine_only)))
    probabilities, qrels = [], []
    for n, grades in enumerate(completions):
        chance = np.prod([MATRIX.loc[float(g), h] for (_, _, g), h in zip(machine_only, grades, strict=True)])
        rows = HUMAN + [(q, d, h) for (q, d, _), h in zip(machine_only, grades, strict=True)]
        qrels += [(f"{n}:{q}", d, g) for q, d, g in rows]
        probabilities.append(chance)
    with Warehouse(":memory:") as wh:
        wh.ingest_qrels(_frame(qrels), collection="c")
        for run_id, lists in RUNS.items():
            rows = [(f"{n}:{q}", d, float(len(docs) - i)) for n in range(len(completions))
                    for q, docs in lists for i, d in enumerate(docs)]  # fmt: skip
            wh.ingest_runs(pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]), run_id=run_id)
        frame = wh.evaluate(MEASURES, per_query=True)
    frame[["completion", "query_id"]] = frame["query_id"].str.split(":", expand=True)
    frame["completion"] = frame["completion"].astype(int)
    # the composed evaluation's topic set is kept in every replicate: here both topics have an
    # H-relevant document, so every completion has the same topics
    topics = frame.groupby(["completion", "run_id"])["query_id"].agg(lambda q: sorted(set(q)))
    assert len(topics) == len(completions) * len(RUNS) and all(t == ["1", "2"] for t in topics)
    scores = frame.groupby(["completion", "run_id", "measure"], as_index=False)["value"].mean()
    return pd.DataFrame({"completion": range(len(probabilities)), "p": probabilities}), scores


# -- identity: the composed evaluation, zero width ----------------------------------------------


def test_identity_confusion_is_the_composed_evaluation(small: Warehouse) -> None:
    small.ingest_qrels(_merged(_frame(HUMAN), _frame(MACHINE)), collection="c", qrels_id="merged")
    expected = small.evaluate(MEASURES, qrels_id="merged", per_query=True)
    identity = pd.DataFrame(np.eye(3), index=GRADES, columns=GRADES)
    result = small.label_uncertainty("human", "llm", MEASURES, confusion=identity, samples=20, per_query=True)
    got = result.topics.merge(expected, on=["run_id", "query_id", "measure"], suffixes=("", "_eval"))
    assert len(got) == len(expected) == len(result.topics) == 3 * 2 * len(MEASURES)
    for column in ("value", "mean", "lower", "upper"):
        assert np.allclose(got[column], got["value_eval"], rtol=0, atol=1e-12), column
    assert np.allclose(got["sd"], 0.0, atol=1e-12)
    # the same as the composition ``evaluate(..., fill=)`` builds itself
    composed = small.evaluate(MEASURES, qrels_id="human", fill="llm", per_query=True)
    both = composed.merge(expected, on=["run_id", "query_id", "measure"], suffixes=("", "_merged"))
    assert len(both) == len(expected) and np.allclose(both["value"], both["value_merged"], atol=1e-12)
    means = expected.groupby(["run_id", "measure"], as_index=False)["value"].mean()
    runs = result.runs.merge(means, on=["run_id", "measure"], suffixes=("", "_eval"))
    assert np.allclose(runs["value"], runs["value_eval"], atol=1e-12)
    assert np.allclose(runs["upper"] - runs["lower"], 0.0, atol=1e-12)


_DOCS = [f"d{i}" for i in range(8)]
_SHARED: list = []  # the warehouse of test_identity_is_the_composition_for_any_labels, then its collections
_LABEL = st.one_of(st.none(), st.sampled_from([0, 1, 2]))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    human=st.lists(_LABEL, min_size=16, max_size=16),
    machine=st.lists(_LABEL, min_size=16, max_size=16),
    rankings=st.lists(st.permutations(_DOCS + ["u1", "u2"]), min_size=2, max_size=2),
)
def test_identity_is_the_composition_for_any_labels(human, machine, rankings) -> None:
    """Under any labels (None: not judged), the identity matrix gives evaluate(fill=) exactly."""
    pairs = [(q, d) for q in ("1", "2") for d in _DOCS]
    h = _frame([(q, d, g) for (q, d), g in zip(pairs, human, strict=True) if g is not None])
    m = _frame([(q, d, g) for (q, d), g in zip(pairs, machine, strict=True) if g is not None])
    composed = _merged(h, m)
    if h.empty or m.empty or not (composed.relevance >= 1).any():
        return  # nothing to fill, or no topic to score: refused elsewhere
    # one warehouse for every example, a collection each (a warehouse's schema costs more
    # than an example's ingest)
    if not _SHARED:
        _SHARED.append(Warehouse(":memory:"))
    wh, c = _SHARED[0], f"c{len(_SHARED)}"
    _SHARED.append(c)
    wh.ingest_qrels(h, collection=c, qrels_id="human")
    wh.ingest_qrels(m, collection=c, qrels_id="llm")
    for n, ranking in enumerate(rankings):
        rows = [(q, d, float(10 - i)) for q in ("1", "2") for i, d in enumerate(ranking[: 6 + n])]
        wh.ingest_runs(pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]), collection=c, run_id=f"r{n}")
    identity = pd.DataFrame(np.eye(3), index=GRADES, columns=GRADES)
    result = wh.label_uncertainty("human", "llm", MEASURES, collection=c, confusion=identity, samples=3, per_query=True)
    expected = wh.evaluate(MEASURES, collection=c, qrels_id="human", fill="llm", per_query=True)
    got = result.topics.merge(expected, on=["run_id", "query_id", "measure"], suffixes=("", "_eval"))
    assert len(got) == len(expected) == len(result.topics)
    assert np.allclose(got["mean"], got["value_eval"], atol=1e-12)
    assert np.allclose(got["value"], got["value_eval"], atol=1e-12)


def test_value_does_not_depend_on_the_confusion(small: Warehouse) -> None:
    """``value`` is H filled by M's own grades whatever matrix the replicates draw from."""
    small.ingest_qrels(_merged(_frame(HUMAN), _frame(MACHINE)), collection="c", qrels_id="merged")
    expected = small.evaluate(MEASURES, qrels_id="merged").set_index(["run_id", "measure"])["value"]
    result = small.label_uncertainty("human", "llm", MEASURES, confusion=MATRIX, samples=10)
    got = result.runs.set_index(["run_id", "measure"])["value"]
    assert np.allclose(got.loc[expected.index], expected, atol=1e-12)


# -- exact expectations and swap probabilities by enumeration -----------------------------------


def test_monte_carlo_matches_the_enumerated_completions(small: Warehouse) -> None:
    samples = 4000
    result = small.label_uncertainty("human", "llm", MEASURES, confusion=MATRIX, samples=samples, seed=3, pairs=True)
    weights, scores = _completions()
    scores = scores.merge(weights, on="completion")
    exact = scores.assign(pv=scores.value * scores.p).groupby(["run_id", "measure"])["pv"].sum()
    runs = result.runs.set_index(["run_id", "measure"])
    assert np.isclose(weights.p.sum(), 1.0)
    # the Monte Carlo mean is within 4.5 standard errors of the exact expectation
    error = np.abs(runs.loc[exact.index, "mean"] - exact)
    standard_error = runs.loc[exact.index, "sd"] / np.sqrt(samples)
    assert (error <= 4.5 * standard_error + 1e-12).all(), pd.concat([error, standard_error], axis=1)
    # the analytic expectation of P@k is exact
    for measure in ("P@3", "P@5"):
        rows = runs.xs(measure, level="measure")
        assert np.allclose(rows["expected"], exact.xs(measure, level="measure").loc[rows.index], atol=1e-12)
    assert runs.xs("AP", level="measure")["expected"].isna().all()
    # swap probabilities: P(first < second) summed over the completions
    wide = scores.pivot_table(index=["measure", "completion", "p"], columns="run_id", values="value").reset_index()
    for row in result.pairs.itertuples():
        table = wide[wide.measure == row.measure]
        p_swap = table.p[table[row.first] < table[row.second] - 1e-12].sum()
        p_tie = table.p[np.isclose(table[row.first], table[row.second], atol=1e-12)].sum()
        se = np.sqrt(max(p_swap * (1 - p_swap), 1e-4) / samples)
        assert abs(row.p_swap - p_swap) <= 4.5 * se, (row, p_swap)
        assert abs(row.p_tie - p_tie) <= 4.5 * np.sqrt(max(p_tie * (1 - p_tie), 1e-4) / samples), (row, p_tie)


def test_ap_counts_unretrieved_machine_documents_in_r() -> None:
    """The worked example of methods §12.3: E[AP] = 0.9625, AP under M's own grades = 1."""
    wh = Warehouse(":memory:")
    wh.ingest_qrels(_frame([("1", "d1", 1), ("1", "s", 0)]), collection="c", qrels_id="human")
    wh.ingest_qrels(_frame([("1", "s", 0), ("1", "d2", 1), ("1", "d3", 0)]), collection="c", qrels_id="llm")
    wh.ingest_runs(pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["d1", "d2"], "score": [2.0, 1.0]}), run_id="r")
    matrix = pd.DataFrame([[0.9, 0.1], [0.25, 0.75]], index=[0.0, 1.0], columns=[0.0, 1.0])
    result = wh.label_uncertainty("human", "llm", ["AP", "P@2"], confusion=matrix, samples=20000, seed=5)
    row = result.runs.set_index("measure")
    assert row.loc["AP", "value"] == 1.0
    assert abs(row.loc["AP", "mean"] - 0.9625) <= 4.5 * row.loc["AP", "sd"] / np.sqrt(20000)
    assert row.loc["P@2", "expected"] == pytest.approx(0.875, abs=1e-12)


def test_a_machine_set_without_holes_to_fill_changes_nothing(small: Warehouse) -> None:
    """M judged only pairs H judged: every replicate is H's own evaluation (found by hypothesis)."""
    small.ingest_qrels(_frame([r for r in MACHINE if not r[1].startswith("m")]), collection="c", qrels_id="echo")
    with pytest.warns(FewSharedPairsWarning):
        result = small.label_uncertainty("human", "echo", MEASURES, samples=5, per_query=True)
    expected = small.evaluate(MEASURES, qrels_id="human", per_query=True)
    got = result.topics.merge(expected, on=["run_id", "query_id", "measure"], suffixes=("", "_eval"))
    assert len(got) == len(expected)
    assert np.allclose(got[["value", "mean", "lower", "upper"]].to_numpy(), got[["value_eval"]].to_numpy(), atol=1e-12)


# -- swaps, seeds ---------------------------------------------------------------------------------


def test_swap_probability_of_a_run_and_its_shifted_copy(small: Warehouse) -> None:
    """A copy scores as the run in every replicate; a copy pushed down one rank never beats it."""
    rows = [(q, d, float(len(docs) - i)) for q, docs in RUNS["r1"] for i, d in enumerate(docs)]
    copy = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    small.ingest_runs(copy, run_id="same")
    shifted = copy.assign(score=copy.score)
    top = pd.DataFrame({"query_id": ["1", "2"], "doc_id": ["z1", "z2"], "score": [100.0, 100.0]})
    small.ingest_runs(pd.concat([top, shifted]), run_id="shifted")
    result = small.label_uncertainty(
        "human", "llm", ["P@3", "nDCG@3", "AP"], runs=["r1", "same", "shifted"], confusion=MATRIX, samples=500, pairs=True
    )
    pairs = result.pairs.set_index(["measure", "first", "second"])
    for measure in ("P@3", "nDCG@3", "AP"):
        same = pairs.xs(measure, level="measure").loc[("r1", "same")]
        assert (same.p_swap, same.p_tie) == (0.0, 1.0)
        shift = pairs.xs(measure, level="measure").loc[("r1", "shifted")]
        assert shift.p_swap == 0.0 and shift.value_first >= shift.value_second


def test_swap_probabilities_by_hand() -> None:
    sims = np.array([[0.5, 0.4, 0.1], [0.3, 0.4, 0.2], [0.6, 0.6, 0.7], [0.7, 0.1, 0.0]])
    frame = swap_probabilities(["a", "b", "c"], np.array([0.5, 0.4, 0.45]), sims).set_index(["first", "second"])
    assert frame.loc[("a", "b"), ["p_swap", "p_tie"]].tolist() == [0.25, 0.25]
    assert frame.loc[("c", "b"), ["p_swap", "p_tie"]].tolist() == [0.75, 0.0]  # c ranked above b by value
    assert frame.loc[("a", "c"), "p_swap"] == 0.25


def test_seed_reproducibility(small: Warehouse) -> None:
    one = small.label_uncertainty("human", "llm", ["P@3", "AP"], confusion=MATRIX, samples=37, seed=11, per_query=True)
    two = small.label_uncertainty("human", "llm", ["P@3", "AP"], confusion=MATRIX, samples=37, seed=11, per_query=True)
    pd.testing.assert_frame_equal(one.runs, two.runs)
    pd.testing.assert_frame_equal(one.topics, two.topics)
    other = small.label_uncertainty("human", "llm", ["P@3", "AP"], confusion=MATRIX, samples=37, seed=12)
    assert not one.runs["mean"].equals(other.runs["mean"])
    # the replicates do not depend on which measures are asked for
    alone = small.label_uncertainty("human", "llm", ["P@3"], confusion=MATRIX, samples=37, seed=11)
    pd.testing.assert_frame_equal(alone.runs, one.runs[one.runs.measure == "P@3"].reset_index(drop=True))


def test_results_do_not_depend_on_how_the_work_is_split(small: Warehouse, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stretches of a few positions and chunks of one block give the same numbers as one piece."""
    from evalwh.methods import label_uncertainty as module

    whole = small.label_uncertainty("human", "llm", MEASURES, confusion=MATRIX, samples=41, seed=8, per_query=True)
    monkeypatch.setattr(module, "CELL_BUDGET", 5)
    monkeypatch.setattr(module, "LABEL_BUDGET", 1)
    split = small.label_uncertainty("human", "llm", MEASURES, confusion=MATRIX, samples=41, seed=8, per_query=True)
    pd.testing.assert_frame_equal(whole.topics, split.topics, check_exact=False, rtol=0, atol=1e-12)


# -- the confusion matrix ---------------------------------------------------------------------


def test_estimated_confusion_is_the_smoothed_crosstab(small: Warehouse) -> None:
    with pytest.warns(FewSharedPairsWarning, match="shares only 3 judged pairs"):
        result = small.label_uncertainty("human", "llm", ["P@3"], samples=5, prior=0.5)
    human, machine = _frame(HUMAN), _frame(MACHINE)
    shared = human.merge(machine, on=["query_id", "doc_id"], suffixes=("_h", "_m"))
    counts = pd.crosstab(shared.relevance_m, shared.relevance_h).reindex(
        index=sorted(machine.relevance.unique()), columns=sorted(human.relevance.unique()), fill_value=0
    )
    expected = (counts + 0.5).div(counts.sum(axis=1) + 0.5 * counts.shape[1], axis=0)
    got = result.confusion.pivot(index="machine_grade", columns="human_grade", values="probability")
    assert np.allclose(got.to_numpy(), expected.to_numpy(), atol=1e-12)
    assert result.confusion.pairs.sum() == len(shared)


def test_estimate_confusion_without_prior_needs_every_row() -> None:
    shared = pd.DataFrame({"machine_grade": [0.0, 0.0], "reference_grade": [0.0, 1.0], "pairs": [3, 1]})
    assert estimate_confusion(shared, [0.0], [0.0, 1.0], prior=0).probabilities.tolist() == [[0.75, 0.25]]
    with pytest.raises(InsufficientDataError, match=r"machine grade\(s\) \[1.0\] have no pair"):
        estimate_confusion(shared, [0.0, 1.0], [0.0, 1.0], prior=0)


def test_resampled_confusion_is_reproducible_and_centred(small: Warehouse) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewSharedPairsWarning)
        fixed = small.label_uncertainty("human", "llm", ["P@5"], samples=3000, seed=2)
        one = small.label_uncertainty("human", "llm", ["P@5"], samples=3000, seed=2, resample_confusion=True)
        two = small.label_uncertainty("human", "llm", ["P@5"], samples=3000, seed=2, resample_confusion=True)
    pd.testing.assert_frame_equal(one.runs, two.runs)
    # the posterior mean of each row is the smoothed estimate: the same expectation
    assert np.allclose(one.runs["mean"], fixed.runs["expected"], atol=4.5 * one.runs["sd"].max() / np.sqrt(3000))


# -- bad input ----------------------------------------------------------------------------------


def test_bad_input(small: Warehouse) -> None:
    with pytest.raises(NotFoundError, match="Did you mean llm"):
        small.label_uncertainty("human", "lm", ["P@3"])
    with pytest.raises(MetricParamError, match="supported are P@k"):
        small.label_uncertainty("human", "llm", ["bpref"], confusion=MATRIX)
    with pytest.raises(MetricParamError, match="supported are P@k"):
        small.label_uncertainty("human", "llm", ["P(rel=2)@3"], confusion=MATRIX)
    with pytest.raises(MetricParamError, match="same set"):
        small.label_uncertainty("llm", "llm", ["P@3"])
    with pytest.raises(MetricParamError, match="no row for machine grade"):
        small.label_uncertainty("human", "llm", ["P@3"], confusion=MATRIX.iloc[:2])
    small.ingest_qrels(_frame([("1", "q", 1)]), collection="c", qrels_id="disjoint")
    with pytest.raises(InsufficientDataError, match="judged no pair in common"):
        small.label_uncertainty("human", "disjoint", ["P@3"])


def test_cli(tmp_path: Path) -> None:
    from evalwh.cli import app

    db = tmp_path / "w.duckdb"
    with Warehouse(db) as wh:
        wh.ingest_qrels(_frame(HUMAN), collection="c", qrels_id="human")
        wh.ingest_qrels(_frame(MACHINE), collection="c", qrels_id="llm")
        wh.ingest_runs(pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "m1"], "score": [2.0, 1.0]}), run_id="r")
        with pytest.warns(FewSharedPairsWarning):
            expected = wh.label_uncertainty("human", "llm", ["P@2"], samples=50, seed=4)
    runner = CliRunner()
    args = ["label-uncertainty", "--reference", "human", "--machine", "llm", "-m", "P@2", "--samples", "50",
            "--seed", "4", "--db", str(db), "--format", "csv"]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "warning: label uncertainty: 'llm' shares only 3 judged pairs" in result.stderr
    got = pd.read_csv(__import__("io").StringIO(result.stdout))
    assert np.allclose(got["mean"], expected.runs["mean"]) and got.run_id.tolist() == ["r"]
    bad = runner.invoke(app, [*args, "--pairs", "--confusion"])
    assert bad.exit_code == 1 and "give one of --per-query, --pairs and --confusion" in bad.output


# -- TREC-8: depth-10 labels filled by the full qrels ------------------------------------------


@pytest.mark.slow
def test_trec8_depth10_filled(tmp_path: Path) -> None:
    """TREC-8's qrels, depth10 and a noisy judge on every eighth run (17 of 129).

    A warehouse of those runs only: each qrels set ingested builds its cached judged rows for
    the runs there are (for all 129, two sets cost more than the rest of the test).
    """
    from conftest import TREC8, trec8_with_runs

    every_eighth = [path.name[len("input.") : -len(".gz")] for path in sorted((TREC8 / "runs").glob("input.*.gz"))][::8]
    with Warehouse(trec8_with_runs(tmp_path / "trec8.duckdb", every_eighth)) as wh:
        wh.ingest_qrels(TREC8 / "depth10" / "depth10.qrels", collection="trec8", qrels_id="depth10")
        full = wh.sql("SELECT query_id, doc_id, relevance FROM qrels WHERE qrels_id = 'default'")
        # a synthetic judge: relevant kept with 0.8, non-relevant called relevant with 0.05
        u = np.random.default_rng(7).random(len(full))
        noisy = np.where(full.relevance >= 1, (u >= 0.2).astype(int), (u < 0.05).astype(int))
        wh.ingest_qrels(full.assign(relevance=noisy), collection="trec8", qrels_id="noisy")
        runs = wh.run_ids("trec8")
        assert len(runs) == 17
        # depth10 filled by the full qrels is the full qrels: identity gives their evaluation
        identity = pd.DataFrame(np.eye(2), index=[0.0, 1.0], columns=[0.0, 1.0])
        same = wh.label_uncertainty("depth10", "default", ["P@30", "nDCG@100", "AP"], runs=runs,
                                    confusion=identity, samples=3)  # fmt: skip
        official = wh.evaluate(["P@30", "nDCG@100", "AP"], runs=runs)
        merged = same.runs.merge(official, on=["run_id", "measure"], suffixes=("", "_eval"))
        assert len(merged) == 3 * len(runs)
        assert np.allclose(merged["value"], merged["value_eval"], atol=1e-12)
        assert np.allclose(merged["upper"], merged["lower"], atol=1e-12)
        # the noisy judge: the confusion is the one it was built with, on the shared pairs
        result = wh.label_uncertainty("depth10", "noisy", ["P@30", "nDCG@30"], runs=runs, samples=400, seed=1, pairs=True)
    confusion = result.confusion.set_index(["machine_grade", "human_grade"])
    assert confusion.pairs.sum() > 10_000
    rows = result.runs.set_index(["run_id", "measure"])
    p30 = rows.xs("P@30", level="measure")
    assert (np.abs(p30["mean"] - p30["expected"]) <= 4.5 * p30["sd"] / np.sqrt(400) + 1e-12).all()
    assert ((p30["lower"] <= p30["expected"]) & (p30["expected"] <= p30["upper"])).all()
    assert ((result.pairs.p_swap >= 0) & (result.pairs.p_swap + result.pairs.p_tie <= 1)).all()
