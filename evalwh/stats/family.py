"""Family-wide procedures over a runs x topics matrix (Sakai 2018, ch. 4-5; Carterette, TOIS 2012).

* :func:`two_way_anova`: two-way ANOVA without replication (systems x topics), its table,
  the residual variance ``V_E`` and the margin of error (MOE) of a system mean.
* :func:`tukey_hsd`: Tukey's HSD with the two-way ANOVA's ``V_E``: the studentized range of
  ``k`` means with ``phi_E = (k - 1)(n - 1)`` degrees of freedom
  (:data:`scipy.stats.studentized_range`).
* :func:`tukey_half_width`: the half-width of Tukey's simultaneous intervals.
* :func:`randomized_tukey`: the randomised Tukey HSD test: per resample, every topic's scores
  are shuffled across the systems and the largest difference between system means is kept;
  a pair's p-value is the share of resamples whose largest difference reaches the pair's.

Both Tukey procedures control the family-wise error over all pairs of the ``k`` runs, so
their p-values need no further correction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import stats

from evalwh.errors import InsufficientDataError

if TYPE_CHECKING:
    import pandas as pd
    from numpy.typing import NDArray

# randomised Tukey chunks hold at most this many float64 cells (resamples x topics x runs)
_CHUNK_CELLS = 4_000_000


@dataclass(frozen=True)
class TwoWayAnova:
    """Two-way ANOVA without replication of a ``k`` runs x ``n`` topics matrix.

    Attributes:
        ss_systems, ss_topics, ss_residual, ss_total: Sums of squares (Sakai's S_A, S_B,
            S_E and S_T).
        df_systems, df_topics, df_residual: ``k - 1``, ``n - 1`` and ``(k - 1)(n - 1)``.
        f_systems, f_topics: F statistics against the residual mean square ``V_E``.
        p_systems, p_topics: Their upper-tail p-values.
        v_e: The residual variance ``V_E = S_E / phi_E``.
        n_topics: ``n``.
    """

    ss_systems: float
    ss_topics: float
    ss_residual: float
    ss_total: float
    df_systems: int
    df_topics: int
    df_residual: int
    f_systems: float
    f_topics: float
    p_systems: float
    p_topics: float
    v_e: float
    n_topics: int

    def moe(self, alpha: float = 0.05) -> float:
        """Sakai's margin of error: the half-width ``t_{alpha/2}(phi_E) sqrt(V_E / n)`` of a system mean.

        It is the half-width of each run's confidence interval under the ANOVA's pooled
        variance, and so a measure of the smallest difference the topic set resolves.
        """
        return float(stats.t.ppf(1 - alpha / 2, self.df_residual) * np.sqrt(self.v_e / self.n_topics))

    def table(self) -> pd.DataFrame:
        """The ANOVA table: ``source, ss, df, ms, F, p_value`` for systems, topics, residual, total."""
        import pandas as pd

        ms = [
            self.ss_systems / self.df_systems,
            self.ss_topics / self.df_topics,
            self.v_e,
            np.nan,
        ]
        return pd.DataFrame(
            {
                "source": ["systems", "topics", "residual", "total"],
                "ss": [self.ss_systems, self.ss_topics, self.ss_residual, self.ss_total],
                "df": [
                    self.df_systems,
                    self.df_topics,
                    self.df_residual,
                    self.df_systems + self.df_topics + self.df_residual,
                ],
                "ms": ms,
                "F": [self.f_systems, self.f_topics, np.nan, np.nan],
                "p_value": [self.p_systems, self.p_topics, np.nan, np.nan],
            }
        )


def two_way_anova(values: NDArray[np.float64]) -> TwoWayAnova:
    """Two-way ANOVA without replication (runs x topics); scipy has none, so the textbook sums.

    ``S_T = S_A + S_B + S_E`` with ``S_A = n sum_i (mean_i. - mean)^2`` (systems),
    ``S_B = k sum_j (mean_.j - mean)^2`` (topics) and the residual ``S_E`` (Sakai 2018, §5.2).

    Examples:
        >>> out = two_way_anova(np.array([[0.5, 0.6, 0.7], [0.1, 0.2, 0.4]]))
        >>> round(out.ss_systems, 4), out.df_residual, round(out.v_e, 5)
        (0.2017, 2, 0.00167)
    """
    k, n = values.shape
    if k < 2 or n < 2:
        raise InsufficientDataError(f"two-way ANOVA needs at least 2 runs and 2 topics, got {k} x {n}")
    grand = values.mean()
    ss_a = float(n * ((values.mean(axis=1) - grand) ** 2).sum())
    ss_b = float(k * ((values.mean(axis=0) - grand) ** 2).sum())
    ss_t = float(((values - grand) ** 2).sum())
    ss_e = max(ss_t - ss_a - ss_b, 0.0)
    df_a, df_b, df_e = k - 1, n - 1, (k - 1) * (n - 1)
    v_e = ss_e / df_e
    f_a, p_a = _f_test(ss_a / df_a, v_e, df_a, df_e)
    f_b, p_b = _f_test(ss_b / df_b, v_e, df_b, df_e)
    return TwoWayAnova(ss_a, ss_b, ss_e, ss_t, df_a, df_b, df_e, f_a, f_b, p_a, p_b, v_e, n)


def _f_test(ms: float, v_e: float, df: int, df_e: int) -> tuple[float, float]:
    if v_e > 0:
        f = ms / v_e
        return float(f), float(stats.f.sf(f, df, df_e))
    # no residual variation: any effect is certain, none is no evidence
    return (np.inf, 0.0) if ms > 0 else (np.nan, 1.0)


def tukey_hsd(
    values: NDArray[np.float64], a_idx: NDArray[np.intp], b_idx: NDArray[np.intp]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Tukey's HSD after the two-way ANOVA: ``q = |mean_a - mean_b| / sqrt(V_E / n)`` and its p.

    p is the upper tail of the studentized range of ``k`` means with ``(k-1)(n-1)`` degrees of
    freedom, the family-wise p-value over all ``k(k-1)/2`` pairs (Sakai 2018, §5.3). The
    statistic returned is signed by the direction of the difference.

    Examples:
        >>> v = np.array([[0.5, 0.6, 0.7, 0.9], [0.1, 0.2, 0.4, 0.3], [0.5, 0.5, 0.6, 0.8]])
        >>> q, p = tukey_hsd(v, np.array([0]), np.array([1]))
        >>> round(float(q[0]), 3), bool(p[0] < 0.01)
        (11.129, True)
    """
    k, n = values.shape
    anova = two_way_anova(values)
    means = values.mean(axis=1)
    diff = means[a_idx] - means[b_idx]
    se = np.sqrt(anova.v_e / n)
    if se == 0:
        q = np.copysign(np.where(diff == 0, 0.0, np.inf), diff)
        return q, np.where(diff == 0, 1.0, 0.0)
    q = diff / se
    # the studentized range's cdf is a numerical integral: evaluate each distinct |q| once
    unique, inverse = np.unique(np.round(np.abs(q), 12), return_inverse=True)
    p = stats.studentized_range.sf(unique, k, anova.df_residual)
    return q, np.clip(p[inverse], 0.0, 1.0)


def tukey_half_width(values: NDArray[np.float64], alpha: float) -> float:
    """Half-width of Tukey's simultaneous ``1 - alpha`` intervals after the two-way ANOVA.

    ``q_{1-alpha}(k, phi_E) sqrt(V_E / n)``: every pair's interval
    ``mean_a - mean_b +- half`` excludes 0 exactly when :func:`tukey_hsd`'s p is below
    ``alpha`` (Sakai 2018, §5.3; the one-way version is :func:`scipy.stats.tukey_hsd`'s
    ``confidence_interval``).

    Examples:
        >>> v = np.array([[0.5, 0.6, 0.7, 0.9], [0.1, 0.2, 0.4, 0.3], [0.5, 0.5, 0.6, 0.8]])
        >>> round(tukey_half_width(v, 0.05), 4)
        0.1657
    """
    k, n = values.shape
    anova = two_way_anova(values)
    critical = float(stats.studentized_range.ppf(1.0 - alpha, k, anova.df_residual))
    return critical * float(np.sqrt(anova.v_e / n))


def critical_distance(resampled: NDArray[np.float64], alpha: float, tol: float | NDArray[np.float64]) -> Any:
    """The distance a resampling test rejects beyond, from its resampled statistics (last axis).

    With ``p = (1 + #{s* >= d - tol}) / (1 + B)``, ``p < alpha`` exactly when
    ``d > s*_(j) + tol``, ``s*_(j)`` the ``(j+1)``-th largest of the ``B`` statistics and ``j``
    the largest count below ``alpha (1 + B) - 1``. Too few resamples to reject: infinity.
    One value per row of a 2-D ``resampled``.

    Examples:
        >>> float(critical_distance(np.arange(1.0, 100.0), 0.05, 0.0))  # p < 0.05: at most 3 reach d
        96.0
    """
    size = resampled.shape[-1]
    count = int(np.ceil(alpha * (1 + size) - 1)) - 1
    if count < 0:
        return np.full(resampled.shape[:-1], np.inf) + tol
    position = size - 1 - count
    return np.partition(resampled, position, axis=-1)[..., position] + tol


def randomized_tukey(
    values: NDArray[np.float64],
    a_idx: NDArray[np.intp],
    b_idx: NDArray[np.intp],
    n_resamples: int,
    rng: np.random.Generator,
    *,
    alpha: float | None = None,
) -> NDArray[np.float64] | tuple[NDArray[np.float64], float]:
    """Family-wise p-values of the randomised Tukey HSD test (Carterette 2012; Sakai 2018, §4.4).

    Per resample, each topic's ``k`` scores are permuted across the runs (the null hypothesis:
    the runs are exchangeable on every topic) and the largest difference between two run
    means is recorded. ``p_ij = (1 + #{max* >= |mean_i - mean_j|}) / (1 + B)``. Resamples are
    drawn in chunks so that memory stays at ``chunk x n x k`` cells; the pairs are looked up
    in the sorted maxima, so their number does not enter the resampling cost.

    With ``alpha``, also the half-width of the matching simultaneous interval: the critical
    largest difference (:func:`critical_distance`), so that a pair's interval
    ``mean_a - mean_b +- half`` excludes 0 exactly when its p is below ``alpha``; the
    return value is then ``(p, half)``.

    Examples:
        >>> v = np.array([[0.9, 0.8, 0.9, 0.7, 0.8], [0.1, 0.2, 0.1, 0.2, 0.1], [0.5, 0.4, 0.5, 0.6, 0.5]])
        >>> p = randomized_tukey(v, np.array([0, 0]), np.array([1, 2]), 2000, np.random.default_rng(1))
        >>> bool(p[0] < 0.05), bool(p[0] <= p[1])
        (True, True)
    """
    if n_resamples < 1:
        raise InsufficientDataError(f"n_resamples must be at least 1, got {n_resamples}")
    k, n = values.shape
    by_topic = np.ascontiguousarray(values.T)  # n x k: a resample permutes each row
    step = max(1, min(n_resamples, _CHUNK_CELLS // (n * k)))
    maxima = np.empty(n_resamples)
    block = np.empty((step, n, k))
    for start in range(0, n_resamples, step):  # chunks of resamples, to bound memory
        size = min(step, n_resamples - start)
        shuffled = block[:size]
        shuffled[...] = by_topic
        # in place on a contiguous block: permuting a broadcast view copies it slowly
        rng.permuted(shuffled, axis=2, out=shuffled)
        means = shuffled.mean(axis=1)  # size x k
        maxima[start : start + size] = means.max(axis=1) - means.min(axis=1)
    maxima.sort()
    means = values.mean(axis=1)
    observed = np.abs(means[a_idx] - means[b_idx])
    tol = 1e-12 * max(1.0, float(np.abs(values).max()))
    at_least = n_resamples - np.searchsorted(maxima, observed - tol, side="left")
    p = (1.0 + at_least) / (1.0 + n_resamples)
    if alpha is None:
        return p
    return p, float(critical_distance(maxima, alpha, tol))
