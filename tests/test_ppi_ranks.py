"""Ranks under prediction-powered estimates (methods §15.5): the bootstrap, checked independently.

* the vectorised bootstrap equals a plain loop over replicates that follows the documented draws;
* the pairs design's rescaling bootstrap (Rao and Wu 1988) has, over many replicates, the design
  variance ``V(lambda)`` of :func:`evalwh.stats.ppi.design_estimate` at the same fixed lambda,
  and no spread at all for a census;
* a topics census gives the rank intervals of :func:`evalwh.stats.rank_intervals.rank_intervals`
  on the per-topic scores (the same draws).
"""

from __future__ import annotations

import numpy as np
import pytest

from evalwh.errors import InsufficientDataError, MetricParamError
from evalwh.stats import rank_intervals as ri
from evalwh.stats.ppi import bootstrap_totals, design_estimate, rank_intervals


def _loop_pairs(y, f, total, lam, groups, sizes, replicates, seed):
    """The pairs bootstrap one replicate at a time, from the draws its docstring states."""
    rng = np.random.default_rng(seed)
    e = y - lam * f
    sampled = np.bincount(groups, minlength=len(sizes))
    means = np.array([e[groups == h].mean(axis=0) for h in range(len(sizes))])
    draws = {}
    for h in range(len(sizes)):
        if 2 <= sampled[h] < sizes[h]:
            draws[h] = rng.integers(0, sampled[h], (replicates, sampled[h] - 1))
    out = np.zeros((replicates, y.shape[1]))
    for b in range(replicates):
        value = lam * total
        for h in range(len(sizes)):
            mean = means[h]
            if h in draws:
                star = e[groups == h][draws[h][b]].mean(axis=0)
                mean = mean + np.sqrt(1 - sampled[h] / sizes[h]) * (star - mean)
            value = value + sizes[h] * mean
        out[b] = value
    return out


def _loop_topics(y, f, rest, lam, replicates, seed):
    rng = np.random.default_rng(seed)
    n, t = len(y), len(y) + len(rest)
    audited = rng.integers(0, n, (replicates, n))
    unaudited = rng.integers(0, len(rest), (replicates, len(rest)))
    out = np.zeros((replicates, y.shape[1]))
    for b in range(replicates):
        f_star = f[audited[b]].sum(axis=0) + rest[unaudited[b]].sum(axis=0)
        out[b] = lam * f_star + t * (y[audited[b]] - lam * f[audited[b]]).mean(axis=0)
    return out


def test_the_vectorised_bootstrap_is_the_loop() -> None:
    rng = np.random.default_rng(4)
    y = rng.random((12, 3))
    f = y + rng.normal(0, 0.1, (12, 3))
    groups = np.array([0] * 5 + [1] * 4 + [2] * 2 + [3])
    sizes = np.array([20.0, 9.0, 2.0, 1.0])  # strata 2 and 3 audited whole (3: a stratum of one pair)
    lam = np.array([0.0, 0.7, 1.0])
    total = np.array([10.0, 11.0, 12.0])
    observed, reps = bootstrap_totals(y, f, total, lam, design="pairs", strata=groups, population=sizes,
                                      replicates=300, seed=9)  # fmt: skip
    np.testing.assert_allclose(reps, _loop_pairs(y, f, total, lam, groups, sizes, 300, 9), atol=1e-12)
    fixed = [design_estimate(y[:, j], f[:, j], total[j], strata=groups, population=sizes, weight=lam[j]).estimate[0]
             for j in range(3)]  # fmt: skip
    np.testing.assert_allclose(observed, fixed, atol=1e-12)
    rest = rng.random((7, 3))
    _obs, reps = bootstrap_totals(y, f, f.sum(0) + rest.sum(0), lam, design="topics", unaudited=rest,
                                  replicates=300, seed=2)  # fmt: skip
    np.testing.assert_allclose(reps, _loop_topics(y, f, rest, lam, 300, 2), atol=1e-12)


def test_the_pairs_bootstrap_variance_is_the_design_variance() -> None:
    rng = np.random.default_rng(1)
    y = rng.random((9, 2))
    f = 0.5 * y + rng.normal(0, 0.2, (9, 2))
    groups = np.array([0] * 4 + [1] * 5)
    sizes = np.array([10.0, 30.0])
    for lam in (0.0, 0.8):
        expected = design_estimate(y, f, [1.0, 2.0], strata=groups, population=sizes, weight=lam).se ** 2
        _obs, reps = bootstrap_totals(y, f, [1.0, 2.0], [lam, lam], design="pairs", strata=groups, population=sizes,
                                      replicates=200_000, seed=0)  # fmt: skip
        np.testing.assert_allclose(reps.var(axis=0), expected, rtol=0.03)
    # a census has no variance: every replicate is the estimate, every rank interval a point
    _obs, reps = bootstrap_totals(y, f, [1.0, 2.0], [0.5, 0.5], design="pairs", strata=groups,
                                  population=[4.0, 5.0], replicates=50)  # fmt: skip
    assert (reps == reps[0]).all()


def test_a_topics_census_gives_the_topic_bootstrap_of_section_13() -> None:
    rng = np.random.default_rng(7)
    scores = rng.random((25, 6)) * np.linspace(0.6, 1.0, 6)  # topics x runs, close runs
    y = scores / 25
    f = np.clip(y + rng.normal(0, 0.01, y.shape), 0, None)
    found = rank_intervals(y, f, f.sum(axis=0), np.full(6, 0.6), design="topics")
    reference = ri.rank_intervals(scores.T)
    assert found.rank.tolist() == reference.rank.tolist()
    assert found.low.tolist() == reference.low.tolist() and found.high.tolist() == reference.high.tolist()
    assert found.low.tolist() != found.high.tolist()  # not trivially points


def test_refusals() -> None:
    with pytest.raises(InsufficientDataError, match="at least 2 runs"):
        rank_intervals([[0.1], [0.2]], [[0.1], [0.2]], [0.3], [0.0], design="topics")
    with pytest.raises(MetricParamError, match="design"):
        bootstrap_totals([[0.1], [0.2]], [[0.1], [0.2]], [0.3], [0.0], design="runs")
