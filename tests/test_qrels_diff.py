"""`evalwh qrels diff`: two versions of a collection's labels (issue 55, item 2).

The label counts are checked against dictionaries compared by hand; the runs' scores against
pytrec_eval; tau_b against scipy; the significant decisions kept, lost and reversed against
scipy's paired t-test with statsmodels' Holm correction, on a generated collection whose second
qrels version adds, removes and regrades pairs.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from typer.testing import CliRunner

from evalwh import Warehouse
from evalwh.cli import app
from evalwh.errors import MetricParamError, NotFoundError

runner = CliRunner(env={"COLUMNS": "200", "TERMINAL_WIDTH": "200"})

TOPICS = [str(t) for t in range(1, 31)]
DOCS = [f"d{i:02d}" for i in range(40)]
RUNS = [f"run{i:02d}" for i in range(10)]


def _versions() -> tuple[dict[str, dict[str, int]], dict[str, dict[str, int]]]:
    """Version 1 judges 25 of 40 documents per topic (grades 0-2); version 2 removes, adds and regrades."""
    rng = np.random.default_rng(55)
    old: dict[str, dict[str, int]] = {}
    new: dict[str, dict[str, int]] = {}
    for topic in TOPICS:
        judged = rng.choice(DOCS, size=25, replace=False)
        grades = rng.choice([0, 0, 1, 2], size=25)
        grades[0] = 2  # every topic keeps a relevant document in both versions
        old[topic] = {str(d): int(g) for d, g in zip(judged, grades, strict=True)}
        new[topic] = dict(old[topic])
        for doc in list(new[topic])[1:]:
            draw = rng.random()
            if draw < 0.08:
                del new[topic][doc]
            elif draw < 0.25:
                new[topic][doc] = int((new[topic][doc] + rng.integers(1, 3)) % 3)
        for doc in rng.choice([d for d in DOCS if d not in old[topic]], size=rng.integers(0, 5), replace=False):
            new[topic][str(doc)] = int(rng.integers(0, 3))
    return old, new


def _runs() -> dict[str, dict[str, dict[str, float]]]:
    """Ten runs of rising quality: each ranks the 40 documents by grade x quality + noise."""
    rng = np.random.default_rng(7)
    old, _ = _versions()
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for i, run in enumerate(RUNS):
        runs[run] = {}
        for topic in TOPICS:
            grades = np.array([old[topic].get(d, 0) for d in DOCS], dtype=float)
            score = grades * (0.2 + 0.15 * i) + rng.normal(0, 1, len(DOCS))
            runs[run][topic] = {d: float(round(s, 6)) for d, s in zip(DOCS, score, strict=True)}
    return runs


def _frame(labels: dict[str, dict[str, int]]) -> pd.DataFrame:
    rows = [(t, d, g) for t, docs in labels.items() for d, g in docs.items()]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])


@pytest.fixture(scope="module")
def versions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    old, new = _versions()
    db = tmp_path_factory.mktemp("qrels_diff") / "v.duckdb"
    with Warehouse(db) as wh:
        wh.ingest_qrels(_frame(old), collection="c", qrels_id="v1")
        wh.ingest_qrels(_frame(new), collection="c", qrels_id="v2")
        for run, topics in _runs().items():
            rows = [(t, d, s) for t, docs in topics.items() for d, s in docs.items()]
            wh.ingest_runs(pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]), collection="c", run_id=run)
    return db


def test_label_changes_equal_a_comparison_by_hand(versions: Path) -> None:
    old, new = _versions()
    with Warehouse.open_reader(versions) as wh:
        result = wh.qrels_diff("v1", "v2", "P@10", resamples=0)
    topics = result.topics.set_index("query_id")
    assert list(topics.index) == TOPICS  # natural order: 2 before 10
    changed = []
    for topic in TOPICS:
        a, b = old[topic], new[topic]
        added = [d for d in b if d not in a]
        removed = [d for d in a if d not in b]
        regraded = [d for d in a if d in b and a[d] != b[d]]
        row = topics.loc[topic]
        assert (row["added"], row["removed"], row["regraded"]) == (len(added), len(removed), len(regraded))
        assert (row["pairs_old"], row["pairs_new"]) == (len(a), len(b))
        assert row["unchanged"] == len(a) - len(removed) - len(regraded)
        assert (row["relevant_old"], row["relevant_new"]) == (sum(g >= 1 for g in a.values()), sum(g >= 1 for g in b.values()))
        changed += [(topic, d, "added") for d in added] + [(topic, d, "removed") for d in removed]
        changed += [(topic, d, "regraded") for d in regraded]
    got = sorted(result.labels[["query_id", "doc_id", "change"]].itertuples(index=False, name=None))
    assert got == sorted(changed)
    totals = result.totals()
    assert totals["added"] > 10 and totals["removed"] > 10 and totals["regraded"] > 50  # the case is not empty


def _per_topic(labels: dict[str, dict[str, int]], measure: str) -> pd.DataFrame:
    import pytrec_eval

    key = {"AP": "map", "P@10": "P_10"}[measure]
    evaluator = pytrec_eval.RelevanceEvaluator(labels, {key})
    runs = _runs()
    return pd.DataFrame({run: {t: v[key] for t, v in evaluator.evaluate(runs[run]).items()} for run in RUNS}).T


def _outcomes(values: pd.DataFrame) -> dict[frozenset[str], int]:
    from statsmodels.stats.multitest import multipletests

    pairs = [(a, b) for i, a in enumerate(values.index) for b in values.index[i + 1 :]]
    tests = [stats.ttest_rel(values.loc[a], values.loc[b]) for a, b in pairs]
    reject = multipletests([t.pvalue for t in tests], alpha=0.05, method="holm")[0]
    return {
        frozenset((a, b)): (int(np.sign(values.loc[a].mean() - values.loc[b].mean())) if r else 0)
        for (a, b), r in zip(pairs, reject, strict=True)
    }


@pytest.mark.parametrize("measure", ["AP", "P@10"])
def test_scores_ranks_and_moved_decisions_equal_an_independent_computation(versions: Path, measure: str) -> None:
    old, new = _versions()
    before, after = _per_topic(old, measure), _per_topic(new, measure)
    with Warehouse.open_reader(versions) as wh:
        result = wh.qrels_diff("v1", "v2", measure, resamples=0)
    runs = result.runs.set_index("run_id").loc[RUNS]
    assert runs["score_old"].to_numpy() == pytest.approx(before.mean(axis=1).to_numpy(), abs=1e-9)
    assert runs["score_new"].to_numpy() == pytest.approx(after.mean(axis=1).to_numpy(), abs=1e-9)
    rank_old = before.mean(axis=1).round(12).rank(ascending=False, method="min").astype(int)
    rank_new = after.mean(axis=1).round(12).rank(ascending=False, method="min").astype(int)
    assert runs["rank_old"].tolist() == rank_old.tolist()
    assert runs["rank_change"].tolist() == (rank_new - rank_old).tolist()
    row = result.summary.iloc[0]
    tau = stats.kendalltau(before.mean(axis=1).round(12), after.mean(axis=1).round(12)).statistic
    assert row["kendall_tau_b"] == pytest.approx(tau, abs=1e-12)
    ref, other = _outcomes(before), _outcomes(after)
    expected = {"kept": 0, "lost": 0, "reversed": 0, "gained": 0}
    moved = {}
    for pair, decision in ref.items():
        kind = ("kept" if other[pair] == decision else "lost" if other[pair] == 0 else "reversed") if decision else (
            "gained" if other[pair] else ""
        )
        if kind:
            expected[kind] += 1
        if kind and kind != "kept":
            moved[pair] = kind
    assert row["significant"] == sum(1 for v in ref.values() if v) > 5
    assert {k: row[k] for k in expected} == expected
    got = {frozenset((a, b)): c for a, b, c in result.decisions[["run_a", "run_b", "change"]].itertuples(index=False)}
    assert got == moved


def test_the_command_sums_the_changes_and_prints_each_layout(versions: Path) -> None:
    with Warehouse.open_reader(versions) as wh:
        totals = wh.qrels_diff("v1", "v2", "P@10", resamples=0).totals()
    base = ["qrels", "diff", "--old", "v1", "--new", "v2", "--db", str(versions), "-m", "P@10", "--bootstrap", "50"]
    result = runner.invoke(app, [*base, "--layout", "summary", "-f", "csv"])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[0] == (
        f"c: v2 against v1: {totals['added']} pairs added, {totals['removed']} removed, {totals['regraded']} regraded, "
        f"{totals['unchanged']:,} unchanged; relevant {totals['relevant_old']} -> {totals['relevant_new']}"
    )
    summary = pd.read_csv(io.StringIO(result.stdout))
    assert summary[["old", "new", "measure", "test", "correction"]].values.tolist() == [["v1", "v2", "P@10", "t", "holm"]]
    assert summary["kept"].iloc[0] + summary["lost"].iloc[0] + summary["reversed"].iloc[0] == summary["significant"].iloc[0]
    assert summary["tau_b_low"].iloc[0] <= summary["kendall_tau_b"].iloc[0] <= summary["tau_b_high"].iloc[0]
    for layout, first in [("topics", "query_id"), ("labels", "query_id"), ("runs", "measure"), ("decisions", "measure")]:
        out = runner.invoke(app, [*base, "--layout", layout, "-f", "csv"])
        assert out.exit_code == 0, out.output
        assert out.stdout.split(",")[0] == first
    listed = runner.invoke(app, ["qrels", "-c", "c", "--db", str(versions), "-f", "csv"])
    assert listed.exit_code == 0 and pd.read_csv(io.StringIO(listed.stdout))["qrels_id"].tolist() == ["v1", "v2"]


def test_bad_sets_in_one_line(versions: Path) -> None:
    result = runner.invoke(app, ["qrels", "diff", "--old", "v1", "--new", "v3", "--db", str(versions)])
    assert result.exit_code == 1
    assert result.stderr.strip() == "Error: qrels diff: collection 'c' has no qrels set 'v3'. Did you mean v2 or v1? (its sets: v1, v2)"
    with Warehouse.open_reader(versions) as wh:
        with pytest.raises(MetricParamError, match="both 'v1'"):
            wh.qrels_diff("v1", "v1")
        with pytest.raises(NotFoundError, match="no qrels set 'x'"):
            wh.qrels_diff("x", "v1")


def test_label_sets_without_runs_compare_the_labels(tmp_path: Path) -> None:
    old, new = _versions()
    db = tmp_path / "labels.duckdb"
    with Warehouse(db) as wh:
        wh.ingest_qrels(_frame(old), collection="l", qrels_id="v1")
        wh.ingest_qrels(_frame(new), collection="l", qrels_id="v2")
    with Warehouse.open_reader(db) as wh:
        result = wh.qrels_diff("v1", "v2")
    assert result.summary.empty and result.runs.empty
    assert result.totals()["pairs_old"] == 25 * len(TOPICS)
