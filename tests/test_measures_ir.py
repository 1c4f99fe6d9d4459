"""ir_measures' measures and grammar against ir_measures itself (its default providers).

Generated graded collections: grades -1 (pooled, unjudged) to 3, topics without relevant
documents, score ties, short runs, topics the run lacks and run topics the qrels lack.
Each value is compared per topic on the topics ir_measures reports, to 1e-9 (gdeval.pl
prints 5 decimals: ERR and nDCG(dcg=exp-log2)@k are compared to 5e-6 there and to an
independent implementation of gdeval's formula to 1e-9).
"""

from __future__ import annotations

import itertools
import math

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalwh import Warehouse
from evalwh.measures import catalog

ir_measures = pytest.importorskip("ir_measures")

DOCS = [f"d{i}" for i in range(12)]
TOPICS = ["1", "2", "3", "4"]


@st.composite
def collections(draw, grades=(-1, 0, 1, 2, 3), ties=True, top_grade=False):
    """(qrels rows, run rows): qrels topics 1-2 (+ maybe 3, 4), run topics a subset plus 9.

    With top_grade every topic has a document of the highest grade: pytrec_eval-terrier
    crashes (segmentation fault) on a topic with no relevant document at its threshold.
    """
    qrels = []
    for topic in TOPICS[: draw(st.integers(2, 4))]:
        judged = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=10, unique=True))
        topic_grades = [draw(st.sampled_from(grades)) for _ in judged]
        if top_grade:
            topic_grades[0] = max(grades)
        qrels += [(topic, doc, grade) for doc, grade in zip(judged, topic_grades, strict=True)]
    run = []
    topics = draw(st.lists(st.sampled_from([*TOPICS, "9"]), min_size=1, max_size=5, unique=True))
    for topic in topics:
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=12, unique=True))
        if ties:
            scores = draw(st.lists(st.sampled_from([1.0, 2.0, 3.0, 4.5]), min_size=len(docs), max_size=len(docs)))
        else:  # distinct positive scores: providers that order ties their own way agree
            scores = [float(len(docs) - i) + 0.25 for i in range(len(docs))]
        run += [(topic, doc, score) for doc, score in zip(docs, scores, strict=True)]
    return qrels, run


# One in-memory warehouse for every example (its schema costs about 0.2 CPU s to apply, more
# than an example's ingest and evaluation): each call ingests into a collection of its own.
_SHARED: list[Warehouse] = []
_CALLS = itertools.count()


def _fresh_collection(qrels, run) -> tuple[Warehouse, str]:
    """The shared warehouse, with these qrels and this run (run id r) in a new collection."""
    if not _SHARED:
        _SHARED.append(Warehouse(":memory:"))
    wh, collection = _SHARED[0], f"c{next(_CALLS)}"
    qrels_frame = pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"])
    wh.ingest_qrels(qrels_frame, collection=collection)
    run_frame = pd.DataFrame(run, columns=["query_id", "doc_id", "score"])
    wh.ingest_runs(run_frame, collection=collection, run_id="r")
    return wh, collection


def evalwh_values(qrels, run, specs):
    """Per-topic values {(spec, topic): value} over every qrels topic (trec_eval -c)."""
    wh, collection = _fresh_collection(qrels, run)
    frame = wh.evaluate(
        specs, collection=collection, per_query=True, averaging="trec_eval_c", typed_names=True
    )
    return {(m, q): v for m, q, v in frame[["measure", "query_id", "value"]].itertuples(index=False)}


def reference_values(qrels, run, specs):
    """ir_measures' per-topic values {(spec, topic): value}."""
    measures = {spec: ir_measures.parse_measure(spec) for spec in specs}
    qrels_frame = pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"])
    run_frame = pd.DataFrame(run, columns=["query_id", "doc_id", "score"])
    by_measure = {m: spec for spec, m in measures.items()}
    out = {}
    for metric in ir_measures.iter_calc(list(measures.values()), qrels_frame, run_frame):
        out[(by_measure[metric.measure], metric.query_id)] = metric.value
    return out


def compare(qrels, run, specs, tolerance=1e-9, ours=None):
    """Every per-topic value ir_measures reports for specs, against evalwh's.

    ours: evalwh's values when the caller evaluated these specs already, with others, in one
    call (each example's ingest and evaluation cost more than ir_measures' own).
    """
    ours = evalwh_values(qrels, run, specs) if ours is None else ours
    theirs = reference_values(qrels, run, specs)
    assert theirs or not {q for q, _, _ in run} & {q for q, _, _ in qrels}
    for key, value in theirs.items():
        assert key in ours, key
        assert ours[key] == pytest.approx(value, abs=tolerance), (key, ours[key], value)


# 12 examples: each costs an ingest and an evaluation (about 0.3 CPU s), and in 12 every case
# the docstring lists is drawn: over 30 seeds, 12 examples of collections() (with and without
# top_grade) always held grades -1, 0, 1, 2 and 3, score ties, a run topic the qrels lack, a
# qrels topic the run lacks, a run shorter than 3 and one longer than 5, an unjudged retrieved
# document and a topic whose retrieved documents are all unjudged (25 examples drew no more).
SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(collections(top_grade=True))
def test_threshold_and_condensing_options(data):
    """rel= and judged_only= per measure, through pytrec_eval (trec_eval semantics)."""
    qrels, run = data
    specs = [
        "P(rel=2)@5",
        "P@5",
        "AP(rel=2)",
        "RR(rel=3)",
        "Rprec(rel=2)",
        "R@5",
        "nDCG@5",
        "Success(rel=2)@3",
        "Bpref(rel=2)",
        "NumRelRet(rel=2)",
    ]
    # judged_only=True is trec_eval -J: the run without its unjudged documents (pytrec_eval's
    # own -J path hangs on some inputs, so the reference is ir_measures on the condensed run)
    condensed_specs = ["AP(judged_only=True)", "P(judged_only=True)@3", "nDCG(judged_only=True)", "RR(rel=2,judged_only=True)"]
    ours = evalwh_values(qrels, run, specs + condensed_specs)  # one ingest, one evaluation
    compare(qrels, run, specs, ours=ours)
    judged = {(q, d) for q, d, g in qrels if g >= 0}
    condensed = [row for row in run if (row[0], row[1]) in judged]
    plain = [s.replace("judged_only=True", "").replace(",)", ")").replace("()", "") for s in condensed_specs]
    theirs = reference_values(qrels, condensed, plain) if condensed else {}  # (pytrec_eval crashes on no run)
    for spec, bare in zip(condensed_specs, plain, strict=True):
        for topic in {q for q, _, _ in qrels}:
            expected = theirs.get((bare, topic), 0.0)  # a topic left empty scores 0
            assert ours[(spec, topic)] == pytest.approx(expected, abs=1e-9), (spec, topic)


@SETTINGS
@given(collections(grades=(-1, 0, 1, 2, 3), top_grade=True))
def test_ndcg_gain_maps(data):
    qrels, run = data
    compare(qrels, run, ["nDCG(gains={0:0,1:1,2:3})", "nDCG(gains={0:1,1:2,2:5,3:7})@5", "nDCG(gains={2:0})@3"])


def gdeval_err(gains: list[float], k: int) -> float:
    """gdeval.pl's ERR@k of a ranked list of grades (a grade <= 0 or unjudged is 0)."""
    score, decay = 0.0, 1.0
    for i, g in enumerate(gains[:k]):
        r = (2 ** max(g, 0) - 1) / 2**4
        score += r * decay / (i + 1)
        decay *= 1 - r
    return score


@SETTINGS
@given(collections(grades=(-1, 0, 1, 2, 3, 4)))
def test_err_and_exp_ndcg_against_gdeval(data):
    qrels, run = data
    ours = evalwh_values(qrels, run, ["ERR@5", "ERR@20", "nDCG(dcg='exp-log2')@5", "ERR"])
    compare(qrels, run, ["ERR@5", "ERR@20", "nDCG(dcg='exp-log2')@5"], tolerance=5.1e-6, ours=ours)
    # and to 1e-9 against gdeval's formula, in trec_eval's order (score, then doc_id descending)
    grade = {(q, d): g for q, d, g in qrels}
    ranked = sorted(run, key=lambda r: (r[2], r[1].encode()), reverse=True)
    for topic in {q for q, _, _ in qrels}:
        gains = [grade.get((topic, d), 0) for q, d, _ in ranked if q == topic]
        assert ours[("ERR@5", topic)] == pytest.approx(gdeval_err(gains, 5), abs=1e-12)
        assert ours[("ERR", topic)] == pytest.approx(gdeval_err(gains, 10**6), abs=1e-12)


@SETTINGS
@given(collections(ties=False))
def test_judged_compat_sdcg_rbp(data):
    """Providers that order score ties their own way: distinct scores (see docs/measures.md)."""
    qrels, run = data
    # ir_measures counts a negative grade as judged; evalwh (as trec_eval) as unjudged
    judged = [(q, d, g) for q, d, g in qrels if g >= 0] or [("1", "d0", 0)]
    specs = [
        "Judged@5",
        "Judged",
        "Compat",
        "Compat(p=0.8)",
        "Compat(p=0.8,normalize=False)",
        "SDCG(max_rel=3)@5",
        "SDCG(max_rel=3,min_rel=1)@10",
        "RBP(rel=2)",
        "RBP(p=0.5,rel=1)",
    ]
    compare(judged, run, specs)


def test_judged_is_not_a_p():
    """Judged@k is ir_measures' (divisor min(k, m)); A_p@k keeps evalwh's divisor k."""
    qrels = [("1", "a", 1), ("1", "b", 0)]
    run = [("1", "a", 2.0), ("1", "b", 1.0)]
    ours = evalwh_values(qrels, run, ["Judged@10", "A_p@10"])
    assert ours[("Judged@10", "1")] == 1.0
    assert ours[("A_p@10", "1")] == 0.2
    assert catalog.parse("Judged@10").name == "Judged@10"


def test_rbp_graded_gains():
    """gain=max: grade / the qrels set's top grade; gain=trec_eval: / the topic's top grade."""
    qrels = [("1", "a", 2), ("1", "b", 1), ("2", "c", 4), ("2", "d", 0), ("3", "e", 1)]
    run = [("1", "a", 3.0), ("1", "x", 2.0), ("1", "b", 1.0), ("2", "d", 2.0), ("2", "c", 1.0), ("3", "e", 1.0)]
    ours = evalwh_values(qrels, run, ["RBP(p=0.5,gain=max)", "RBP(p=0.5,gain=trec_eval)", "RBP(p=0.5)"])
    assert ours[("RBP(p=0.5,gain=max)", "1")] == pytest.approx(0.5 * (2 / 4 + 0.25 * 1 / 4))
    assert ours[("RBP(p=0.5,gain=trec_eval)", "1")] == pytest.approx(0.5 * (2 / 2 + 0.25 * 1 / 2))
    assert ours[("RBP(p=0.5,gain=max)", "2")] == pytest.approx(0.5 * 0.5 * 4 / 4)
    assert ours[("RBP(p=0.5,gain=trec_eval)", "3")] == pytest.approx(0.5)  # top grade 1: as is
    assert ours[("RBP(p=0.5)", "1")] == pytest.approx(0.5 * (1 + 0.25))


def test_fractional_grades():
    """A fractional grade is stored as given: binary measures read grade >= rel, gain measures the grade."""
    qrels = [("1", "a", 0.5), ("1", "b", 1.5), ("1", "c", 2.0)]
    run = [("1", "a", 3.0), ("1", "b", 2.0), ("1", "c", 1.0)]
    ours = evalwh_values(qrels, run, ["P@3", "P(rel=1.5)@3", "nDCG", "RBP(p=0.5,gain=max)"])
    assert ours[("P@3", "1")] == pytest.approx(2 / 3)
    assert ours[("P(rel=1.5)@3", "1")] == pytest.approx(2 / 3)
    dcg = 0.5 / 1 + 1.5 / math.log2(3) + 2.0 / 2
    ideal = 2.0 / 1 + 1.5 / math.log2(3) + 0.5 / 2
    assert ours[("nDCG", "1")] == pytest.approx(dcg / ideal)
    assert ours[("RBP(p=0.5,gain=max)", "1")] == pytest.approx(0.5 * (0.25 + 0.5 * 0.75 + 0.25 * 1.0))


def test_integer_warehouse_upgrades_to_float_grades(tmp_path):
    """A warehouse made before schema/012 (integer grades, results by name) opens, upgrades and evaluates."""
    import duckdb
    import pytrec_eval

    from evalwh import sql

    qrels = [("1", "a", 2), ("1", "b", 0), ("1", "c", 1), ("2", "a", 1), ("2", "d", -1)]
    run = [("1", "a", 1.0), ("1", "c", 3.0), ("1", "x", 2.0), ("2", "d", 2.0), ("2", "a", 1.0)]
    path = tmp_path / "old.duckdb"
    # as an evalwh of schema 011 left it: its migrations, its tables filled as its ingest did
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE schema_migrations (name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)")
    for name, file in sql.load_package("evalwh.schema").items():
        if name < "012":
            con.execute(file.text)
            con.execute("INSERT INTO schema_migrations (name) VALUES (?)", [name])
    con.execute("INSERT INTO collections (collection_id) VALUES ('c')")
    con.execute("INSERT INTO qrels_sets (collection_id, qrels_id, kind, sha256) VALUES ('c', 'default', 'ingested', '')")
    con.executemany("INSERT INTO qrels VALUES ('c', 'default', ?, '0', ?, ?)", qrels)
    con.execute("INSERT INTO runs (collection_id, run_id, source_file, sha256, line_count) VALUES ('c', 'r', 'r', 'x', 5)")
    con.execute("CREATE TEMP TABLE lines (collection_id VARCHAR, run_id VARCHAR, query_id VARCHAR, doc_id VARCHAR, score DOUBLE)")
    con.executemany("INSERT INTO lines VALUES ('c', 'r', ?, ?, ?)", run)
    con.execute(
        "INSERT INTO run_results SELECT collection_id, run_id, query_id, doc_id, score, CAST(rank AS VARCHAR), rank"
        " FROM trec_ranked('lines', false)"
    )
    con.execute("INSERT INTO run_topics SELECT 'c', 'r', query_id, count(*) FROM lines GROUP BY query_id")
    assert con.execute("SELECT typeof(relevance) FROM qrels LIMIT 1").fetchone()[0] == "INTEGER"
    con.close()
    with Warehouse(path) as wh:
        assert wh.con.execute("SELECT typeof(relevance) FROM qrels LIMIT 1").fetchone()[0] == "DOUBLE"
        after = wh.evaluate(["AP", "nDCG", "P@2"], collection="c", per_query=True)
    with Warehouse(":memory:") as fresh:
        fresh.ingest_qrels(pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]), collection="c")
        fresh.ingest_runs(pd.DataFrame(run, columns=["query_id", "doc_id", "score"]), collection="c", run_id="r")
        before = fresh.evaluate(["AP", "nDCG", "P@2"], collection="c", per_query=True)
    assert after["value"].tolist() == before["value"].tolist()
    evaluator = pytrec_eval.RelevanceEvaluator(
        {q: {d: g for qq, d, g in qrels if qq == q} for q in ("1", "2")}, {"map", "ndcg", "P_2"}
    )
    expected = evaluator.evaluate({q: {d: s for qq, d, s in run if qq == q} for q in ("1", "2")})
    name = {"AP": "map", "nDCG": "ndcg", "P@2": "P_2"}
    for row in after.itertuples(index=False):
        assert row.value == pytest.approx(expected[row.query_id][name[row.measure]], abs=1e-12)


def test_fractional_grades_in_files(tmp_path):
    """A qrels file with fractional grades: stored as given, the direct path agrees with the warehouse."""
    from evalwh.measures.direct import evaluate_files

    (tmp_path / "qrels").write_text("1 0 a 0.5\n1 0 b 1.75\n1 0 c 2\n1 0 d -1\n")
    (tmp_path / "run").write_text("1 Q0 a 1 3.0 r\n1 Q0 b 2 2.0 r\n1 Q0 c 3 1.0 r\n")
    specs = ["P(rel=1.5)@3", "nDCG", "ERR", "RBP(p=0.5,gain=max)"]
    direct = evaluate_files(tmp_path / "qrels", [tmp_path / "run"], specs, typed_names=True)
    with Warehouse(":memory:") as wh:
        wh.ingest_qrels(tmp_path / "qrels", collection="c")
        grades = sorted(r[0] for r in wh.con.execute("SELECT relevance FROM qrels").fetchall())
        assert grades == [-1.0, 0.5, 1.75, 2.0]
        wh.ingest_runs(tmp_path / "run", collection="c")
        stored = wh.evaluate(specs, collection="c", typed_names=True)
    assert direct["measure"].tolist() == specs
    assert direct["value"].tolist() == pytest.approx(stored["value"].tolist(), abs=1e-12)
    ideal = 2 / 1 + 1.75 / math.log2(3) + 0.5 / 2
    assert direct["value"].tolist()[:2] == pytest.approx([2 / 3, (0.5 + 1.75 / math.log2(3) + 2 / 2) / ideal])
    r = [(2**g - 1) / 16 for g in (0.5, 1.75, 2.0)]
    err = r[0] + (1 - r[0]) * r[1] / 2 + (1 - r[0]) * (1 - r[1]) * r[2] / 3
    assert direct["value"].tolist()[2] == pytest.approx(err, abs=1e-12)


@SETTINGS
@given(collections(top_grade=True))
def test_trec_eval_measures_under_ir_measures_names(data):
    """SetP, SetR, SetF, SetAP, IPrec, infAP, Success: aliases of evalwh's trec_eval measures.

    And NumQ: 1 per topic the run answered (0 for one it lacks), summed, as ir_measures counts
    (on the same collection: an example's ingest costs more than its evaluations).
    """
    qrels, run = data
    specs = [
        "SetP",
        "SetP(rel=2)",
        "SetP(relative=True)",
        "SetR",
        "SetF",
        "SetF(beta=0.5)",
        "SetAP",
        "SetAP(rel=3)",
        "IPrec@0.5",
        "IPrec@0.0",
        "infAP",
        "Success@3",
        "Success(rel=3)@1",
        "NumQ",
    ]
    wh, collection = _fresh_collection(qrels, run)
    frame = wh.evaluate(specs, collection=collection, per_query=True, averaging="trec_eval_c", typed_names=True)
    ours = {(m, q): v for m, q, v in frame[["measure", "query_id", "value"]].itertuples(index=False)}
    compare(qrels, run, specs, ours=ours)
    means = wh.evaluate(["NumQ"], collection=collection, averaging="trec_eval_c")
    assert means["value"].tolist() == [float(len({q for q, _, _ in qrels} & {q for q, _, _ in run}))]


def test_trec_eval_truncates_fractional_grades(tmp_path):
    """evalwh trec_eval reads a grade as trec_eval's atol does: 2.75 is 2, 0.5 and -0.5 are 0."""
    from typer.testing import CliRunner

    from evalwh.cli import app

    (tmp_path / "fractional").write_text("1 0 a 2.75\n1 0 b 0.5\n1 0 c 1\n1 0 d -0.5\n")
    (tmp_path / "truncated").write_text("1 0 a 2\n1 0 b 0\n1 0 c 1\n1 0 d 0\n")
    (tmp_path / "run").write_text("1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 c 3 1 r\n1 Q0 d 4 0.5 r\n")
    outputs = [
        CliRunner().invoke(app, ["trec_eval", "-q", "-m", "all_trec", str(tmp_path / q), str(tmp_path / "run")])
        for q in ("fractional", "truncated")
    ]
    assert all(o.exit_code == 0 for o in outputs), outputs[0].output
    assert outputs[0].stdout == outputs[1].stdout
