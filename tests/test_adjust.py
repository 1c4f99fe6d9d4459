"""Score adjustment for pooling bias: Algorithms 1 and 2, estimators, variance, checks (methods §6)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from evalwh.errors import EvalWhError, InsufficientDataError
from evalwh.stats import adjust

T = np.array([0.5, 0.4, 0.6, 0.3, 0.2, 0.7])
U = np.array([0.4, 0.4, 0.45, 0.2, 0.2, 0.5])
C = np.array([True, False, True, False, False, False])


def test_common_topics_worked_example() -> None:
    e = adjust.common_topics_estimates(T, U, C)
    expected = {
        "mu": 0.45,
        "u_bar": 0.358333,
        "A": 0.091667,
        "a": 0.125,
        "adjusted": 0.483333,
        "mixed": 0.4,
        "sampled": 0.55,
        "sigma2_a": 0.0064167,
        "var_adjusted": 0.0021389,
        "sigma2_t": 0.035,
        "var_sampled": 0.0116667,
        "sigma2_a_hat": 0.00125,
        "var_adjusted_hat": 0.00041667,
    }
    for key, value in expected.items():
        assert float(e[key]) == pytest.approx(value, abs=5e-7), key
    assert abs(float(e["adjusted"]) - 0.45) == pytest.approx(0.033333, abs=5e-7)
    assert float(np.sqrt(e["var_adjusted"])) == pytest.approx(0.046248, abs=5e-7)
    assert float(np.sqrt(e["var_adjusted_hat"])) == pytest.approx(0.020412, abs=5e-7)
    assert float(e["a"] / e["A"]) == pytest.approx(1.363636, abs=5e-7)
    # ratio estimator: u_bar * (sum_C t / sum_C u) = 0.358333 * 1.1 / 0.85
    assert float(e["ratio"]) == pytest.approx(0.358333333 * 1.1 / 0.85)


def test_worked_example_checks() -> None:
    assert adjust.adjustment_helps(0.125, 0.091667).item() is True
    assert adjust.clt_check(0.091667, 0.0064167, 2, 6, confidence=0.68).item() is True
    assert adjust.clt_check(0.091667, 0.0064167, 2, 6, confidence=0.95).item() is True  # 0.090646 < 0.091667
    assert adjust.clt_check(0.09, 0.0064167, 2, 6, confidence=0.95).item() is False
    # with the estimates: SD 0.020412 < a = 0.125
    assert adjust.clt_check(0.125, 0.00125, 2, 6, confidence=0.68).item() is True


def test_algorithm1_worked_example() -> None:
    refined = adjust.systems_estimate(np.array([0.0, 0.0, 0.5]), 0.5)
    assert (float(refined["a"]), float(refined["adjusted"])) == pytest.approx((1 / 6, 2 / 3))
    plain = adjust.systems_estimate(np.array([0.5, 0.0, 0.5]), 0.5)
    assert (float(plain["a"]), float(plain["adjusted"])) == pytest.approx((1 / 3, 5 / 6))


def test_adjust_leave_one_out_frame() -> None:
    loo = pd.DataFrame(
        {"run_id": ["s1", "s2", "s3"], "query_id": ["1"] * 3, "pooled": [1.0, 0.5, 0.5], "left_out": [1.0, 0.5, 0.0]}
    )
    row = adjust.adjust_leave_one_out(loo, pd.DataFrame({"query_id": ["1"], "value": [0.5]})).iloc[0]
    assert (row["n_runs"], row["delta_max"]) == (3, 0.5)
    assert row["adjusted"] == pytest.approx(2 / 3)
    with pytest.raises(EvalWhError, match=r"loo is missing columns \['left_out'\]"):
        adjust.adjust_leave_one_out(loo.drop(columns="left_out"), pd.DataFrame({"query_id": ["1"], "value": [0.5]}))


def test_adjust_common_topics_frame_uses_true_scores_on_common_topics_only() -> None:
    true = np.where(C, T, np.nan)
    scores = pd.DataFrame({"query_id": [f"q{i}" for i in range(6)], "unpooled": U, "true": true})
    row = adjust.adjust_common_topics(scores, ["q0", "q2"], resamples=1000, rng=3).iloc[0]
    assert (row["n_topics"], row["n_common"]) == (6, 2)
    assert (row["a"], row["adjusted"], row["mixed"], row["sampled"]) == pytest.approx((0.125, 0.4833333, 0.4, 0.55))
    assert row["se_adjusted"] == pytest.approx(0.020412, abs=5e-7)
    assert bool(row["clt_ok"]) is True
    with pytest.raises(InsufficientDataError, match="a common topic has no true score"):
        adjust.adjust_common_topics(scores, ["q0", "q1"])
    with pytest.raises(InsufficientDataError, match=r"common topics \['q9'\] are not among"):
        adjust.adjust_common_topics(scores, ["q9"])


def test_variance_formula_matches_simulation() -> None:
    """Empirical variance of the adjusted estimate over topic samples vs ((N-n)/N) sigma2_a / n."""
    gen = np.random.default_rng(7)
    N, n, draws = 60, 10, 40_000  # noqa: N806
    t = gen.beta(2, 3, size=N)
    u = t - gen.gamma(1.5, 0.03, size=N)  # unpooled scores fall short by a skewed amount
    # one row per simulated topic sample: the n smallest of N uniform keys
    keys = gen.random((draws, N))
    masks = keys <= np.sort(keys, axis=1)[:, [n - 1]]
    e = adjust.common_topics_estimates(np.broadcast_to(t, (draws, N)), np.broadcast_to(u, (draws, N)), masks)
    empirical = e["adjusted"].var(ddof=1)
    formula = float(e["var_adjusted"][0])
    # the variance of a sample variance over 40,000 draws: a few percent
    assert empirical == pytest.approx(formula, rel=0.05)
    assert e["adjusted"].mean() == pytest.approx(t.mean(), abs=4 * np.sqrt(formula / draws))
    # the adjusted estimator beats the sampled one here, as S2 reports: sigma2_a << sigma2_t
    assert e["sampled"].var(ddof=1) > 10 * empirical


def test_bootstrap_is_seeded_and_fpc_shrinks() -> None:
    deltas = np.array([0.05, -0.02, 0.08, 0.01, 0.0])
    first = adjust.bootstrap_confidence(deltas, 50, resamples=5000, rng=11)
    assert first == adjust.bootstrap_confidence(deltas, 50, resamples=5000, rng=np.random.default_rng(11))
    assert 0.5 < first < 1.0
    shrunk = adjust.bootstrap_confidence(deltas, 6, resamples=5000, fpc=True, rng=11)
    assert shrunk > first  # with n = 5 of N = 6 the estimate is nearly exact
    assert np.isnan(adjust.bootstrap_confidence(np.array([0.1, -0.1]), 10, rng=1))


@settings(max_examples=50, deadline=None)
@given(
    t=hnp.arrays(float, 8, elements=st.floats(0, 1)),
    d=hnp.arrays(float, 8, elements=st.floats(-0.2, 0.3)),
    mask=hnp.arrays(bool, 8).filter(lambda m: m.any()),
)
def test_adjusted_equals_true_on_common_plus_adjusted_elsewhere(t: np.ndarray, d: np.ndarray, mask: np.ndarray) -> None:
    u = t - d
    e = adjust.common_topics_estimates(t, u, mask)
    a = float(e["a"])
    alternative = (t[mask].sum() + (u[~mask] + a).sum()) / len(t)
    assert float(e["adjusted"]) == pytest.approx(alternative, abs=1e-12)
    # the error of the adjusted estimate is A - a; of the unadjusted one, A
    assert float(e["mu"] - e["u_bar"]) == pytest.approx(float(e["A"]), abs=1e-12)
    # the mixed estimate misses exactly the deltas of the non-common topics, over N
    assert float(e["mu"] - e["mixed"]) == pytest.approx(d[~mask].sum() / len(t), abs=1e-12)


def test_needs_a_common_topic() -> None:
    with pytest.raises(InsufficientDataError, match="at least one common topic"):
        adjust.common_topics_estimates(T, U, np.zeros(6, bool))
