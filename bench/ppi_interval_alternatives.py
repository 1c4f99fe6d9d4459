"""Intervals tried against the prediction-powered coverage shortfalls (methods §15.6); none adopted.

Usage: python bench/ppi_interval_alternatives.py TREC8_DIR [DRAWS] [SEED] [WAREHOUSE] [PAIR_DRAWS]

The setting of ``bench/ppi_coverage.py`` (its :func:`load_setting`: TREC-8's official qrels the
truth, the seed's two simulated judges the machine). The estimate and its standard error are
always :func:`evalwh.stats.ppi.design_estimate`'s (one tuned weight for the 129 runs, the
jackknife variance, the finite population correction); what changes is how the interval is made
from them. Audits are drawn with ``numpy.random.default_rng(SEED)`` (uniformly, without
replacement: the design of ``draw_sample``, not its draws), DRAWS times (default 2,000) per
topics cell and PAIR_DRAWS times (default 100) per pairs cell. Each cell prints, per method,
``coverage / mean width`` averaged over runs, for the tuned and the audit-only interval.

Topics audits (3, 5 and 10 of the 50 topics), where AP's intervals undercover:

* ``t``: evalwh's interval, ``estimate +- t_{n-1} se``.
* ``hall``: Hall's monotone transformation of the studentised statistic (Hall 1992, JRSS-B 54,
  221-228), which removes its skewness to order ``n^-1/2``: with ``T = (estimate - theta) / se``,
  ``g(T) = T + b T^2 + b^2 T^3 / 3 + c`` is near Student's ``t``, and the interval is
  ``[estimate - se g^-1(q), estimate - se g^-1(-q)]``. For a mean of an independent sample
  ``b = gamma / (3 sqrt n)``, ``c = gamma / (6 sqrt n)`` (Johnson 1978, JASA 73, 536-544, has the
  same first two terms); here the audit is a sample of ``n`` of ``N`` topics without replacement,
  and the coefficients are taken from the first cumulants of ``T`` under that design (the mean's
  third moment ``(1 - f)(1 - 2f) mu3 / n^2`` and its covariance with ``s^2``, ``(1 - f) mu3 / n``,
  Cochran 1977, section 2.15, ``f = n / N``): ``E T = -a sqrt(1 - f) / 2``, ``k3(T) = -a (2 - f) /
  sqrt(1 - f)``, ``a = gamma / sqrt n``, so ``b = -k3(T) / 6`` and ``c = -E T - b`` (``f = 0``
  gives Hall's). ``gamma`` is the skewness of the run's residuals ``y - lambda f`` on the audit
  (``hall``: Hall's plug-in ``m3 / m2^1.5``; ``hall pooled``: Johnson's ``k3 / s^3``, averaged over
  the runs, as the weight is shared).
* ``box df``: ``t`` with the degrees of freedom of a sample variance from a population of excess
  kurtosis ``g2``, ``2 / (2 / (n - 1) + g2 / n)`` (its variance matched to a scaled chi-square:
  Box 1953, Biometrika 40, 318-335; Satterthwaite 1946), ``g2`` the residuals' plug-in excess
  kurtosis, at most evalwh's ``min(n - 1, m - 1)``.

* ``machine``: the studentised statistic's quantiles read off the machine's own population. The
  machine's per-topic values ``f`` are known on all ``N`` topics, tails included; an audit of ``n``
  of them is drawn ``CALIBRATION`` times (4,000, its own seed), the audit-only estimate of the
  machine's score and its standard error computed as evalwh computes the people's (the finite
  population correction, ``n - 1`` df), and the 2.5% and 97.5% points ``u_lo``, ``u_hi`` of
  ``(estimate - F) / se`` taken over the draws and runs together (one pair per cell, as the weight is
  one); the interval is ``[estimate - u_hi se, estimate - u_lo se]``. They depend on the design and
  the machine's labels only, not on the audit (Loh's calibration of a confidence level, JASA 82,
  1987, with the machine's population in place of the sample's).

Pairs audits (P@10, 2-20% of the pairs), where the rank/grade/topic judge's intervals overcover:
``t`` (evalwh's, ``df = min(n - 1, m - 1)``, ``m`` the audited units carrying the run) against
``box df`` computed on all the audited units' residuals (for a run carried by ``m`` of ``n``
units with equal values it is about ``2m``), and ``machine``: evalwh's half-width times ``kappa``, the
95% point of ``|estimate - F| / half-width`` over PAIR_DRAWS audits of the machine's own labels
(the audit-only estimate of the machine's score, evalwh's degrees of freedom and floor). Where
``m < 2`` all keep evalwh's floor and one df.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd
from ppi_coverage import MEASURES, SHARES, load_setting
from scipy import stats

from evalwh.stats.ppi import design_estimate


def skewness(e: np.ndarray, kind: str) -> np.ndarray:
    """Per column of ``e`` (units x runs): Hall's plug-in ``m3 / m2^1.5`` or Johnson's ``k3 / s^3``."""
    n = len(e)
    dev = e - e.mean(axis=0)
    m2, m3 = (dev**2).mean(axis=0), (dev**3).mean(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        g = m3 / m2**1.5 if kind == "plug-in" else (n * n / ((n - 1) * (n - 2)) * m3) / (n / (n - 1) * m2) ** 1.5
    return np.where(m2 > 0, g, 0.0)


def hall_interval(est, se, gamma, n: int, population: int, q):  # type: ignore[no-untyped-def]
    """``[est - se g^-1(q), est - se g^-1(-q)]`` with the without-replacement coefficients above."""
    f = n / population
    a = gamma / np.sqrt(n)
    b = a * (2 - f) / (6 * np.sqrt(1 - f))
    c = a * np.sqrt(1 - f) / 2 - b

    def inverse(u):  # type: ignore[no-untyped-def]
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (np.cbrt(1 + 3 * b * (u - c)) - 1) / b
        return np.where(np.abs(b) > 1e-12, t, u - c)

    return est - se * inverse(q), est - se * inverse(-q)


def box_df(e: np.ndarray) -> np.ndarray:
    """``min(n - 1, 2 / (2 / (n - 1) + g2 / n))`` per column, ``g2`` the plug-in excess kurtosis."""
    n = len(e)
    dev = e - e.mean(axis=0)
    m2, m4 = (dev**2).mean(axis=0), (dev**4).mean(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        nu = 2 / (2 / (n - 1) + np.where(m2 > 0, m4 / m2**2 - 3, 0.0) / n)
    return np.minimum(np.where(nu > 0, nu, n - 1), n - 1)


CALIBRATION = 4000


def machine_quantiles(fs: np.ndarray, n: int, rng: np.random.Generator, level: float = 0.95) -> tuple[float, float]:
    """``(u_lo, u_hi)``: the points of ``(estimate - F) / se`` over ``CALIBRATION`` audits of ``n`` of
    the rows of ``fs`` (topics x runs, the machine's per-topic values), the runs pooled."""
    big = len(fs)
    x = fs[np.stack([rng.choice(big, n, replace=False) for _ in range(CALIBRATION)])]  # draws x n x runs
    estimate = big * x.mean(axis=1)
    se = np.sqrt(big * big * (1 - n / big) / n * x.var(axis=1, ddof=1))
    gap = estimate - fs.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.where(se > 0, gap / se, np.where(np.abs(gap) < 1e-12, 0.0, np.sign(gap) * np.inf))
    lo, hi = np.quantile(u, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def machine_kappa(matrix, machine_gain: np.ndarray, size: int, bound: np.ndarray, draws: int,  # type: ignore[no-untyped-def]
                  rng: np.random.Generator) -> float:  # fmt: skip
    """The 95% point of ``|estimate - F| / half-width`` over ``draws`` pairs audits of the machine's labels."""
    total = matrix.T @ machine_gain
    ratios = []
    for _ in range(draws):
        idx = rng.choice(matrix.shape[0], size, replace=False)
        w = matrix[idx].toarray() * machine_gain[idx, None]
        e = design_estimate(w, np.zeros_like(w), np.zeros(len(total)), population=[matrix.shape[0]], bound=bound)
        half = stats.t.ppf(0.975, np.maximum(e.df, 1)) * e.human_se
        gap = np.abs(e.human - total)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios.append(np.where(half > 0, gap / half, np.where(gap < 1e-12, 0.0, np.inf)))
    return float(np.quantile(np.concatenate(ratios), 0.95))


def main(trec8: str, draws: int, seed: int, db: str, pair_draws: int) -> None:
    judges, runs, topics, frame, matrix, human_gain, matrices = load_setting(trec8, seed, db)
    rng = np.random.default_rng(seed)
    big = len(topics)
    rows = []
    started = time.perf_counter()
    for j, judge in enumerate(judges):
        qid = f"judge{j}_s{seed}"
        for m in MEASURES:
            ys, fs = matrices[("default", m)], matrices[(qid, m)]
            truth, total = ys.sum(axis=0), fs.sum(axis=0)
            for n in (3, 5, 10):
                u_lo, u_hi = machine_quantiles(fs, n, np.random.default_rng([seed, n]))
                acc: dict[tuple[str, str], list[np.ndarray]] = {}
                for _ in range(draws):
                    chosen = rng.choice(big, n, replace=False)
                    y, f = ys[chosen], fs[chosen]
                    e = design_estimate(y, f, total, population=[big])
                    q = stats.t.ppf(0.975, e.df)
                    for name, est, se, resid in (("tuned", e.estimate, e.se, y - e.weight * f),
                                                 ("audit-only", e.human, e.human_se, y)):  # fmt: skip
                        found = {
                            "t": (est - q * se, est + q * se),
                            "hall": hall_interval(est, se, skewness(resid, "plug-in"), n, big, q),
                            "hall pooled": hall_interval(est, se, np.full(len(runs), skewness(resid, "k3").mean()),
                                                         n, big, q),  # fmt: skip
                            "box df": (est - stats.t.ppf(0.975, np.minimum(e.df, box_df(resid))) * se,
                                       est + stats.t.ppf(0.975, np.minimum(e.df, box_df(resid))) * se),  # fmt: skip
                            "machine": (est - u_hi * se, est - u_lo * se),
                        }
                        for method, (lo, hi) in found.items():
                            acc.setdefault((name, method), []).append(
                                np.stack([(lo <= truth + 1e-12) & (truth - 1e-12 <= hi), hi - lo]))
                for name in ("tuned", "audit-only"):
                    row = {"judge": judge, "design": "topics", "measure": m, "audit": f"{n} topics",
                           "interval": name}  # fmt: skip
                    row["machine u"] = f"{u_lo:.2f}, {u_hi:.2f}"
                    for method in ("t", "hall", "hall pooled", "box df", "machine"):
                        stack = np.stack(acc[(name, method)]).mean(axis=0)
                        row[method] = f"{stack[0].mean():.3f} / {stack[1].mean():.3f}"
                    rows.append(row)
                print(f"{judge} {m} {n}: {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
        machine_gain = judges[judge]["annotation"].to_numpy(float)
        bound = np.asarray(abs(matrix).max(axis=0).todense()).ravel()
        total = matrix.T @ machine_gain
        truth = matrix.T @ human_gain
        for share in SHARES:
            size = int(round(share * len(frame)))
            kappa = machine_kappa(matrix, machine_gain, size, bound, pair_draws, np.random.default_rng([seed, size]))
            acc = {}
            for _ in range(pair_draws):
                idx = rng.choice(len(frame), size, replace=False)
                w = matrix[idx].toarray()
                y, f = w * human_gain[idx, None], w * machine_gain[idx, None]
                e = design_estimate(y, f, total, population=[len(frame)], bound=bound)
                carried = ((y != 0) | (f != 0)).sum(axis=0)
                for name, est, se, resid in (("tuned", e.estimate, e.se, y - e.weight * f),
                                             ("audit-only", e.human, e.human_se, y)):  # fmt: skip
                    for method, dof, scale in (("t", e.df, 1.0), ("box df", np.where(carried < 2, 1.0, box_df(resid)), 1.0),
                                               ("machine", e.df, kappa)):  # fmt: skip
                        half = scale * stats.t.ppf(0.975, np.maximum(dof, 1)) * se
                        acc.setdefault((name, method), []).append(np.stack([np.abs(est - truth) <= half + 1e-12,
                                                                            2 * half]))  # fmt: skip
            for name in ("tuned", "audit-only"):
                row = {"judge": judge, "design": "pairs", "measure": "P@10", "audit": f"{share:.0%} ({size:,} pairs)",
                       "interval": name}  # fmt: skip
                row["machine u"] = f"kappa {kappa:.2f}"
                for method in ("t", "box df", "machine"):
                    stack = np.stack(acc[(name, method)]).mean(axis=0)
                    row[method] = f"{stack[0].mean():.3f} / {stack[1].mean():.3f}"
                rows.append(row)
            print(f"{judge} pairs {share:.0%}: {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    print(f"# seed {seed}: {draws} draws per topics cell, {pair_draws} per pairs cell; coverage / mean width\n")
    print(pd.DataFrame(rows).fillna("").to_markdown(index=False))


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    main(args[0], int(args[1]) if len(args) > 1 else 2000, int(args[2]) if len(args) > 2 else 1,
         args[3] if len(args) > 3 else "/tmp/ppi_bench.duckdb", int(args[4]) if len(args) > 4 else 100)  # fmt: skip
