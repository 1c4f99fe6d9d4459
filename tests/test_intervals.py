"""Every interval belongs to its test: Tukey's simultaneous intervals, the resampling intervals,
the Bonferroni level, and reject exactly when the interval excludes 0 (issue #28, item 2)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from evalwh.stats import family
from evalwh.stats.compare import compare
from conftest import TREC8
from test_comparisons import SAKAI, long_frame


def _scores(seed: int, k: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.1, 0.6, size=(k, 1))
    return np.clip(base + rng.normal(0, 0.15, size=(k, n)), 0, 1).round(3)


def _excludes_zero(pairs: pd.DataFrame) -> np.ndarray:
    return ((pairs["ci_low"] > 0) | (pairs["ci_high"] < 0)).to_numpy()


def test_tukey_half_width_by_hand_on_sakai_table_5_1() -> None:
    # Sakai's figures for Table 5.1: S_E = 0.8317 with phi_E = 38, 3 systems, 20 topics
    by_hand = stats.studentized_range.ppf(0.95, 3, 38) * np.sqrt(0.831666666666667 / 38 / 20)
    assert family.tukey_half_width(SAKAI, 0.05) == pytest.approx(by_hand, rel=1e-9)
    pairs = compare(long_frame(SAKAI), test="tukey").pairs
    assert (pairs["ci_high"] - pairs["mean_diff"]).to_numpy() == pytest.approx(by_hand, rel=1e-9)


def test_one_way_tukey_interval_equals_scipy_tukey_hsd() -> None:
    # the one-way case (error variance within runs, k(n-1) df) is scipy.stats.tukey_hsd's;
    # the two-way interval is the same formula with V_E and (k-1)(n-1) df
    values = _scores(3, k=4, n=15)
    k, n = values.shape
    mse = ((values - values.mean(axis=1, keepdims=True)) ** 2).sum() / (k * (n - 1))
    half = stats.studentized_range.ppf(0.95, k, k * (n - 1)) * np.sqrt(mse / n)
    interval = stats.tukey_hsd(*values).confidence_interval(0.95)
    diffs = values.mean(axis=1)[:, None] - values.mean(axis=1)[None, :]
    np.testing.assert_allclose(interval.low, diffs - half, atol=1e-6)
    np.testing.assert_allclose(interval.high, diffs + half, atol=1e-6)


@pytest.mark.skipif(not TREC8.is_dir(), reason="TREC-8 data not beside the checkout")
def test_tukey_intervals_on_trec8_ap() -> None:
    import evalwh

    runs = [TREC8 / "runs" / f"input.{r}.gz" for r in ("INQ604", "ok8amxc", "CL99SD", "fub99a")]
    result = evalwh.compare(TREC8 / "trec8.qrels", runs, ["AP"], test="tukey")
    half = (result.pairs["ci_high"] - result.pairs["mean_diff"]).round(4).unique()
    assert half.tolist() == [0.0505]
    assert (result.pairs["reject"].to_numpy() == _excludes_zero(result.pairs)).all()
    assert "Tukey's simultaneous" in result.families["interval"].iloc[0]


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    test=st.sampled_from(["t", "tukey", "randomized_tukey", "bootstrap", "anova2"]),
    correction=st.sampled_from(["none", "bonferroni"]),
    k=st.integers(2, 5),
)
def test_reject_exactly_when_the_interval_excludes_zero(seed: int, test: str, correction: str, k: int) -> None:
    frame = long_frame(_scores(seed, k=k, n=12))
    if test in ("tukey", "randomized_tukey"):
        correction = "none"
    pairs = compare(frame, test=test, correction=correction, n_resamples=400, rng=seed).pairs
    excludes = _excludes_zero(pairs)
    if test == "anova2":  # the ANOVA gate can only take rejections away
        assert not (pairs["reject"].to_numpy() & ~excludes).any()
        if (pairs["p_adjusted"] < 1).any():
            assert (pairs["reject"].to_numpy() == excludes).all()
    else:
        assert (pairs["reject"].to_numpy() == excludes).all()


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), correction=st.sampled_from(["holm", "bh", "by"]))
def test_a_rejection_under_a_stepwise_correction_has_an_interval_without_zero(seed: int, correction: str) -> None:
    pairs = compare(long_frame(_scores(seed, k=4, n=12)), test="t", correction=correction).pairs
    assert not (pairs["reject"].to_numpy() & ~_excludes_zero(pairs)).any()


@pytest.mark.parametrize("test", ["wilcoxon", "sign", "randomization"])
def test_tests_without_an_interval_print_none(test: str) -> None:
    result = compare(long_frame(_scores(1, k=3, n=12)), test=test, n_resamples=200, rng=1)
    assert result.pairs[["ci_low", "ci_high"]].isna().all().all()
    assert result.families["interval"].iloc[0].startswith("interval: none")


def test_bonferroni_intervals_are_wider_by_the_family_size() -> None:
    frame = long_frame(_scores(2, k=4, n=12))
    plain = compare(frame, test="t", correction="none").pairs
    adjusted = compare(frame, test="t", correction="bonferroni").pairs
    t = stats.t.ppf(1 - 0.05 / 12, 11) / stats.t.ppf(1 - 0.05 / 2, 11)
    width = (adjusted["ci_high"] - adjusted["ci_low"]) / (plain["ci_high"] - plain["ci_low"])
    assert width.to_numpy() == pytest.approx(t)
    assert compare(frame, test="t", correction="bonferroni").families["interval"].iloc[0].startswith("99.17%")
