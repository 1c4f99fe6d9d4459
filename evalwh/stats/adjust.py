"""Score adjustment for pooling bias (Webber & Park, SIGIR 2009; methods §6).

A run that did not contribute to the pool scores ``u_i`` on topic ``i`` where its true score is
``t_i``; the pooling error is ``delta_i = t_i - u_i`` and the true adjustment ``A`` its mean.
Algorithm 1 estimates ``A`` from the leave-one-out errors of the pooled runs, Algorithm 2 from
the errors of the new run itself on ``n`` common topics judged for it. The array functions are
vectorised over leading axes, so an experiment passes a whole matrix of replicates at once;
the DataFrame functions wrap them for one run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from scipy import stats

from evalwh.errors import EvalWhError, InsufficientDataError

if TYPE_CHECKING:
    import pandas as pd

Rng = np.random.Generator | int | None


def _generator(rng: Rng) -> np.random.Generator:
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def fpc_variance(sigma2: np.ndarray | float, n: np.ndarray | int, N: int) -> np.ndarray:  # noqa: N803
    """Variance of a mean of ``n`` of ``N`` topics drawn without replacement (methods §6.5).

    ``((N - n) / N) * sigma2 / n``: the finite-population correction, since the ``n`` sampled
    topics are known exactly.

    Examples:
        >>> round(float(fpc_variance(0.0064167, 2, 6)), 7)
        0.0021389
    """
    n = np.asarray(n, dtype=float)
    return np.asarray(((N - n) / N) * np.asarray(sigma2, dtype=float) / n)


def common_topics_estimates(
    true: np.ndarray, unpooled: np.ndarray, common: np.ndarray
) -> dict[str, np.ndarray]:
    """Algorithm 2 and the estimators of methods §6.4-§6.6 over the last axis (topics).

    Args:
        true: True scores ``t_i``, shape ``(..., N)``. Only the common topics are needed for
            the estimates; where every ``t_i`` is known (an experiment), the true quantities
            ``mu, A, sigma2_a, sigma2_t`` and the exact variances are filled in too, else NaN.
        unpooled: Unpooled scores ``u_i``, shape ``(..., N)``.
        common: Boolean mask of the common topics C, broadcastable to ``(..., N)``.

    Returns:
        Arrays over the leading axes: ``n, u_bar, a, adjusted, mixed, sampled, ratio,
        sigma2_a_hat, var_adjusted_hat`` and ``mu, A, sigma2_a, sigma2_t, var_adjusted,
        var_sampled`` (``ratio`` is NaN where the unpooled scores on C sum to 0).

    Examples:
        >>> t = np.array([0.5, 0.4, 0.6, 0.3, 0.2, 0.7])
        >>> u = np.array([0.4, 0.4, 0.45, 0.2, 0.2, 0.5])
        >>> e = common_topics_estimates(t, u, np.array([1, 0, 1, 0, 0, 0], bool))
        >>> [round(float(e[k]), 6) for k in ("a", "adjusted", "mixed", "sampled", "A")]
        [0.125, 0.483333, 0.4, 0.55, 0.091667]
    """
    true = np.asarray(true, dtype=float)
    unpooled = np.asarray(unpooled, dtype=float)
    mask = np.broadcast_to(np.asarray(common, dtype=bool), np.broadcast_shapes(true.shape, np.shape(common)))
    N = unpooled.shape[-1]  # noqa: N806
    n = mask.sum(axis=-1)
    if np.any(n < 1):
        raise InsufficientDataError("common topics: every estimate needs at least one common topic")
    delta = np.where(mask, true - unpooled, 0.0)
    a = delta.sum(axis=-1) / n
    u_bar = unpooled.mean(axis=-1)
    t_on_c = np.where(mask, true, 0.0).sum(axis=-1)
    u_on_c = np.where(mask, unpooled, 0.0).sum(axis=-1)
    mixed = (t_on_c + np.where(mask, 0.0, unpooled).sum(axis=-1)) / N
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(u_on_c > 0, u_bar * t_on_c / u_on_c, np.nan)
        # sample variance of the common-topic deltas (methods §6.6, divisor n - 1)
        sigma2_a_hat = np.where(
            n > 1, np.where(mask, (true - unpooled - a[..., None]) ** 2, 0.0).sum(axis=-1) / (n - 1), np.nan
        )
    out: dict[str, np.ndarray] = {
        "n": n,
        "u_bar": u_bar,
        "a": a,
        "adjusted": u_bar + a,
        "mixed": mixed,
        "sampled": t_on_c / n,
        "ratio": ratio,
        "sigma2_a_hat": sigma2_a_hat,
        "var_adjusted_hat": fpc_variance(sigma2_a_hat, n, N),
    }
    known = ~np.isnan(true).any(axis=-1)
    full = true - unpooled
    big_a = np.where(known, np.nanmean(np.where(np.isnan(full), 0.0, full), axis=-1), np.nan)
    mu = np.where(known, np.where(np.isnan(true), 0.0, true).mean(axis=-1), np.nan)
    sigma2_a = ((full - big_a[..., None]) ** 2).sum(axis=-1) / (N - 1) if N > 1 else np.full_like(a, np.nan)
    sigma2_t = ((true - mu[..., None]) ** 2).sum(axis=-1) / (N - 1) if N > 1 else np.full_like(a, np.nan)
    out.update(
        mu=mu,
        A=big_a,
        sigma2_a=sigma2_a,
        sigma2_t=sigma2_t,
        var_adjusted=fpc_variance(sigma2_a, n, N),
        var_sampled=fpc_variance(sigma2_t, n, N),
    )
    return out


def systems_estimate(deltas: np.ndarray, unpooled_mean: np.ndarray | float) -> dict[str, np.ndarray]:
    """Algorithm 1 (methods §6.2): the mean leave-one-out error of the pooled runs as ``a``.

    Args:
        deltas: Per pooled run ``delta_s`` (mean over topics of pooled minus left-out score),
            shape ``(..., |S|)``.
        unpooled_mean: ``u_r``, the new run's mean unpooled score, shape ``(...)``.

    Returns:
        ``a`` and ``adjusted = u_r + a``.

    Examples:
        >>> e = systems_estimate(np.array([0.0, 0.0, 0.5]), 0.5)
        >>> round(float(e["a"]), 6), round(float(e["adjusted"]), 6)
        (0.166667, 0.666667)
    """
    a = np.asarray(deltas, dtype=float).mean(axis=-1)
    return {"a": a, "adjusted": np.asarray(unpooled_mean, dtype=float) + a}


def adjustment_helps(a: np.ndarray | float, true_adjustment: np.ndarray | float) -> np.ndarray:
    """True where the adjusted estimate beats the unadjusted one: ``0 < a / A < 2`` (methods §6.7).

    Both conditions at once: ``a`` has the sign of ``A``, and does not overshoot it by more
    than ``A``.

    Examples:
        >>> adjustment_helps(np.array([0.125, -0.1, 0.2]), 0.091667).tolist()
        [True, False, False]
    """
    a = np.asarray(a, dtype=float)
    big_a = np.asarray(true_adjustment, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = a / big_a
    return np.asarray((r > 0) & (r < 2))


def clt_check(
    adjustment: np.ndarray | float,
    sigma2: np.ndarray | float,
    n: np.ndarray | int,
    N: int,  # noqa: N803
    *,
    confidence: float = 0.68,
) -> np.ndarray:
    """S2's Eq. 6 (methods §6.7): the estimator's standard error, times z, is below ``|A|``.

    ``z`` is the ``(1 + confidence) / 2`` normal quantile (1 at 68%, 1.96 at 95%). In practice
    pass the estimates ``a`` and ``sigma2_a_hat``.

    Examples:
        >>> clt_check(0.091667, 0.0064167, 2, 6, confidence=0.95).item()
        True
    """
    if not 0 < confidence < 1:
        raise EvalWhError(f"clt_check: confidence must be in (0, 1), got {confidence}")
    z = stats.norm.ppf((1 + confidence) / 2)
    return np.asarray(z * np.sqrt(fpc_variance(sigma2, n, N)) < np.abs(np.asarray(adjustment, dtype=float)))


def bootstrap_confidence(
    deltas: np.ndarray,
    N: int,  # noqa: N803
    *,
    resamples: int = 10_000,
    fpc: bool = False,
    rng: Rng = None,
) -> float:
    """Share of bootstrap means ``a*`` with ``0 < a*/a < 2`` (methods §6.7, for small ``n``).

    ``a`` (the mean of the common-topic deltas) stands in for ``A``. With ``fpc`` each
    resample mean is shrunk towards ``a`` by ``sqrt((N - n) / N)``.

    Args:
        deltas: The ``n`` common-topic deltas.
        N: Topics in all.
        resamples: Bootstrap resamples B.
        fpc: Apply the finite-population shrinkage.
        rng: Seed or generator.

    Returns:
        The confidence that the adjustment helps; NaN when ``a == 0``.

    Examples:
        >>> bootstrap_confidence(np.array([0.1, 0.15]), 6, resamples=2000, rng=1)
        1.0
    """
    deltas = np.asarray(deltas, dtype=float)
    n = deltas.size
    if n < 1:
        raise InsufficientDataError("bootstrap: no common-topic deltas")
    a = deltas.mean()
    if a == 0:
        return float("nan")
    gen = _generator(rng)
    means = deltas[gen.integers(0, n, size=(resamples, n))].mean(axis=1)
    if fpc:
        means = a + np.sqrt((N - n) / N) * (means - a)
    ratio = means / a
    return float(np.mean((ratio > 0) & (ratio < 2)))


def _check_columns(frame: pd.DataFrame, name: str, expected: list[str]) -> None:
    missing = [c for c in expected if c not in frame.columns]
    if missing:
        raise EvalWhError(f"{name} is missing columns {missing}; expected {expected}")


def adjust_common_topics(
    scores: pd.DataFrame,
    common: Sequence[str],
    *,
    confidence: float = 0.95,
    resamples: int = 10_000,
    rng: Rng = None,
) -> pd.DataFrame:
    """Algorithm 2 for one new run: adjust its unpooled mean with the deltas on common topics.

    Args:
        scores: One row per topic: ``query_id, unpooled, true`` (``true`` needed on the
            common topics only; NaN elsewhere).
        common: The common topics C (judged for the new run too).
        confidence: For the CLT check.
        resamples: Bootstrap resamples.
        rng: Seed or generator for the bootstrap.

    Returns:
        One row: ``n_topics, n_common, unpooled, a, adjusted, mixed, sampled, ratio,
        sigma2_a_hat, se_adjusted, clt_ok, bootstrap_confidence``.

    Raises:
        InsufficientDataError: for common topics without scores or fewer than one of them.
    """
    import pandas as pd

    _check_columns(scores, "scores", ["query_id", "unpooled", "true"])
    frame = scores.sort_values("query_id").reset_index(drop=True)
    unknown = sorted(set(common) - set(frame["query_id"]))
    if unknown:
        raise InsufficientDataError(f"common topics {unknown[:5]} are not among the evaluated topics")
    mask = frame["query_id"].isin(list(common)).to_numpy()
    t = frame["true"].to_numpy(dtype=float)
    if np.isnan(t[mask]).any():
        raise InsufficientDataError("common topics: a common topic has no true score")
    u = frame["unpooled"].to_numpy(dtype=float)
    est = common_topics_estimates(t, u, mask)
    n, N = int(est["n"]), len(frame)  # noqa: N806
    deltas = (t - u)[mask]
    return pd.DataFrame(
        [
            {
                "n_topics": N,
                "n_common": n,
                "unpooled": float(est["u_bar"]),
                "a": float(est["a"]),
                "adjusted": float(est["adjusted"]),
                "mixed": float(est["mixed"]),
                "sampled": float(est["sampled"]),
                "ratio": float(est["ratio"]),
                "sigma2_a_hat": float(est["sigma2_a_hat"]),
                "se_adjusted": float(np.sqrt(est["var_adjusted_hat"])),
                "clt_ok": bool(clt_check(est["a"], est["sigma2_a_hat"], n, N, confidence=confidence))
                if n > 1
                else False,
                "bootstrap_confidence": bootstrap_confidence(deltas, N, resamples=resamples, rng=rng),
            }
        ]
    )


def adjust_leave_one_out(loo: pd.DataFrame, unpooled: pd.DataFrame) -> pd.DataFrame:
    """Algorithm 1 for one new run from the pooled runs' leave-one-out scores.

    Args:
        loo: Per pooled run and topic: ``run_id, query_id, pooled, left_out`` (from
            :func:`evalwh.methods.pools.leave_one_out` with the new run as ``new_run``).
        unpooled: The new run per topic: ``query_id, value`` against the pool's qrels.

    Returns:
        One row: ``n_topics, n_runs, unpooled, a, adjusted, delta_min, delta_max``.

    Raises:
        InsufficientDataError: if there are no pooled runs or topics.
    """
    import pandas as pd

    _check_columns(loo, "loo", ["run_id", "query_id", "pooled", "left_out"])
    _check_columns(unpooled, "unpooled", ["query_id", "value"])
    if loo.empty or unpooled.empty:
        raise InsufficientDataError("leave-one-out adjustment: no pooled runs or no topics")
    means = loo.groupby("run_id")[["pooled", "left_out"]].mean()
    deltas = (means["pooled"] - means["left_out"]).to_numpy()
    est = systems_estimate(deltas, float(unpooled["value"].mean()))
    return pd.DataFrame(
        [
            {
                "n_topics": int(unpooled["query_id"].nunique()),
                "n_runs": len(deltas),
                "unpooled": float(unpooled["value"].mean()),
                "a": float(est["a"]),
                "adjusted": float(est["adjusted"]),
                "delta_min": float(deltas.min()),
                "delta_max": float(deltas.max()),
            }
        ]
    )
