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
of the residuals ``e = y - lambda * f`` (Cochran, *Sampling techniques*, 1977, chapters 5 and 7,
the difference and regression estimators):

    V(lambda) = sum_h c_h * s2_h(e),      c_h = N_h^2 * (1 - n_h / N_h) / n_h,

with ``s2_h`` the sample variance (divisor ``n_h - 1``) in stratum ``h``. It is unbiased for any
fixed ``lambda``. The tuned weight minimises ``V``; for ``R`` runs estimated together (a vector of
means) PPI++ takes one weight for all of them, the one that minimises the sum of their variances:

    lambda = sum_r sum_h c_h * s_h(y_r, f_r) / sum_r sum_h c_h * s2_h(f_r)

(``share_weight=False``: one weight per column, the same formula without the sums over ``r``).
``lambda = 1`` is the original PPI, ``lambda = 0`` the audit alone. Because ``lambda`` is
estimated on the audit itself, its variance is the delete-one jackknife's
(:func:`jackknife_tuned`: the weight re-estimated without each audited unit), which carries
that estimation; for ``lambda = 0`` the jackknife is the plug-in ``V(0)`` exactly, so the
prediction-powered and the audit-only intervals use one variance convention. Both take the
Student t quantile ``t_{df, (1 + level) / 2}`` with ``df = min(n - H, m - 1)``, ``m`` the audited
units whose ``y`` or ``f`` is not zero (a run's top ten are a few of the audited pairs: its
variance rests on those), or given points of the studentised estimate: for a topics audit,
:func:`machine_quantiles` reads them off the machine's own values of every topic, which show
the skewness of per-topic scores (AP's long upper tail) that an audit of a few topics misses. The plug-in ``V(lambda)``, minimised on the very sample, has its sum
over the columns never above that of ``V(0)`` but is too small on a few audited units; the
jackknife's can exceed ``V(0)`` on a sample, and was the smaller on average in the coverage
bench (methods §15.4, §15.6).

Everything is vectorised over columns: ``y`` and ``f`` are ``(n, R)`` arrays, one column per
run (or per difference of two runs), sharing one ``lambda`` (or each its own, ``share_weight=False``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from evalwh.errors import InsufficientDataError, MetricParamError
from evalwh.stats.rank_intervals import RankIntervals, competition_ranks, percentile_ranks


@dataclass(frozen=True)
class DesignEstimate:
    """Prediction-powered, human-only and machine-only estimates of totals, one entry per column.

    Attributes:
        estimate, se, lower, upper: the prediction-powered estimate, its standard error and
            interval at ``level``.
        human, human_se, human_lower, human_upper: the same with ``lambda = 0`` (the audit alone).
        machine: ``F``, the machine's total over the population.
        weight: ``lambda``.
        n: audited units; ``df`` the prediction-powered interval's degrees of freedom (per column).
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
    df: NDArray[np.float64]
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


def jackknife_tuned(
    ys: NDArray[np.float64],
    fs: NDArray[np.float64],
    groups: NDArray[np.int64],
    sizes: NDArray[np.float64],
    sampled: NDArray[np.float64],
    total: NDArray[np.float64],
    shared: bool = True,
    tune: NDArray[np.bool_] | None = None,
) -> NDArray[np.float64]:
    """The delete-one jackknife variance of the tuned estimate, ``lambda`` re-estimated each time.

    For unit ``i`` of stratum ``h``, ``theta_(i)`` is the estimate from the audit without it;
    ``V = sum_h (1 - n_h / N_h) (n_h - 1) / n_h sum_{i in h} (theta_(i) - mean_h theta_(.))^2``
    (Wolter, *Introduction to variance estimation*, 2007, chapter 4). Unlike the plug-in variance it
    carries the estimation of ``lambda``, which on a few audited topics is far from its best
    value. With ``shared`` the weight is one for all columns (their summed covariance over their
    summed variance), re-estimated so at each deletion; ``tune`` (a mask of the columns) sums over
    those columns only. Every unit's deletion is computed at once from the strata's sums.
    """
    strata = len(sizes)
    one_hot = np.zeros((strata, len(groups)))
    one_hot[groups, np.arange(len(groups))] = 1.0
    sums = {key: one_hot @ value for key, value in
            (("y", ys), ("f", fs), ("yy", ys * ys), ("ff", fs * fs), ("yf", ys * fs))}  # fmt: skip

    def moments(count, s_y, s_f, s_ff, s_yf):  # type: ignore[no-untyped-def]
        safe = np.maximum(count, 1)
        divisor = np.maximum(count - 1, 1)
        return s_y / safe, s_f / safe, (s_ff - s_f**2 / safe) / divisor, (s_yf - s_y * s_f / safe) / divisor

    with np.errstate(divide="ignore", invalid="ignore"):
        full = np.where(sampled > 0, sizes**2 * (1 - sampled / sizes) / np.maximum(sampled, 1), 0.0)
    count = sampled[:, None]
    m_y, m_f, v_ff, v_yf = moments(count, sums["y"], sums["f"], sums["ff"], sums["yf"])
    total_ff, total_yf = full @ v_ff, full @ v_yf  # (R,)
    expand_y, expand_f = sizes @ m_y, sizes @ m_f
    # deleting unit i from its stratum h: that stratum's terms recomputed, the others kept

    def deleted(y_i: NDArray[np.float64], f_i: NDArray[np.float64], h: NDArray[np.int64]) -> NDArray[np.float64]:
        less = (sampled[h] - 1)[:, None]
        d_y, d_f, d_ff, d_yf = moments(less, sums["y"][h] - y_i, sums["f"][h] - f_i, sums["ff"][h] - f_i * f_i,
                                       sums["yf"][h] - y_i * f_i)  # fmt: skip
        big = sizes[h, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            c_less = np.where(less > 0, big**2 * (1 - less / big) / np.maximum(less, 1), 0.0)
        var_f = total_ff - full[h, None] * v_ff[h] + c_less * d_ff
        cov = total_yf - full[h, None] * v_yf[h] + c_less * d_yf
        if shared:
            on = slice(None) if tune is None else tune
            cov, var_f = cov[:, on].sum(axis=1, keepdims=True), var_f[:, on].sum(axis=1, keepdims=True)
        lam = np.divide(cov, var_f, out=np.zeros_like(cov), where=var_f > 0)
        est_y = expand_y - big * m_y[h] + big * d_y
        est_f = expand_f - big * m_f[h] + big * d_f
        return est_y + lam * (total - est_f)

    # a unit whose y and f are 0 in every column leaves the sums as they are: all such units of
    # a stratum give one and the same deletion, computed once (most audited pairs are in no
    # run's top ranks)
    active = ((ys != 0) | (fs != 0)).any(axis=1)
    theta = deleted(ys[active], fs[active], groups[active])
    zeros = np.zeros((strata, ys.shape[1]))
    theta_zero = deleted(zeros, zeros, np.arange(strata))
    idle = np.bincount(groups[~active], minlength=strata).astype(float)[:, None]
    hot = one_hot[:, active]
    centre = (hot @ theta + idle * theta_zero) / np.maximum(sampled, 1)[:, None]
    spread = hot @ (theta - centre[groups[active]]) ** 2 + idle * (theta_zero - centre) ** 2
    factor = np.where(sampled > 1, (1 - sampled / sizes) * (sampled - 1) / np.maximum(sampled, 1), 0.0)
    return factor @ spread


def design_estimate(
    y: ArrayLike,
    f: ArrayLike,
    machine_total: ArrayLike,
    *,
    strata: ArrayLike | None = None,
    population: ArrayLike | None = None,
    weight: float | str = "tuned",
    level: float = 0.95,
    bound: ArrayLike | None = None,
    share_weight: bool = True,
    quantiles: tuple[float, float] | None = None,
    limits: tuple[float, float] | None = None,
    tuning: tuple[ArrayLike, ArrayLike] | None = None,
) -> DesignEstimate:
    """Estimate ``sum_i y_i`` over a population from an audited sample and the machine's ``f``.

    Args:
        y: ``(n,)`` or ``(n, R)``: the audited units' human values (weights included).
        f: The machine's values of the same units, same shape.
        machine_total: ``(R,)``: ``F``, the sum of the machine's values over the population.
        strata: ``(n,)`` stratum numbers ``0..H-1`` of the audited units (None: one stratum).
        population: ``(H,)`` units per stratum ``N_h`` (one stratum: ``[N]``). None: the audit is
            the whole population (a census of ``n`` units, whose variance is 0); give it for a sample.
        weight: ``"tuned"`` (PPI++) or a fixed ``lambda`` (1: PPI, 0: the audit alone).
        level: The intervals' coverage.
        bound: ``(R,)``: the largest ``|y|`` a unit can have (None: no floor). Where fewer than
            two audited units carry a column (``y`` or ``f`` not zero), its sample variance has no
            degree of freedom; the variance is then ``sum_h c_h * bound^2 / n_h``, what one
            audited unit at the bound and the others at 0 would give: an audit that saw nothing
            of a run does not make its interval a point.
        share_weight: With ``weight="tuned"``: one weight for all columns (PPI++ for a vector of
            means, the default), or one per column.
        quantiles: ``(u_low, u_high)``, the ``(1 - level) / 2`` and ``(1 + level) / 2`` points of the
            studentised estimate ``(estimate - theta) / se`` to use instead of Student's: both
            intervals are then ``[estimate - u_high se, estimate - u_low se]``
            (:func:`machine_quantiles` reads them off the machine's own values; methods §15.4).
            The p-value stays Student's.
        limits: ``(low, high)``, the values the total can take (a measure's range, e.g. ``(0, 1)``
            for P@k as a mean over topics): both intervals are clipped to it, which changes no
            interval's coverage, since the total lies in it. The estimate is not moved (unbiased, it
            can leave the range on a small audit). None: no clipping.
        tuning: ``(y_t, f_t)``, ``(n, K)`` columns of the same audited units on which the shared weight
            is tuned instead of ``y`` and ``f`` themselves (``weight="tuned"`` with ``share_weight``),
            in the estimate and in each of the jackknife's deletions. Every run's values minus the
            runs' mean give any family of differences the weight of all pairs of runs (the sum over
            pairs ``a < b`` of a covariance of ``y_a - y_b`` and ``f_a - f_b`` is ``R`` times the sum
            over the runs of that of the centred values), whichever pairs are estimated
            (``evalwh audit estimate --differences``).

    Raises:
        MetricParamError: for shapes, non-finite values, a level outside (0, 1) or limits not
            increasing.
        InsufficientDataError: for a stratum with fewer than two audited units (its variance is
            unknown) though it has more units, or more audited than it has.

    Examples:
        >>> y = [1, 0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0]; f = [1, 0, 1, 1, 0, 1, 0, 1, 1, 1, 1, 0]
        >>> e = design_estimate(y, f, [28.0], population=[50])
        >>> [round(float(x[0]), 4) for x in (e.human, e.weight, e.estimate, e.se, e.human_se)], e.df.tolist()
        ([29.1667, 0.875, 24.5, 3.123, 6.4794], [7.0])
    """
    if not 0 < level < 1:
        raise MetricParamError(f"prediction-powered estimate: level {level} must lie in (0, 1)")
    if limits is not None and not (len(limits) == 2 and not np.isnan(limits).any() and limits[0] < limits[1]):
        raise MetricParamError(f"prediction-powered estimate: limits {limits} must be (low, high) with low < high")
    if quantiles is not None and not (np.isfinite(quantiles).all() and quantiles[0] < quantiles[1]):
        raise MetricParamError(f"prediction-powered estimate: quantiles {quantiles} must be finite and increasing")
    ys, fs = _columns(y, "y"), _columns(f, "f")
    if ys.shape != fs.shape:
        raise MetricParamError(
            f"prediction-powered estimate: y {ys.shape} and f {fs.shape} differ in shape"
        )
    n, columns = ys.shape
    given_total = np.asarray(machine_total, dtype=float)
    if given_total.size not in (1, columns) or given_total.ndim > 1:
        raise MetricParamError(
            f"prediction-powered estimate: machine_total {given_total.shape} must be one number or one per column ({columns})"
        )
    total = np.broadcast_to(given_total.reshape(-1) if given_total.ndim else given_total, (columns,)).astype(float)
    if bound is not None and np.asarray(bound).size not in (1, columns):
        raise MetricParamError(
            f"prediction-powered estimate: bound {np.asarray(bound).shape} must be one number or one per column ({columns})"
        )
    tune = None
    if tuning is not None:
        if weight != "tuned" or not share_weight:
            raise MetricParamError("prediction-powered estimate: tuning columns need the shared tuned weight")
        y_t, f_t = _columns(tuning[0], "tuning y"), _columns(tuning[1], "tuning f")
        if y_t.shape != f_t.shape or y_t.shape[0] != n:
            raise MetricParamError(
                f"prediction-powered estimate: tuning columns {y_t.shape} and {f_t.shape} must have {n} rows each"
            )
        if bound is not None:
            bound = np.concatenate([np.broadcast_to(np.asarray(bound, dtype=float), (columns,)), np.zeros(y_t.shape[1])])
        ys, fs, total = np.hstack([ys, y_t]), np.hstack([fs, f_t]), np.concatenate([total, np.zeros(y_t.shape[1])])
        tune = np.arange(ys.shape[1]) >= columns
        columns = ys.shape[1]
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
    if isinstance(weight, str) and weight != "tuned" or not isinstance(weight, str) and not np.isfinite(weight):
        raise MetricParamError(
            f"prediction-powered estimate: weight {weight!r} must be 'tuned' or a finite number"
        )
    # degrees of freedom: n - H, or fewer where few audited units carry the column (a run's
    # positions are a few of the audited pairs; the variance rests on those only)
    active = ((ys != 0) | (fs != 0)).sum(axis=0)
    active_y = (ys != 0).sum(axis=0)  # the audit alone: f does not enter its variance
    base = np.maximum(np.minimum(n - int(kept.sum()), active - 1), 1).astype(float)
    least, least_human = np.zeros(columns), np.zeros(columns)
    if bound is not None:  # one audited unit at the bound, the others at 0: s2_h = bound^2 / n_h
        per_unit = float(coef @ (1 / np.maximum(sampled, 1)))
        floor = per_unit * np.broadcast_to(np.abs(np.asarray(bound, dtype=float)), (columns,)) ** 2
        least = np.where(active < 2, floor, 0.0)  # only where the sample's variance has no df
        least_human = np.where(active_y < 2, floor, 0.0)  # (where its own values have none)
    var_human = np.maximum(v_yy, least_human)
    if weight == "tuned":
        if share_weight:
            on = slice(None) if tune is None else tune
            together = float(v_ff[on].sum())
            lam = np.full(columns, float(v_yf[on].sum()) / together if together > 0 else 0.0)
        else:
            lam = np.divide(v_yf, v_ff, out=np.zeros(columns), where=v_ff > 0)
        # lambda estimated on the audit: the jackknife carries it; with fewer than 3 units the
        # deletions leave no variance to estimate a weight from, and the audit alone is used
        if n - int(kept.sum()) >= 2:
            var_ppi = np.maximum(jackknife_tuned(ys, fs, groups, sizes, sampled, total, share_weight, tune), least)
        else:
            lam = np.zeros(columns)
            var_ppi = var_human
    else:
        lam = np.full(columns, float(weight))
        var_ppi = np.maximum(v_yy - 2 * lam * v_yf + lam**2 * v_ff, least)
    dof = base
    if not lam.any():  # the audit alone, however reached: its own floor
        var_ppi = var_human
    human = (expand * sampled) @ mean_y
    sample_f = (expand * sampled) @ mean_f
    estimate = human + lam * (total - sample_f)
    quantile = stats.t.ppf((1 + level) / 2, dof)
    below, above = (quantile, quantile) if quantiles is None else (float(quantiles[1]), -float(quantiles[0]))
    se, human_se = np.sqrt(var_ppi), np.sqrt(var_human)
    with np.errstate(divide="ignore", invalid="ignore"):
        effective = np.where(
            var_ppi > 0, n * var_human / var_ppi, np.where(var_human > 0, np.inf, float(n))
        )
        t_stat = np.where(se > 0, np.abs(estimate) / se, np.where(estimate == 0, 0.0, np.inf))
    p_value = 2 * stats.t.sf(t_stat, dof)
    low, high = (-np.inf, np.inf) if limits is None else (float(limits[0]), float(limits[1]))

    def clip(values: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.clip(values, low, high)

    keep = slice(None) if tune is None else ~tune  # the tuning columns only tuned the weight
    return DesignEstimate(
        estimate=estimate[keep], se=se[keep], lower=clip(estimate - below * se)[keep],
        upper=clip(estimate + above * se)[keep], human=human[keep], human_se=human_se[keep],
        human_lower=clip(human - below * human_se)[keep], human_upper=clip(human + above * human_se)[keep],
        machine=total[keep], weight=lam[keep], effective_n=effective[keep], p_value=p_value[keep], n=n, df=dof[keep],
        level=level,
    )  # fmt: skip


def machine_quantiles(
    machine: ArrayLike, sampled: int, *, level: float = 0.95, draws: int = 4000, seed: int = 0
) -> tuple[float, float] | None:
    """The points of the studentised estimate for a topics audit, read off the machine's own values.

    ``machine`` holds the machine's value of every unit of the population (``(N, R)``: every
    topic, one column per run), all of which are known. The function draws ``draws`` simple random
    samples of ``sampled`` of the ``N`` units (``numpy.random.default_rng(seed)``), and in each
    estimates every column's total from the sample alone as the audit-only estimate does (the
    expansion estimate, its variance with the finite population correction), giving
    ``u = (estimate - total) / se``; the result is the ``(1 - level) / 2`` and ``(1 + level) / 2``
    points of ``u`` over the draws and columns together. Student's t assumes ``u`` symmetric; for a
    skewed population (per-topic AP) it is not, and the machine's population shows how, tails
    included, where an audit of a few units cannot (methods §15.4). Draws in which a column's
    sample has no spread give no ``u`` and are left out.

    Returns:
        ``(u_low, u_high)``, or None when no draw gives a ``u`` (fewer than 2 units sampled, a
        census, or a machine whose values never vary): then Student's t applies.

    Examples:
        >>> values = np.arange(1.0, 11.0) ** 2  # a skewed population of 10 units
        >>> [round(u, 3) for u in machine_quantiles(values, 4, draws=2000)]
        [-4.193, 2.346]
    """
    if not 0 < level < 1:
        raise MetricParamError(f"machine quantiles: level {level} must lie in (0, 1)")
    values = _columns(machine, "machine values")
    units, columns = values.shape
    if not 2 <= sampled < units:
        return None
    rng = np.random.default_rng(seed)
    totals = values.sum(axis=0)
    coef = float(stratum_coefficients(np.array([units], dtype=float), np.array([sampled], dtype=float))[0])
    chunk = max(1, 4_000_000 // max(1, sampled * columns))  # bound the (draws, n, R) block's memory
    found = []
    for start in range(0, draws, chunk):
        size = min(chunk, draws - start)
        picked = np.argsort(rng.random((size, units)), axis=1)[:, :sampled]  # a sample without replacement per row
        block = values[picked]  # (size, n, R)
        estimate = units * block.mean(axis=1)
        se = np.sqrt(coef * block.var(axis=1, ddof=1))
        spread = se > 1e-12 * np.maximum(np.abs(totals), 1.0)
        found.append(((estimate - totals) / np.where(spread, se, 1.0))[spread])
    u = np.concatenate(found)
    if not len(u):
        return None
    low, high = np.quantile(u, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)


# -- ranks under the prediction-powered estimates (methods §15.5) -----------------------------

# replicates per chunk of the bootstrap: keeps the (chunk, units) multipliers near 32 MB
_CHUNK_CELLS = 4_000_000


def bootstrap_totals(
    y: ArrayLike,
    f: ArrayLike,
    machine_total: ArrayLike,
    weight: ArrayLike,
    *,
    strata: ArrayLike | None = None,
    population: ArrayLike | None = None,
    scale: float = 1.0,
    replicates: int = 2000,
    seed: int | None = 0,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(observed, replicates)``: the estimates ``lambda F + sum_h N_h mean_h(y - lambda f)`` and their bootstrap.

    ``y``, ``f`` are the audited units' values ``(n, R)`` (one column per run; a unit is a pair
    or a topic), ``weight`` the columns' ``lambda`` (held at its value on the audit). The
    machine's total ``F`` is held fixed and the audit's part is redrawn by a Gaussian multiplier
    bootstrap: with ``g = numpy.random.default_rng(seed).standard_normal((B, n))`` (one row per
    replicate, one column per audited unit, in ``y``'s order), a replicate is

        observed + scale * sum_h sqrt(c_h / (n_h - 1)) sum_{i in h} g_i (e_i - mean_h e),

    ``e = y - lambda f``, ``c_h = N_h^2 (1 - n_h / N_h) / n_h``. The same multipliers move every
    column, so the replicates are normal with the design's covariance of the runs' estimates:
    with ``scale = 1`` a column's variance is exactly ``V(lambda)`` of :func:`design_estimate`
    (methods §15.4), and two columns' covariance the same formula's (zero for a census). Strata
    with fewer than two audited units, or audited whole, do not move. The multipliers are drawn
    in chunks of replicates, which gives the same numbers as one draw of ``(B, n)``.

    Examples:
        >>> y = np.array([[0.2, 0.1], [0.4, 0.3], [0.3, 0.3]]); f = y + 0.05
        >>> obs, reps = bootstrap_totals(y, f, f.sum(axis=0), [0.0, 0.0], population=[10], replicates=4)
        >>> obs.round(6).tolist(), reps.shape
        ([3.0, 2.333333], (4, 2))
    """
    ys, fs = _columns(y, "y"), _columns(f, "f")
    if ys.shape != fs.shape:
        raise MetricParamError(f"prediction-powered ranks: y {ys.shape} and f {fs.shape} differ in shape")
    if replicates < 1:
        raise MetricParamError(f"prediction-powered ranks: replicates must be at least 1, got {replicates}")
    if not np.isfinite(scale) or scale < 0:
        raise MetricParamError(f"prediction-powered ranks: scale must be finite and not negative, got {scale}")
    n, columns = ys.shape
    lam = np.broadcast_to(np.asarray(weight, dtype=float), (columns,))
    total = np.broadcast_to(np.asarray(machine_total, dtype=float), (columns,))
    groups, sizes, sampled, deviation = _strata_deviations(ys - lam * fs, strata, population)
    means = _stratum_means(ys - lam * fs, groups, sampled)
    observed = lam * total + sizes @ means
    moving = (sampled >= 2) & (sampled < sizes)
    per_unit = np.where(
        moving, sizes * np.sqrt((1 - sampled / sizes) / np.maximum(sampled, 1) / np.maximum(sampled - 1, 1)), 0.0
    )  # fmt: skip
    loads = scale * per_unit[groups, None] * deviation  # (n, R): a unit's move per unit of its multiplier
    rng = np.random.default_rng(seed)
    out = np.empty((replicates, columns))
    chunk = max(1, _CHUNK_CELLS // max(n, 1))
    for start in range(0, replicates, chunk):  # chunks of replicates, not a loop over them
        rows = min(chunk, replicates - start)
        out[start : start + rows] = observed + rng.standard_normal((rows, n)) @ loads
    return observed, out


def _stratum_means(
    values: NDArray[np.float64], groups: NDArray[np.int64], sampled: NDArray[np.float64]
) -> NDArray[np.float64]:
    """``(H, R)``: each stratum's mean of ``values`` over its audited units (0 for an empty one)."""
    one_hot = np.zeros((len(sampled), len(groups)))
    one_hot[groups, np.arange(len(groups))] = 1.0
    return one_hot @ values / np.maximum(sampled, 1)[:, None]


def _strata_deviations(
    residual: NDArray[np.float64], strata: ArrayLike | None, population: ArrayLike | None
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """``(groups, N_h, n_h, deviations)``: the units' strata, the strata's sizes and audited counts,
    and each unit's residual less its stratum's mean."""
    n = residual.shape[0]
    groups = np.zeros(n, dtype=np.int64) if strata is None else np.asarray(strata, dtype=np.int64)
    sizes = np.asarray([n] if population is None else population, dtype=float)
    sampled = np.bincount(groups, minlength=len(sizes)).astype(float)
    return groups, sizes, sampled, residual - _stratum_means(residual, groups, sampled)[groups]


def rank_scale(
    y: ArrayLike,
    f: ArrayLike,
    weight: ArrayLike,
    se: ArrayLike | None,
    df: ArrayLike | None,
    *,
    strata: ArrayLike | None = None,
    population: ArrayLike | None = None,
    confidence: float = 0.95,
    half_width: ArrayLike | None = None,
) -> float:
    """``kappa``: the factor that gives the bootstrap of the totals the prediction-powered intervals' width.

    ``kappa^2 = sum_r (t_{df_r, q} se_r)^2 / sum_r (z_q^2 V_r(lambda))``, ``q = (1 + confidence) / 2``:
    the half-widths of the score intervals (the jackknife's standard errors, which carry the
    tuning of ``lambda``, and Student's quantile) over the normal half-widths of
    :func:`bootstrap_totals` at scale 1 (whose variance is the plug-in ``V(lambda)``), summed
    over the runs, so that one factor moves every run and their differences alike. 1 where the
    bootstrap has no variance. ``half_width`` (per run) replaces ``t_{df_r, q} se_r`` where the
    score intervals are not Student's (a topics audit's, :func:`machine_quantiles`: half their length).

    Examples:
        >>> y = np.array([[0.2, 0.1], [0.4, 0.3], [0.3, 0.3], [0.1, 0.2], [0.5, 0.2]])
        >>> f = np.array([[0.3, 0.1], [0.3, 0.4], [0.2, 0.3], [0.1, 0.1], [0.4, 0.3]])
        >>> e = design_estimate(y, f, [11.0, 9.0], population=[40])
        >>> round(rank_scale(y, f, e.weight, e.se, e.df, population=[40]), 4)
        1.4901
    """
    ys, fs = _columns(y, "y"), _columns(f, "f")
    columns = ys.shape[1]
    lam = np.broadcast_to(np.asarray(weight, dtype=float), (columns,))
    groups, sizes, sampled, dev = _strata_deviations(ys - lam * fs, strata, population)
    moving = (sampled >= 2) & (sampled < sizes)
    coef = np.where(moving, sizes**2 * (1 - sampled / sizes) / np.maximum(sampled, 1), 0.0)
    plug_in = coef @ (_stratum_means(dev * dev, groups, sampled) * (sampled / np.maximum(sampled - 1, 1))[:, None])
    q = (1 + confidence) / 2
    if half_width is None:
        half_width = (stats.t.ppf(q, np.broadcast_to(np.asarray(df, dtype=float), (columns,)))
                      * np.broadcast_to(np.asarray(se, dtype=float), (columns,)))  # fmt: skip
    wanted = float((np.broadcast_to(np.asarray(half_width, dtype=float), (columns,)) ** 2).sum())
    have = float(stats.norm.ppf(q) ** 2 * plug_in.sum())
    return float(np.sqrt(wanted / have)) if have > 0 else 1.0


def rank_intervals(
    y: ArrayLike,
    f: ArrayLike,
    machine_total: ArrayLike,
    weight: ArrayLike,
    *,
    strata: ArrayLike | None = None,
    population: ArrayLike | None = None,
    se: ArrayLike | None = None,
    df: ArrayLike | None = None,
    confidence: float = 0.95,
    replicates: int = 2000,
    seed: int | None = 0,
    half_width: ArrayLike | None = None,
) -> RankIntervals:
    """Each run's rank under its prediction-powered estimate and the percentile interval of its bootstrap ranks.

    The replicates are :func:`bootstrap_totals`'s; with the score intervals' ``se`` and ``df``
    (a :class:`DesignEstimate`'s) their departures are scaled by :func:`rank_scale`, so that the
    bootstrap is as wide as the score intervals (``half_width`` instead, for intervals that are not
    Student's: half their lengths); without them the scale is 1. Ranks are
    competition ranks (1 the highest, ties share the best) and the interval the ``ceil(B q)``-th
    smallest replicate rank, as :func:`evalwh.stats.rank_intervals.rank_intervals` takes it.

    Examples:
        >>> y = np.array([[0.20, 0.10, 0.15], [0.40, 0.30, 0.10], [0.30, 0.32, 0.05], [0.25, 0.3, 0.1]]) / 20
        >>> out = rank_intervals(y, y, y.sum(axis=0) * 5, [0.0, 0.0, 0.0], population=[20])
        >>> out.rank.tolist(), out.low.tolist(), out.high.tolist()
        ([1, 2, 3], [1, 1, 3], [2, 2, 3])
    """
    if not 0.0 < confidence < 1.0:
        raise MetricParamError(f"prediction-powered ranks: confidence must lie in (0, 1), got {confidence}")
    if (se is None) != (df is None) or (half_width is not None and se is not None):
        raise MetricParamError("prediction-powered ranks: give se and df, or half_width, or neither")
    scale = (
        1.0
        if se is None and half_width is None
        else rank_scale(y, f, weight, se, df, strata=strata, population=population, confidence=confidence,
                        half_width=half_width)  # fmt: skip
    )
    observed, totals = bootstrap_totals(
        y, f, machine_total, weight, strata=strata, population=population, scale=scale, replicates=replicates,
        seed=seed,
    )  # fmt: skip
    if totals.shape[1] < 2:
        raise InsufficientDataError("prediction-powered ranks need at least 2 runs")
    low, high = percentile_ranks(competition_ranks(totals), confidence)
    return RankIntervals(competition_ranks(observed), low, high, replicates, seed, confidence)
