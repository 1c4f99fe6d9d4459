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
from evalwh.stats.ppi import design_estimate, machine_quantiles


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
    # the weight shared by several columns is ppi-python's "overall" weight (the trace of the
    # covariance) up to its divisors: covariance over n, the machine's variance pooled with the
    # unlabeled data, and its factor 1 + n / N (one import of ppi-python for both checks)
    f4 = rng.random((25, 4))
    y4 = np.clip(f4 * [1.2, 0.7, 1.0, 0.2] + rng.normal(0, 0.2, (25, 4)), 0, None)
    unlabeled = rng.random((175, 4))
    shared = design_estimate(y4, f4, f4.sum(axis=0) * 8, population=[200])
    theirs = ppi_py.ppi._calc_lam_glm(y4, f4, unlabeled, np.eye(4), coord=None, optim_mode="overall")
    pooled = np.trace(np.cov(np.concatenate([f4, unlabeled]).T))
    rescaled = theirs * (1 + 25 / 175) * pooled / np.trace(np.cov(f4.T)) * 25 / 24
    assert shared.weight[0] == pytest.approx(rescaled, rel=1e-10)


def test_tuned_weight_is_the_least_squares_slope() -> None:
    rng = np.random.default_rng(4)
    f = rng.random((30, 3))
    y = 0.3 + 0.8 * f + rng.normal(0, 0.1, (30, 3))
    # one weight per column: each column's least-squares slope
    e = design_estimate(y, f, f.sum(axis=0) * 10, population=[300], share_weight=False)
    slopes = [np.polyfit(f[:, r], y[:, r], 1)[0] for r in range(3)]
    np.testing.assert_allclose(e.weight, slopes, rtol=1e-10)
    # one weight for all columns (the default): the columns' summed covariance over their summed variance
    shared = design_estimate(y, f, f.sum(axis=0) * 10, population=[300])
    pooled = sum(np.cov(y[:, r], f[:, r])[0, 1] for r in range(3)) / sum(np.var(f[:, r], ddof=1) for r in range(3))
    np.testing.assert_allclose(shared.weight, [pooled] * 3, rtol=1e-10)
    # stratified: the weight pools the strata's moments with their c_h (a weighted regression)
    strata = np.repeat([0, 1], 15)
    s = design_estimate(y[:, 0], f[:, 0], 100 * f[:15, 0].mean() + 40 * f[15:, 0].mean(), strata=strata, population=[100, 40])
    c = np.array([100**2 * (1 - 15 / 100) / 15, 40**2 * (1 - 15 / 40) / 15])
    num = sum(c[h] * np.cov(y[strata == h, 0], f[strata == h, 0])[0, 1] for h in (0, 1))
    den = sum(c[h] * np.var(f[strata == h, 0], ddof=1) for h in (0, 1))
    assert s.weight[0] == pytest.approx(num / den, rel=1e-12)


def test_shared_weight_minimises_the_summed_variance() -> None:
    """The shared weight is the minimiser of the columns' summed plug-in variance (scipy's
    bounded minimiser over lambda, the variances from numpy)."""
    from scipy.optimize import minimize_scalar

    rng = np.random.default_rng(14)
    f = rng.random((25, 4))
    y = np.clip(f * [1.2, 0.7, 1.0, 0.2] + rng.normal(0, 0.2, (25, 4)), 0, None)
    e = design_estimate(y, f, f.sum(axis=0) * 8, population=[200])

    def summed(lam: float) -> float:
        return float(sum(np.var(y[:, r] - lam * f[:, r], ddof=1) for r in range(4)))

    best = minimize_scalar(summed, bounds=(-5, 5), method="bounded", options={"xatol": 1e-10}).x
    assert e.weight[0] == pytest.approx(best, abs=1e-6)
    assert summed(e.weight[0]) <= summed(0.0)  # lambda = 0 (the audit alone) is a candidate


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


def test_audit_only_variance_is_its_jackknife() -> None:
    """At lambda = 0 the delete-one jackknife (by hand) is the plug-in variance: the two intervals
    use one variance convention, and the audit-only one is scipy's t interval."""
    rng = np.random.default_rng(6)
    for _ in range(20):
        n = int(rng.integers(3, 15))
        y, f = rng.random((n, 2)), rng.random((n, 2))
        e = design_estimate(y, f, f.sum(axis=0), population=[n * 3], weight=0.0)
        deleted = np.array([(n * 3) * np.delete(y, i, axis=0).mean(axis=0) for i in range(n)])
        jack = (1 - 1 / 3) * (n - 1) / n * ((deleted - deleted.mean(axis=0)) ** 2).sum(axis=0)
        np.testing.assert_allclose(e.human_se**2, jack, rtol=1e-10)
        np.testing.assert_allclose(e.se, e.human_se, rtol=1e-12)


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
    for shared in (True, False):
        fast = jackknife_tuned(y, f, strata, sizes, sampled, total, shared)
        # by hand: drop each unit, re-estimate lambda and the total, then Wolter's stratified jackknife
        variance = np.zeros(2)
        for h in (0, 1):
            members = np.flatnonzero(strata == h)
            thetas = []
            for i in members:
                keep = np.setdiff1d(np.arange(11), [i])
                nums, dens = [], []
                for r in range(2):  # the tuned weight by the formula, from numpy's covariances
                    num = den = 0.0
                    for g in (0, 1):
                        part = keep[strata[keep] == g]
                        c = sizes[g] ** 2 * (1 - len(part) / sizes[g]) / len(part)
                        num += c * np.cov(y[part, r], f[part, r])[0, 1]
                        den += c * np.var(f[part, r], ddof=1)
                    nums.append(num)
                    dens.append(den)
                lam = [sum(nums) / sum(dens)] * 2 if shared else [nums[r] / dens[r] for r in range(2)]
                fixed = [design_estimate(y[keep, r], f[keep, r], total[r], strata=strata[keep], population=sizes,
                                         weight=lam[r]).estimate[0] for r in range(2)]  # fmt: skip
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


def test_the_floor_only_where_fewer_than_two_units_carry_a_column() -> None:
    # two audited units carry the column: its own variance (below the floor) is kept
    y = np.r_[0.01, 0.012, np.zeros(8)]
    e = design_estimate(y, y, y.sum() * 5, population=[50], bound=[1.0], weight=0.0)
    assert e.human_se[0] == pytest.approx(50 * np.sqrt(1 - 10 / 50) * stats.sem(y), rel=1e-12)
    # one unit carries it: no degree of freedom, the floor
    one = design_estimate(np.r_[0.01, np.zeros(9)], np.zeros(10), 0.0, population=[50], bound=[1.0], weight=0.0)
    assert one.human_se[0] == pytest.approx(50 * np.sqrt(1 - 10 / 50) * np.sqrt(1 / 10) / np.sqrt(10), rel=1e-12)


def test_tuned_interval_is_the_jackknife_t_interval() -> None:
    """The tuned interval: the shared weight, the jackknife's variance and scipy's t quantile with
    n - 1 degrees of freedom, the audit-only interval's; it may be the wider on a sample."""
    from evalwh.stats.ppi import jackknife_tuned

    rng = np.random.default_rng(12)
    wider = 0
    for _ in range(50):
        n = int(rng.integers(4, 12))
        y, f = rng.random((n, 3)), rng.random((n, 3))  # a judge unrelated to the truth
        e = design_estimate(y, f, f.sum(axis=0), population=[n * 4])
        jack = jackknife_tuned(y, f, np.zeros(n, dtype=np.int64), np.array([n * 4.0]), np.array([float(n)]),
                               f.sum(axis=0))  # fmt: skip
        np.testing.assert_allclose(e.se**2, jack, rtol=1e-10)
        q = stats.t.ppf(0.975, n - 1)
        np.testing.assert_allclose(e.upper - e.estimate, q * np.sqrt(jack), rtol=1e-10)
        np.testing.assert_allclose(e.human_upper - e.human, q * e.human_se, rtol=1e-10)
        wider += int((e.upper - e.lower > e.human_upper - e.human_lower).any())
    assert wider > 0


def test_coverage_by_enumerating_every_sample() -> None:
    """Every sample of 4 of 9 topics: the intervals' coverage of the population total, counted
    against an independent computation (numpy's covariances, a delete-one loop, scipy's t), for
    a machine that tracks the truth with a topic-dependent error."""
    rng = np.random.default_rng(21)
    big, n = 9, 4
    y = rng.beta(2, 3, (big, 3))
    f = np.clip(0.8 * y + 0.1 + rng.normal(0, 0.08, (big, 3)), 0, 1)
    truth, total = y.sum(axis=0), f.sum(axis=0)
    q = stats.t.ppf(0.975, n - 1)

    def reference(idx: list[int]) -> tuple[np.ndarray, np.ndarray]:
        def estimate(rows: list[int]) -> np.ndarray:
            lam = sum(np.cov(y[rows, r], f[rows, r])[0, 1] for r in range(3)) / sum(
                np.var(f[rows, r], ddof=1) for r in range(3))
            return lam * total + big * (y[rows] - lam * f[rows]).mean(axis=0)
        deleted = np.array([estimate([j for j in idx if j != i]) for i in idx])
        var = (1 - n / big) * (n - 1) / n * ((deleted - deleted.mean(axis=0)) ** 2).sum(axis=0)
        return estimate(idx), q * np.sqrt(var)

    ours = theirs = 0
    for sample in itertools.combinations(range(big), n):
        idx = list(sample)
        e = design_estimate(y[idx], f[idx], total, population=[big])
        centre, half = reference(idx)
        np.testing.assert_allclose(e.estimate, centre, rtol=1e-10)
        np.testing.assert_allclose(e.upper - e.estimate, half, rtol=1e-8)
        ours += (e.lower <= truth) & (truth <= e.upper)
        theirs += np.abs(centre - truth) <= half
    coverage = ours / 126
    np.testing.assert_array_equal(ours, theirs)
    assert (coverage > 0.9).all(), coverage


# -- the machine's quantiles for a topics audit (methods §15.4) ---------------------------------


def _exact_u(values: np.ndarray, n: int) -> np.ndarray:
    """``(estimate - total) / se`` of the expansion estimate over every sample of ``n`` units (a loop)."""
    big = len(values)
    found = []
    for sample in itertools.combinations(range(big), n):
        x = values[list(sample)]
        se = np.sqrt(big * big * (1 - n / big) / n * x.var(ddof=1))
        if se > 0:
            found.append((big * x.mean() - values.sum()) / se)
    return np.sort(np.array(found))


def test_machine_quantiles_are_those_of_every_sample() -> None:
    values = np.array([0.02, 0.05, 0.05, 0.1, 0.12, 0.2, 0.3, 0.55, 0.9, 0.04, 0.01])  # skewed, like AP
    exact = _exact_u(values, 3)  # 165 samples
    low, high = machine_quantiles(values, 3, draws=40_000, seed=1)
    # the sampled points lie between the exact distribution's 1.5% and 3.5% (96.5% and 98.5%) points
    assert np.quantile(exact, 0.015) <= low <= np.quantile(exact, 0.035)
    assert np.quantile(exact, 0.965) <= high <= np.quantile(exact, 0.985)
    assert low < -stats.t.ppf(0.975, 2) and high < stats.t.ppf(0.975, 2)  # a long lower tail, unlike Student's
    # the interval they make covers the population's total in about 95% of all the samples
    covered = [
        np.sqrt(11 * 11 * (1 - 3 / 11) / 3 * values[list(s)].var(ddof=1)) * -high
        <= values.sum() - 11 * values[list(s)].mean()
        <= np.sqrt(11 * 11 * (1 - 3 / 11) / 3 * values[list(s)].var(ddof=1)) * -low
        for s in itertools.combinations(range(11), 3)
    ]
    assert 0.93 <= np.mean(covered) <= 0.97


def test_machine_quantiles_of_a_normal_population_are_students() -> None:
    values = np.random.default_rng(4).normal(0.3, 0.1, size=(4000, 3))
    low, high = machine_quantiles(values, 8, draws=8000, seed=2)
    t = stats.t.ppf(0.975, 7)
    assert low == pytest.approx(-t, abs=0.12) and high == pytest.approx(t, abs=0.12)
    low90, high90 = machine_quantiles(values, 8, level=0.9, draws=8000, seed=2)
    assert high90 == pytest.approx(stats.t.ppf(0.95, 7), abs=0.1) and low < low90 < high90 < high


def test_machine_quantiles_none_where_no_sample_varies() -> None:
    values = np.arange(1.0, 11.0)
    assert machine_quantiles(np.ones((10, 2)), 4) is None  # a machine constant over the topics
    assert machine_quantiles(values, 1) is None and machine_quantiles(values, 10) is None
    assert machine_quantiles(values, 4, seed=3) == machine_quantiles(values, 4, seed=3)  # seeded
    with pytest.raises(MetricParamError, match="level"):
        machine_quantiles(values, 4, level=1.0)


def test_given_quantiles_make_both_intervals() -> None:
    y = np.array([[0.2, 0.1], [0.4, 0.3], [0.3, 0.3], [0.1, 0.2], [0.5, 0.2]])
    f = np.array([[0.3, 0.1], [0.3, 0.4], [0.2, 0.3], [0.1, 0.1], [0.4, 0.3]])
    plain = design_estimate(y, f, [11.0, 9.0], population=[40])
    skewed = design_estimate(y, f, [11.0, 9.0], population=[40], quantiles=(-6.0, 2.5))
    np.testing.assert_allclose(skewed.estimate, plain.estimate)
    np.testing.assert_allclose(skewed.lower, plain.estimate - 2.5 * plain.se)
    np.testing.assert_allclose(skewed.upper, plain.estimate + 6.0 * plain.se)
    np.testing.assert_allclose(skewed.human_lower, plain.human - 2.5 * plain.human_se)
    np.testing.assert_allclose(skewed.human_upper, plain.human + 6.0 * plain.human_se)
    np.testing.assert_allclose(skewed.p_value, plain.p_value)  # Student's
    np.testing.assert_allclose(plain.upper - plain.estimate, stats.t.ppf(0.975, plain.df) * plain.se)
    with pytest.raises(MetricParamError, match="quantiles"):
        design_estimate(y, f, [11.0, 9.0], population=[40], quantiles=(2.0, -2.0))


def test_limits_clip_both_intervals_and_nothing_else() -> None:
    """``limits`` (a measure's range, methods §15.4): each bound of both intervals is clipped to it,
    an interval wholly outside collapses onto the nearer limit; estimates, standard errors and
    p-values are those without limits."""
    rng = np.random.default_rng(3)
    y = rng.binomial(1, 0.1, size=(12, 5)) / 10.0  # small totals: the intervals reach below 0
    f = np.clip(y + rng.normal(0, 0.05, size=y.shape), 0, None)
    total = f.sum(axis=0) * 8
    free = design_estimate(y, f, total, population=[100])
    held = design_estimate(y, f, total, population=[100], limits=(0.0, 0.5))
    assert (free.lower < 0).any() and (free.human_lower < 0).any()
    for name in ("estimate", "se", "human", "human_se", "p_value", "weight", "effective_n", "df"):
        np.testing.assert_array_equal(getattr(held, name), getattr(free, name))
    for name in ("lower", "upper", "human_lower", "human_upper"):
        np.testing.assert_array_equal(getattr(held, name), np.clip(getattr(free, name), 0.0, 0.5))
    assert (held.lower >= 0).all() and (held.upper <= 0.5).all()
    # an interval wholly below the range becomes the point at its low end
    below = design_estimate(y - 1, f - 1, total - 1200, population=[100], limits=(0.0, 1.0))
    assert (below.upper == 0).all() and (below.lower == 0).all()
    for bad in ((1.0, 0.0), (0.0, 0.0), (float("nan"), 1.0)):
        with pytest.raises(MetricParamError, match="limits"):
            design_estimate(y, f, total, population=[100], limits=bad)


def test_tuning_columns_give_every_family_the_weight_of_all_pairs() -> None:
    """A family of pairs tuned on the runs' centred values gets the estimates, jackknife variances and
    weight of the same pairs estimated among all pairs of runs (the identity of design_estimate's
    ``tuning``), stratified or not."""
    rng = np.random.default_rng(7)
    n, runs = 40, 6
    f = (rng.random((n, runs)) < 0.4).astype(float)
    y = np.where(rng.random((n, runs)) < 0.8, f, 1 - f) * rng.integers(1, 3, (n, runs))
    total = rng.uniform(50, 80, runs)
    strata = np.repeat([0, 1], n // 2)
    every = list(itertools.combinations(range(runs), 2))
    a, b = (np.array(side) for side in zip(*every, strict=True))
    for kw in ({"population": [400]}, {"strata": strata, "population": [300, 500]}):
        whole = design_estimate(y[:, a] - y[:, b], f[:, a] - f[:, b], total[a] - total[b], **kw)
        picked = [0, 7, 13]
        some = design_estimate(y[:, a[picked]] - y[:, b[picked]], f[:, a[picked]] - f[:, b[picked]],
                               total[a[picked]] - total[b[picked]], tuning=(y - y.mean(axis=1, keepdims=True),
                               f - f.mean(axis=1, keepdims=True)), **kw)  # fmt: skip
        for field in ("estimate", "se", "lower", "upper", "weight", "human", "human_se", "df"):
            np.testing.assert_allclose(getattr(some, field), getattr(whole, field)[picked], rtol=1e-10, err_msg=field)
        alone = design_estimate(y[:, a[picked]] - y[:, b[picked]], f[:, a[picked]] - f[:, b[picked]],
                                total[a[picked]] - total[b[picked]], **kw)  # fmt: skip
        assert not np.allclose(alone.weight, some.weight)  # the family alone tunes another weight
    with pytest.raises(MetricParamError, match="shared tuned weight"):
        design_estimate(y, f, total, population=[400], weight=1.0, tuning=(y, f))
    with pytest.raises(MetricParamError, match="must have 40 rows"):
        design_estimate(y, f, total, population=[400], tuning=(y[:5], f[:5]))


def test_the_audit_alone_floors_on_its_own_values_and_a_weight_must_be_finite() -> None:
    """A run whose audited units show no human-relevant pair (or one) but several machine-relevant ones:
    the audit alone's variance takes the floor (one unit at the bound), with the degrees of freedom of
    the units carrying the run; before, with none, it was a point at 0."""
    y = np.zeros((50, 1))
    f = np.zeros((50, 1))
    f[:4, 0] = 0.1
    y[0, 0] = 0.1
    e = design_estimate(y, f, [3.0], population=[1000], bound=[0.1])
    floor = 1000**2 * (1 - 50 / 1000) / 50 * 0.1**2 / 50
    assert e.human_se[0] == pytest.approx(np.sqrt(floor)) and e.human[0] == pytest.approx(2.0)
    half = stats.t.ppf(0.975, 3) * np.sqrt(floor)  # 4 carrying units
    assert (e.human_lower[0], e.human_upper[0]) == pytest.approx((2.0 - half, 2.0 + half))
    assert e.weight[0] > 0 and e.df[0] == 3.0  # the prediction-powered interval: 4 carrying units
    # the audit alone, as a fixed weight 0, is the same interval
    alone = design_estimate(y, f, [3.0], population=[1000], bound=[0.1], weight=0.0)
    assert (alone.lower[0], alone.upper[0], alone.df[0]) == pytest.approx((2.0 - half, 2.0 + half, 3.0))
    # no audited unit relevant to people, four to the machine: the audit alone was a point at 0
    none = design_estimate(np.zeros((50, 1)), f, [3.0], population=[1000], bound=[0.1])
    assert none.human_se[0] == pytest.approx(np.sqrt(floor)) and none.human_upper[0] == pytest.approx(half)
    for bad in (float("nan"), float("inf")):
        with pytest.raises(MetricParamError, match="finite number"):
            design_estimate(y, f, [3.0], population=[1000], weight=bad)
