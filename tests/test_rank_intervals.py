"""Rank intervals and tiers (evalwh.stats.rank_intervals, methods §13) against scipy, pandas and statsmodels."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from evalwh.errors import InsufficientDataError
from evalwh.stats import rank_intervals as ri
from evalwh.stats.compare import rank_table


def _matrix(k: int = 12, n: int = 30, seed: int = 7) -> np.ndarray:
    """A runs x topics matrix with run effects of graded size and topic effects, in [0, 1]."""
    rng = np.random.default_rng(seed)
    run_effect = np.linspace(0.0, 0.25, k)[:, None]
    topic_effect = rng.uniform(0.1, 0.6, n)[None, :]
    return np.clip(topic_effect + run_effect + rng.normal(0, 0.12, (k, n)), 0, 1)


def _frame(values: np.ndarray, measure: str = "AP") -> pd.DataFrame:
    k, n = values.shape
    return pd.DataFrame(
        {
            "run_id": np.repeat([f"r{i:02d}" for i in range(k)], n),
            "query_id": np.tile([str(t) for t in range(n)], k),
            "measure": measure,
            "value": values.ravel(),
        }
    )


def test_competition_ranks_equal_pandas_min_rank() -> None:
    rng = np.random.default_rng(3)
    means = rng.integers(0, 6, (50, 9)) / 5  # many ties
    expected = pd.DataFrame(means).rank(axis=1, method="min", ascending=False).to_numpy(dtype=int)
    assert (ri.competition_ranks(means) == expected).all()


def test_bootstrap_ranks_equal_scipy_bootstrap_distribution() -> None:
    """scipy.stats.bootstrap (paired samples, same generator) draws the same topics: the same ranks."""
    values = _matrix(k=6, n=20)
    seed, replicates = 11, 500
    ours = ri.bootstrap_ranks(values, replicates=replicates, seed=seed)
    for run in range(values.shape[0]):

        def rank_of(*samples: np.ndarray, axis: int = -1, run: int = run) -> np.ndarray:
            means = np.round(np.stack([s.mean(axis=axis) for s in samples], axis=-1), 12)
            return pd.DataFrame(np.atleast_2d(means)).rank(axis=1, method="min", ascending=False).to_numpy()[:, run]

        result = stats.bootstrap(
            tuple(values), rank_of, paired=True, vectorized=True, n_resamples=replicates,
            method="percentile", rng=np.random.default_rng(seed),
        )  # fmt: skip
        assert (result.bootstrap_distribution == ours[:, run]).all(), run


def test_intervals_are_the_quantiles_of_the_bootstrap_ranks() -> None:
    values = _matrix()
    out = ri.rank_intervals(values, replicates=1000, seed=5, confidence=0.9)
    ranks = ri.bootstrap_ranks(values, replicates=1000, seed=5)
    # the 5% and 95% points of each run's empirical distribution, counted by hand
    for run in range(values.shape[0]):
        column = np.sort(ranks[:, run])
        assert out.low[run] == column[int(np.ceil(0.05 * 1000)) - 1]
        assert out.high[run] == column[int(np.ceil(0.95 * 1000)) - 1]
    assert (out.rank == pd.Series(values.mean(axis=1)).rank(method="min", ascending=False).to_numpy()).all()
    assert (out.low <= out.high).all()


def test_default_seed_gives_the_same_intervals_at_every_call() -> None:
    values = _matrix()
    first, second = ri.rank_intervals(values), ri.rank_intervals(values)
    assert (first.low == second.low).all() and (first.high == second.high).all()
    assert first.seed == ri.DEFAULT_SEED and first.replicates == ri.DEFAULT_REPLICATES


def test_a_run_better_on_every_topic_ranks_first_in_every_replicate() -> None:
    values = _matrix(k=5, n=25)
    values[2] = values.max(axis=0) + 0.01
    out = ri.rank_intervals(values)
    assert (out.rank[2], out.low[2], out.high[2]) == (1, 1, 1)


def test_identical_runs_share_every_rank() -> None:
    values = _matrix(k=4, n=15)
    values = np.vstack([values, values[1]])
    ranks = ri.bootstrap_ranks(values, replicates=300)
    assert (ranks[:, 1] == ranks[:, 4]).all()


def test_intervals_do_not_depend_on_the_order_of_the_runs() -> None:
    """Runs given in another order get the same intervals (with identical runs among them: a
    matrix product may round one row's mean differently by its position, a row sum does not)."""
    rng = np.random.default_rng(8)
    values = np.round(rng.uniform(size=(40, 50)), 4)
    values[20:] = values[:20]  # twenty pairs of identical runs
    order = rng.permutation(40)
    first = ri.rank_intervals(values)
    second = ri.rank_intervals(values[order])
    for name in ("rank", "low", "high"):
        assert (getattr(first, name)[order] == getattr(second, name)).all(), name


def _tiers_by_hand(values: np.ndarray, alpha: float) -> list[int]:
    """Paired t-tests (scipy) over all pairs, Holm (statsmodels), then the tiers' definition in a loop."""
    k = values.shape[0]
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    p = [stats.ttest_rel(values[i], values[j]).pvalue for i, j in pairs]
    reject = multipletests(p, alpha=alpha, method="holm")[0]
    distinct = {frozenset(pair): bool(r) for pair, r in zip(pairs, reject, strict=True)}
    means = values.mean(axis=1)
    tier = [0] * k
    current = 0
    for leader in sorted(range(k), key=lambda i: -means[i]):
        if tier[leader]:
            continue
        current += 1
        for other in range(k):
            if not tier[other] and (other == leader or not distinct[frozenset((leader, other))]):
                tier[other] = current
    return tier


def test_rank_table_tiers_equal_scipy_t_tests_with_statsmodels_holm() -> None:
    values = _matrix(k=12, n=30)
    table = rank_table(_frame(values))
    expected = dict(zip([f"r{i:02d}" for i in range(12)], _tiers_by_hand(values, 0.05), strict=True))
    assert dict(zip(table["run_id"], table["tier"], strict=True)) == expected
    assert table["tier"].nunique() > 1  # the example separates the runs into several tiers
    assert list(table["rank"]) == sorted(table["rank"])
    assert table.attrs["test"] == "t" and table.attrs["correction"] == "holm"
    assert table.attrs["seed"] == ri.DEFAULT_SEED and table.attrs["replicates"] == ri.DEFAULT_REPLICATES
    assert list(table.columns) == ri.TABLE_COLUMNS


def test_rank_table_uses_only_the_topics_every_run_has() -> None:
    values = _matrix(k=4, n=10)
    frame = _frame(values)
    frame = frame[~((frame["run_id"] == "r01") & (frame["query_id"] == "3"))]
    table = rank_table(frame)
    kept = np.delete(values, 3, axis=1)
    assert set(table["n_topics"]) == {9}
    assert np.allclose(table.set_index("run_id").loc[[f"r{i:02d}" for i in range(4)], "mean"], kept.mean(axis=1))


def test_tiers_are_not_always_contiguous() -> None:
    # b is indistinguishable from the leader a, c is distinct from a; d is close to a but not to c
    distinct = np.array([[0, 0, 1, 0], [0, 0, 0, 0], [1, 0, 0, 1], [0, 0, 1, 0]], dtype=bool)
    assert ri.tiers([0.9, 0.8, 0.7, 0.6], distinct).tolist() == [1, 1, 2, 1]


def test_bad_input_says_what_is_wrong() -> None:
    with pytest.raises(InsufficientDataError, match="at least 2 runs and 2 topics"):
        ri.rank_intervals(np.ones((1, 5)))
    with pytest.raises(InsufficientDataError, match="NaN"):
        ri.rank_intervals(np.array([[0.1, np.nan], [0.2, 0.3]]))
    with pytest.raises(InsufficientDataError, match="confidence"):
        ri.rank_intervals(np.ones((2, 3)), confidence=1.5)
    with pytest.raises(InsufficientDataError, match="symmetric"):
        ri.tiers([0.2, 0.1], np.array([[0, 1], [0, 0]], dtype=bool))
    pairs = pd.DataFrame({"run_a": ["x"], "run_b": ["y"], "reject": [True]})
    with pytest.raises(InsufficientDataError, match="'x', 'z' is missing"):
        ri.distinguishable(pairs, ["x", "y", "z"])


# -- evalwh compare --ranks, evalwh.ranks, Warehouse.compare(ranks=True) -----------------------


def _cli(*args: str) -> tuple[int, str, str]:
    from typer.testing import CliRunner

    from evalwh.cli import app

    result = CliRunner(env={"COLUMNS": "200"}).invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def _expected(values: np.ndarray) -> pd.DataFrame:
    """Ranks by pandas, intervals from the bootstrap ranks' quantiles, tiers by scipy + statsmodels."""
    names = [f"r{i:02d}" for i in range(values.shape[0])]
    # the topics in the order compare aligns them (sorted as text), which the draws index
    by_name = values[:, np.argsort([str(t) for t in range(values.shape[1])])]
    boot = ri.bootstrap_ranks(by_name, replicates=ri.DEFAULT_REPLICATES, seed=ri.DEFAULT_SEED)
    return pd.DataFrame(
        {
            "run_id": names,
            "rank": pd.Series(values.mean(axis=1)).rank(method="min", ascending=False).astype(int).to_numpy(),
            "rank_low": np.sort(boot, axis=0)[int(np.ceil(0.025 * len(boot))) - 1],
            "rank_high": np.sort(boot, axis=0)[int(np.ceil(0.975 * len(boot))) - 1],
            "tier": _tiers_by_hand(values, 0.05),
        }
    ).set_index("run_id")


@pytest.mark.parametrize("baseline", [[], ["-b", "r03"]])
def test_compare_ranks_from_a_score_file(tmp_path, baseline: list[str]) -> None:
    values = _matrix(k=10, n=25, seed=2)
    path = tmp_path / "scores.csv"
    _frame(values, "nDCG@10").to_csv(path, index=False)
    code, out, err = _cli("compare", "--scores", str(path), "--ranks", *baseline, "-f", "csv")
    assert code == 0, err
    assert "note: rank interval: the 95% percentile interval" in err
    got = pd.read_csv(io.StringIO(out), dtype={"run_id": str}).set_index("run_id")
    expected = _expected(values)
    pd.testing.assert_frame_equal(got.loc[expected.index, list(expected.columns)], expected, check_dtype=False)
    code, out, _ = _cli("compare", "--scores", str(path), "--ranks", *baseline)
    assert code == 0
    assert "rank interval" in out and "2,000 bootstrap samples" in out and "seed 0" in out


def test_compare_ranks_on_a_warehouse_and_the_api_agree(tmp_path) -> None:
    import evalwh
    from evalwh.io.demo_data import write_demo

    files = write_demo(tmp_path / "demo")
    db = tmp_path / "wh.duckdb"
    with evalwh.Warehouse(db) as wh:
        wh.ingest_qrels(files.qrels, collection="demo")
        wh.ingest_runs(files.runs, collection="demo")
    per_topic = evalwh.evaluate(files.qrels, files.runs, ["AP"], per_query=True)
    wide = per_topic.pivot(index="run_id", columns="query_id", values="value").sort_index()
    code, out, err = _cli("compare", "-c", "demo", "--all-runs", "-m", "AP", "--ranks", "--db", str(db), "-f", "csv")
    assert code == 0, err
    got = pd.read_csv(io.StringIO(out)).set_index("run_id").loc[wide.index]
    boot = ri.bootstrap_ranks(wide.to_numpy(), seed=ri.DEFAULT_SEED)
    assert got["tier"].tolist() == _tiers_by_hand(wide.to_numpy(), 0.05)
    assert got["rank_low"].tolist() == np.sort(boot, axis=0)[49].tolist()
    assert got["rank_high"].tolist() == np.sort(boot, axis=0)[1949].tolist()
    api = evalwh.ranks(per_topic[["run_id", "query_id", "measure", "value"]]).set_index("run_id").loc[wide.index]
    columns = ["rank", "rank_low", "rank_high", "tier"]
    pd.testing.assert_frame_equal(api[columns], got[columns], check_dtype=False, check_names=False)
    via_files = evalwh.compare(files.qrels, files.runs, ["AP"], ranks=True).ranks.set_index("run_id").loc[wide.index]
    pd.testing.assert_frame_equal(via_files[columns], got[columns], check_dtype=False, check_names=False)
    with evalwh.Warehouse.open_reader(db) as wh:
        assert wh.compare("AP", collection="demo", ranks=True).ranks["tier"].notna().all()


def test_compare_ranks_with_decision_is_one_error_line(tmp_path) -> None:
    code, _, err = _cli("compare", "a", "b", "--decision", "--ranks", "--db", str(tmp_path / "none.duckdb"))
    assert code != 0
    assert "--ranks do not apply" in err and len(err.strip().splitlines()) == 1
    code, _, err = _cli("compare", "--scores", str(tmp_path / "none.csv"), "--ranks", "--layout", "wide")
    assert code != 0 and "--layout, --compact and --all-columns do not apply" in err


def test_trec8_ranks_of_129_runs(trec8_ingest) -> None:
    """TREC-8's 129 runs on AP: means are the official MAP (trec_eval, 4 decimals), tiers are
    scipy's paired t-tests with statsmodels' Holm over all 8,256 pairs, intervals the quantiles
    of the bootstrap ranks; the command and Warehouse.compare(ranks=True) print the same."""
    import evalwh
    from conftest import TREC8

    db = trec8_ingest[0]
    code, out, err = _cli("compare", "-c", "trec8", "--all-runs", "-m", "AP", "--ranks", "--db", str(db), "-f", "csv")
    assert code == 0, err
    got = pd.read_csv(io.StringIO(out), dtype={"run_id": str}).set_index("run_id")
    official = pd.read_csv(TREC8 / "official-scores.map", sep=" ", header=None, names=["run", "map"]).set_index("run")
    assert len(got) == 129
    np.testing.assert_allclose(got.loc[official.index, "mean"], official["map"], atol=5e-5)
    with evalwh.Warehouse.open_reader(db) as wh:
        per_topic = wh.evaluate("AP", collection="trec8", per_query=True)
        api = wh.compare("AP", collection="trec8", ranks=True).ranks.set_index("run_id")
    wide = per_topic.pivot(index="run_id", columns="query_id", values="value")
    wide = wide[sorted(wide.columns)].sort_index()
    values = wide.to_numpy()
    assert got.loc[wide.index, "tier"].tolist() == _tiers_by_hand(values, 0.05)
    boot = np.sort(ri.bootstrap_ranks(values), axis=0)
    assert got.loc[wide.index, "rank_low"].tolist() == boot[49].tolist()
    assert got.loc[wide.index, "rank_high"].tolist() == boot[1949].tolist()
    columns = ["rank", "rank_low", "rank_high", "tier"]
    pd.testing.assert_frame_equal(api.loc[wide.index, columns], got.loc[wide.index, columns], check_dtype=False)
