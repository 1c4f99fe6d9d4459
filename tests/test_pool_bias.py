"""Pooling-bias experiments (methods §6.8): bias, Algorithm 1 and Algorithm 3 on tiny collections."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from evalwh.methods import pools
from evalwh.errors import EvalWhError, NotFoundError
from evalwh.methods.experiments import pool_bias
from evalwh.stats import adjust
from evalwh.warehouse import Warehouse

N_TOPICS = 6


def _collection(seed: int, n_runs: int = 7, docs: int = 12, depth: int = 6) -> Warehouse:
    """Runs ranking ``depth`` of ``docs`` documents per topic at random; a third relevant, some unjudged."""
    gen = np.random.default_rng(seed)
    wh = Warehouse(":memory:")
    qrels = []
    for q in range(N_TOPICS):
        grades = gen.integers(0, 3, size=docs)  # 0 non-relevant, 1 relevant, 2 never judged
        grades[0] = 1  # every topic has a relevant document
        qrels += [(str(q), f"d{d}", int(g)) for d, g in enumerate(grades) if g < 2]
    wh.ingest_qrels(pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]), collection="c")
    rows = []
    for r in range(n_runs):
        for q in range(N_TOPICS):
            picked = gen.permutation(docs)[:depth]
            rows += [(f"r{r}", str(q), f"d{d}", float(depth - i)) for i, d in enumerate(picked)]
    wh.ingest_runs(pd.DataFrame(rows, columns=["run_id", "query_id", "doc_id", "score"]), collection="c")
    return wh


def _run(wh: Warehouse, **options: object) -> dict[str, pd.DataFrame]:
    defaults: dict[str, object] = {
        "widths": [2, 4], "repeats": 4, "topic_samples": 5, "common_topics": [2, 3],
        "measure": "P@3", "pool_depth": 2, "seed": 7,
    }  # fmt: skip
    return pool_bias.run_pool_bias(wh, "c", **{**defaults, **options})  # type: ignore[arg-type]


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data_seed=st.integers(0, 10_000), seed=st.integers(0, 10_000), measure=st.sampled_from(["P@3", "RBP(p=0.8)@4"]))
def test_bias_under_assumed_nonrelevance_is_never_positive(data_seed: int, seed: int, measure: str) -> None:
    # an unnormalised metric only loses relevant documents when the pool shrinks (methods §6.1)
    out = _run(_collection(data_seed), seed=seed, measure=measure, handling="nonrelevant", widths=[3], store=False)
    samples = out["samples"]
    assert (samples["bias"] <= 1e-12).all()
    assert (samples["loo_adjustment"] >= -1e-12).all()  # every delta_s >= 0 as well
    assert (out["summary"]["bias_q3"] <= 1e-12).all()
    assert (out["common_topics"]["adjusted_better"] >= 0).all()


def test_results_are_reproducible_from_the_seed_and_stored_with_it() -> None:
    wh = _collection(3)
    first = _run(wh, seed=11, experiment_id="e", widths=[2])
    again = _run(wh, seed=11, experiment_id="e", widths=[2])
    for name in ("samples", "summary", "common_topics"):
        pd.testing.assert_frame_equal(first[name], again[name])
    other = _run(wh, seed=12, store=False, widths=[2], handling="nonrelevant")
    first_nonrelevant = first["samples"][first["samples"]["handling"] == "nonrelevant"]
    assert first_nonrelevant["pool_runs"].tolist() != other["samples"]["pool_runs"].tolist()
    stored = wh.query("SELECT seed, repeats, topic_samples, widths, handlings FROM pool_experiments")
    assert stored.shape[0] == 1  # the second run with the same id replaced the first
    assert (stored["seed"].iloc[0], stored["repeats"].iloc[0]) == (11, 4)
    assert list(stored["widths"].iloc[0]) == [2]
    assert list(stored["handlings"].iloc[0]) == ["nonrelevant", "condensed"]
    counts = wh.query(
        "SELECT (SELECT count(*) FROM pool_bias_samples) AS s, (SELECT count(*) FROM pool_bias_summary) AS m,"
        " (SELECT count(*) FROM pool_common_topics) AS c"
    ).iloc[0]
    assert (counts["s"], counts["m"], counts["c"]) == (2 * 4, 2, 2 * 2)
    read = pool_bias.stored_pool_bias(wh, "c")
    assert read["summary"]["bias_mean"].tolist() == pytest.approx(first["summary"]["bias_mean"].tolist())


def test_samples_and_algorithm1_equal_a_straightforward_per_sample_computation() -> None:
    wh = _collection(5)
    out = _run(wh, handling="both", store=False, measure="P@3", widths=[2, 3], repeats=2)
    completed = "default-completed"
    topics = sorted(wh.evaluate(["P@3"], collection="c", per_query=True, qrels_id=completed)["query_id"].unique())

    def mean(run: str, qrels_id: str, unjudged: str = "nonrelevant") -> float:
        # the experiment averages over the topics of Q*; a pool without a relevant document for
        # a topic drops it from evaluate's topic set, where the run scores 0
        per_query = wh.evaluate(["P@3"], collection="c", runs=[run], per_query=True, qrels_id=qrels_id, unjudged=unjudged)
        return float(per_query.set_index("query_id")["value"].reindex(topics).fillna(0.0).mean())

    for row in out["samples"].itertuples():
        members = list(row.pool_runs)
        assert row.new_run not in members and len(members) == row.width
        pool_id = f"s{row.width}-{row.repeat}-{row.handling}"
        pools.build_pool(wh, "c", depth=2, runs=members, pool_id=pool_id, qrels_id=completed)
        assert row.unpooled_mean == pytest.approx(mean(row.new_run, pool_id, row.handling))
        assert row.true_mean == pytest.approx(mean(row.new_run, completed))
        assert row.bias == pytest.approx(row.unpooled_mean - row.true_mean)
        if row.handling != "nonrelevant":
            assert pd.isna(row.loo_adjustment)
            continue
        # Algorithm 1: s against Q and against Q restricted to Pool((S \ {s}) + {r})
        deltas = []
        for s in members:
            left_id = f"{pool_id}-without-{s}"
            kept = [m for m in members if m != s] + [row.new_run]
            pools.build_pool(wh, "c", depth=2, runs=kept, pool_id=left_id, qrels_id=pool_id)
            deltas.append(mean(s, pool_id) - mean(s, left_id))
        assert row.loo_adjustment == pytest.approx(np.mean(deltas))
        assert row.loo_adjusted == pytest.approx(row.unpooled_mean + np.mean(deltas))


def test_vectorised_algorithm3_equals_a_per_sample_loop() -> None:
    gen = np.random.default_rng(4)
    true = gen.random((3, N_TOPICS))
    unpooled = true - gen.random((3, N_TOPICS)) * 0.3
    topics = pool_bias.draw_common_topics(3, 5, N_TOPICS, 2, rng=9)
    errors = pool_bias.common_topics_errors(true, unpooled, topics)
    ids = [f"q{i}" for i in range(N_TOPICS)]
    for i in range(3):
        mu = true[i].mean()
        assert errors["unadjusted"][i] == pytest.approx(abs(unpooled[i].mean() - mu))
        for j in range(5):
            common = [ids[k] for k in topics[i, j]]
            scores = pd.DataFrame({"query_id": ids, "unpooled": unpooled[i], "true": true[i]})
            row = adjust.adjust_common_topics(scores, common, resamples=10, rng=0).iloc[0]
            assert errors["adjusted"][i, j] == pytest.approx(abs(row["adjusted"] - mu))
            assert errors["mixed"][i, j] == pytest.approx(abs(row["mixed"] - mu))
            assert errors["sampled"][i, j] == pytest.approx(abs(row["sampled"] - mu))
            a, big_a = row["a"], (true[i] - unpooled[i]).mean()
            assert errors["helps"][i, j] == (0 < a / big_a < 2)


def test_experiment_summaries_are_the_means_of_the_samples() -> None:
    out = _run(_collection(8), store=False)
    samples, summary = out["samples"], out["summary"]
    for row in summary.itertuples():
        part = samples[(samples["handling"] == row.handling) & (samples["width"] == row.width)]
        assert row.bias_mean == pytest.approx(part["bias"].mean())
        assert row.bias_median == pytest.approx(part["bias"].median())
        assert row.mae_unadjusted == pytest.approx(part["bias"].abs().mean())
    ct = out["common_topics"]
    assert ct["replicates"].unique().tolist() == [4 * 5]
    assert ct["fpc_factor"].tolist()[:2] == pytest.approx([np.sqrt(4 / 12), np.sqrt(3 / 18)])


def test_draws_are_without_replacement_and_respect_the_manual_setting() -> None:
    new, members = pool_bias.draw_pools(3, 50, pool_candidates=list("abcd"), rng=1)
    assert all(len({n, *m}) == 4 for n, m in zip(new, members, strict=True))
    assert set(new) == set("abcd")  # every run can be the new run
    new, members = pool_bias.draw_pools(2, 20, pool_candidates=list("xyz"), new_candidates=["m1", "m2"], rng=1)
    assert set(new) <= {"m1", "m2"} and all(set(m) <= set("xyz") for m in members)
    idx = pool_bias.draw_common_topics(50, 40, 6, 3, rng=2)
    assert (np.sort(idx, axis=-1)[..., 1:] != np.sort(idx, axis=-1)[..., :-1]).all()
    # each topic is a common topic in about n/N of the samples
    assert np.bincount(idx.ravel(), minlength=6) / idx.shape[0] / idx.shape[1] == pytest.approx(0.5, abs=0.05)
    with pytest.raises(EvalWhError, match="width 4 needs 5 eligible runs, found 4"):
        pool_bias.draw_pools(4, 1, pool_candidates=list("abcd"))


def test_manual_setting_draws_the_best_manual_runs_and_automatic_pools() -> None:
    wh = _collection(6)
    with pytest.raises(NotFoundError, match="needs run types"):
        _run(wh, setting="manual-vs-automatic", store=False)
    types = {"r0": "manual", "r1": "manual", "r2": "manual"}
    for run, kind in [(f"r{i}", types.get(f"r{i}", "automatic")) for i in range(7)]:
        wh.con.execute("UPDATE runs SET run_type = ? WHERE run_id = ?", [kind, run])
    out = _run(wh, setting="manual-vs-automatic", best_manual=2, widths=[2, 3], store=False)
    true = wh.evaluate(["P@3"], collection="c", runs=list(types), qrels_id="default-completed")
    best = true.sort_values("value", ascending=False, kind="stable")["run_id"].tolist()[:2]
    assert set(out["samples"]["new_run"]) <= set(best)
    assert all(not set(m) & set(types) for m in out["samples"]["pool_runs"])


def test_bad_options_name_the_problem() -> None:
    wh = _collection(1)
    with pytest.raises(EvalWhError, match="unknown setting 'x' or handling 'both'"):
        _run(wh, setting="x", store=False)
    with pytest.raises(EvalWhError, match=r"common-topic counts must lie in 1..6, got \[2, 9\]"):
        _run(wh, common_topics=[2, 9], store=False)
    with pytest.raises(EvalWhError, match="nDCG@10: not available on per-run pool qrels"):
        _run(wh, measure="nDCG@10", store=False)


def test_cli_pool_bias_plot_and_stored_adjustment(tmp_path: Path) -> None:
    from evalwh.cli import app

    db = tmp_path / "w.duckdb"
    source = _collection(2)
    with Warehouse(db) as wh:
        wh.ingest_qrels(source.query("SELECT query_id, doc_id, relevance FROM qrels"), collection="c")
        wh.ingest_runs(source.query("SELECT run_id, query_id, doc_id, score FROM run_results"), collection="c")
    runner = CliRunner()
    env = {"COLUMNS": "200", "TERMINAL_WIDTH": "200"}
    args = ["experiment", "pool-bias", "-c", "c", "--widths", "2", "-I", "3", "-J", "4", "--common-topics", "2,4"]
    result = runner.invoke(app, [*args, "-m", "P@3", "--pool-depth", "2", "--seed", "5", "--db", str(db), "-f", "csv"], env=env)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("handling,width,n_common,replicates,mae_unadjusted,mae_mixed,mae_adjusted")
    assert len(lines) == 1 + 2 * 2 and lines[1].startswith("nonrelevant,2,2,12,")
    bad = runner.invoke(app, ["experiment", "pool-bias", "-c", "c", "--widths", "2,x", "--db", str(db)], env=env)
    assert bad.exit_code == 2 and "--widths '2,x': give comma-separated integers" in bad.output
    figure = tmp_path / "bias.png"
    plotted = runner.invoke(app, ["plot", "pool-bias", "-c", "c", "-o", str(figure), "--db", str(db)], env=env)
    assert plotted.exit_code == 0, plotted.output
    assert figure.read_bytes()[:4] == b"\x89PNG"
    with Warehouse(db) as wh:
        pools.build_pool(wh, "c", depth=2, runs=["r0", "r1", "r2"], pool_id="P")
    adjusted = runner.invoke(app, ["adjust", "r4", "-c", "c", "--pool", "P", "-m", "P@3", "--db", str(db), "-f", "csv"], env=env)
    assert adjusted.exit_code == 0, adjusted.output
    with Warehouse(db) as wh:
        stored = wh.query("SELECT run_id, pool_id, method, n_runs, adjusted, common_topics FROM pool_adjustments")
    header, row = adjusted.output.splitlines()
    values = dict(zip(header.split(","), row.split(","), strict=True))
    assert stored[["run_id", "pool_id", "method", "n_runs"]].values.tolist() == [["r4", "P", "leave-one-out", 3]]
    assert stored["adjusted"].iloc[0] == pytest.approx(float(values["adjusted"]))
    for command in (["experiment", "pool-bias"], ["adjust"]):
        helped = runner.invoke(app, [*command, "--help"], env=env)
        assert helped.exit_code == 0 and "Example: evalwh" in helped.output
