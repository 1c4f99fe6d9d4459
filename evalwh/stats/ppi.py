"""Prediction-powered estimates of a population total from a random audit (methods §15).

A population of ``N`` units (judged pairs, or topics) carries a value ``y_i`` that people would
give (unknown but for an audited sample) and a machine's prediction ``f_i`` (known for every
unit). The target is the total ``theta = sum_i y_i``: a run's mean score is such a total once
each unit's value carries its weight (``1 / topics`` for a topic, a position's weight for a
pair). The audit is a simple random sample without replacement within each of ``H`` strata
(one stratum: an unstratified sample), ``n_h`` of the ``N_h`` units of stratum ``h``.

The prediction-powered estimate (Angelopoulos, Bates, Fannjiang, Jordan and Zrnic, Science
2023), with the power-tuning weight ``lambda`` of PPI++ (Angelopoulos, Duchi and Zrnic, 2023), is

    theta_hat = lambda * F + sum_h N_h * mean_{S_h}(y - lambda * f),       F = sum_i f_i,

the machine's total corrected by the audit's mean error, expanded to each stratum. With
``F`` known exactly over the population, its design variance is that of the expansion estimator
of the residuals ``e = y - lambda * f`` (Cochran, *Sampling techniques*, 1977, §5.3 and §7.2,
the difference and regression estimators):

    V(lambda) = sum_h c_h * s2_h(e),      c_h = N_h^2 * (1 - n_h / N_h) / n_h,

with ``s2_h`` the sample variance (divisor ``n_h - 1``) in stratum ``h``. It is unbiased for any
fixed ``lambda``. The tuned weight minimises ``V``:

    lambda = sum_h c_h * s_h(y, f) / sum_h c_h * s2_h(f),

so ``V(lambda) <= V(0)``, the variance of the human-only estimate (``lambda = 0``), on every
sample: a poor judge is given a small weight and cannot widen the interval. ``lambda = 1`` is
the original PPI. The interval is ``theta_hat +- t_{df, (1 + level) / 2} * sqrt(V)`` with
``df = n - H`` for both the human-only and the prediction-powered estimate (the degree of freedom
spent on ``lambda`` is not subtracted, so the two intervals differ by their variances only).

Everything is vectorised over columns: ``y`` and ``f`` are ``(n, R)`` arrays, one column per
run (or per difference of two runs), each column with its own ``lambda``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from evalwh.errors import InsufficientDataError, MetricParamError


@dataclass(frozen=True)
class DesignEstimate:
    """Prediction-powered, human-only and machine-only estimates of totals, one entry per column.

    Attributes:
        estimate, se, lower, upper: the prediction-powered estimate, its standard error and
            interval at ``level``.
        human, human_se, human_lower, human_upper: the same with ``lambda = 0`` (the audit alone).
        machine: ``F``, the machine's total over the population.
        weight: ``lambda``.
        n: audited units; ``df`` the interval's degrees of freedom.
        effective_n: the audited units the human-only estimate would need for the
            prediction-powered variance, ``n * V(0) / V(lambda)`` (``n`` when both are 0, inf
            when only ``V(lambda)`` is).
        p_value: two-sided p of ``estimate = 0`` (a t test with ``df``); of use for differences.
    """

    estimate: NDArray[np.float64]
    se: NDArray[np.float64]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    human: NDArray[np.float64]
    human_se: NDArray[np.float64]
    human_lower: NDArray[np.float64]
    human_upper: NDArray[np.float64]
    machine: NDArray[np.float64]
    weight: NDArray[np.float64]
    effective_n: NDArray[np.float64]
    p_value: NDArray[np.float64]
    n: int
    df: int
    level: float


def _columns(values: ArrayLike, name: str) -> NDArray[np.float64]:
    array = np.asarray(values, dtype=float)
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2:
        raise MetricParamError(f"prediction-powered estimate: {name} must be 1- or 2-dimensional")
    if not np.isfinite(array).all():
        raise MetricParamError(
            f"prediction-powered estimate: {name} holds a value that is not a finite number"
        )
    return array


def stratum_coefficients(population: ArrayLike, sampled: ArrayLike) -> NDArray[np.float64]:
    """``c_h = N_h^2 (1 - n_h / N_h) / n_h``: a stratum's factor in the expansion variance.

    Examples:
        >>> stratum_coefficients([10, 4], [2, 4]).tolist()
        [40.0, 0.0]
    """
    big = np.asarray(population, dtype=float)
    small = np.asarray(sampled, dtype=float)
    return big**2 * (1.0 - small / big) / small


def design_estimate(
    y: ArrayLike,
    f: ArrayLike,
    machine_total: ArrayLike,
    *,
    strata: ArrayLike | None = None,
    population: ArrayLike | None = None,
    weight: float | str = "tuned",
    level: float = 0.95,
) -> DesignEstimate:
    """Estimate ``sum_i y_i`` over a population from an audited sample and the machine's ``f``.

    Args:
        y: ``(n,)`` or ``(n, R)``: the audited units' human values (weights included).
        f: The machine's values of the same units, same shape.
        machine_total: ``(R,)``: ``F``, the sum of the machine's values over the population.
        strata: ``(n,)`` stratum numbers ``0..H-1`` of the audited units (None: one stratum).
        population: ``(H,)`` units per stratum ``N_h`` (one stratum: ``[N]``).
        weight: ``"tuned"`` (PPI++) or a fixed ``lambda`` (1: PPI, 0: the audit alone).
        level: The intervals' coverage.

    Raises:
        MetricParamError: for shapes, non-finite values or a level outside (0, 1).
        InsufficientDataError: for a stratum with fewer than two audited units (its variance is
            unknown) though it has more units, or more audited than it has.

    Examples:
        >>> y = [1.0, 0.0, 1.0, 1.0]; f = [1.0, 0.0, 1.0, 0.0]
        >>> e = design_estimate(y, f, [5.0], population=[10])
        >>> float(e.human[0]), float(e.machine[0]), round(float(e.weight[0]), 4), round(float(e.estimate[0]), 4)
        (7.5, 5.0, 0.5, 7.5)
    """
    if not 0 < level < 1:
        raise MetricParamError(f"prediction-powered estimate: level {level} must lie in (0, 1)")
    ys, fs = _columns(y, "y"), _columns(f, "f")
    if ys.shape != fs.shape:
        raise MetricParamError(
            f"prediction-powered estimate: y {ys.shape} and f {fs.shape} differ in shape"
        )
    n, columns = ys.shape
    total = np.broadcast_to(np.asarray(machine_total, dtype=float), (columns,)).astype(float)
    groups = np.zeros(n, dtype=np.int64) if strata is None else np.asarray(strata, dtype=np.int64)
    sizes = np.asarray([n] if population is None else population, dtype=float)
    if groups.shape != (n,) or (n and (groups.min() < 0 or groups.max() >= len(sizes))):
        raise MetricParamError(
            "prediction-powered estimate: strata must number the audited units 0..H-1"
        )
    sampled = np.bincount(groups, minlength=len(sizes)).astype(float)
    if (sampled > sizes).any():
        raise InsufficientDataError(
            "prediction-powered estimate: a stratum has more audited units than units"
        )
    thin = (sampled < 2) & (sizes > sampled)
    if thin.any():
        h = int(np.flatnonzero(thin)[0])
        raise InsufficientDataError(
            f"prediction-powered estimate: stratum {h} has {int(sampled[h])} audited unit(s) of {int(sizes[h])}; "
            "its variance needs at least 2"
        )
    kept = sampled > 0
    coef = np.zeros(len(sizes))
    coef[kept] = stratum_coefficients(sizes[kept], sampled[kept])
    expand = np.where(kept, sizes / np.maximum(sampled, 1), 0.0)  # N_h / n_h
    # per-stratum means, variances and covariances of y and f, (H, R)
    one_hot = np.zeros((len(sizes), n))
    one_hot[groups, np.arange(n)] = 1.0
    mean_y = one_hot @ ys / np.maximum(sampled, 1)[:, None]
    mean_f = one_hot @ fs / np.maximum(sampled, 1)[:, None]
    dy, df_ = ys - mean_y[groups], fs - mean_f[groups]
    divisor = np.maximum(sampled - 1, 1)[:, None]
    s_yy = one_hot @ (dy * dy) / divisor
    s_ff = one_hot @ (df_ * df_) / divisor
    s_yf = one_hot @ (dy * df_) / divisor
    v_yy, v_ff, v_yf = coef @ s_yy, coef @ s_ff, coef @ s_yf
    if weight == "tuned":
        lam = np.divide(v_yf, v_ff, out=np.zeros(columns), where=v_ff > 0)
    elif isinstance(weight, str):
        raise MetricParamError(
            f"prediction-powered estimate: weight {weight!r} must be 'tuned' or a number"
        )
    else:
        lam = np.full(columns, float(weight))
    human = (expand * sampled) @ mean_y
    sample_f = (expand * sampled) @ mean_f
    estimate = human + lam * (total - sample_f)
    var_ppi = np.maximum(v_yy - 2 * lam * v_yf + lam**2 * v_ff, 0.0)
    var_human = v_yy
    dof = max(int(n - kept.sum()), 1)
    quantile = float(stats.t.ppf((1 + level) / 2, dof))
    se, human_se = np.sqrt(var_ppi), np.sqrt(var_human)
    with np.errstate(divide="ignore", invalid="ignore"):
        effective = np.where(
            var_ppi > 0, n * var_human / var_ppi, np.where(var_human > 0, np.inf, float(n))
        )
        t_stat = np.where(se > 0, np.abs(estimate) / se, np.where(estimate == 0, 0.0, np.inf))
    p_value = 2 * stats.t.sf(t_stat, dof)
    return DesignEstimate(
        estimate=estimate, se=se, lower=estimate - quantile * se, upper=estimate + quantile * se,
        human=human, human_se=human_se, human_lower=human - quantile * human_se,
        human_upper=human + quantile * human_se, machine=total, weight=lam, effective_n=effective,
        p_value=p_value, n=n, df=dof, level=level,
    )  # fmt: skip
