"""The budget replay finished (issue 53, item 5) and experiment and pool ids (issue 52, class 3).

A generated graded collection judged to depth 7 (as the new user's run): nDCG@10 as the replay
measure, checked against pytrec_eval with each budget's judged prefix as the qrels; the relevant
share's ceiling and the shortfalls stated; ids that name every option that changes the result,
and a refusal to overwrite an experiment made with other options without --replace.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from evalwh import Warehouse
from evalwh.cli import app
from evalwh.errors import EvalWhError
from evalwh.methods.budget import ids as budget_ids
from evalwh.methods.budget.order import apply_budget
from evalwh.methods.budget.candidates import candidate_order
from evalwh.methods.budget.scores import score_label_sets

ENV = {"COLUMNS": "200", "TERMINAL_WIDTH": "200"}
runner = CliRunner()


def _depth7(path: Path | str = ":memory:") -> Warehouse:
    """8 topics x 12 runs ranking 30 of 80 documents; the qrels judge every run's top 7, grades 0-2."""
    rng = np.random.default_rng(3)
    wh = Warehouse(path)
    qrels, rows = [], []
    for t in range(8):
        docs = [f"d{t}-{j}" for j in range(80)]
        top = set()
        for r in range(12):
            ranked = rng.choice(docs, size=30, replace=False)
            rows += [(f"run{r:02d}", str(t), d, float(30 - k)) for k, d in enumerate(ranked)]
            top |= set(ranked[:7])
        qrels += [(str(t), d, int(rng.integers(0, 3))) for d in sorted(top)]
    # one relevant document no run retrieves: the candidates cannot reach it
    qrels += [("0", "unretrieved", 2)]
    wh.ingest_qrels(pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]), collection="s")
    wh.ingest_runs(pd.DataFrame(rows, columns=["run_id", "query_id", "doc_id", "score"]), collection="s")
    return wh


def test_ndcg_replay_equals_pytrec_eval_on_each_budgets_labels() -> None:
    import pytrec_eval

    wh = _depth7()
    runs = wh.run_ids("s")
    order = candidate_order(wh, "s", runs, depth=10, qrels_id="default", strategy="rrf")
    reference = wh.sql("SELECT query_id, doc_id, relevance FROM qrels WHERE qrels_id = 'default'")
    frames = []
    for budget in (40, 150):
        kept = apply_budget(order, budget, "total")[["query_id", "doc_id"]]
        frames.append(kept.merge(reference, on=["query_id", "doc_id"]).assign(label_id=f"b{budget}"))
    labels = pd.concat([*frames, reference.assign(label_id="ref")], ignore_index=True)
    scores = score_label_sets(wh, "s", labels, ["nDCG@10", "nDCG"], runs=runs, reference="default")
    run_dict: dict[str, dict[str, dict[str, float]]] = {}
    for run, topic, doc, score in wh.sql("SELECT run_id, query_id, doc_id, score FROM run_results").itertuples(index=False):
        run_dict.setdefault(run, {}).setdefault(topic, {})[doc] = float(score)
    topics = sorted(reference[reference["relevance"] >= 1]["query_id"].unique())
    for label, frame in labels.groupby("label_id"):
        qrels = {t: {} for t in topics}
        for topic, doc, grade in frame[["query_id", "doc_id", "relevance"]].itertuples(index=False):
            if topic in qrels:
                qrels[topic][doc] = int(grade)
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10", "ndcg"})
        mine = scores[scores["label_id"] == label].set_index(["run_id", "query_id", "measure"])["value"]
        for run in runs:
            expected = evaluator.evaluate({t: run_dict[run][t] for t in topics})
            for topic in topics:
                got10 = mine.get((run, topic, "nDCG@10"), 0.0)
                assert got10 == pytest.approx(expected.get(topic, {}).get("ndcg_cut_10", 0.0), abs=1e-9), (label, run, topic)
                assert mine.get((run, topic, "nDCG"), 0.0) == pytest.approx(expected.get(topic, {}).get("ndcg", 0.0), abs=1e-9)


def test_ndcg_replay_of_the_whole_pool_is_the_reference() -> None:
    wh = _depth7()
    rows = wh.budget(collection="s", strategies=["depth", "rrf"], budgets=["30%", "100%"], depth=7, runs_from="all",
                     measure="nDCG@10", store=False)  # fmt: skip
    full = rows[rows["budget_share"] == 1.0]
    assert full["kendall_tau_b"].tolist() == pytest.approx([1.0, 1.0])
    assert (rows[rows["budget_share"] < 1.0]["kendall_tau_b"] < 1.0).all()


def test_ceiling_and_shortfall_are_stated(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    _depth7(db).close()
    args = ["experiment", "budget", "-c", "s", "--strategies", "depth,mtf", "--budgets", "50%,100%", "--seeds", "0,1",
            "--depth", "20", "--runs-from", "all", "-m", "P@10", "--db", str(db), "-f", "csv"]  # fmt: skip
    result = runner.invoke(app, args, env=ENV)
    assert result.exit_code == 0, result.output
    with Warehouse.open_reader(db) as wh:
        relevant = int(wh.sql("SELECT count(*) AS n FROM qrels WHERE relevance >= 1")["n"].iloc[0])
        members = wh.run_ids("s")
        order = candidate_order(wh, "s", members, depth=20, qrels_id="default", strategy="depth")
    reachable = int(order["relevant"].sum())
    assert reachable == relevant - 1  # the unretrieved relevant document
    lines = result.stderr.splitlines()
    assert "experiment: budget-total-depth+mtf-50pct+100pct-seeds0+1" in lines
    assert (
        f"the candidates (depth 20) hold {reachable} of the reference's {relevant} relevant pairs: no budget finds a "
        f"relevant share above {reachable / relevant:.2f}; reachable_share is relevant_found over those"
    ) in lines
    rows = pd.read_csv(__import__("io").StringIO(result.stdout))
    full = rows[rows["budget_share"] == 1.0]
    assert full["reachable_share"].tolist() == pytest.approx([1.0] * 3)
    # the whole pool: 20-deep candidates, the reference judged the top 7, so part has no label
    pool = len(order)
    labelled = int(full["judged"].iloc[0])
    assert labelled < pool
    assert f"depth, budget {pool:,}: judged {labelled:,} of {pool:,}: {pool - labelled:,} kept candidates have no label in 'default'" in lines
    # every row that judged fewer than its budget is explained, and only those
    short = rows[rows["judged"] < rows["budget"]]
    assert sum(line.count(", budget ") for line in lines) == len(short)


def test_per_topic_shortfall_names_the_small_topics() -> None:
    wh = _depth7()
    rows = wh.budget(collection="s", strategies=["depth"], budgets=["70"], scope="topic", depth=7, runs_from="all",
                     measure="P@5", store=False)  # fmt: skip
    params = rows.attrs["params"]
    notes = budget_ids.shortfall_notes(rows, params, "default")
    kept = int(round(rows["budget_share"].iloc[0] * params["pool_size"]))
    assert kept < 70 * 8  # topics hold fewer than 70 depth-7 candidates
    assert notes == [
        f"depth, budget 70: judged {int(rows['judged'].iloc[0]):,} of 560: the candidates hold {kept:,} within the "
        "budget (topics with fewer candidates than the per-topic budget)"
    ]


def test_per_topic_shares_are_shares_of_each_topics_candidates() -> None:
    """--per topic 100% judges every candidate (it judged the mean topic's count, and lost the big
    topics' tails); 50% keeps round(0.5 * N_t) of each topic's order, N_t its candidates; a count
    is still that many in every topic."""
    wh = _depth7()
    rows = wh.budget(collection="s", strategies=["depth"], budgets=["50%", "100%", "3"], scope="topic", depth=7,
                     runs_from="all", measure="P@5", store=False).set_index("budget")  # fmt: skip
    params = rows.attrs["params"]
    order = candidate_order(wh, "s", wh.run_ids("s"), depth=7, qrels_id="default", strategy="depth")
    sizes = order.groupby("query_id").size()
    assert sizes.nunique() > 1  # topics of other sizes: the mean would not do
    half = {t: int(np.floor(0.5 * n + 0.5)) for t, n in sizes.items()}
    judged = order.merge(wh.sql("SELECT query_id, doc_id FROM qrels WHERE relevance >= 0"), on=["query_id", "doc_id"])
    assert sorted(rows.index) == [3, sum(half.values()), len(order)]
    assert rows.loc[len(order), "budget_share"] == 1.0 and rows.loc[len(order), "judged"] == len(judged)
    assert rows.loc[len(order), "kendall_tau_b"] == pytest.approx(1.0, abs=1e-12)
    kept = apply_budget(order, half, "topic")
    assert kept.groupby("query_id").size().to_dict() == half
    assert rows.loc[sum(half.values()), "judged"] == len(kept.merge(judged[["query_id", "doc_id"]]))
    assert rows.loc[3, "judged"] == len(apply_budget(order, 3, "topic").merge(judged[["query_id", "doc_id"]]))
    assert params["per_topic_counts"] == [3]
    assert budget_ids.shortfall_notes(rows.reset_index(), params, "default") == []
    # a share and a count per topic that do not meet are two rows (the form check before the order knew
    # no sizes, took the topics as equal and refused this pair)
    pair = wh.budget(collection="s", strategies=["depth"], budgets=["5%", "1"], scope="topic", depth=7,
                     runs_from="all", measure="P@5", store=False)  # fmt: skip
    assert sorted(pair["budget"]) == [1, sum(max(1, int(np.floor(0.05 * n + 0.5))) for n in sizes)]
    with pytest.raises(EvalWhError, match=rf"^budget: '100%' \({len(order)} judgments in all\) and '{len(order)}' \({len(order)} in every topic\) would"):
        wh.budget(collection="s", strategies=["depth"], budgets=["100%", str(len(order))], scope="topic", depth=7,
                  runs_from="all", measure="P@5", store=False)  # fmt: skip


# -- issue 52, class 3: ids that name what changes the result ----------------------------------


def test_issue_52_class_3_default_experiment_ids_name_strategies_budgets_and_seeds() -> None:
    wh = _depth7()
    common = {"collection": "s", "depth": 7, "runs_from": "all", "measure": "P@5"}
    first = wh.budget(strategies=["depth"], budgets=["25%"], **common)
    second = wh.budget(strategies=["rrf"], budgets=["25%"], **common)
    third = wh.budget(strategies=["mtf"], budgets=["25%", "50%"], seeds=[0, 1, 2], **common)
    ids = [f.attrs["experiment_id"] for f in (first, second, third)]
    assert ids == ["budget-total-depth-25pct", "budget-total-rrf-25pct", "budget-total-mtf-25pct+50pct-seeds0+1+2"]
    stored = wh.sql("SELECT experiment_id, count(*) AS n FROM budget_results GROUP BY ALL ORDER BY 1")
    assert stored.values.tolist() == [[ids[0], 1], [ids[2], 6], [ids[1], 1]]  # none replaced another


def test_issue_52_class_3_other_options_under_one_id_are_refused_without_replace() -> None:
    wh = _depth7()
    common = {"collection": "s", "strategies": ["depth"], "budgets": ["25%"], "runs_from": "all", "experiment_id": "e"}
    wh.budget(depth=7, measure="P@5", **common)
    before = wh.sql("SELECT * FROM budget_results ORDER BY ALL")
    with pytest.raises(EvalWhError) as caught:
        wh.budget(depth=7, measure="AP", **common)
    assert str(caught.value) == (
        "experiment budget: collection 's' already has experiment 'e', made with other options (judged_measure, "
        "measure); give --replace to overwrite it, or another --experiment-id"
    )
    pd.testing.assert_frame_equal(wh.sql("SELECT * FROM budget_results ORDER BY ALL"), before)
    wh.budget(depth=7, measure="P@5", **common)  # the same options: replaced by the same rows
    pd.testing.assert_frame_equal(wh.sql("SELECT * FROM budget_results ORDER BY ALL"), before)
    wh.budget(depth=7, measure="AP", replace=True, **common)
    assert wh.sql("SELECT measure FROM budget_experiments WHERE experiment_id = 'e'")["measure"].tolist() == ["AP"]
    # seeds a deterministic replay does not draw are no option of it (they were refused as "other options")
    rows = wh.budget(depth=7, measure="AP", seeds=[5, 6], **common)
    assert rows.attrs["params"]["seeds"] == []
    # the API returns reachable_share beside the stored columns, as the command prints it
    assert rows["reachable_share"].tolist() == [rows["relevant_found"].iloc[0] / rows.attrs["params"]["reachable_relevant"]]


def test_issue_52_class_3_the_command_refuses_in_one_line(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    _depth7(db).close()
    base = ["experiment", "budget", "-c", "s", "--strategies", "depth", "--budgets", "25%", "--runs-from", "all",
            "--experiment-id", "e", "--db", str(db), "-f", "csv"]  # fmt: skip
    assert runner.invoke(app, [*base, "--depth", "7", "-m", "P@5"], env=ENV).exit_code == 0
    refused = runner.invoke(app, [*base, "--depth", "9", "-m", "P@5"], env=ENV)
    assert refused.exit_code == 1
    assert refused.stderr.splitlines()[-1] == (
        "Error: experiment budget: collection 's' already has experiment 'e', made with other options (budget_counts, "
        "depth, pool_size); give --replace to overwrite it, or another --experiment-id"
    )
    assert runner.invoke(app, [*base, "--depth", "9", "-m", "P@5", "--replace"], env=ENV).exit_code == 0


def test_issue_52_class_3_default_pool_ids_tell_per_topic_from_total(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    _depth7(db).close()
    base = ["pool", "build", "-c", "s", "--depth", "7", "--runs-from", "all", "--budget", "10", "--db", str(db), "-f", "csv"]
    ids = []
    for extra in (["--strategy", "take", "--per", "topic"], ["--strategy", "take", "--per", "total"],
                  ["--strategy", "mtf", "--per", "total", "--seed", "1"], ["--strategy", "mtf", "--per", "total", "--seed", "2"]):  # fmt: skip
        result = runner.invoke(app, [*base, *extra], env=ENV)
        assert result.exit_code == 0, result.output
        ids.append(result.stdout.splitlines()[1].split(",")[0])
    assert ids == ["take10topic-pool7-all", "take10total-pool7-all", "mtf10total-pool7-all-seed1", "mtf10total-pool7-all-seed2"]
    with Warehouse.open_reader(db) as wh:
        assert sorted(wh.pools(collection="s")["pool_id"]) == sorted(ids)


def test_depth_with_a_budget_points_to_take_in_one_line(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    _depth7(db).close()
    result = runner.invoke(app, ["pool", "build", "-c", "s", "--depth", "7", "--budget", "10", "--db", str(db)], env=ENV)
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        "Error: pool: the depth strategy keeps the whole top lambda; use --strategy take for a budget"
    )


# -- issue 53, item 6: a judge whose bias depends on the topic -----------------------------------


def test_a_topic_dependent_judge_shifts_each_topic_by_its_own_amount() -> None:
    from scipy.special import logit

    from evalwh.methods import budget

    rng = np.random.default_rng(0)
    truth = pd.DataFrame({
        "query_id": np.repeat([str(t) for t in range(200)], 20), "doc_id": [f"d{i}" for i in range(4000)],
        "relevance": (rng.random(4000) < 0.2).astype(int),
    })  # fmt: skip
    plain = budget.simulated_judge(truth, seed=7)
    topical = budget.simulated_judge(truth, seed=7, topic_bias=1.0)
    assert budget.simulated_judge(truth, seed=7, topic_bias=0.0).equals(plain)
    shift = pd.Series(logit(topical["prob_yes"]) - logit(plain["prob_yes"])).groupby(truth["query_id"])
    # one shift per topic (the pairs' noise is the global judge's), normal with sd 1 over topics
    assert shift.std().max() < 1e-6
    assert shift.mean().std() == pytest.approx(1.0, abs=0.15)
    # a single calibration over all topics undoes the global bias, not the topical one
    labels = truth["relevance"].to_numpy(dtype=float)
    errors = {}
    for name, judge in (("global", plain), ("topic", topical)):
        f = budget.calibrate(judge["prob_yes"].to_numpy()[:2000], labels[:2000])
        errors[name] = np.mean((f(judge["prob_yes"].to_numpy()[2000:]) >= 0.5) != labels[2000:])
    assert errors["topic"] > errors["global"]


def test_issue_52_class_3_hybrid_default_ids_name_selections_calibration_budgets_and_seeds() -> None:
    from test_budget import _synthetic

    from evalwh.methods import budget
    from evalwh.store.ingest.qrels import Provenance, _ingest_qrels

    wh = _synthetic(seed=2)
    truth = wh.df("SELECT query_id, doc_id, relevance FROM qrels WHERE qrels_id = 'default'")
    frame = budget.simulated_judge(truth, bias=2.5, seed=4)
    wh.con.execute("BEGIN")
    _ingest_qrels(wh, frame.rename(columns={"topic_id": "query_id", "annotation": "relevance"})[
        ["query_id", "doc_id", "relevance"]], "DataFrame", "s", "llm", False, Provenance(source="llm"))  # fmt: skip
    wh.con.register("p", frame)
    wh.con.execute("INSERT INTO judgment_probabilities SELECT 's', 'llm', topic_id, doc_id, [prob_no, prob_yes], prob_yes FROM p")
    wh.con.execute("COMMIT")
    first = wh.budget(collection="s", machine="llm", budgets=["20%"], selections=["random"], seeds=[0, 1])
    second = wh.budget(collection="s", machine="llm", budgets=["20%"], selections=["random"], calibration="logistic")
    assert first.attrs["experiment_id"] == "hybrid-llm-random-isotonic-20pct-seeds0+1"
    assert second.attrs["experiment_id"] == "hybrid-llm-random-logistic-20pct-seeds0"
    assert wh.sql("SELECT count(DISTINCT experiment_id) AS n FROM budget_experiments")["n"].tolist() == [2]
    with pytest.raises(EvalWhError, match="made with other options"):
        wh.budget(collection="s", machine="llm", budgets=["20%"], selections=["random"], seeds=[0, 1], measure="P@5",
                  experiment_id="hybrid-llm-random-isotonic-20pct-seeds0+1")  # fmt: skip


def _mean_scores(qrels: dict[str, dict[str, int]], run_dict: dict[str, dict[str, dict[str, float]]], measure: str,
                 topics: list[str]) -> np.ndarray:  # fmt: skip
    """pytrec_eval's mean of ``measure`` over ``topics`` per run (sorted by run id); a topic a run misses scores 0."""
    import pytrec_eval

    evaluator = pytrec_eval.RelevanceEvaluator({t: qrels.get(t, {}) for t in topics}, {measure})
    means = []
    for run in sorted(run_dict):
        got = evaluator.evaluate({t: run_dict[run][t] for t in topics if t in run_dict[run]})
        means.append(sum(got.get(t, {}).get(measure, 0.0) for t in topics) / len(topics))
    return np.round(np.asarray(means), 12)


def _run_dict(wh: Warehouse) -> dict[str, dict[str, dict[str, float]]]:
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for run, topic, doc, score in wh.sql("SELECT run_id, query_id, doc_id, score FROM run_results").itertuples(index=False):
        runs.setdefault(run, {}).setdefault(topic, {})[doc] = float(score)
    return runs


def _qrels_dict(frame: pd.DataFrame) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for topic, doc, grade in frame[["query_id", "doc_id", "relevance"]].itertuples(index=False):
        qrels.setdefault(str(topic), {})[str(doc)] = int(grade)
    return qrels


def test_ndcg_replay_ranks_the_runs_by_ndcg() -> None:
    """The leaderboard of an nDCG replay is nDCG's (it was the judged share A_p's, listed first in the scores).

    Each budget's judged prefix is rebuilt from the depth order, scored by pytrec_eval, and
    Kendall's tau_b of the runs' means against the reference's taken by scipy.
    """
    from scipy import stats

    wh = _depth7()
    rows = wh.budget(collection="s", strategies=["depth"], budgets=["25%", "50%", "75%"], depth=7, runs_from="all",
                     measure="nDCG@10", store=False)  # fmt: skip
    judged = wh.budget(collection="s", strategies=["depth"], budgets=["25%", "50%", "75%"], depth=7, runs_from="all",
                       measure="A_p@10", store=False)  # fmt: skip
    reference = wh.sql("SELECT query_id, doc_id, relevance FROM qrels WHERE qrels_id = 'default'")
    topics = sorted(reference[reference["relevance"] >= 1]["query_id"].unique())
    run_dict = _run_dict(wh)
    order = candidate_order(wh, "s", wh.run_ids("s"), depth=7, qrels_id="default", strategy="depth")
    truth = _mean_scores(_qrels_dict(reference), run_dict, "ndcg_cut_10", topics)
    pairs = zip(rows["budget"], rows["kendall_tau_b"], judged["kendall_tau_b"], strict=True)
    for budget, tau_b, tau_judged in pairs:
        kept = apply_budget(order, int(budget), "total")[["query_id", "doc_id"]].merge(reference, on=["query_id", "doc_id"])
        means = _mean_scores(_qrels_dict(kept), run_dict, "ndcg_cut_10", topics)
        assert tau_b == pytest.approx(stats.kendalltau(truth, means).statistic, abs=1e-12), budget
        assert tau_b != pytest.approx(tau_judged), budget  # the judged share ranks the runs otherwise here


def test_hybrid_keeps_the_peoples_grades_for_ndcg(tmp_path: Path) -> None:
    """People judging every pair give the reference's leaderboard under graded nDCG (tau_b 1); part of
    the pairs: the hybrid set is people's grades where they judged, the threshold grade where the
    calibrated machine says relevant, and its tau_b is scipy's on pytrec_eval's nDCG of that set."""
    from scipy import stats

    from evalwh.methods.budget import simulated_judge

    wh = _depth7()
    reference = wh.sql("SELECT query_id, doc_id, relevance FROM qrels WHERE qrels_id = 'default'")
    judge = simulated_judge(reference, bias=1.0, seed=5)
    path = tmp_path / "llm.csv"
    judge.to_csv(path, index=False)
    wh.ingest_qrels(path, collection="s", qrels_id="llm")
    full = wh.budget(collection="s", machine="llm", budgets=["100%"], selections=["random"], measure="nDCG@10", store=False)
    people = full[full["strategy"] != "machine"]
    assert people["kendall_tau_b"].tolist() == pytest.approx([1.0, 1.0])
    assert people["tau_ap"].tolist() == pytest.approx([1.0, 1.0])
    rows = wh.budget(collection="s", machine="llm", budgets=["30%"], selections=["random"], measure="nDCG@10",
                     experiment_id="h", store_sets=True)  # fmt: skip
    sets = wh.sql("SELECT qrels_id, query_id, doc_id, relevance FROM qrels WHERE qrels_id LIKE 'h-%'")
    human, inferred = (sets[sets["qrels_id"].str.endswith(end)] for end in ("-human", "-inferred"))
    assert set(human["relevance"]) == {0.0, 1.0, 2.0} and set(inferred["relevance"]) <= {0.0, 1.0}
    topics = sorted(reference[reference["relevance"] >= 1]["query_id"].unique())
    run_dict = _run_dict(wh)
    truth = _mean_scores(_qrels_dict(reference), run_dict, "ndcg_cut_10", topics)
    hybrid = _mean_scores(_qrels_dict(pd.concat([human, inferred])), run_dict, "ndcg_cut_10", topics)
    got = rows.set_index("strategy").loc["random+calibrated", "kendall_tau_b"]
    assert got == pytest.approx(stats.kendalltau(truth, hybrid).statistic, abs=1e-12)


def test_options_the_study_does_not_read_are_refused_in_one_line(tmp_path: Path) -> None:
    """--machine reads neither the replay's options nor the replay the hybrid's; given, they are refused
    before any work (the warehouse unchanged), whatever their value; at their defaults they pass."""
    import hashlib

    from evalwh.methods.budget import simulated_judge

    db = tmp_path / "s.duckdb"
    with _depth7(db) as wh:
        truth = wh.sql("SELECT query_id, doc_id, relevance FROM qrels WHERE qrels_id = 'default'")
        simulated_judge(truth, bias=1.0, seed=5).to_csv(tmp_path / "llm.csv", index=False)
        wh.ingest_qrels(tmp_path / "llm.csv", collection="s", qrels_id="llm")
    before = hashlib.md5(db.read_bytes()).hexdigest()
    base = ["experiment", "budget", "-c", "s", "--budgets", "50%", "--db", str(db)]
    for extra, message in (
        (["--machine", "llm", "--per", "topic", "--depth", "10"],
         "Error: experiment budget: --per, --depth apply without --machine (the replay of pooling strategies)"),
        (["--machine", "llm", "--strategies", "depth,mtf,bandit,rrf"],
         "Error: experiment budget: --strategies applies without --machine (the replay of pooling strategies)"),
        (["--calibration", "logistic", "--store-sets"],
         "Error: experiment budget: --calibration, --store-sets apply with --machine (people and a calibrated LLM)"),
        (["--runs-from", "all", "-f", "parquet"], "Error: --format parquet writes a file; give --output FILE"),
    ):
        result = runner.invoke(app, base + extra, env=ENV)
        assert result.exit_code == 1 and result.output.strip().splitlines() == [message], (extra, result.output)
    assert hashlib.md5(db.read_bytes()).hexdigest() == before
    result = runner.invoke(app, base + ["--depth", "7"], env=ENV)  # no run flagged as pooled
    assert result.exit_code == 1 and result.output.strip() == (
        "Error: collection 's': no run is flagged as pooled; load the flags with `evalwh ingest run-metadata`, or "
        "pool every run with --runs-from all (evalwh pool build also takes --runs / --runs-file)"
    )
    result = runner.invoke(app, base + ["--depth", "7", "--runs-from", "all", "--strategies", "depth", "-f", "csv"], env=ENV)
    assert result.exit_code == 0, result.output


def test_pool_build_refuses_strategy_options_its_strategy_does_not_read(tmp_path: Path) -> None:
    import hashlib

    db = tmp_path / "s.duckdb"
    _depth7(db).close()
    before = hashlib.md5(db.read_bytes()).hexdigest()
    base = ["pool", "build", "-c", "s", "--depth", "7", "--runs-from", "all", "--budget", "10", "--db", str(db)]
    for extra, message in (
        (["--strategy", "rrf", "--seed", "4"], "Error: pool build: --strategy rrf does not read --seed (--seed: mtf, bandit, random)"),
        (["--strategy", "take", "--gamma", "0.5", "--rbp-p", "0.9"],
         "Error: pool build: --strategy take does not read --gamma, --rbp-p (--gamma: bandit; --rbp-p: rbp)"),
        (["--strategy", "bandit", "--rrf-k", "10"], "Error: pool build: --strategy bandit does not read --rrf-k (--rrf-k: rrf)"),
        (["--strategy", "take", "-f", "parquet"], "Error: --format parquet writes a file; give --output FILE"),
    ):
        result = runner.invoke(app, [*base, *extra], env=ENV)
        assert result.exit_code == 1 and result.output.strip().splitlines() == [message], (extra, result.output)
    assert hashlib.md5(db.read_bytes()).hexdigest() == before
    for extra in (["--strategy", "bandit", "--seed", "4", "--gamma", "0.5"], ["--strategy", "rrf", "--rrf-k", "10"],
                  ["--strategy", "rbp", "--rbp-p", "0.9"]):  # fmt: skip
        result = runner.invoke(app, [*base, *extra, "-f", "csv"], env=ENV)
        assert result.exit_code == 0, (extra, result.output)
