"""Meta-analysis across collections: one effect per collection, pooled (methods §18).

Scores are not comparable across collections (their pools, topics and judges differ), but the
*effect* of one system over another within each collection is: standardised, it can be pooled
across collections as the studies of a medical meta-analysis are (Soboroff, CIKM 2018).

* :func:`paired_effect`: the standardised paired effect of run A over run B on one collection's
  topics, and its sampling variance: ``smd`` (the default: the mean difference over the
  within-system standard deviation, Borenstein et al.'s matched-groups d with Hedges'
  correction), ``dz`` (over the standard deviation of the differences, as ``compare``'s
  effect size) or ``raw`` (the mean difference itself).
* :func:`combine`: the fixed-effect and random-effects pooled effects of k collections with
  their intervals, the between-collection variance tau^2 (DerSimonian-Laird, Paule-Mandel or
  REML), the heterogeneity (Cochran's Q, I^2, H^2) and the prediction interval of a new
  collection's effect; normal (z) intervals or Hartung-Knapp-Sidik-Jonkman (``hksj``).
* :func:`meta_analysis`: both over a long table of per-topic scores of several collections,
  for a pair of runs or every run against a baseline.

Equal to :func:`statsmodels.stats.meta_analysis.combine_effects` on the same effects and
variances (tests/test_meta.py): its ``chi2`` is DerSimonian-Laird, its ``iterated``
Paule-Mandel (solved here to machine precision, where statsmodels stops at 1e-5), its ``wls``
rows Hartung-Knapp-Sidik-Jonkman.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from evalwh.errors import EvalWhError, InsufficientDataError

if TYPE_CHECKING:
    import pandas as pd
    from numpy.typing import ArrayLike


class Effect(str, enum.Enum):
    """The effect size each collection contributes (methods §18.1)."""

    smd = "smd"  # mean difference / within-system SD (matched groups, Hedges-corrected)
    dz = "dz"  # mean difference / SD of the differences (Hedges-corrected)
    raw = "raw"  # mean difference (only where the collections share a scale)


class Tau2(str, enum.Enum):
    """The estimator of the between-collection variance tau^2 (methods §18.2)."""

    dl = "dl"  # DerSimonian and Laird (1986): method of moments, closed form
    pm = "pm"  # Paule and Mandel (1982): the generalised Q equals its expectation
    reml = "reml"  # restricted maximum likelihood (Viechtbauer 2005's fixed point)


class Interval(str, enum.Enum):
    """The interval of the pooled effects (methods §18.3)."""

    z = "z"  # normal: estimate +- z * sqrt(1 / sum of weights)
    hksj = "hksj"  # Hartung-Knapp-Sidik-Jonkman: weighted residual scale, t with k - 1 df


EFFECT_COLUMNS = [
    "collection_id", "run_a", "run_b", "n_topics", "mean_a", "mean_b", "mean_diff", "r",
    "effect", "variance",
]  # fmt: skip


def _hedges_j(df: float) -> float:
    """Hedges' small-sample correction J = 1 - 3 / (4 df - 1)."""
    return 1.0 - 3.0 / (4.0 * df - 1.0)


def paired_effect(a: ArrayLike, b: ArrayLike, effect: Effect | str = Effect.smd) -> dict[str, float]:
    """The standardised effect of run A over run B on paired per-topic scores, and its variance.

    With n topics, differences d_i = a_i - b_i of mean D and standard deviation S_diff, r the
    Pearson correlation of a and b over topics and J = 1 - 3 / (4 (n - 1) - 1):

    * ``smd``: d = D / S_within with S_within = S_diff / sqrt(2 (1 - r)) (which is the pooled
      standard deviation of the two runs when their spreads are equal); g = J d and
      Var(g) = J^2 (1/n + d^2 / (2n)) 2 (1 - r) (Borenstein, Hedges, Higgins and Rothstein,
      *Introduction to Meta-Analysis*, 2009, eqs. 4.27-4.29 and 4.30-4.33).
    * ``dz``: d = D / S_diff; g = J d and Var(g) = J^2 (1/n + d^2 / (2n)).
    * ``raw``: D, with Var = S_diff^2 / n.

    Raises:
        InsufficientDataError: fewer than 3 topics, or the runs' differences have no spread
            (identical runs, or one that equals the other plus a constant: the standardised
            effect is undefined).

    Examples:
        >>> e = paired_effect([0.5, 0.6, 0.2, 0.8], [0.4, 0.6, 0.1, 0.5])
        >>> round(e["effect"], 4), round(e["variance"], 4), round(e["r"], 4)
        (0.3767, 0.0408, 0.8641)
        >>> round(paired_effect([0.5, 0.6, 0.2, 0.8], [0.4, 0.6, 0.1, 0.5], "raw")["effect"], 3)
        0.125
    """
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise InsufficientDataError(f"meta-analysis: paired scores of equal length needed; got {x.shape} and {y.shape}")
    n = len(x)
    if n < 3:
        raise InsufficientDataError(f"meta-analysis: {n} shared topic(s); an effect and its variance need at least 3")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise InsufficientDataError("meta-analysis: a score is missing or not finite")
    diff = x - y
    mean_diff = float(diff.mean())
    s_diff = float(diff.std(ddof=1))
    sx, sy = float(x.std(ddof=1)), float(y.std(ddof=1))
    r = float(np.corrcoef(x, y)[0, 1]) if sx > 0 and sy > 0 else float("nan")
    row = {"n_topics": float(n), "mean_a": float(x.mean()), "mean_b": float(y.mean()),
           "mean_diff": mean_diff, "r": r}  # fmt: skip
    kind = Effect(effect)
    if kind is Effect.raw:
        return {**row, "effect": mean_diff, "variance": s_diff**2 / n}
    if not s_diff > 1e-12 * max(sx, sy, abs(mean_diff), 1e-300):  # (a constant difference, up to rounding)
        raise InsufficientDataError(
            "meta-analysis: the per-topic differences have no spread (the runs differ by a constant): "
            "a standardised effect is undefined; use --effect raw"
        )
    j = _hedges_j(n - 1)
    if kind is Effect.dz:
        d = mean_diff / s_diff
        return {**row, "effect": float(j * d), "variance": float(j**2 * (1.0 / n + d**2 / (2.0 * n)))}
    if not np.isfinite(r):
        raise InsufficientDataError(
            "meta-analysis: a run has the same score on every topic, so the runs' correlation is "
            "undefined; use --effect dz or raw"
        )
    s_within = s_diff / np.sqrt(2.0 * (1.0 - r))
    d = mean_diff / s_within
    variance = (1.0 / n + d**2 / (2.0 * n)) * 2.0 * (1.0 - r)
    return {**row, "effect": float(j * d), "variance": float(j**2 * variance)}


def _tau2_dl(y: np.ndarray, v: np.ndarray) -> float:
    w = 1.0 / v
    mu = (w * y).sum() / w.sum()
    q = (w * (y - mu) ** 2).sum()
    c = w.sum() - (w**2).sum() / w.sum()
    return max(0.0, (q - (len(y) - 1)) / c)


def _generalised_q(tau2: float, y: np.ndarray, v: np.ndarray) -> float:
    w = 1.0 / (v + tau2)
    mu = (w * y).sum() / w.sum()
    return float((w * (y - mu) ** 2).sum())


def _tau2_pm(y: np.ndarray, v: np.ndarray) -> float:
    """Paule-Mandel: the tau^2 >= 0 at which the generalised Q equals k - 1 (decreasing in tau^2)."""
    from scipy.optimize import brentq

    k = len(y)
    if _generalised_q(0.0, y, v) <= k - 1:
        return 0.0
    high = max(float(np.var(y, ddof=1)), 1e-12)
    while _generalised_q(high, y, v) > k - 1:
        high *= 2.0
    return float(brentq(lambda t: _generalised_q(t, y, v) - (k - 1), 0.0, high, xtol=1e-15, rtol=1e-15, maxiter=500))


def _tau2_reml(y: np.ndarray, v: np.ndarray) -> float:
    """REML by Viechtbauer's (2005) fixed point, from the DerSimonian-Laird start, truncated at 0."""
    tau2 = _tau2_dl(y, v)
    for _ in range(10_000):
        w = 1.0 / (v + tau2)
        mu = (w * y).sum() / w.sum()
        new = max(0.0, float((w**2 * ((y - mu) ** 2 - v)).sum() / (w**2).sum() + 1.0 / w.sum()))
        if abs(new - tau2) <= 1e-15 * max(1.0, tau2):
            return new
        tau2 = new
    raise EvalWhError("meta-analysis: REML's estimate of tau^2 did not converge in 10,000 steps; use --tau2 dl or pm")


@dataclass(frozen=True)
class Pooled:
    """The pooled effects of :func:`combine`.

    Attributes:
        studies: One row per collection: ``name, effect, variance, se, ci_low, ci_high,
            weight_fixed, weight_random`` (relative weights summing to 1; the collection's own
            interval is always normal).
        summary: One row per model, ``fixed`` then ``random``: ``model, effect, se, ci_low,
            ci_high, z, p_value`` (``z`` is the statistic: t with k - 1 df under ``hksj``).
        heterogeneity: ``k, q, df, q_p_value, i2, h2, tau2, tau, tau2_method,
            interval, pi_low, pi_high`` (the 1 - alpha prediction interval of a new
            collection's effect, Higgins, Thompson and Spiegelhalter 2009, t with k - 2 df;
            NaN for k < 3).
    """

    studies: pd.DataFrame
    summary: pd.DataFrame
    heterogeneity: dict[str, float | str]


def combine(
    effects: ArrayLike, variances: ArrayLike, *, names: Sequence[str] | None = None,
    tau2: Tau2 | str = Tau2.dl, interval: Interval | str = Interval.z, alpha: float = 0.05,
) -> Pooled:  # fmt: skip
    """Pool k effects with their variances: fixed effect and random effects.

    Inverse-variance weights w_i = 1/v_i (fixed) and w*_i = 1/(v_i + tau^2) (random); the
    pooled effect is sum(w y) / sum(w) with standard error sqrt(1 / sum(w)). Cochran's
    Q = sum(w_i (y_i - mu_fixed)^2) on k - 1 df, I^2 = max(0, (Q - df) / Q), H^2 = Q / df.
    Under ``hksj`` the standard error is sqrt(q / sum(w)) with
    q = sum(w_i (y_i - mu)^2) / (k - 1), and the interval uses t with k - 1 df.

    Examples:
        >>> p = combine([0.2, 0.5, 0.1, 0.4], [0.01, 0.02, 0.015, 0.03])
        >>> p.summary[["model", "effect"]].round(4).values.tolist()
        [['fixed', 0.26], ['random', 0.2778]]
        >>> round(p.heterogeneity["q"], 3), round(p.heterogeneity["i2"], 4)
        (5.6, 0.4643)
    """
    import pandas as pd
    from scipy import stats

    y = np.asarray(effects, dtype=np.float64)
    v = np.asarray(variances, dtype=np.float64)
    if y.ndim != 1 or y.shape != v.shape:
        raise InsufficientDataError(f"meta-analysis: effects and variances of equal length needed; got {y.shape} and {v.shape}")
    k = len(y)
    if k < 2:
        raise InsufficientDataError(f"meta-analysis: {k} collection(s); pooling needs at least two")
    if not (np.isfinite(y).all() and np.isfinite(v).all()) or (v <= 0).any():
        raise InsufficientDataError("meta-analysis: every effect must be finite and every variance positive")
    if not 0 < alpha < 1:
        raise EvalWhError(f"meta-analysis: alpha {alpha}: give a level between 0 and 1")
    method, kind = Tau2(tau2), Interval(interval)
    labels = [str(x) for x in (names if names is not None else range(1, k + 1))]
    if len(labels) != k:
        raise EvalWhError(f"meta-analysis: {len(labels)} names for {k} effects")

    t2 = {Tau2.dl: _tau2_dl, Tau2.pm: _tau2_pm, Tau2.reml: _tau2_reml}[method](y, v)
    w_fixed = 1.0 / v
    w_random = 1.0 / (v + t2)
    df = k - 1
    z_crit = float(stats.norm.isf(alpha / 2))
    t_crit = float(stats.t.isf(alpha / 2, df))

    rows = []
    for model, w in (("fixed", w_fixed), ("random", w_random)):
        mu = float((w * y).sum() / w.sum())
        if kind is Interval.hksj:
            scale = float((w * (y - mu) ** 2).sum() / df)
            se = float(np.sqrt(scale / w.sum()))
            stat = mu / se if se > 0 else float("inf") * np.sign(mu)
            p = float(2 * stats.t.sf(abs(stat), df))
            crit = t_crit
        else:
            se = float(np.sqrt(1.0 / w.sum()))
            stat = mu / se
            p = float(2 * stats.norm.sf(abs(stat)))
            crit = z_crit
        rows.append({"model": model, "effect": mu, "se": se, "ci_low": mu - crit * se,
                     "ci_high": mu + crit * se, "z": stat, "p_value": p})  # fmt: skip
    summary = pd.DataFrame(rows)

    mu_fixed = float(summary["effect"].iloc[0])
    q = float((w_fixed * (y - mu_fixed) ** 2).sum())
    mu_random, se_random = float(summary["effect"].iloc[1]), float(np.sqrt(1.0 / w_random.sum()))
    if k >= 3:
        half = float(stats.t.isf(alpha / 2, k - 2)) * np.sqrt(t2 + se_random**2)
        pi = (mu_random - half, mu_random + half)
    else:
        pi = (float("nan"), float("nan"))
    heterogeneity: dict[str, float | str] = {
        "k": float(k), "q": q, "df": float(df), "q_p_value": float(stats.chi2.sf(q, df)),
        "i2": max(0.0, (q - df) / q) if q > 0 else 0.0, "h2": q / df, "tau2": t2,
        "tau": float(np.sqrt(t2)), "tau2_method": method.value, "interval": kind.value,
        "pi_low": pi[0], "pi_high": pi[1],
    }  # fmt: skip
    se_each = np.sqrt(v)
    studies = pd.DataFrame({
        "name": labels, "effect": y, "variance": v, "se": se_each,
        "ci_low": y - z_crit * se_each, "ci_high": y + z_crit * se_each,
        "weight_fixed": w_fixed / w_fixed.sum(), "weight_random": w_random / w_random.sum(),
    })  # fmt: skip
    return Pooled(studies=studies, summary=summary, heterogeneity=heterogeneity)


@dataclass(frozen=True)
class MetaAnalysis:
    """The result of :func:`meta_analysis`.

    Attributes:
        effects: One row per comparison and collection: ``measure, collection_id, run_a,
            run_b, n_topics, mean_a, mean_b, mean_diff, r, effect, variance, se, ci_low,
            ci_high, weight_fixed, weight_random``.
        pooled: One row per comparison and model (``fixed``, ``random``): ``measure, run_a,
            run_b, model, effect, se, ci_low, ci_high, z, p_value``.
        heterogeneity: One row per comparison: ``measure, run_a, run_b, k, q, df,
            q_p_value, i2, h2, tau2, tau, tau2_method, interval, pi_low, pi_high``.
        effect: The effect size (``smd``, ``dz`` or ``raw``); ``alpha`` the level.
    """

    effects: pd.DataFrame
    pooled: pd.DataFrame
    heterogeneity: pd.DataFrame
    effect: str
    alpha: float


def meta_analysis(
    scores: pd.DataFrame, comparisons: Sequence[tuple[str, str]], *, effect: Effect | str = Effect.smd,
    tau2: Tau2 | str = Tau2.dl, interval: Interval | str = Interval.z, alpha: float = 0.05,
    systems: Mapping[tuple[str, str], str] | None = None,
) -> MetaAnalysis:  # fmt: skip
    """Meta-analyse paired comparisons of systems over the collections of a score table.

    Args:
        scores: Per-topic scores ``collection_id, run_id, query_id, measure, value`` (from
            :meth:`evalwh.Warehouse.evaluate` with ``per_query=True`` over several
            collections, or any other tool).
        comparisons: ``(system_a, system_b)`` pairs; the effect is A over B.
        systems: ``(collection_id, run_id) -> system``: which run is which system in each
            collection; None: the run id names the system.
        effect, tau2, interval, alpha: :func:`paired_effect`'s and :func:`combine`'s.

    Each collection contributes the effect on the topics both runs have there; a collection
    that lacks either system is left out of that comparison (at least two must remain).

    Raises:
        InsufficientDataError: a comparison found in fewer than two collections.
    """
    import pandas as pd

    missing = {"collection_id", "run_id", "query_id", "measure", "value"} - set(scores.columns)
    if missing:
        raise EvalWhError(f"meta-analysis: the score table lacks {', '.join(sorted(missing))}")
    frame = scores[["collection_id", "run_id", "query_id", "measure", "value"]].copy()
    if systems is not None:
        keys = list(zip(frame["collection_id"], frame["run_id"], strict=True))
        frame["run_id"] = [systems.get(key, key[1]) for key in keys]
    if frame.duplicated(["collection_id", "run_id", "query_id", "measure"]).any():
        raise EvalWhError("meta-analysis: two runs of one collection map to the same system (or a score is repeated)")
    kind = Effect(effect)
    effect_rows, pooled_rows, het_rows = [], [], []
    for measure, by_measure in frame.groupby("measure", sort=False):
        table = by_measure.pivot_table(index=["collection_id", "query_id"], columns="run_id", values="value", aggfunc="first")
        for a, b in comparisons:
            if a == b:
                raise EvalWhError(f"meta-analysis: {a} compared with itself")
            rows = []
            for collection, part in table.groupby(level="collection_id", sort=True):
                if a not in part.columns or b not in part.columns:
                    continue
                both = part[[a, b]].dropna()
                if both.empty:
                    continue
                rows.append({"collection_id": collection, **paired_effect(both[a].to_numpy(), both[b].to_numpy(), kind)})
            if len(rows) < 2:
                raise InsufficientDataError(
                    f"meta-analysis: {a} and {b} are both in {len(rows)} collection(s) on {measure}; pooling needs at least two"
                )
            found = pd.DataFrame(rows)
            pooled = combine(found["effect"], found["variance"], names=list(found["collection_id"]),
                             tau2=tau2, interval=interval, alpha=alpha)  # fmt: skip
            studies = pooled.studies.drop(columns=["name", "effect", "variance"])
            found = pd.concat([found.reset_index(drop=True), studies], axis=1)
            found.insert(0, "measure", measure)
            found.insert(2, "run_a", a)
            found.insert(3, "run_b", b)
            found["n_topics"] = found["n_topics"].astype("int64")
            effect_rows.append(found)
            summary = pooled.summary.copy()
            summary.insert(0, "measure", measure)
            summary.insert(1, "run_a", a)
            summary.insert(2, "run_b", b)
            pooled_rows.append(summary)
            het_rows.append({"measure": measure, "run_a": a, "run_b": b, **pooled.heterogeneity})
    het = pd.DataFrame(het_rows)
    het["k"] = het["k"].astype("int64")
    het["df"] = het["df"].astype("int64")
    return MetaAnalysis(
        effects=pd.concat(effect_rows, ignore_index=True), pooled=pd.concat(pooled_rows, ignore_index=True),
        heterogeneity=het, effect=kind.value, alpha=alpha,
    )  # fmt: skip
