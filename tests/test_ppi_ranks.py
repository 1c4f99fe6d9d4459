"""Ranks under prediction-powered estimates (methods §15.5): the bootstrap, checked independently.

* the vectorised bootstrap equals a plain loop over replicates that follows the documented draws;
* the multiplier bootstrap has, over many replicates, the design variance ``V(lambda)`` of
  :func:`evalwh.stats.ppi.design_estimate` at the same fixed lambda (times the scale squared), the
  design covariance of two runs (the variance of their difference, from ``design_estimate`` on the
  difference), and no spread at all for a census;
* the scale that widens it to the score intervals makes the replicates' normal half-width, summed
  over the runs, that of the prediction-powered intervals (computed here from scipy's quantiles
  and the plug-in variance of an independent formula).
"""

from __future__ import annotations

import numpy as np
import pytest

from evalwh.errors import InsufficientDataError, MetricParamError
from evalwh.stats.ppi import bootstrap_totals, design_estimate, rank_intervals, rank_scale


def _loop(y, f, total, lam, groups, sizes, replicates, seed, scale=1.0):
    """The bootstrap one replicate and one stratum at a time, from the draws its docstring states."""
    multipliers = np.random.default_rng(seed).standard_normal((replicates, len(y)))
    e = y - lam * f
    out = np.zeros((replicates, y.shape[1]))
    for b in range(replicates):
        value = lam * total
        for h, big in enumerate(sizes):
            units = np.flatnonzero(groups == h)
            small = len(units)
            mean = e[units].mean(axis=0) if small else 0.0
            value = value + big * mean
            if 2 <= small < big:
                c = big**2 * (1 - small / big) / small
                value = value + scale * np.sqrt(c / (small - 1)) * (multipliers[b, units] @ (e[units] - mean))
        out[b] = value
    return out


def test_the_vectorised_bootstrap_is_the_loop() -> None:
    rng = np.random.default_rng(4)
    y = rng.random((12, 3))
    f = y + rng.normal(0, 0.1, (12, 3))
    groups = np.array([0] * 5 + [1] * 4 + [2] * 2 + [3])
    sizes = np.array([20.0, 9.0, 2.0, 1.0])  # strata 2 and 3 audited whole (3: a stratum of one pair)
    lam = np.array([0.0, 0.7, 1.0])
    total = np.array([10.0, 11.0, 12.0])
    for scale in (1.0, 1.7):
        observed, reps = bootstrap_totals(y, f, total, lam, strata=groups, population=sizes, scale=scale,
                                          replicates=300, seed=9)  # fmt: skip
        np.testing.assert_allclose(reps, _loop(y, f, total, lam, groups, sizes, 300, 9, scale), atol=1e-12)
    # drawn in chunks of replicates: the same numbers as one draw
    import evalwh.stats.ppi as ppi

    chunked = ppi._CHUNK_CELLS
    try:
        ppi._CHUNK_CELLS = 5 * len(y)  # chunks of 5 replicates
        _obs, small_chunks = bootstrap_totals(y, f, total, lam, strata=groups, population=sizes, replicates=300, seed=9)
    finally:
        ppi._CHUNK_CELLS = chunked
    np.testing.assert_allclose(small_chunks, _loop(y, f, total, lam, groups, sizes, 300, 9), atol=1e-12)
    fixed = [design_estimate(y[:, j], f[:, j], total[j], strata=groups, population=sizes, weight=lam[j]).estimate[0]
             for j in range(3)]  # fmt: skip
    np.testing.assert_allclose(observed, fixed, atol=1e-12)


def test_the_bootstrap_variance_is_the_design_variance() -> None:
    rng = np.random.default_rng(1)
    y = rng.random((9, 2))
    f = 0.5 * y + rng.normal(0, 0.2, (9, 2))
    groups = np.array([0] * 4 + [1] * 5)
    sizes = np.array([10.0, 30.0])
    for lam in (0.0, 0.8):
        expected = design_estimate(y, f, [1.0, 2.0], strata=groups, population=sizes, weight=lam).se ** 2
        _obs, reps = bootstrap_totals(y, f, [1.0, 2.0], [lam, lam], strata=groups, population=sizes,
                                      replicates=200_000, seed=0)  # fmt: skip
        np.testing.assert_allclose(reps.var(axis=0), expected, rtol=0.03)
        _obs, reps = bootstrap_totals(y, f, [1.0, 2.0], [lam, lam], strata=groups, population=sizes, scale=2.0,
                                      replicates=200_000, seed=0)  # fmt: skip
        np.testing.assert_allclose(reps.var(axis=0), 4 * expected, rtol=0.03)
        # the runs' covariance: the variance of their difference is design_estimate's on the difference
        difference = design_estimate(y[:, 0] - y[:, 1], f[:, 0] - f[:, 1], [-1.0], strata=groups, population=sizes,
                                     weight=lam).se ** 2  # fmt: skip
        _obs, reps = bootstrap_totals(y, f, [1.0, 2.0], [lam, lam], strata=groups, population=sizes,
                                      replicates=200_000, seed=0)  # fmt: skip
        np.testing.assert_allclose((reps[:, 0] - reps[:, 1]).var(), difference, rtol=0.03)
    # a census has no variance: every replicate is the estimate, every rank interval a point
    _obs, reps = bootstrap_totals(y, f, [1.0, 2.0], [0.5, 0.5], strata=groups, population=[4.0, 5.0], scale=3.0,
                                  replicates=50)  # fmt: skip
    assert (reps == reps[0]).all()


def _plug_in(y: np.ndarray, f: np.ndarray, lam: float, groups: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """``sum_h N_h^2 (1 - n_h / N_h) s_h^2(y - lam f) / n_h`` per column, one stratum at a time."""
    out = np.zeros(y.shape[1])
    for h, big in enumerate(sizes):
        e = (y - lam * f)[groups == h]
        if 2 <= len(e) < big:
            out += big**2 * (1 - len(e) / big) * e.var(axis=0, ddof=1) / len(e)
    return out


def test_the_scale_widens_the_bootstrap_to_the_score_intervals() -> None:
    from scipy import stats

    rng = np.random.default_rng(3)
    y = rng.gamma(0.6, 0.02, (14, 5))  # skewed per-unit values, as AP's per topic
    f = np.clip(y + rng.normal(0, 0.01, y.shape), 0, None)
    groups = np.array([0] * 6 + [1] * 8)
    sizes = np.array([30.0, 25.0])
    total = f.sum(axis=0) * 3
    for level in (0.9, 0.95):
        e = design_estimate(y, f, total, strata=groups, population=sizes, level=level)
        kappa = rank_scale(y, f, e.weight, e.se, e.df, strata=groups, population=sizes, confidence=level)
        q = (1 + level) / 2
        wanted = ((stats.t.ppf(q, e.df) * e.se) ** 2).sum()
        have = stats.norm.ppf(q) ** 2 * _plug_in(y, f, float(e.weight[0]), groups, sizes).sum()
        assert kappa == pytest.approx(np.sqrt(wanted / have), rel=1e-12)
        assert kappa > 1  # few units: Student's quantile and the jackknife both widen
        # intervals that are not Student's (a topics audit's, methods §15.4) give their half-lengths
        skewed = design_estimate(y, f, total, strata=groups, population=sizes, level=level, quantiles=(-4.0, 1.5))
        half_kappa = rank_scale(y, f, e.weight, None, None, strata=groups, population=sizes, confidence=level,
                                half_width=(skewed.upper - skewed.lower) / 2)  # fmt: skip
        assert half_kappa == pytest.approx(np.sqrt((2.75**2 * e.se**2).sum() / have), rel=1e-12)
        _obs, reps = bootstrap_totals(y, f, total, e.weight, strata=groups, population=sizes, scale=kappa,
                                      replicates=100_000, seed=1)  # fmt: skip
        # the replicates' normal half-widths, summed over runs, are the score intervals'
        half = stats.norm.ppf(q) ** 2 * reps.var(axis=0).sum()
        assert half == pytest.approx(wanted, rel=0.03)
    # a census: nothing to widen, every interval the run's rank
    whole = rank_intervals(y, f, y.sum(axis=0), [0.5] * 5, strata=groups, population=[6.0, 8.0],
                           se=np.zeros(5), df=np.ones(5))  # fmt: skip
    assert whole.low.tolist() == whole.rank.tolist() == whole.high.tolist()


def test_widening_moves_the_intervals_outward_only() -> None:
    rng = np.random.default_rng(11)
    scores = rng.random((6, 8)) * np.linspace(0.7, 1.0, 8)
    y = scores / 40
    f = np.clip(y + rng.normal(0, 0.004, y.shape), 0, None)
    e = design_estimate(y, f, f.sum(axis=0) * 40 / 6, population=[40])
    plain = rank_intervals(y, f, f.sum(axis=0) * 40 / 6, e.weight, population=[40], seed=4)
    wide = rank_intervals(y, f, f.sum(axis=0) * 40 / 6, e.weight, population=[40], se=e.se, df=e.df, seed=4)
    assert wide.rank.tolist() == plain.rank.tolist()
    assert (wide.low <= plain.low).all() and (wide.high >= plain.high).all()
    assert ((wide.high - wide.low) > (plain.high - plain.low)).any()


def test_refusals() -> None:
    with pytest.raises(InsufficientDataError, match="at least 2 runs"):
        rank_intervals([[0.1], [0.2]], [[0.1], [0.2]], [0.3], [0.0], population=[5])
    with pytest.raises(MetricParamError, match="se and df, or half_width"):
        rank_intervals([[0.1, 0.2], [0.2, 0.1]], [[0.1, 0.2], [0.2, 0.1]], [0.3, 0.3], [0.0, 0.0], se=[1.0, 1.0])
    with pytest.raises(MetricParamError, match="se and df, or half_width"):
        rank_intervals([[0.1, 0.2], [0.2, 0.1]], [[0.1, 0.2], [0.2, 0.1]], [0.3, 0.3], [0.0, 0.0], se=[1.0, 1.0],
                       df=[3.0, 3.0], half_width=[2.0, 2.0])  # fmt: skip
    with pytest.raises(MetricParamError, match="scale"):
        bootstrap_totals([[0.1], [0.2]], [[0.1], [0.2]], [0.3], [0.0], scale=-1.0)
