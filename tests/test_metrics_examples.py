"""The worked examples of methods.md §1.9, §2.6 and §3.5, the properties of §1.8, and the
places where evalwh's defaults deliberately differ from trec_eval (methods §0.4, §9).

Every collection here is a handful of documents ingested from DataFrames into an in-memory
warehouse; a ranking is given as a list of doc ids, best first (scores are assigned so that
the list order is the ranked order).
"""

from __future__ import annotations

import itertools

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalwh import Warehouse

_counter = itertools.count()
EXACT = 5e-7  # the spec prints six decimals


@pytest.fixture(scope="module")
def wh() -> Warehouse:
    return Warehouse(":memory:")


def ingest(
    wh: Warehouse,
    qrels: dict[str, dict[str, int]],
    runs: dict[str, dict[str, list[str]]],
    extra_qrels: dict[str, dict[str, dict[str, int]]] | None = None,
) -> str:
    """Ingest ``{topic: {doc: grade}}`` and ``{run: {topic: [docs, best first]}}``.

    Returns the new collection's id."""
    collection = f"c{next(_counter)}"
    rows = [(t, d, g) for t, docs in qrels.items() for d, g in docs.items()]
    wh.ingest_qrels(
        pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"]), collection=collection
    )
    for qrels_id, other in (extra_qrels or {}).items():
        rows = [(t, d, g) for t, docs in other.items() for d, g in docs.items()]
        frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])
        wh.ingest_qrels(frame, collection=collection, qrels_id=qrels_id)
    lines = [
        (run, topic, doc, float(len(ranking) - i))
        for run, topics in runs.items()
        for topic, ranking in topics.items()
        for i, doc in enumerate(ranking)
    ]
    wh.ingest_runs(
        pd.DataFrame(lines, columns=["run_id", "query_id", "doc_id", "score"]),
        collection=collection,
    )
    return collection


def values(
    wh: Warehouse, collection: str, specs: list[str], **options: object
) -> dict[tuple[str, str], float]:
    """Per-topic values as {(run, measure): value} for a one-topic collection."""
    frame = wh.evaluate(specs, collection=collection, per_query=True, **options)
    return {(r.run_id, r.measure): r.value for r in frame.itertuples(index=False)}


# -- §1.9 (a), §2.6, §3.5: topic T1 -------------------------------------------------------------

T1_QRELS = {
    "T1": {"d1": 1, "d3": 1, "d7": 1, "d9": 1, "d2": 0, "d5": 0, "d8": 0, "d10": 0, "d11": 0}
}
T1_RUN = {"X": {"T1": ["d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8"]}}

T1_EXPECTED = {
    # §1.9 (a)
    "P@5": 0.4,
    "P@10": 0.3,
    "AP@2": 0.25,
    "AP_minRd@2": 0.5,
    "AP@5": 0.416667,
    "AP@10": 0.523810,
    "R@10": 0.75,
    "nDCG@5": 0.585570,
    "nDCG@10": 0.715697,
    "RBP@10": 0.3804288,  # p = 0.8 is the default
    "RBP_resid@10": 0.33570816,
    "RBP_upper@10": 0.71613696,
    "RBP_trunc@10": 0.426191,
    "RBP_trunc(rescale=false)@10": 0.3804288,
    "bpref": 0.5625,
    "bpref_BV04": 0.5625,
    "bpref10": 0.696429,
    "RankEff": 0.6,
    # §2.6
    "A_p@5": 0.8,
    "A_p@10": 0.6,
    "A_p_ret@10": 0.75,
    "U@10": 0.4,
    "A_r@10": 0.666667,
    "AA@10": 0.584921,
    "AA_ret@10": 0.877381,
}

T1_CONDENSED = {  # §3.5, the condensed list d1, d2, d3, d5, d7, d8
    "P@5": 0.6,
    "AP@10": 0.566667,
    "RBP_trunc@10": 0.459229,
    "RBP_trunc(rescale=false)@10": 0.40992,
}


@pytest.fixture(scope="module")
def t1(wh: Warehouse) -> dict[str, dict[str, float]]:
    """T1's values, assumed non-relevant and condensed, by spec (one evaluation each)."""
    collection = ingest(wh, T1_QRELS, T1_RUN)
    plain = values(wh, collection, list(T1_EXPECTED))
    condensed = values(wh, collection, list(T1_CONDENSED), unjudged="condensed")
    return {
        "plain": {m: v for (_, m), v in plain.items()},
        "condensed": {m: v for (_, m), v in condensed.items()},
    }


@pytest.mark.parametrize(("spec", "expected"), list(T1_EXPECTED.items()), ids=list(T1_EXPECTED))
def test_t1(t1: dict[str, dict[str, float]], spec: str, expected: float) -> None:
    assert t1["plain"][spec] == pytest.approx(expected, abs=EXACT)


@pytest.mark.parametrize(("spec", "expected"), list(T1_CONDENSED.items()), ids=list(T1_CONDENSED))
def test_t1_condensed(t1: dict[str, dict[str, float]], spec: str, expected: float) -> None:
    assert t1["condensed"][spec] == pytest.approx(expected, abs=EXACT)


# -- §1.9 (b) to (g): the bpref family, RankEff, graded nDCG -----------------------------------


def _judged(relevant: int, nonrelevant: int) -> dict[str, int]:
    return {
        **{f"r{i}": 1 for i in range(1, relevant + 1)},
        **{f"n{i}": 0 for i in range(1, nonrelevant + 1)},
    }


def _ns(first: int, last: int) -> list[str]:
    return [f"n{i}" for i in range(first, last + 1)]


BPREF_CASES = {
    "b-bpref_bug": (
        6,
        4,
        ["n1", "r1", "r2", "r3", "r4"],
        {"bpref": 0.5, "bpref_BV04": 0.555556, "bpref10": 0.625, "RankEff": 0.5},
    ),
    "c-N<R": (4, 2, ["n1", "n2", "r1", "r2"], {"bpref": 0.0, "bpref_BV04": 0.25}),
    "d-M1": (2, 4, ["r1", "r2", "n1", "n2", "n3", "n4"], {"RankEff": 1.0}),
    "d-M2": (2, 4, ["r1", "r2", "n1", "n2"], {"RankEff": 1.0}),
    "e-M1": (2, 28, ["r1", *_ns(1, 27), "r2", "n28"], {"bpref10": 0.5, "RankEff": 0.517857}),
    "e-M2": (2, 28, [*_ns(1, 7), "r1", "r2", *_ns(8, 28)], {"bpref10": 0.416667, "RankEff": 0.75}),
    "f-before": (1, 12, [*_ns(1, 12), "r1"], {"bpref10": 0.0, "bpref": 0.0, "RankEff": 0.0}),
    "f-after": (
        1,
        12,
        [*_ns(1, 11), "r1", "n12"],
        {"bpref10": 0.0, "bpref": 0.0, "RankEff": 0.083333},
    ),
}


@pytest.mark.parametrize("case", list(BPREF_CASES))
def test_bpref_family(wh: Warehouse, case: str) -> None:
    relevant, nonrelevant, ranking, expected = BPREF_CASES[case]
    collection = ingest(wh, {"t": _judged(relevant, nonrelevant)}, {"M": {"t": ranking}})
    got = values(wh, collection, list(expected))
    assert {m: v for (_, m), v in got.items()} == pytest.approx(expected, abs=EXACT)


def test_bpref10_and_rankeff_order_runs_differently(wh: Warehouse) -> None:
    """§1.9 (e), §1.8 property 3: bpref-10 prefers M1, RankEff prefers M2."""
    runs = {name: {"t": BPREF_CASES[f"e-{name}"][2]} for name in ("M1", "M2")}
    collection = ingest(wh, {"t": _judged(2, 28)}, runs)
    got = values(wh, collection, ["bpref-10", "RankEff"])
    assert got[("M1", "bpref10")] > got[("M2", "bpref10")]
    assert got[("M1", "RankEff")] < got[("M2", "RankEff")]


def test_swap_moves_rankeff_and_ap_but_not_bpref(wh: Warehouse) -> None:
    """§1.9 (f), §1.8 property 2: swapping r1 above n12 raises AP and RankEff only."""
    runs = {"before": {"t": BPREF_CASES["f-before"][2]}, "after": {"t": BPREF_CASES["f-after"][2]}}
    collection = ingest(wh, {"t": _judged(1, 12)}, runs)
    got = values(wh, collection, ["AP", "RankEff", "bpref", "bpref10"])
    assert got[("after", "AP")] > got[("before", "AP")]
    assert got[("after", "RankEff")] > got[("before", "RankEff")]
    assert got[("after", "bpref")] == got[("before", "bpref")]
    assert got[("after", "bpref10")] == got[("before", "bpref10")]


def test_graded_ndcg(wh: Warehouse) -> None:
    """§1.9 (g): gain = grade, log2(rank + 1) discount, the ideal list over all judged documents."""
    collection = ingest(
        wh, {"t": {"a": 2, "b": 1, "c": 0, "e": 2}}, {"r": {"t": ["b", "a", "c", "x"]}}
    )
    assert values(wh, collection, ["nDCG@3"])[("r", "nDCG@3")] == pytest.approx(0.601261, abs=EXACT)


def test_monotonicity_counterexample(wh: Warehouse) -> None:
    """§1.8 property 5: relabelling an unjudged document relevant can lower AP (R grows)."""
    ranking = ["r1", *(f"u{i}" for i in range(2, 11))]
    collection = ingest(
        wh,
        {"t": {"r1": 1}},
        {"r": {"t": ranking}},
        extra_qrels={"relabelled": {"t": {"r1": 1, "u10": 1}}},
    )
    assert values(wh, collection, ["AP"])[("r", "AP")] == 1.0
    assert values(wh, collection, ["AP"], qrels_id="relabelled")[("r", "AP")] == pytest.approx(0.6)


# -- §1.8 properties, with hypothesis ---------------------------------------------------------

RANGED = [
    "P@5",
    "R@5",
    "AP",
    "AP@5",
    "nDCG",
    "nDCG@5",
    "bpref",
    "bpref_BV04",
    "bpref10",
    "RankEff",
    "A_p@5",
    "AA",
]
RBP = ["RBP@5", "RBP_resid@5", "RBP_upper@5", "RBP"]


@st.composite
def topics(draw: st.DrawFn) -> tuple[dict[str, int], list[str], str | None]:
    """One topic: R >= 1 relevant, N >= 0 non-relevant, a ranking with unjudged documents,
    and an unjudged retrieved document to relabel relevant (None if there is none)."""
    relevant = draw(st.integers(1, 6))
    nonrelevant = draw(st.integers(0, 8))
    judged = _judged(relevant, nonrelevant)
    pool = [*judged, *(f"u{i}" for i in range(draw(st.integers(0, 5))))]
    ranking = draw(st.permutations(pool))[: draw(st.integers(1, len(pool)))]
    unjudged = [d for d in ranking if d.startswith("u")]
    relabel = draw(st.sampled_from(unjudged)) if unjudged else None
    return judged, ranking, relabel


def _bpref_bv04_as_rankeff_on_top_r(judged: dict[str, int], ranking: list[str]) -> float:
    """§1.8 property 1 by hand: RankEff over I_R, the R highest-ranked non-relevant documents
    (those not retrieved placed last, in any order). When N < R, I_R is padded with R - N
    virtual non-relevant documents below everything, so that #above + #below = R still holds."""
    relevant = sum(judged.values())
    nonrelevant = [d for d in ranking if judged.get(d) == 0]
    nonrelevant += [d for d, g in judged.items() if g == 0 and d not in ranking]
    top = nonrelevant[:relevant]
    total = 0.0
    for position, doc in enumerate(ranking):
        if judged.get(doc) == 1:
            below = sum(1 for n in top if n not in ranking[:position]) + relevant - len(top)
            total += below / relevant
    return total / relevant


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(topic=topics())
def test_properties(wh: Warehouse, topic: tuple[dict[str, int], list[str], str | None]) -> None:
    judged, ranking, relabel = topic
    relabelled = {"t": {**judged, relabel: 1}} if relabel else {"t": judged}
    collection = ingest(
        wh, {"t": judged}, {"r": {"t": ranking}}, extra_qrels={"relabelled": relabelled}
    )
    got = {m: v for (_, m), v in values(wh, collection, RANGED + RBP).items()}
    relevant, nonrelevant = sum(judged.values()), len(judged) - sum(judged.values())
    # property 4: ranges
    for spec in RANGED:
        if spec == "RankEff" and nonrelevant == 0:
            assert pd.isna(got[spec])  # undefined, stored as NULL
            continue
        assert 0.0 <= got[spec] <= 1.0, spec
    assert 0.0 <= got["RBP"] < 1.0
    assert got["RBP@5"] <= got["RBP_upper@5"] <= 1.0
    assert got["RBP_upper@5"] == pytest.approx(got["RBP@5"] + got["RBP_resid@5"], abs=1e-12)
    # property 1: bpref_BV04 is RankEff restricted to the top R non-relevant documents
    assert got["bpref_BV04"] == pytest.approx(
        _bpref_bv04_as_rankeff_on_top_r(judged, ranking), abs=1e-12
    )
    # §1.7 corollary: N <= R gives bpref = RankEff; N = R gives all three equal
    if 0 < nonrelevant <= relevant:
        assert got["bpref"] == pytest.approx(got["RankEff"], abs=1e-12)
    if nonrelevant == relevant:
        assert got["bpref_BV04"] == pytest.approx(got["bpref"], abs=1e-12)
        assert got["bpref_BV04"] == pytest.approx(got["RankEff"], abs=1e-12)
    # property 5: P@d and RBP base@d never decrease when an unjudged document turns relevant
    after = {
        m: v
        for (_, m), v in values(wh, collection, ["P@5", "RBP@5"], qrels_id="relabelled").items()
    }
    assert after["P@5"] >= got["P@5"]
    assert after["RBP@5"] >= got["RBP@5"]


@st.composite
def graded_topic(draw: st.DrawFn) -> tuple[dict[str, float], list[str]]:
    """One topic with grades from -1 to 3 (fractional ones too; none relevant possible) and a
    ranking with unjudged documents."""
    grades = draw(st.lists(st.sampled_from([-1.0, 0.0, 0.0, 0.5, 1.0, 2.0, 3.0]), min_size=1, max_size=9))
    judged = {f"j{i}": g for i, g in enumerate(grades)}
    pool = [*judged, *(f"u{i}" for i in range(draw(st.integers(0, 4))))]
    ranking = draw(st.permutations(pool))[: draw(st.integers(1, len(pool)))]
    return judged, ranking


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(topic=graded_topic())
def test_values_lie_in_the_declared_range(wh: Warehouse, topic: tuple[dict[str, float], list[str]]) -> None:
    """A metric whose SQL header declares ``range: low, high`` (``Metric.limits``) never leaves it:
    ``audit estimate`` clips its intervals to it (methods §15.4), which is safe only if no value,
    per topic or averaged, lies outside. Every such metric, at depth 5 and whole-list, and some with
    parameters away from their defaults, on graded topics with negative and fractional grades,
    unjudged documents and no relevant document."""
    from small_collection import catalog_specs

    from evalwh.measures import catalog

    judged, ranking = topic
    specs = [spec for spec in catalog_specs() if catalog.parse(spec).metric.limits is not None]
    assert len(specs) > 40  # (37 metrics declare one; those with an optional k twice)
    specs += [  # parameters and options away from their defaults
        "Compat(normalize=false)", "Compat(p=0.5)", "RBP_trunc(rescale=false)@5", "ERR(max_rel=1)@5",
        "ERR(gains={3:10, 1:-2})@5", "set_F(beta=0)", "set_F(beta=5)", "RBP(p=0.99)", "P(rel=2)@5",
        "AP(judged_only=true)", "nDCG(judged_only=true)@5", "bpref(rel=2)", "R(rel=3)@5",
    ]  # fmt: skip
    collection = ingest(wh, {"t": judged}, {"r": {"t": ranking}})
    for (_, spec), value in values(wh, collection, specs).items():
        low, high = catalog.parse(spec).metric.limits
        assert pd.isna(value) or low - 1e-12 <= value <= high + 1e-12, (spec, value)  # (up to rounding)


# -- where evalwh's defaults differ from trec_eval (methods §0.4, §9) -----------------------------


def test_topics_without_relevant_documents(wh: Warehouse) -> None:
    """Default: a topic with no relevant document is left out of T; trec_eval (-c) scores it 0."""
    collection = ingest(
        wh, {"1": {"a": 1, "b": 0}, "2": {"c": 0}}, {"r": {"1": ["a", "b"], "2": ["c"]}}
    )
    default = wh.evaluate(["AP"], collection=collection)
    trec = wh.evaluate(["AP"], collection=collection, averaging="trec_eval_c")
    assert (default["value"].iloc[0], default["n_topics"].iloc[0]) == (1.0, 1)
    assert (trec["value"].iloc[0], trec["n_topics"].iloc[0]) == (0.5, 2)


def test_missing_topic_averaging(wh: Warehouse) -> None:
    """A run that lacks a topic: an empty ranking over all of T (default, -c), or left out
    (trec_eval 9 without -c)."""
    collection = ingest(wh, {"1": {"a": 1}, "2": {"b": 1}}, {"r": {"1": ["a"]}})
    default = wh.evaluate(["P@1"], collection=collection)
    trec_default = wh.evaluate(["P@1"], collection=collection, averaging="trec_eval_default")
    assert (default["value"].iloc[0], default["n_topics"].iloc[0]) == (0.5, 2)
    assert (trec_default["value"].iloc[0], trec_default["n_topics"].iloc[0]) == (1.0, 1)


def test_rbp_residual_of_a_fully_judged_list(wh: Warehouse) -> None:
    """evalwh's residual keeps the tail weight p^m; trec_eval's rbp_resid reports 0 when no
    retrieved document is unjudged (m_rbp_resid.c). Here m = 2 and p = 0.8: 0.64, not 0."""
    collection = ingest(wh, {"t": {"a": 1, "b": 0}}, {"r": {"t": ["a", "b"]}})
    got = values(wh, collection, ["RBP", "RBP_resid", "RBP_upper"])
    assert got[("r", "RBP")] == pytest.approx(0.2)
    assert got[("r", "RBP_resid")] == pytest.approx(0.8**2)
    assert got[("r", "RBP_upper")] == pytest.approx(0.2 + 0.64)


def test_float32_tie_breaking(wh: Warehouse) -> None:
    """Default: exact doubles order the list (trec_eval 10); float32_ties=True orders on the
    float32 value, where 1.0 and 1.0 + 1e-9 tie and the doc id decides (trec_eval <= 9.0.8)."""
    collection = f"c{next(_counter)}"
    wh.ingest_qrels(
        pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]}), collection=collection
    )
    run = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [1.0 + 1e-9, 1.0]})
    wh.ingest_runs(run, collection=collection, run_id="r")
    assert values(wh, collection, ["RR"])[("r", "RR")] == 1.0
    assert values(wh, collection, ["RR"], float32_ties=True)[("r", "RR")] == 0.5


def test_ap_at_depth_divides_by_r(wh: Warehouse) -> None:
    """AP@d divides by R (trec_eval map_cut); AP_minRd@d by min(R, d), a different measure."""
    collection = ingest(wh, T1_QRELS, T1_RUN)
    got = values(wh, collection, ["AP@2", "AP_minRd@2"])
    assert (got[("X", "AP@2")], got[("X", "AP_minRd@2")]) == (0.25, 0.5)
