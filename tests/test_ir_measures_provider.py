"""evalwh as an ir_measures provider (evalwh/ir_measures.py), and inside pt.Experiment.

ir_measures' registry with the evalwh provider against ir_measures' default providers on
generated graded collections, per topic: exact where both break score ties as trec_eval
does (pytrec_eval's measures), on distinct scores where ir_measures' provider breaks them
its own way (judged, compat, cwl_eval: docs/measures.md lists each difference).
"""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ir_measures = pytest.importorskip("ir_measures")
evalwh_ir_measures = pytest.importorskip("evalwh.ir_measures")

from ir_measures import (  # noqa: E402  # noqa: E402
    AP,
    ERR,
    RBP,
    RR,
    SDCG,
    Bpref,
    Compat,
    IPrec,
    Judged,
    NumQ,
    NumRel,
    NumRelRet,
    NumRet,
    P,
    R,
    Rprec,
    SetF,
    SetP,
    SetR,
    Success,
    infAP,
    nDCG,
)

from evalwh.ir_measures import MEASURES, PROVIDER, A_p, U  # noqa: E402

DOCS = [f"d{i}" for i in range(10)]
TOPICS = ["1", "2", "3", "4"]
SETTINGS = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# pytrec_eval's measures: trec_eval's tie order, so exact on tied scores too
TIED = [AP, AP(rel=2), nDCG, nDCG @ 5, P @ 5, P(rel=2) @ 3, R @ 5, RR, RR(rel=2), Rprec, Bpref, Success @ 3,
        NumRet, NumRel, NumRelRet, NumQ, SetP, SetR, SetF(beta=0.5), IPrec @ 0.5, infAP, AP(judged_only=True)]  # fmt: skip
# ir_measures breaks ties by doc_id ascending (judged, compat) or input order (cwl_eval)
DISTINCT = [Judged @ 5, Compat(p=0.8), RBP(rel=1, p=0.5), SDCG(max_rel=3) @ 5]


@st.composite
def collections(draw, ties=True, negative=True):
    """(qrels, run) frames: qrels topics 1-2 (maybe 3, 4), each with a top-grade document
    (pytrec_eval-terrier crashes on a topic with none at its threshold); run topics a subset
    plus 9, which the qrels lack."""
    qrels = []
    for topic in TOPICS[: draw(st.integers(2, 4))]:
        judged = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=8, unique=True))
        grades = [3] + [
            draw(st.sampled_from((-1, 0, 1, 2, 3) if negative else (0, 1, 2, 3)))
            for _ in judged[1:]
        ]
        qrels += [(topic, doc, grade) for doc, grade in zip(judged, grades, strict=True)]
    run = []
    for topic in draw(
        st.lists(st.sampled_from([*TOPICS, "9"]), min_size=1, max_size=5, unique=True)
    ):
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=10, unique=True))
        if ties:
            scores = [draw(st.sampled_from([1.0, 2.0, 3.5])) for _ in docs]
        else:
            scores = [float(len(docs) - i) + 0.5 for i in range(len(docs))]
        run += [(topic, doc, score) for doc, score in zip(docs, scores, strict=True)]
    return (
        pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]),
        pd.DataFrame(run, columns=["query_id", "doc_id", "score"]),
    )


def per_topic(metrics):
    return {(str(m.measure), m.query_id): m.value for m in metrics}


def check(measures, qrels, run, tolerance=1e-9, tolerances=None):
    """Per topic and aggregated, the evalwh provider against ir_measures' default pipeline.

    tolerances: a measure's own, where it differs from tolerance (all measures go to the evalwh
    provider in one call: its evaluator's in-memory warehouse costs more than ir_measures).
    """
    tolerances = tolerances or {}
    ours = ir_measures.providers.registry["evalwh"].calc(measures, qrels, run)
    # ir_measures' pytrec_eval provider puts NumRet and NumQ into whichever of its trec_eval
    # invocations comes first, in the order of a set (so of the hash seed): one with
    # judged_only (trec_eval -J, which drops the unjudged documents) gives NumRet too small
    # (about one seed in ten). The judged-only measures are asked for in a call of their own.
    judged_only = [m for m in measures if m.params.get("judged_only") is True]
    parts = [ir_measures.calc([m for m in measures if m not in judged_only], qrels, run)]
    if judged_only:
        parts.append(ir_measures.calc(judged_only, qrels, run))
    mine = per_topic(ours.per_query)
    expected = per_topic(metric for part in parts for metric in part.per_query)
    aggregated = {measure: value for part in parts for measure, value in part.aggregated.items()}
    assert mine.keys() == expected.keys()
    allowed = {str(m): tolerances.get(m, tolerance) for m in measures}
    for key, value in expected.items():
        assert mine[key] == pytest.approx(value, abs=allowed[key[0]]), (key, mine[key], value)
    assert ours.aggregated.keys() == aggregated.keys()
    for measure, value in aggregated.items():
        assert ours.aggregated[measure] == pytest.approx(value, abs=tolerances.get(measure, tolerance)), measure


def test_registered_and_offers_evalwh_measures():
    assert ir_measures.providers.registry["evalwh"] is PROVIDER
    assert PROVIDER in ir_measures.DefaultPipeline.providers
    assert ir_measures.parse_measure("A_p@10") == A_p @ 10 == MEASURES["A_p"] @ 10
    assert str(ir_measures.parse_measure("RBP_resid(p=0.5)@10")) == "RBP_resid(p=0.5)@10"
    assert {"A_p", "U", "AA", "A_r", "RBP_resid", "RBP_upper", "bpref10", "AP_minRd"} <= set(
        MEASURES
    )
    assert "gm_map" not in MEASURES  # a geometric mean: not one of ir_measures' aggregators
    assert PROVIDER.supports(A_p @ 10) and PROVIDER.supports(AP(rel=2) @ 100)
    assert not PROVIDER.supports(RBP)  # graded in ir_measures, binary in evalwh: declined
    assert not PROVIDER.supports(ir_measures.parse_measure("alpha_nDCG@10"))


@SETTINGS
@given(collections())
def test_equals_default_providers_with_ties(data):
    check(TIED, *data)


@SETTINGS
@given(collections(ties=False, negative=False))
def test_equals_default_providers_on_distinct_scores(data):
    """Judged and Compat: also no negative grade, which ir_measures' Judged counts as judged."""
    check([*DISTINCT, ERR @ 5], *data, tolerances={ERR @ 5: 5.1e-6})  # gdeval prints 5 decimals


def test_a_p_is_the_judged_share_at_k():
    """A_p@k: judged documents (grade >= 0) in the top k, divided by k; U@k = 1 - A_p@k."""
    qrels = pd.DataFrame(
        {
            "query_id": ["1", "1", "1", "2"],
            "doc_id": ["a", "b", "c", "d"],
            "relevance": [1, 0, -1, 2],
        }
    )
    run = pd.DataFrame(
        {
            "query_id": ["1"] * 4 + ["9"],
            "doc_id": ["a", "b", "c", "x", "d"],
            "score": [4.0, 3, 2, 1, 1],
        }
    )
    values = per_topic(PROVIDER.iter_calc([A_p @ 10, A_p @ 2, U @ 4], qrels, run))
    # topic 2 is not in the run: an empty ranking, nothing judged, all unjudged (topic 9 is
    # not in the qrels: left out)
    assert values == {("A_p@10", "1"): 0.2, ("A_p@2", "1"): 1.0, ("U@4", "1"): 0.5,
                      ("A_p@10", "2"): 0.0, ("A_p@2", "2"): 0.0, ("U@4", "2"): 1.0}  # fmt: skip
    assert ir_measures.calc_aggregate([A_p @ 10, nDCG @ 10], qrels, run)[A_p @ 10] == pytest.approx(
        0.1
    )


def test_one_evaluator_many_runs_and_other_inputs():
    """An evaluator takes several runs in turn; dicts of dicts and PyTerrier's names too."""
    qrels = {"1": {"a": 1, "b": 0}, "2": {"c": 2}}
    evaluator = PROVIDER.evaluator([AP, P @ 1], qrels)
    first = evaluator.calc_aggregate({"1": {"a": 2.0, "b": 1.0}, "2": {"c": 1.0}})
    second = evaluator.calc_aggregate({"1": {"a": 1.0, "b": 2.0}})
    assert (first[AP], first[P @ 1]) == (1.0, 1.0)
    assert (second[AP], second[P @ 1]) == (0.25, 0.0)
    frame = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [1.0, 2.0]})
    assert PROVIDER.calc_aggregate([AP], qrels, frame)[AP] == 0.25


def test_pt_experiment():
    """pt.Experiment with ir_measures' and evalwh's measures; runs from DataFrames, no Java."""
    pt = pytest.importorskip("pyterrier")
    topics = pd.DataFrame({"qid": ["1", "2", "3"], "query": ["a b", "c", "d"]})
    qrels = pd.DataFrame({"qid": ["1", "1", "1", "2", "2", "3"], "docno": ["a", "b", "c", "d", "e", "f"],
                          "label": [2, 0, 1, 1, -1, 0]})  # fmt: skip
    results = pd.DataFrame({"qid": ["1", "1", "1", "2", "2", "3"], "docno": ["a", "c", "x", "e", "d", "f"],
                            "score": [3.0, 2.0, 2.0, 5.0, 1.0, 1.0]})  # fmt: skip
    reversed_ = results.assign(score=results["score"].to_numpy()[::-1])
    systems = [pt.Transformer.from_df(results), pt.Transformer.from_df(reversed_)]
    table = pt.Experiment(
        systems, topics, qrels, eval_metrics=[AP, nDCG @ 10, A_p @ 10, U @ 2], names=["a", "b"]
    )
    expected = ir_measures.calc_aggregate(
        [AP, nDCG @ 10, A_p @ 10, U @ 2], qrels.rename(columns={"qid": "query_id", "docno": "doc_id", "label": "relevance"}),
        results.rename(columns={"qid": "query_id", "docno": "doc_id"}),
    )  # fmt: skip
    row = table.set_index("name").loc["a"]
    assert row["AP"] == pytest.approx(expected[AP]) == pytest.approx((5 / 6 + 1 / 2 + 0) / 3)
    assert (
        row["A_p@10"] == pytest.approx(expected[A_p @ 10]) == pytest.approx((0.2 + 0.1 + 0.1) / 3)
    )
    assert row["U@2"] == pytest.approx(
        0.5
    )  # topic 1: x unjudged of 2; 2: e (-1) of 2; 3: f judged, 1 missing
    assert table.set_index("name").loc["b", "nDCG@10"] < row["nDCG@10"]
