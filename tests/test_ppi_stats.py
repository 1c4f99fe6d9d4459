"""evalwh.stats.ppi: the prediction-powered design estimator (methods §15), against independent computations.

The design-based claims are checked by enumerating every sample a design can draw from small
populations (the estimate is unbiased, the variance estimate unbiased for the estimate's
variance at a fixed weight); the point estimate against ppi-python's; the tuned weight against a
least-squares slope; the human-only interval against scipy's standard error with the finite
population correction.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from evalwh.errors import InsufficientDataError, MetricParamError
from evalwh.stats.ppi import design_estimate


def _population(seed: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, size).astype(float)
    f = np.clip(y + rng.normal(0, 0.8, size), 0, None)
    return y, f


@pytest.mark.parametrize("weight", [0.0, 0.7, 1.0])
def test_unbiased_over_every_simple_random_sample(weight: float) -> None:
    y, f = _population(1, 8)
    estimates, variances = [], []
    for sample in itertools.combinations(range(8), 3):
        idx = list(sample)
        e = design_estimate(y[idx], f[idx], f.sum(), population=[8], weight=weight)
        estimates.append(e.estimate[0])
        variances.append(e.se[0] ** 2)
    estimates = np.asarray(estimates)
    assert estimates.mean() == pytest.approx(y.sum(), abs=1e-12)
    # the variance estimator is unbiased for the design variance at a fixed weight
    assert np.mean(variances) == pytest.approx(estimates.var(), rel=1e-10)


def test_unbiased_over_every_stratified_sample() -> None:
    y, f = _population(2, 9)
    strata = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1])
    first, second = np.flatnonzero(strata == 0), np.flatnonzero(strata == 1)
    estimates, variances = [], []
    for a in itertools.combinations(first, 2):
        for b in itertools.combinations(second, 3):
            idx = list(a) + list(b)
            e = design_estimate(
                y[idx], f[idx], f.sum(), strata=strata[idx], population=[5, 4], weight=0.6
            )
            estimates.append(e.estimate[0])
            variances.append(e.se[0] ** 2)
    estimates = np.asarray(estimates)
    assert estimates.mean() == pytest.approx(y.sum(), abs=1e-12)
    assert np.mean(variances) == pytest.approx(estimates.var(), rel=1e-10)


def test_point_estimate_equals_ppi_python() -> None:
    ppi_py = pytest.importorskip("ppi_py")
    rng = np.random.default_rng(3)
    population = 400
    f = rng.random(population)
    y = (rng.random(population) < f).astype(float)
    sample = rng.choice(population, 60, replace=False)
    for lam in (0.0, 0.4, 1.0):
        ours = design_estimate(y[sample], f[sample], f.sum(), population=[population], weight=lam)
        theirs = ppi_py.ppi_mean_pointestimate(y[sample], f[sample], f, lam=lam)
        assert ours.estimate[0] / population == pytest.approx(float(np.ravel(theirs)[0]), abs=1e-12)


def test_tuned_weight_is_the_least_squares_slope() -> None:
    rng = np.random.default_rng(4)
    f = rng.random((30, 3))
    y = 0.3 + 0.8 * f + rng.normal(0, 0.1, (30, 3))
    e = design_estimate(y, f, f.sum(axis=0) * 10, population=[300])
    slopes = [np.polyfit(f[:, r], y[:, r], 1)[0] for r in range(3)]
    np.testing.assert_allclose(e.weight, slopes, rtol=1e-10)
    # stratified: the weight pools the strata's moments with their c_h (a weighted regression)
    strata = np.repeat([0, 1], 15)
    s = design_estimate(y[:, 0], f[:, 0], 100 * f[:15, 0].mean() + 40 * f[15:, 0].mean(), strata=strata, population=[100, 40])
    c = np.array([100**2 * (1 - 15 / 100) / 15, 40**2 * (1 - 15 / 40) / 15])
    num = sum(c[h] * np.cov(y[strata == h, 0], f[strata == h, 0])[0, 1] for h in (0, 1))
    den = sum(c[h] * np.var(f[strata == h, 0], ddof=1) for h in (0, 1))
    assert s.weight[0] == pytest.approx(num / den, rel=1e-12)


def test_human_only_interval_is_the_srs_interval() -> None:
    rng = np.random.default_rng(5)
    y = rng.random(12)
    e = design_estimate(y, rng.random(12), 3.0, population=[50], level=0.9)
    se = 50 * stats.sem(y) * np.sqrt(1 - 12 / 50)
    assert e.human[0] == pytest.approx(50 * y.mean(), rel=1e-12)
    assert e.human_se[0] == pytest.approx(se, rel=1e-12)
    half = stats.t.ppf(0.95, 11) * se
    assert (e.human_lower[0], e.human_upper[0]) == pytest.approx(
        (50 * y.mean() - half, 50 * y.mean() + half)
    )


def test_tuned_never_wider_than_human_only() -> None:
    rng = np.random.default_rng(6)
    for _ in range(200):
        n = int(rng.integers(3, 20))
        y, f = rng.random((n, 4)), rng.random((n, 4))  # a judge unrelated to the truth
        e = design_estimate(y, f, f.sum(axis=0), population=[n * 3])
        assert (e.upper - e.lower <= e.human_upper - e.human_lower + 1e-12).all()
        assert (e.effective_n >= n - 1e-9).all()


def test_census_has_no_variance() -> None:
    y, f = _population(7, 6)
    e = design_estimate(y, f, f.sum(), population=[6])
    assert e.estimate[0] == pytest.approx(y.sum()) and e.se[0] == 0.0


def test_refusals() -> None:
    with pytest.raises(InsufficientDataError, match="stratum 1 has 1 audited unit"):
        design_estimate([1.0, 0.0, 1.0], [1.0, 0.0, 0.0], 2.0, strata=[0, 0, 1], population=[4, 5])
    with pytest.raises(MetricParamError, match="level"):
        design_estimate([1.0, 0.0], [1.0, 0.0], 1.0, population=[4], level=1.0)
    with pytest.raises(MetricParamError, match="finite"):
        design_estimate([1.0, np.nan], [1.0, 0.0], 1.0, population=[4])


def test_jackknife_of_the_tuned_estimate_is_the_brute_force_one() -> None:
    from evalwh.stats.ppi import jackknife_tuned

    rng = np.random.default_rng(8)
    y, f = rng.random((11, 2)), rng.random((11, 2))
    y[[1, 7, 8]] = 0.0  # units with nothing in any column (a pair in no run's top ranks)
    f[[1, 7, 8]] = 0.0
    y[2, 0] = f[2, 0] = 0.0  # and one with nothing in one column only
    strata = np.array([0] * 5 + [1] * 6)
    sizes, sampled = np.array([20.0, 30.0]), np.array([5.0, 6.0])
    total = f.sum(axis=0) * 3
    fast = jackknife_tuned(y, f, strata, sizes, sampled, total)
    # by hand: drop each unit, re-estimate lambda and the total, then Wolter's stratified jackknife
    variance = np.zeros(2)
    for h in (0, 1):
        members = np.flatnonzero(strata == h)
        thetas = []
        for i in members:
            keep = np.setdiff1d(np.arange(11), [i])
            population = sizes.copy()
            e = design_estimate(y[keep], f[keep], total, strata=strata[keep], population=population)
            lam = []
            for r in range(2):  # the tuned weight by the formula, from numpy's covariances
                num = den = 0.0
                for g in (0, 1):
                    part = keep[strata[keep] == g]
                    c = sizes[g] ** 2 * (1 - len(part) / sizes[g]) / len(part)
                    num += c * np.cov(y[part, r], f[part, r])[0, 1]
                    den += c * np.var(f[part, r], ddof=1)
                lam.append(num / den)
            fixed = [design_estimate(y[keep, r], f[keep, r], total[r], strata=strata[keep], population=population,
                                     weight=lam[r]).estimate[0] for r in range(2)]  # fmt: skip
            del e
            thetas.append(fixed)
        thetas = np.asarray(thetas)
        n_h = len(members)
        variance += (1 - n_h / sizes[h]) * (n_h - 1) / n_h * ((thetas - thetas.mean(axis=0)) ** 2).sum(axis=0)
    np.testing.assert_allclose(fast, variance, rtol=1e-10)


def test_the_floor_is_one_audited_unit_at_the_bound() -> None:
    # an audit that saw nothing of a column: every y and f 0; the floor is the variance the
    # same audit would have had with one unit at the bound (computed without a floor)
    zeros = np.zeros(10)
    e = design_estimate(zeros, zeros, 0.0, population=[100], bound=[0.1])
    one = design_estimate(np.r_[0.1, np.zeros(9)], zeros, 0.0, population=[100], weight=0.0)
    assert e.se[0] == pytest.approx(one.human_se[0], rel=1e-12) and e.se[0] > 0
    assert e.human_se[0] == pytest.approx(one.human_se[0], rel=1e-12)
    # where the audit shows more spread than the floor, the floor changes nothing
    y, f = _population(9, 12)
    free = design_estimate(y[:6], f[:6], f.sum(), population=[12])
    floored = design_estimate(y[:6], f[:6], f.sum(), population=[12], bound=[0.01])
    assert (free.se, free.human_se) == (floored.se, floored.human_se)


def test_without_fallback_the_tuned_weight_and_jackknife_are_always_used() -> None:
    """``fallback=False`` (the topics design): lambda is numpy's least-squares slope with FPC
    weights, the variance the jackknife's, df one less than the audit's, even where wider."""
    from evalwh.stats.ppi import jackknife_tuned

    rng = np.random.default_rng(12)
    wider = 0
    for _ in range(50):
        n = int(rng.integers(4, 12))
        y, f = rng.random((n, 3)), rng.random((n, 3))  # a judge unrelated to the truth
        e = design_estimate(y, f, f.sum(axis=0), population=[n * 4], fallback=False)
        slope = np.array([np.cov(y[:, r], f[:, r])[0, 1] / np.var(f[:, r], ddof=1) for r in range(3)])
        np.testing.assert_allclose(e.weight, slope, rtol=1e-10)
        jack = jackknife_tuned(y, f, np.zeros(n, dtype=np.int64), np.array([n * 4.0]), np.array([float(n)]),
                               f.sum(axis=0))  # fmt: skip
        np.testing.assert_allclose(e.se**2, jack, rtol=1e-10)
        q = stats.t.ppf(0.975, n - 2)
        np.testing.assert_allclose(e.upper - e.estimate, q * np.sqrt(jack), rtol=1e-10)
        wider += int((e.upper - e.lower > e.human_upper - e.human_lower).any())
    assert wider > 0  # the case the fallback would have replaced by the audit alone
