"""The post-stratified count and its Jeffreys posterior interval (methods §15.7, ``--interval beta``).

Checked against an independent computation: the posterior of the count built by direct
convolution of each group's beta-binomial (``numpy.convolve`` over scipy's probabilities, one run
at a time) in place of the Fourier product over all runs, its quantiles read off by a search over
the cumulative sums; the variance against the moments of that distribution.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from evalwh.errors import MetricParamError
from evalwh.stats.ppi_counts import poststratified_count


def _direct(x: list[int], n: list[int], big: list[int], level: float) -> tuple[int, int, float]:
    pmf = np.array([1.0])
    for xi, ni, bi in zip(x, n, big, strict=True):
        rest = bi - ni
        pmf = np.convolve(pmf, stats.betabinom.pmf(np.arange(rest + 1), rest, xi + 0.5, ni - xi + 0.5))
    counts = sum(x) + np.arange(len(pmf))
    cdf = np.cumsum(pmf)
    tail = (1 - level) / 2
    low = next(c for c, p in zip(counts, cdf, strict=True) if p >= tail - 1e-9)
    high = next(c for c, p in zip(counts, cdf, strict=True) if p >= 1 - tail - 1e-9)
    mean = float(pmf @ counts)
    return low, high, float(pmf @ (counts - mean) ** 2)


@st.composite
def runs(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    groups, columns = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    big = np.array(draw(st.lists(st.integers(0, 60), min_size=groups * columns, max_size=groups * columns)))
    n = np.array([draw(st.integers(0, b)) for b in big])
    x = np.array([draw(st.integers(0, k)) for k in n])
    return x.reshape(groups, columns), n.reshape(groups, columns), big.reshape(groups, columns)


@settings(max_examples=60, deadline=None)
@given(runs(), st.sampled_from([0.8, 0.9, 0.95]))
def test_interval_is_the_posteriors_equal_tailed_interval(counts, level) -> None:
    x, n, big = counts
    fallback = np.linspace(0.1, 0.9, len(x))
    found = poststratified_count(x, n, big, fallback=fallback, level=level)
    for r in range(x.shape[1]):
        low, high, variance = _direct(x[:, r].tolist(), n[:, r].tolist(), big[:, r].tolist(), level)
        rate = np.where(n[:, r] > 0, x[:, r] / np.maximum(n[:, r], 1), fallback)
        estimate = float(big[:, r] @ rate)
        assert found.estimate[r] == pytest.approx(estimate, abs=1e-9)
        assert found.lower[r] == pytest.approx(min(low, estimate), abs=1e-9)
        assert found.upper[r] == pytest.approx(max(high, estimate), abs=1e-9)
        assert found.variance[r] == pytest.approx(variance, rel=1e-9, abs=1e-9)
        assert found.lower[r] <= found.estimate[r] <= found.upper[r]


def test_a_census_is_exact_and_an_unaudited_group_spreads_over_all_its_pairs() -> None:
    census = poststratified_count([[3, 0], [1, 7]], [[10, 4], [5, 9]], [[10, 4], [5, 9]])
    assert census.estimate.tolist() == census.lower.tolist() == census.upper.tolist() == [4.0, 7.0]
    assert census.variance.tolist() == [0.0, 0.0]
    # 20 pairs nobody audited: Jeffreys' predictive, symmetric about 10, from 0 to 20
    blank = poststratified_count([[0]], [[0]], [[20]], fallback=[0.25])
    assert blank.estimate.tolist() == [5.0]
    assert (blank.lower[0], blank.upper[0]) == (0.0, 20.0)


def test_bad_counts_are_refused() -> None:
    with pytest.raises(MetricParamError, match="more relevant than audited"):
        poststratified_count([[3]], [[2]], [[5]])
    with pytest.raises(MetricParamError, match="counts"):
        poststratified_count([[0.5]], [[2]], [[5]])
    with pytest.raises(MetricParamError, match="level"):
        poststratified_count([[1]], [[2]], [[5]], level=1.0)


def test_the_docstring_example_runs() -> None:
    import doctest

    import evalwh.stats.ppi_counts

    failures, tried = doctest.testmod(evalwh.stats.ppi_counts)
    assert tried > 0 and failures == 0


def test_runs_in_blocks_as_one_run_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runs are computed in blocks that bound the memory (P@1000 of 50 topics is a count up to
    50,000); with blocks of 3 runs, each of 20 runs is as the direct convolution gives it."""
    import evalwh.stats.ppi_counts as counts

    rng = np.random.default_rng(4)
    big = rng.integers(100, 400, size=(2, 20))
    n = rng.binomial(big, 0.05)
    x = rng.binomial(n, np.array([[0.15], [0.8]]))
    whole = poststratified_count(x, n, big)
    monkeypatch.setattr(counts, "BLOCK", 2 * 3 * 1024)  # two groups, transforms of 1,024: 3 runs a block
    found = poststratified_count(x, n, big)
    np.testing.assert_array_equal(found.lower, whole.lower)
    np.testing.assert_array_equal(found.upper, whole.upper)
    for r in range(20):
        low, high, variance = _direct(x[:, r].tolist(), n[:, r].tolist(), big[:, r].tolist(), 0.95)
        assert (found.lower[r], found.upper[r]) == (low, high)
        assert found.variance[r] == pytest.approx(variance, rel=1e-9)
