"""Judging budgets (issue 39): ordered pools, judging tasks, LLM probabilities, replays, people + LLM.

The hand-made case (one topic, three runs, lambda = 3):

    r1 = a b c      r2 = d b e      r3 = f b g       relevant: a, c, e

depth order (best rank, then members holding it, then id): a d f | b | c e g. RRF and RBP put
b (rank 2 in all three runs) first. Move-to-front with the queue r1, r2, r3 (seed 0): r1
gives a (relevant, stays at the head), b (not: to the back); r2 gives d (not), r3 f (not);
r1 gives c, r2 e, r3 g. The bandit (seed 0, same first order) takes the same path here; with
seed 2 (queue r3, r2, r1) the two differ after four judgments (methods §5.5).
"""

from __future__ import annotations

import base64
import html as html_text
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from evalwh import Warehouse
from evalwh.cli import app
from evalwh.errors import EvalWhError, IngestError
from evalwh.io.probabilities import parse_probabilities
from evalwh.io.texts import read_texts
from evalwh.methods import budget
from evalwh.methods.budget.candidates import candidate_order
from evalwh.methods.budget.order import apply_budget

RUNS = {"r1": "abc", "r2": "dbe", "r3": "fbg"}
ENV = {"COLUMNS": "200", "TERMINAL_WIDTH": "200"}


@pytest.fixture(scope="module")
def hand() -> Warehouse:
    """The hand-made case, read only."""
    return _hand()


def _hand() -> Warehouse:
    wh = Warehouse(":memory:")
    wh.ingest_qrels(
        pd.DataFrame({"query_id": ["1"] * 7, "doc_id": list("abcdefg"), "relevance": [1, 0, 1, 0, 1, 0, 0]}),
        collection="h",
    )
    rows = [(r, "1", d, 10.0 - i) for r, docs in RUNS.items() for i, d in enumerate(docs)]
    wh.ingest_runs(pd.DataFrame(rows, columns=["run_id", "query_id", "doc_id", "score"]), collection="h")
    return wh


def _order(wh: Warehouse, strategy: str, seed: int | None = None) -> str:
    o = candidate_order(wh, "h", list(RUNS), depth=3, qrels_id="default", strategy=strategy, seed=seed)
    return "".join(o.sort_values("topic_order")["doc_id"])


@pytest.mark.parametrize(
    ("strategy", "seed", "expected"),
    [
        ("depth", None, "adfbceg"),
        ("take", None, "adfbceg"),
        ("rrf", None, "badfceg"),
        ("rbp", None, "badfceg"),
        ("mtf", 0, "abdfceg"),
        ("bandit", 0, "abdfceg"),
        ("mtf", 2, "fdabgec"),
        ("bandit", 2, "fdabcge"),
    ],
)
def test_hand_made_orders(hand: Warehouse, strategy: str, seed: int | None, expected: str) -> None:
    assert _order(hand, strategy, seed) == expected


def test_documents_of_the_same_ranks_weigh_the_same_to_the_last_bit() -> None:
    """x and y have the same ranks in other runs: (1, 2, 7) and (7, 1, 2) for RRF, u and v
    (1, 2, 17) and (17, 1, 2) for RBP. Added in the order the rows come, the sums differ in
    the last bit (1/61 + 1/62 + 1/67 != 1/67 + 1/61 + 1/62 in doubles), and a tie would be
    broken by noise; summed in rank order they are equal, and the doc id breaks the tie."""
    k, p = 60.0, 0.8
    assert (1 / (k + 1) + 1 / (k + 2)) + 1 / (k + 7) != (1 / (k + 7) + 1 / (k + 1)) + 1 / (k + 2)
    assert ((1 - p) + (1 - p) * p) + (1 - p) * p**16 != ((1 - p) * p**16 + (1 - p)) + (1 - p) * p
    placed = {  # topic -> run -> {rank: document}; every other place holds a document of its own
        "1": {"r1": {1: "x", 7: "y"}, "r2": {2: "x", 1: "y"}, "r3": {7: "x", 2: "y"}},
        "2": {"r1": {1: "u", 17: "v"}, "r2": {2: "u", 1: "v"}, "r3": {17: "u", 2: "v"}},
    }
    rows = [
        (run, topic, docs.get(rank, f"{run}-{topic}-{rank}"), 100.0 - rank)
        for topic, runs in placed.items()
        for run, docs in runs.items()
        for rank in range(1, 18)
    ]
    with Warehouse(":memory:") as wh:
        wh.ingest_qrels(pd.DataFrame({"query_id": ["1", "2"], "doc_id": ["x", "u"], "relevance": [1, 1]}), collection="c")
        wh.ingest_runs(pd.DataFrame(rows, columns=["run_id", "query_id", "doc_id", "score"]), collection="c")
        for strategy, first, second in (("rrf", "x", "y"), ("rbp", "u", "v")):
            order = candidate_order(wh, "c", ["r1", "r2", "r3"], depth=17, qrels_id="default", strategy=strategy)
            weight = order.set_index("doc_id")["weight"]
            assert weight[first] == weight[second], strategy
            placed_at = order.set_index("doc_id")["topic_order"]
            assert (placed_at[first], placed_at[second]) == (1, 2), strategy


def test_weights_and_random_order(hand: Warehouse) -> None:
    wh = hand
    rbp = candidate_order(wh, "h", list(RUNS), depth=3, qrels_id="default", strategy="rbp", rbp_p=0.5)
    weights = dict(zip(rbp["doc_id"], rbp["weight"], strict=True))
    assert weights["b"] == pytest.approx(3 * 0.5 * 0.5) and weights["a"] == pytest.approx(0.5)
    rrf = candidate_order(wh, "h", list(RUNS), depth=3, qrels_id="default", strategy="rrf", rrf_k=60)
    assert dict(zip(rrf["doc_id"], rrf["weight"], strict=True))["b"] == pytest.approx(3 / 62)
    first, again, other = (_order(wh, "random", s) for s in (5, 5, 6))
    assert first == again and sorted(first) == list("abcdefg") and first != other


def test_budgets_per_topic_and_in_total() -> None:
    order = pd.DataFrame({
        "query_id": ["1", "2", "1", "2", "1"], "doc_id": list("abcde"), "topic_order": [1, 1, 2, 2, 3],
        "overall_order": [1, 2, 3, 4, 5], "weight": [np.nan] * 5,
    })  # fmt: skip
    assert apply_budget(order, 2, "topic")["doc_id"].tolist() == ["a", "b", "c", "d"]
    kept = apply_budget(order, 3, "total")
    assert kept["doc_id"].tolist() == ["a", "b", "c"] and kept["overall_order"].tolist() == [1, 2, 3]
    with pytest.raises(EvalWhError, match="budget must be a positive"):
        apply_budget(order, 0, "total")
    assert budget.parse_budgets(["10%", "50%", 3], 100, 4, "total") == [3, 10, 50]
    # per topic a share is of each topic's candidates (equal topics without their sizes), summed
    assert budget.parse_budgets(["10%"], 100, 4, "topic") == [12]
    assert budget.parse_budgets(["10%"], 100, 4, "topic", [10, 20, 30, 40]) == [10]
    with pytest.raises(EvalWhError, match="neither a share"):
        budget.parse_budgets(["150%"], 100, 4, "total")


def test_build_pool_stores_order_and_qrels() -> None:
    wh = _hand()
    row = wh.build_pool(collection="h", depth=3, runs=list(RUNS), strategy="mtf", budget=4, seed=0).iloc[0]
    assert (row["pool_id"], row["strategy"], int(row["budget"]), row["budget_scope"], int(row["seed"])) == (
        "mtf4topic-pool3-listd810bda8-seed0", "mtf", 4, "topic", 0,
    )
    assert (int(row["pooled"]), int(row["relevant"])) == (4, 1)
    order = wh.pool_order("mtf4topic-pool3-listd810bda8-seed0", collection="h")
    assert order["doc_id"].tolist() == list("abdf") and order["topic_order"].tolist() == [1, 2, 3, 4]
    qrels = wh.con.execute(
        "SELECT doc_id, relevance FROM qrels WHERE collection_id = 'h' AND qrels_id = 'mtf4topic-pool3-listd810bda8-seed0' ORDER BY doc_id"
    ).fetchall()
    assert qrels == [("a", 1.0), ("b", 0.0), ("d", 0.0), ("f", 0.0)]
    depth = wh.build_pool(collection="h", depth=3, runs=list(RUNS)).iloc[0]
    assert (depth["strategy"], int(depth["pooled"])) == ("depth", 7)
    with pytest.raises(EvalWhError, match="use --strategy take"):
        wh.build_pool(collection="h", depth=3, runs=list(RUNS), budget=2)
    with pytest.raises(EvalWhError, match="unknown strategy 'mft'; use one of depth, take, mtf"):
        wh.build_pool(collection="h", depth=3, runs=list(RUNS), strategy="mft")
    # a failed build leaves the pools as they were
    assert wh.pools(collection="h")["pool_id"].tolist() == ["mtf4topic-pool3-listd810bda8-seed0", "pool3-listd810bda8"]


def test_export_tasks_and_lara_round_trip(tmp_path: Path) -> None:
    wh = _hand()
    wh.build_pool(collection="h", depth=3, runs=list(RUNS), strategy="rrf", pool_id="P")
    topics = tmp_path / "topics.tsv"
    topics.write_text("1\tforeign minorities\tGermany\n")
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"docid": d, "text": f"text of {d}\nline 2"}) + "\n" for d in "abcdefg"))
    out = tmp_path / "tasks.jsonl"
    assert wh.export_pool("P", out, collection="h", topics=str(topics), documents=str(docs)) == 7
    tasks = [json.loads(line) for line in out.read_text().splitlines()]
    assert tasks[0] == {
        "qid": "1", "docid": "b", "order": 1, "topic_order": 1, "query": "foreign minorities\tGermany",
        "passage": "text of b\nline 2",
    }  # fmt: skip
    tsv = tmp_path / "tasks.tsv"
    wh.export_pool("P", tsv, collection="h", fmt="tsv", topics=str(topics), documents=str(docs))
    lines = tsv.read_text().splitlines()
    assert lines[0] == "query_id\tdoc_id\torder\ttopic_order\tquery\tpassage"
    assert lines[1] == "1\tb\t1\t1\tforeign minorities Germany\ttext of b line 2"
    # labels back: a judge's probabilities for exactly these tasks, LARA's CSV
    truth = wh.df("SELECT query_id, doc_id, relevance FROM qrels WHERE qrels_id = 'P' ORDER BY doc_id")
    lara = tmp_path / "llm.csv"
    budget.simulated_judge(truth, bias=1.0, seed=3).to_csv(lara, index=False)
    wh.ingest_qrels(lara, collection="h", qrels_id="llm", source="llm", model="sim")
    back = wh.df(
        "SELECT query_id, doc_id, probs, prob_relevant FROM judgment_probabilities WHERE qrels_id = 'llm' ORDER BY doc_id"
    )
    expected = pd.read_csv(lara, dtype={"topic_id": str})
    assert back["doc_id"].tolist() == [t["docid"] for t in sorted(tasks, key=lambda t: t["docid"])]
    np.testing.assert_allclose(back["prob_relevant"], expected["prob_yes"] / (expected["prob_yes"] + expected["prob_no"]))
    assert [list(p) for p in back["probs"]] == expected[["prob_no", "prob_yes"]].values.tolist()
    source = wh.con.execute("SELECT source, model FROM qrels_sets WHERE qrels_id = 'llm'").fetchall()
    assert source == [("llm", "sim")]
    # a pooled document without a text: one line naming the file, nothing written
    docs.write_text(json.dumps({"docid": "a", "text": "x"}) + "\n")
    with pytest.raises(IngestError, match=r"docs.jsonl: no text for 6 pooled document\(s\), e.g. 'b'"):
        wh.export_pool("P", tmp_path / "none.jsonl", collection="h", documents=str(docs))
    assert not (tmp_path / "none.jsonl").exists()


HEADER = "topic_id,doc_id,annotation,prob_yes,prob_no\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (HEADER + "1,d1,1,0.6,0.3\n1,d1,0,0.1,0.9\n", "x.csv:3: document 'd1' is given twice for topic '1' (first on line 2)"),
        (HEADER + "1,d1,1,0.6\n", "x.csv:2: expected 5 comma-separated fields, found 4"),
        (HEADER + "\n1,d 1,1,0.6,0.3\n", "x.csv:3: the document id 'd 1' holds whitespace"),
        (HEADER + "1,d1,yes,0.6,0.3\n", "x.csv:2: annotation 'yes' is not a number"),
        (HEADER + "1,d1,1,1.6,0.3\n", "x.csv:2: probability 1.6 is outside [0, 1]"),
        (HEADER + "1,d1,1,0.8,0.3\n", "x.csv:2: the probabilities sum to 1.1"),
        (HEADER + "1,d1,1,0,0\n", "x.csv:2: the probabilities sum to 0.0"),
        ("topic_id,doc_id,annotation,prob_1,prob_2\n", "x.csv:1: probability columns prob_1,prob_2"),
        (HEADER, "x.csv: the file holds a header but no rows"),
    ],
)
def test_probability_reader_errors(text: str, message: str) -> None:
    with pytest.raises(IngestError) as error:
        parse_probabilities(text.encode(), "x.csv")
    assert str(error.value).startswith(message)


def test_graded_probabilities() -> None:
    rows = parse_probabilities(b"qid,doc_id,annotation,prob_0,prob_1,prob_2\n7,d,2,0.25,0.25,0.5\n", "g.csv")
    assert (rows.probs, rows.prob_relevant, rows.annotation) == ([[0.25, 0.25, 0.5]], [0.75], [2.0])


_ids = st.text(alphabet="abcdefgh0123456789", min_size=1, max_size=5)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_ids, _ids, st.floats(0, 1)), min_size=1, max_size=20, unique_by=lambda r: (r[0], r[1])))
def test_probability_reader_round_trips(rows: list[tuple[str, str, float]]) -> None:
    text = HEADER + "".join(f"{q},{d},{int(p >= 0.5)},{p!r},{1 - p!r}\n" for q, d, p in rows)
    parsed = parse_probabilities(text.encode(), "h.csv")
    assert parsed.query_id == [r[0] for r in rows] and parsed.doc_id == [r[1] for r in rows]
    np.testing.assert_allclose(parsed.prob_relevant, [p for _, _, p in rows], atol=1e-12)
    assert parsed.line == list(range(2, len(rows) + 2))


@settings(max_examples=80, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=60))
def test_probability_reader_refuses_garbage_with_a_line(body: str) -> None:
    try:
        parse_probabilities((HEADER + body).encode(), "g.csv")
    except IngestError as error:
        assert str(error).startswith("g.csv")


def test_text_files(tmp_path: Path) -> None:
    bad = tmp_path / "t.tsv"
    bad.write_text("1\tone\n1\tagain\n")
    with pytest.raises(IngestError, match=r"t.tsv:2: id '1' is given twice \(first on line 1\)"):
        read_texts(bad)
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text('{"qid": 401, "title": "a topic"}\n{"qid": 402}\n')
    with pytest.raises(IngestError, match=r"t.jsonl:2: id '402' has no text"):
        read_texts(jsonl)


def _synthetic(n_topics: int = 5, n_runs: int = 5, depth: int = 20, seed: int = 1) -> Warehouse:
    """Runs of graded quality over a synthetic collection: run i finds relevant documents at rate ~ i."""
    rng = np.random.default_rng(seed)
    wh = Warehouse(":memory:")
    qrels, rows = [], []
    for t in range(n_topics):
        docs = [f"d{t}-{j}" for j in range(60)]
        relevant = set(docs[:12])
        qrels += [(str(t), d, int(d in relevant)) for d in docs]
        for r in range(n_runs):
            weight = np.where(np.isin(docs, list(relevant)), 1.0 + 2.0 * r, 1.0)
            ranked = rng.choice(docs, size=depth, replace=False, p=weight / weight.sum())
            rows += [(f"run{r}", str(t), d, float(depth - k)) for k, d in enumerate(ranked)]
    wh.ingest_qrels(pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]), collection="s")
    wh.ingest_runs(pd.DataFrame(rows, columns=["run_id", "query_id", "doc_id", "score"]), collection="s")
    return wh


def test_replay_small_collection() -> None:
    wh = _synthetic()
    rows = wh.budget(collection="s", strategies=["depth", "rrf", "bandit"], budgets=["25%", "100%"],
                     runs_from="all", depth=20, seeds=[0, 1], experiment_id="e")  # fmt: skip
    assert rows.groupby("strategy").size().to_dict() == {"bandit": 4, "depth": 2, "rrf": 2}
    full = rows[rows["budget_share"] == 1.0]
    # the whole pool judged: the leaderboard is the reference's
    np.testing.assert_allclose(full[["kendall_tau_b", "tau_ap", "significant_kept"]].to_numpy(dtype=float), 1.0)
    members = wh.run_ids("s")
    pool_relevant = int(candidate_order(wh, "s", members, depth=20, qrels_id="default", strategy="depth")["relevant"].sum())
    assert (full["relevant_found"] == pool_relevant).all()
    # relevant found at 25 % is what the order's first quarter holds
    order = candidate_order(wh, "s", members, depth=20, qrels_id="default", strategy="rrf")
    quarter = rows[(rows["strategy"] == "rrf") & (rows["budget_share"] < 1)].iloc[0]
    assert int(quarter["relevant_found"]) == int(apply_budget(order, int(quarter["budget"]), "total")["relevant"].sum())
    stored = budget.stored_results(wh, "s", "e")
    assert len(stored) == len(rows) and set(stored["kind"]) == {"replay"}
    # the seeds are stored with the parameters
    params = json.loads(wh.con.execute("SELECT params FROM budget_experiments WHERE experiment_id = 'e'").fetchone()[0])
    assert params["seeds"] == [0, 1]
    # the report shows the stored experiment: a figure whose caption is the table (read from
    # the report's HTML, where budget_figures drew it, instead of drawing it a second time)
    from evalwh.present.report.budget import budget_table

    table = budget_table(wh, "s")
    assert table["seeds"].tolist() == [2, 1, 1, 2, 1, 1] and set(table["experiment_id"]) == {"e"}
    html = wh.report(None, collection="s", measures=["AP"], bounds=False)
    figures = re.findall(
        r'<figure id="figure-(budget-[^"]*)"[^>]*><img alt="([^"]*)" src="data:image/svg\+xml;base64,([^"]*)">'
        r'<figcaption><b>[^<]*</b><span class="caption">([^<]*)</span>',
        html,
    )
    ((key, title, svg, caption),) = figures
    assert (key, title) == ("budget-e", "Judging budget: e")
    assert base64.b64decode(svg).decode().lstrip().startswith("<?xml")
    bandit = table[(table["strategy"] == "bandit") & (table["budget_share"] == 1.0)].iloc[0]
    expected = f"bandit at {int(bandit['budget'])} judgments: relevant {bandit['relevant_share']:.3f}"
    assert expected in html_text.unescape(caption)


def test_calibration_removes_a_known_bias() -> None:
    rng = np.random.default_rng(0)
    truth = (rng.random(4000) < 0.3).astype(float)
    judge = budget.simulated_judge(
        pd.DataFrame({"query_id": "1", "doc_id": [f"d{i}" for i in range(4000)], "relevance": truth}), bias=2.5, seed=1
    )
    prob = judge["prob_yes"].to_numpy()
    raw_error = np.mean((prob >= 0.5) != truth)
    for method in ("isotonic", "logistic"):
        f = budget.calibrate(prob[:800], truth[:800], method)
        assert np.mean((f(prob[800:]) >= 0.5) != truth[800:]) < raw_error / 2
    with pytest.raises(Exception, match="need both relevant and non-relevant"):
        budget.calibrate(np.array([0.2, 0.9]), np.array([1.0, 1.0]))


def test_isotonic_calibration_with_tied_probabilities_in_any_row_order() -> None:
    """Issue 53, item 6: tied probabilities are averaged before the fit, as scikit-learn does.

    p = [0.5, 0.5, 0.7, 0.7], y = [0, 1, 0, 1] gave f(0.7) = 0.5, f(0.5) = 0.0 in this order
    and 0.5, 0.5 reversed; scikit-learn gives 0.5 and 0.5 in both.
    """
    from sklearn.isotonic import IsotonicRegression

    p, y = np.array([0.5, 0.5, 0.7, 0.7]), np.array([0.0, 1.0, 0.0, 1.0])
    for order in (np.arange(4), np.arange(4)[::-1]):
        assert budget.calibrate(p[order], y[order])(np.array([0.5, 0.7])).tolist() == [0.5, 0.5]
    rng = np.random.default_rng(53)
    grid = np.linspace(0.0, 1.0, 201)
    for case in range(30):
        n = int(rng.integers(20, 400))
        coarse = rng.choice(np.round(np.linspace(0.05, 0.95, int(rng.integers(2, 8))), 2), size=n)  # few levels
        labels = (rng.random(n) < coarse ** rng.uniform(0.3, 3.0)).astype(float)
        labels[:2] = [0.0, 1.0]
        reference = IsotonicRegression(out_of_bounds="clip").fit(coarse, labels).predict(grid)
        for _ in range(3):
            order = rng.permutation(n)
            fitted = budget.calibrate(coarse[order], labels[order])(grid)
            np.testing.assert_allclose(fitted, reference, atol=1e-12, err_msg=f"case {case}")


def test_hybrid_small_collection_stores_both_sets() -> None:
    wh = _synthetic(seed=2)
    truth = wh.df("SELECT query_id, doc_id, relevance FROM qrels WHERE qrels_id = 'default'")
    frame = budget.simulated_judge(truth, bias=2.5, seed=4)
    wh.con.execute("BEGIN")
    from evalwh.store.ingest.qrels import Provenance, _ingest_qrels

    _ingest_qrels(wh, frame.rename(columns={"topic_id": "query_id", "annotation": "relevance"})[
        ["query_id", "doc_id", "relevance"]], "DataFrame", "s", "llm", False, Provenance(source="llm"))  # fmt: skip
    wh.con.register("p", frame)
    wh.con.execute("INSERT INTO judgment_probabilities SELECT 's', 'llm', topic_id, doc_id, [prob_no, prob_yes], prob_yes FROM p")
    wh.con.execute("COMMIT")
    rows = wh.budget(collection="s", machine="llm", budgets=["20%"], selections=["random", "lara"],
                     experiment_id="h", store_sets=True)  # fmt: skip
    by = rows.set_index("strategy")
    assert by.loc["lara+calibrated", "kendall_tau_b"] > by.loc["lara+uncalibrated", "kendall_tau_b"]
    sets = wh.df("SELECT qrels_id, source, parent_qrels_id, params FROM qrels_sets WHERE qrels_id LIKE 'h-%' ORDER BY qrels_id")
    assert sets["qrels_id"].tolist() == ["h-lara-60-human", "h-lara-60-inferred", "h-random-60-human", "h-random-60-inferred"]
    assert sets["source"].tolist() == ["human", "inferred"] * 2
    assert json.loads(sets["params"][1])["human"] == "h-lara-60-human" and sets["parent_qrels_id"][1] == "llm"
    # the two sets together label every pair the machine labelled, each pair once
    both = wh.con.execute(
        "SELECT count(*), count(DISTINCT (query_id, doc_id)) FROM qrels WHERE qrels_id IN ('h-lara-60-human', 'h-lara-60-inferred')"
    ).fetchone()
    assert both == (300, 300)
    # judged share by source works on the mixed set
    shares = wh.evaluate(["A_p(source=human)@10", "A_p(source=inferred)@10", "A_p@10"], collection="s",
                         qrels_id="h-lara-60-human", fill=["h-lara-60-inferred"])  # fmt: skip
    wide = shares.pivot(index="run_id", columns="measure", values="value")
    human, inferred = wide["A_p_source(source=human)@10"], wide["A_p_source(source=inferred)@10"]
    assert (human > 0).all() and (inferred > 0).all()
    np.testing.assert_allclose(human + inferred, wide["A_p@10"])
    # the bounds and the decision matrix take the mixed set as any composition
    composed = {"qrels_id": "h-lara-60-human", "fill": ["h-lara-60-inferred"]}
    bounds = wh.bounds(collection="s", measure="P", depths=[10], **composed)
    alone = wh.bounds(collection="s", measure="P", depths=[10], qrels_id="h-lara-60-human")
    assert len(bounds) == len(alone) == 5 and set(bounds["qrels_id"]) == {"h-lara-60-human+h-lara-60-inferred"}
    # filled: every pair of the top 10 is labelled, so no ignorance left; people's labels alone leave some
    assert (bounds["m_theta"] == 0.0).all() and (alone["m_theta"] > 0.0).all()
    matrix = wh.matrix(collection="s", depths=[10], test="t", **composed)
    assert set(matrix.pairs["qrels_id"]) == {"h-lara-60-human+h-lara-60-inferred"}
    assert len(matrix.pairs) % 10 == 0 and len(matrix.pairs) > 0  # 5 runs: 10 pairs per pairing


def test_cli_pool_build_export_and_budget(tmp_path: Path) -> None:
    db = tmp_path / "h.duckdb"
    with Warehouse(db) as wh:
        wh.ingest_qrels(
            pd.DataFrame({"query_id": ["1"] * 7, "doc_id": list("abcdefg"), "relevance": [1, 0, 1, 0, 1, 0, 0]}),
            collection="h",
        )
        rows = [(r, "1", d, 10.0 - i) for r, docs in RUNS.items() for i, d in enumerate(docs)]
        wh.ingest_runs(pd.DataFrame(rows, columns=["run_id", "query_id", "doc_id", "score"]), collection="h")
    runner = CliRunner()
    built = runner.invoke(app, ["pool", "build", "-c", "h", "--depth", "3", "--runs", "r1,r2,r3", "--strategy", "bandit",
                                "--budget", "5", "--per", "total", "--seed", "2", "--db", str(db), "-f", "csv"], env=ENV)  # fmt: skip
    assert built.exit_code == 0, built.output
    assert built.stdout.splitlines()[1] == "bandit5total-pool3-listd810bda8-seed2,3,default,list,bandit,5,total,2,3,1,5,5,2,0"
    assert "seed: 2" in built.stderr
    out = tmp_path / "t.tsv"
    exported = runner.invoke(app, ["pool", "export", "bandit5total-pool3-listd810bda8-seed2", "-c", "h", "-o", str(out),
                                   "--task-format", "tsv", "--db", str(db)], env=ENV)  # fmt: skip
    assert exported.exit_code == 0, exported.output
    assert [line.split("\t")[1] for line in out.read_text().splitlines()[1:]] == list("fdabc")
    bad = runner.invoke(app, ["pool", "build", "-c", "h", "--runs", "r1", "--strategy", "dpeth", "--db", str(db)], env=ENV)
    assert bad.exit_code == 1
    assert bad.stderr.strip() == "Error: pool: unknown strategy 'dpeth'; use one of depth, take, mtf, bandit, rbp, rrf, random"
    png = tmp_path / "b.png"
    replay = runner.invoke(app, ["experiment", "budget", "-c", "h", "--runs-from", "all", "--depth", "3",
                                 "--budgets", "50%,100%", "--figure", str(png), "--db", str(db), "-f", "csv"], env=ENV)  # fmt: skip
    assert replay.exit_code == 0, replay.output
    assert replay.stdout.splitlines()[0].startswith("strategy,seed,budget,budget_share,judged,relevant_found")
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_budget_tables_export_and_import(tmp_path: Path) -> None:
    db = tmp_path / "h.duckdb"
    with Warehouse(db) as wh:
        wh.ingest_qrels(
            pd.DataFrame({"query_id": ["1"] * 7 + ["2"] * 2, "doc_id": list("abcdefg") + ["a", "b"],
                          "relevance": [1, 0, 1, 0, 1, 0, 0, 1, 0]}), collection="h",
        )  # fmt: skip
        rows = [(r, t, d, 10.0 - i) for r, docs in RUNS.items() for i, d in enumerate(docs) for t in ("1", "2")]
        wh.ingest_runs(pd.DataFrame(rows, columns=["run_id", "query_id", "doc_id", "score"]), collection="h")
        wh.build_pool(collection="h", depth=3, runs=list(RUNS), strategy="mtf", pool_id="M")
        lara = tmp_path / "p.csv"
        lara.write_text(HEADER + "1,a,1,0.75,0.25\n1,b,0,0.5,0.5\n")
        wh.ingest_qrels(lara, collection="h", qrels_id="llm", source="llm")
        wh.budget(collection="h", strategies=["depth", "rrf"], budgets=["50%"], runs_from="all", depth=3)
        # a sequential order has no weight: NULL, which the import's checks accept
        assert wh.con.execute("SELECT count(*) FROM pool_order WHERE weight IS NULL").fetchone() == (14,)
        wh.export(tmp_path / "out")
    with Warehouse(tmp_path / "copy.duckdb") as copy:
        copy.import_export(tmp_path / "out")
        for table in ("pool_order", "judgment_probabilities", "budget_experiments", "budget_results"):
            query = f"SELECT * EXCLUDE (created_at) FROM {table}" if table == "budget_experiments" else f"FROM {table}"
            with Warehouse(db, read_only=True) as wh:
                before = wh.df(query + " ORDER BY ALL")
            pd.testing.assert_frame_equal(copy.df(query + " ORDER BY ALL"), before)


# --- TREC-8 (slow) -------------------------------------------------------------------------


@pytest.fixture
def trec8(trec8_copy) -> Warehouse:  # type: ignore[no-untyped-def]
    """TREC-8 with run metadata (the 71 pooled runs flagged), a private writable copy."""
    wh = Warehouse(trec8_copy)
    yield wh
    wh.close()


@pytest.mark.slow
def test_trec8_every_strategy(trec8: Warehouse) -> None:
    official = trec8.build_pool(collection="trec8", depth=100, pool_id="official").iloc[0]
    assert (official["strategy"], int(official["pooled"]), int(official["relevant"])) == ("depth", 86830, 4728)
    differ = trec8.con.execute(
        "SELECT count(*) FROM ((SELECT query_id, doc_id FROM qrels WHERE qrels_id = 'default'"
        " EXCEPT SELECT query_id, doc_id FROM pool_order WHERE pool_id = 'official')"
        " UNION ALL (SELECT query_id, doc_id FROM pool_order WHERE pool_id = 'official'"
        " EXCEPT SELECT query_id, doc_id FROM qrels WHERE qrels_id = 'default'))"
    ).fetchone()
    assert differ == (0,)
    # 10 % of the official pool in total: what each order's first 8,683 judgments find
    found = {}
    for strategy in ("take", "rbp", "rrf", "random", "mtf", "bandit"):
        row = trec8.build_pool(collection="trec8", depth=100, strategy=strategy, budget=8683, budget_scope="total").iloc[0]
        assert (int(row["pooled"]), int(row["topics"])) == (8683, 50)
        found[strategy] = int(row["relevant"])
    assert found == {"take": 1627, "rbp": 1731, "rrf": 2052, "random": 442, "mtf": 2307, "bandit": 2707}
    # Losada et al.'s ordering: bandit >= move-to-front >= the depth order
    assert found["bandit"] >= found["mtf"] >= found["take"]
    # the depth order spends a total budget rank by rank: every candidate whose best rank is
    # above the last rank it reached is in, and that rank is where the count passes 8,683
    ((last,),) = trec8.con.execute(
        "SELECT max(weight) FROM pool_order WHERE pool_id = 'take8683total-pool100-pooled'"
    ).fetchall()
    above, through = trec8.con.execute(
        "SELECT count(*) FILTER (WHERE weight < $r), count(*) FILTER (WHERE weight <= $r)"
        " FROM pool_order WHERE pool_id = 'official'", {"r": last}
    ).fetchone()
    assert above < 8683 <= through
    missing = trec8.con.execute(
        "SELECT count(*) FROM pool_order AS o WHERE pool_id = 'official' AND weight < $r AND NOT EXISTS"
        " (SELECT 1 FROM pool_order AS t WHERE t.pool_id = 'take8683total-pool100-pooled'"
        "  AND t.query_id = o.query_id AND t.doc_id = o.doc_id)", {"r": last}
    ).fetchone()
    assert missing == (0,)


@pytest.mark.slow
def test_trec8_calibrated_fill_beats_the_biased_judge(trec8: Warehouse, tmp_path: Path) -> None:
    truth = trec8.df("SELECT query_id, doc_id, relevance FROM qrels WHERE qrels_id = 'default'")
    lara = tmp_path / "sim.csv"
    budget.simulated_judge(truth, bias=2.0, separation=1.5, noise=1.0, seed=7).to_csv(lara, index=False)
    trec8.ingest_qrels(lara, collection="trec8", qrels_id="sim", source="llm", model="simulated")
    rows = trec8.budget(collection="trec8", machine="sim", budgets=["10%"], selections=["random"],
                        measure="P@10", experiment_id="hyb", store_sets=True)  # fmt: skip
    by = rows.set_index("strategy")
    assert by.loc["random+calibrated", "kendall_tau_b"] > 0.9 > by.loc["random+uncalibrated", "kendall_tau_b"]
    assert by.loc["random+calibrated", "tau_ap"] > by.loc["random+uncalibrated", "tau_ap"]
    # the bias, counted: the machine calls ~10x the relevant pairs there are; the calibrated fill about as many
    relevant = trec8.con.execute(
        "SELECT qrels_id, count(*) FILTER (WHERE relevance >= 1) FROM qrels"
        " WHERE qrels_id IN ('sim', 'hyb-random-8683-human', 'hyb-random-8683-inferred') GROUP BY ALL"
    ).fetchall()
    counts = dict(relevant)
    assert counts["sim"] > 5 * 4728
    assert 0.7 * 4728 < counts["hyb-random-8683-human"] + counts["hyb-random-8683-inferred"] < 1.3 * 4728
