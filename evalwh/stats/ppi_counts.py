"""A count of relevant pairs from a random audit, post-stratified by the machine's label (methods §15.7).

P@k of a run is ``C / (topics * k)``, with ``C`` the number of pairs in the run's top ``k`` that
people would call relevant. The audit is a simple random sample within each of its strata; the
run's top-``k`` pairs of one stratum fall into groups by the machine's label (relevant or not),
and the audited pairs of a group are a simple random sample of it given their number. In group
``g`` of a run, ``N_g`` pairs, ``n_g`` audited, ``x_g`` of those relevant to people.

The estimate is the post-stratified count (Holt and Smith, *JRSS A* 142, 1979; the machine's
label as the post-strata, as stratified prediction-powered inference takes them: Fisch et al.,
NeurIPS 2024)::

    C_hat = sum_g N_g * x_g / n_g

(a group no audited pair falls in takes the audit's rate of its stratum and label). Its interval
is the equal-tailed interval of the count's posterior under Jeffreys' prior ``Beta(1/2, 1/2)`` on
each group's share: the ``N_g - n_g`` unaudited pairs of a group hold a beta-binomial number of
relevant ones, ``BetaBinomial(N_g - n_g, x_g + 1/2, n_g - x_g + 1/2)``, the groups independent, so
``C`` is the audited ``sum_g x_g`` plus the sum of those (the finite population's posterior:
an audited group has no unaudited pair left, a group no pair of which was audited spreads over all
its ``N_g``). Jeffreys' interval for a proportion is the one Brown, Cai and DasGupta
(*Statistical Science* 16, 2001) recommend for small counts; a Wald interval (estimate +- t se)
fails there both ways: a run whose few audited pairs show no error of the machine gets a
variance of nearly 0 (methods §15.6). The interval is widened, where needed, to hold ``C_hat``.

The distribution of the sum is exact: each group's beta-binomial probabilities on ``0..N_g - n_g``,
multiplied as Fourier transforms across groups, many runs at once (in blocks that bound the
memory: P@1000 of 50 topics is a count up to 50,000).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from evalwh.errors import MetricParamError

PRIOR = 0.5  # Jeffreys' Beta(1/2, 1/2)
BLOCK = 1 << 20  # values (groups x runs x transform size) per block of runs


@dataclass(frozen=True)
class CountEstimate:
    """Post-stratified counts and their posterior intervals, one entry per column (run).

    Attributes:
        estimate: ``C_hat``.
        lower, upper: the interval at ``level`` (counts).
        variance: the posterior variance of ``C`` (the sum of the groups' beta-binomial variances).
    """

    estimate: NDArray[np.float64]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    variance: NDArray[np.float64]


def _groups(values: ArrayLike, name: str) -> NDArray[np.float64]:
    array = np.asarray(values, dtype=float)
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2 or not np.isfinite(array).all() or (array < 0).any() or (array != np.round(array)).any():
        raise MetricParamError(f"post-stratified count: {name} must be a (groups, runs) array of counts")
    return array


def poststratified_count(
    relevant: ArrayLike, audited: ArrayLike, population: ArrayLike, *, fallback: ArrayLike | None = None,
    level: float = 0.95,
) -> CountEstimate:  # fmt: skip
    """The count of relevant pairs per run, and its interval (methods §15.7).

    Args:
        relevant: ``(G, R)``: ``x_g``, the audited pairs of group ``g`` of run ``r`` people call relevant.
        audited: ``(G, R)``: ``n_g``.
        population: ``(G, R)``: ``N_g``.
        fallback: ``(G,)``: the share a group without audited pairs takes in the estimate (None: 1/2).
        level: The interval's coverage.

    Raises:
        MetricParamError: for counts that are not counts, ``x > n``, ``n > N`` or a level outside (0, 1).

    Examples:
        Two groups of 20 pairs, 5 of each audited, with 4 and 1 relevant:

        >>> e = poststratified_count([[4], [1]], [[5], [5]], [[20], [20]])
        >>> e.estimate.tolist(), e.lower.tolist(), e.upper.tolist()
        ([20.0], [12.0], [28.0])
    """
    if not 0 < level < 1:
        raise MetricParamError(f"post-stratified count: level {level} must lie in (0, 1)")
    x, n, big = _groups(relevant, "relevant"), _groups(audited, "audited"), _groups(population, "population")
    if not x.shape == n.shape == big.shape:
        raise MetricParamError(f"post-stratified count: shapes {x.shape}, {n.shape} and {big.shape} differ")
    if (x > n).any() or (n > big).any():
        raise MetricParamError("post-stratified count: a group has more relevant than audited, or more audited than pairs")
    share = np.full(x.shape[0], 0.5) if fallback is None else np.asarray(fallback, dtype=float)
    if share.shape != (x.shape[0],) or not ((share >= 0) & (share <= 1)).all():
        raise MetricParamError("post-stratified count: fallback must hold one share in [0, 1] per group")
    rate = np.where(n > 0, x / np.maximum(n, 1), share[:, None])
    estimate = (big * rate).sum(axis=0)
    rest = big - n  # the unaudited pairs of each group
    a, b = x + PRIOR, n - x + PRIOR
    variance = (rest * a * b * (a + b + rest) / ((a + b) ** 2 * (a + b + 1))).sum(axis=0)
    # each group's beta-binomial on 0..rest, zero-padded to the length of the sum (which the
    # transform's size holds, so the circular product is the linear one), then one product of
    # Fourier transforms over the groups; runs in blocks of about a million values
    length = int(rest.sum(axis=0).max(initial=0)) + 1
    support = np.arange(length)
    size = 1 << int(np.ceil(np.log2(length)))
    tail = (1 - level) / 2
    seen = x.sum(axis=0)
    low, high = np.empty(x.shape[1]), np.empty(x.shape[1])
    block = max(1, BLOCK // (x.shape[0] * size))
    for start in range(0, x.shape[1], block):
        part = slice(start, start + block)
        pmf = stats.betabinom.pmf(support, rest[:, part, None], a[:, part, None], b[:, part, None])
        summed = np.fft.irfft(np.prod(np.fft.rfft(pmf, n=size, axis=-1), axis=0), n=size, axis=-1)[:, :length]
        mass = np.clip(summed, 0.0, None)
        cdf = np.cumsum(mass, axis=-1)
        cdf /= cdf[:, -1:]
        # the smallest count whose probability of being reached is tail (1 - tail): a discrete
        # quantile, with a tolerance for the transforms' rounding
        low[part] = seen[part] + np.argmax(cdf >= tail - 1e-9, axis=-1)
        high[part] = seen[part] + np.argmax(cdf >= 1 - tail - 1e-9, axis=-1)
    return CountEstimate(
        estimate=estimate, lower=np.minimum(low, estimate), upper=np.maximum(high, estimate), variance=variance
    )
