"""Significance tests: the worked example of methods §4.6, agreement with scipy, properties."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from evalwh.errors import InsufficientDataError
from evalwh.stats import significance as sg

# methods §4.6: 4 runs, 5 topics
M = {
    "s1": [0.60, 0.70, 0.65, 0.75, 0.70],
    "s2": [0.20, 0.30, 0.25, 0.35, 0.30],
    "s3": [0.55, 0.60, 0.70, 0.65, 0.60],
    "s4": [0.25, 0.35, 0.30, 0.30, 0.30],
}
A = {
    "s1": [0.80, 0.75, 0.85, 0.80, 0.80],
    "s2": [0.95, 0.90, 1.00, 0.95, 0.95],
    "s3": [0.80, 0.82, 0.78, 0.80, 0.80],
    "s4": [0.60, 0.55, 0.65, 0.60, 0.60],
}


def long(values: dict[str, list[float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [(run, f"t{i}", v) for run, vs in values.items() for i, v in enumerate(vs)],
        columns=["run_id", "query_id", "value"],
    )


def test_worked_example_anova_tables() -> None:
    m = sg.anova_table(long(M))
    a = sg.anova_table(long(A))
    assert m["F"] == pytest.approx(79.7576, abs=1e-4)
    assert m["p_value"] == pytest.approx(7.7e-10, rel=0.01)
    assert m["mse"] == pytest.approx(0.00275)
    assert (m["df_between"], m["df_error"]) == (3.0, 16.0)
    assert a["F"] == pytest.approx(104.4304, abs=1e-4)
    assert a["mse"] == pytest.approx(0.0009875)


def test_worked_example_bonferroni_outcomes() -> None:
    m = sg.pairwise(long(M))
    a = sg.pairwise(long(A))
    assert list(zip(m["run_a"], m["run_b"], strict=True)) == list(itertools.combinations(M, 2))
    assert m["outcome"].tolist() == [1, 0, 1, -1, 0, 1]
    assert a["outcome"].tolist() == [-1, 0, 1, 1, 1, 1]
    assert m["mean_diff"].round(10).tolist() == [0.40, 0.06, 0.38, -0.34, -0.02, 0.32]


def test_worked_example_minimum_significant_difference() -> None:
    # t_{1-0.05/12, 16} = 3.008334; MSD = t * sqrt(MSE * 2 / n): M 0.099775, A 0.059789
    assert stats.t.ppf(1 - 0.05 / 12, 16) == pytest.approx(3.008334, abs=1e-6)
    m = sg.comparison_intervals(long(M))
    a = sg.comparison_intervals(long(A))
    assert 2 * m["half_width"].iloc[0] == pytest.approx(0.099775, abs=1e-6)
    assert 2 * a["half_width"].iloc[0] == pytest.approx(0.059789, abs=1e-6)
    assert m["mean"].round(10).tolist() == [0.68, 0.28, 0.62, 0.30]


def _textbook(values: dict[str, list[float]], alpha: float) -> list[int]:
    """One-way ANOVA and Bonferroni by the textbook sums, in plain Python."""
    groups = list(values.values())
    k, n = len(groups), len(groups[0])
    grand = sum(sum(g) for g in groups) / (k * n)
    means = [sum(g) / n for g in groups]
    ss_between = sum(n * (m - grand) ** 2 for m in means)
    ss_within = sum((x - m) ** 2 for g, m in zip(groups, means, strict=True) for x in g)
    df_b, df_w = k - 1, k * n - k
    f = (ss_between / df_b) / (ss_within / df_w)
    if stats.f.sf(f, df_b, df_w) >= alpha:
        return [0] * (k * (k - 1) // 2)
    mse = ss_within / df_w
    pairs = k * (k - 1) // 2
    crit = stats.t.ppf(1 - alpha / (2 * pairs), df_w)
    msd = crit * math.sqrt(mse * 2 / n)
    out = []
    for i, j in itertools.combinations(range(k), 2):
        d = means[i] - means[j]
        out.append(0 if abs(d) <= msd else (1 if d > 0 else -1))
    return out


@pytest.mark.parametrize("alpha", [0.05, 0.01, 1e-8])
@pytest.mark.parametrize("values", [M, A], ids=["M", "A"])
def test_anova_bonferroni_agrees_with_textbook(
    values: dict[str, list[float]], alpha: float
) -> None:
    assert sg.pairwise(long(values), alpha=alpha)["outcome"].tolist() == _textbook(values, alpha)


def test_anova_gate_blocks_pairs() -> None:
    # the pooled t of (s1, s2) alone is significant, but with noisy other runs F is not
    values = {"a": [0.0, 1.0, 0.0, 1.0], "b": [1.0, 0.0, 1.0, 0.0], "c": [0.5, 0.5, 0.5, 0.5]}
    result = sg.pairwise(long(values))
    assert result["gate_p_value"].iloc[0] == pytest.approx(1.0)
    assert result["outcome"].tolist() == [0, 0, 0]


def test_worked_example_cross_checks_t_and_wilcoxon() -> None:
    pair = long({"s1": M["s1"], "s3": M["s3"]})
    t = sg.pairwise(pair, test="t", correction="none")
    assert t["statistic"].iloc[0] == pytest.approx(2.0580, abs=1e-4)
    assert t["p_value"].iloc[0] == pytest.approx(0.1087, abs=1e-4)
    w = sg.pairwise(pair, test="wilcoxon", correction="none")
    assert w["p_value"].iloc[0] == pytest.approx(0.1875)
    assert t["outcome"].iloc[0] == w["outcome"].iloc[0] == 0


def _random_scores(seed: int, k: int = 6, n: int = 16) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.1, 0.6, size=(k, 1))
    values = np.clip(base + rng.normal(0, 0.15, size=(k, n)), 0, 1).round(2)
    return pd.DataFrame(
        [(f"r{i}", f"q{j:02d}", values[i, j]) for i in range(k) for j in range(n)],
        columns=["run_id", "query_id", "value"],
    )


def test_paired_tests_agree_with_direct_scipy_calls() -> None:
    scores = _random_scores(7)
    wide = scores.pivot(index="run_id", columns="query_id", values="value")
    t = sg.pairwise(scores, test="t", correction="none")
    w = sg.pairwise(scores, test="wilcoxon", correction="none")
    for row_t, row_w in zip(t.itertuples(), w.itertuples(), strict=True):
        x, y = wide.loc[row_t.run_a].to_numpy(), wide.loc[row_t.run_b].to_numpy()
        direct_t = stats.ttest_rel(x, y)
        assert row_t.statistic == pytest.approx(direct_t.statistic, rel=1e-9)
        assert row_t.p_value == pytest.approx(direct_t.pvalue, rel=1e-9)
        direct_w = stats.wilcoxon(x, y, zero_method="wilcox")
        assert row_w.p_value == pytest.approx(direct_w.pvalue, rel=1e-9)
    assert len(t) == 15


def test_one_way_anova_agrees_with_f_oneway() -> None:
    scores = _random_scores(3)
    wide = scores.pivot(index="run_id", columns="query_id", values="value")
    direct = stats.f_oneway(*wide.to_numpy())
    table = sg.anova_table(scores)
    assert table["F"] == pytest.approx(direct.statistic)
    assert table["p_value"] == pytest.approx(direct.pvalue)


def test_blocked_anova_with_two_runs_is_the_paired_t_test() -> None:
    scores = _random_scores(11, k=2)
    table = sg.anova_table(scores, blocked=True)
    paired = sg.pairwise(scores, test="t", correction="none")
    blocked = sg.pairwise(scores, test="anova2", correction="none")
    assert table["F"] == pytest.approx(paired["statistic"].iloc[0] ** 2)
    assert table["df_error"] == 15.0
    assert blocked["statistic"].iloc[0] == pytest.approx(paired["statistic"].iloc[0])
    assert blocked["p_value"].iloc[0] == pytest.approx(paired["p_value"].iloc[0])


def test_randomization_test_matches_exact_sign_flip_distribution() -> None:
    # 5 topics, all differences positive and distinct: exact two-sided p = 2/32
    pair = long({"a": [0.5, 0.6, 0.7, 0.8, 0.9], "b": [0.4, 0.4, 0.4, 0.4, 0.4]})
    p = sg.pairwise(pair, test="randomization", correction="none", n_resamples=20000, rng=1)
    assert p["p_value"].iloc[0] == pytest.approx(2 / 32, abs=0.006)
    again = sg.pairwise(pair, test="randomization", correction="none", n_resamples=20000, rng=1)
    assert again["p_value"].iloc[0] == p["p_value"].iloc[0]


def test_randomization_p_value_counts_the_observed_labelling() -> None:
    pair = long({"a": [1.0, 1.0], "b": [1.0, 1.0]})
    p = sg.pairwise(pair, test="randomization", correction="none", n_resamples=99, rng=0)
    assert p["p_value"].iloc[0] == 1.0
    assert p["outcome"].iloc[0] == 0


def test_constant_differences() -> None:
    # identical runs: no evidence; a constant non-zero difference: certain
    same = long({"a": [0.1, 0.2, 0.3], "b": [0.1, 0.2, 0.3], "c": [0.2, 0.3, 0.4]})
    t = sg.pairwise(same, test="t", correction="none")
    assert t["p_value"].tolist() == [1.0, 0.0, 0.0]
    assert t["outcome"].tolist() == [0, -1, -1]
    w = sg.pairwise(same, test="wilcoxon", correction="none")
    assert w["p_value"].iloc[0] == 1.0
    assert w["statistic"].tolist() == [0.0, -6.0, -6.0]


def test_holm_and_bonferroni() -> None:
    p = np.array([0.01, 0.04, 0.03, 0.005, np.nan])
    assert sg.adjust_p(p, "bonferroni")[:4].tolist() == pytest.approx([0.04, 0.16, 0.12, 0.02])
    assert sg.adjust_p(p, "holm")[:4].tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert np.isnan(sg.adjust_p(p, "holm")[4])
    assert sg.adjust_p(p, "none")[:4].tolist() == p[:4].tolist()


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30))
def test_holm_lies_between_raw_and_bonferroni(values: list[float]) -> None:
    p = np.array(values)
    holm = sg.adjust_p(p, "holm")
    bonf = sg.adjust_p(p, "bonferroni")
    assert np.all(p <= holm + 1e-15)
    assert np.all(holm <= bonf + 1e-15)
    order = np.argsort(p, kind="stable")
    assert np.all(np.diff(holm[order]) >= -1e-15)  # monotone in the raw p-values


def test_kendall_tau_worked_example() -> None:
    runs = ["s1", "s2", "s3", "s4"]
    out = sg.kendall_tau(
        pd.Series([0.4, 0.3, 0.2, 0.1], runs), pd.Series([0.5, 0.2, 0.3, 0.1], runs)
    )
    assert out["tau"] == pytest.approx(4 / 6)
    assert out["n_runs"] == 4
    with pytest.raises(InsufficientDataError, match="only 1 run"):
        sg.kendall_tau(pd.Series([0.1], ["a"]), pd.Series([0.2], ["a"]))


def test_kendall_tau_b_with_ties_is_scipys() -> None:
    x = pd.Series([0.4, 0.4, 0.2, 0.1, 0.3], list("abcde"))
    y = pd.Series([0.1, 0.2, 0.2, 0.3, 0.5], list("edcba"))  # aligned by index, not position
    expected = stats.kendalltau(x.to_numpy(), y.reindex(x.index).to_numpy()).statistic
    assert sg.kendall_tau(x, y)["tau"] == pytest.approx(expected)


def test_validation_messages() -> None:
    with pytest.raises(InsufficientDataError, match=r"missing columns \['value'\]"):
        sg.pairwise(pd.DataFrame({"run_id": ["a"], "query_id": ["1"]}))
    with pytest.raises(InsufficientDataError, match="at least two runs"):
        sg.pairwise(long({"a": [0.1, 0.2]}))
    with pytest.raises(InsufficientDataError, match="only 1 topic"):
        sg.pairwise(long({"a": [0.1], "b": [0.2]}))
    with pytest.raises(InsufficientDataError, match=r"no values for run\(s\) \['z'\]"):
        sg.pairwise(long(M), runs=["s1", "z"])


def test_undefined_topics_are_dropped_for_all_runs() -> None:
    scores = long({"a": [0.1, 0.9, 0.5], "b": [0.2, np.nan, 0.4]})
    result = sg.pairwise(scores, test="t", correction="none")
    assert result["n_topics"].iloc[0] == 2
    assert result["mean_a"].iloc[0] == pytest.approx(0.3)


TESTS = ["anova", "anova2", "t", "wilcoxon", "randomization"]


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), test=st.sampled_from(TESTS))
def test_reversing_the_run_order_mirrors_outcomes(seed: int, test: str) -> None:
    scores = _random_scores(seed, k=4, n=16)
    runs = sorted(scores["run_id"].unique())
    forward = sg.pairwise(scores, test=test, runs=runs, n_resamples=500, rng=seed)
    backward = sg.pairwise(scores, test=test, runs=runs[::-1], n_resamples=500, rng=seed)
    backward = backward.rename(columns={"run_a": "run_b", "run_b": "run_a"})
    merged = forward.merge(backward, on=["run_a", "run_b"], suffixes=("", "_r"))
    assert len(merged) == 6
    assert (merged["outcome"] == -merged["outcome_r"]).all()
    if test != "randomization":  # the resampled p-values differ by the sign vectors' use
        np.testing.assert_allclose(merged["p_value"], merged["p_value_r"], rtol=1e-9)


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), test=st.sampled_from(TESTS[:4]), data=st.data())
def test_topic_order_does_not_matter(seed: int, test: str, data: st.DataObject) -> None:
    scores = _random_scores(seed, k=4, n=16)
    topics = sorted(scores["query_id"].unique())
    shuffled = data.draw(st.permutations(topics))
    relabel = dict(zip(topics, shuffled, strict=True))
    other = scores.assign(query_id=scores["query_id"].map(relabel)).sample(
        frac=1, random_state=seed
    )
    a = sg.pairwise(scores, test=test)
    b = sg.pairwise(other, test=test)
    pd.testing.assert_frame_equal(a, b, rtol=1e-9)
