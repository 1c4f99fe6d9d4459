"""Small audits: where the prediction-powered intervals miss, and four more corrections (methods §15.6).

Usage: python bench/ppi_small_audits.py TREC8_DIR [PAIR_DRAWS] [SEED] [WAREHOUSE] [TOPIC_DRAWS] [REPLICATES]

The setting of ``bench/ppi_coverage.py`` (its :func:`load_setting`: TREC-8's official qrels the
truth, the seed's two simulated judges the machine). The estimate and its standard error are
:func:`evalwh.stats.ppi.design_estimate`'s unless a method says otherwise. Audits are drawn with
``numpy.random.default_rng([SEED, 11])``, uniformly without replacement, PAIR_DRAWS times (default
200) per pairs cell and TOPIC_DRAWS times (default 1,000) per topics cell. Cells print
``coverage / mean width`` averaged over the 129 runs.

Part 1, pairs audits (P@10, 2-20% of the 86,830 pooled pairs). The first table splits evalwh's
Student's t interval by how many audited pairs carry the run (``m``: its human or machine value
not 0, the count behind its degrees of freedom) and by how many of those the people and the judge
grade differently (``d``): it shows where the misses are (``d 0, m >= 2``: the runs ``audit
estimate`` names in its note; with ``m < 2`` the variance has its floor). The second compares, on
the same audits:

* ``t``: evalwh's interval, ``estimate +- t_{df} se``, ``df = min(n - 1, m - 1)``.
* ``hall``: Hall's monotone transformation for skewness (``bench/ppi_interval_alternatives.py``'s,
  with the without-replacement coefficients), the skewness of each run's audited residuals.
* ``confusion z``: a model-assisted variance. The judge's labels of every pooled pair are known;
  only the people's are not. The audit's pairs that some run ranks in its top ten give
  ``p_g = P(people relevant | judge's grade g)``, pooled over all runs (a prior of one half).
  Each run's variance is the design variance ``N^2 (1 - n / N) / n * S2`` with ``S2`` the
  expected population variance of its residuals ``w (y - lambda f)`` under that model, computed
  over all its pooled pairs; the normal quantile (the model is fitted on hundreds of pairs).
  Isaki and Fuller (*JASA* 77, 1982) call such a variance the anticipated variance.
* ``moderated``: the run's own variance shrunk towards the model's with ``d0 = 20`` prior degrees
  of freedom, ``(d0 V_model + df V) / (d0 + df)``, and ``t_{d0 + df}`` (Smyth's moderated t,
  *Statistical Applications in Genetics and Molecular Biology* 3, 2004).
* ``confusion boot-t``: a bootstrap-t with a stand-in population: the people's labels of the
  unaudited pairs drawn from ``p_g`` (the audited pairs keep theirs), REPLICATES (default 400)
  audits of the same size drawn from it, each estimated with the weight re-tuned and the plug-in
  variance (evalwh's floor where ``m < 2``), and the 2.5% and 97.5% points of
  ``(estimate - theta*) / se`` over replicates and runs replacing ``-t, t``.

Part 2, topics audits (3, 5 and 10 of the 50 topics), the tuned estimate's variance at few
topics: ``jackknife`` (evalwh's: the weight re-estimated at each deletion), ``plug-in``
(``V(lambda)`` at the audit's weight) and ``mixed`` (their mean), each with Student's t and with
the machine's points (:func:`evalwh.stats.ppi.machine_quantiles`, as ``audit estimate`` uses them).
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd
import scipy.sparse as sp
from ppi_coverage import MEASURES, SHARES, load_setting
from ppi_interval_alternatives import hall_interval, skewness
from scipy import stats

from evalwh.stats.ppi import design_estimate, machine_quantiles

PRIOR_DF = 20
Z = float(stats.norm.ppf(0.975))


def confusion(human: np.ndarray, machine: np.ndarray, grades: np.ndarray) -> np.ndarray:
    """``P(human gain 1 | machine gain g)`` for each of ``grades`` (the audit's ``human``, ``machine``),
    a prior of one half (a grade the audit lacks gets one half)."""
    return np.array([(human[machine == g].sum() + 0.5) / ((machine == g).sum() + 1.0) for g in grades])


def model_variance(matrix, squares, machine: np.ndarray, p: np.ndarray, lam: float, n: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Each run's design variance under the model ``P(y = 1) = p`` for every pooled pair."""
    big = matrix.shape[0]
    first = matrix.T @ (p - lam * machine)
    second = squares.T @ (p * (1 - lam * machine) ** 2 + (1 - p) * (lam * machine) ** 2)
    return big * big * (1 - n / big) / n * (second - first**2 / big) / (big - 1)


def boot_points(matrix, squares, carries, human: np.ndarray, machine: np.ndarray, total: np.ndarray,  # type: ignore[no-untyped-def]
                bound: np.ndarray, n: int, replicates: int, rng: np.random.Generator) -> tuple[float, float]:  # fmt: skip
    """The 2.5% and 97.5% points of ``(estimate - theta*) / se`` over audits of the stand-in ``human``."""
    big = matrix.shape[0]
    rows = np.repeat(np.arange(replicates), n)
    cols = np.concatenate([rng.choice(big, n, replace=False) for _ in range(replicates)])
    pick = sp.csr_matrix((np.ones(replicates * n), (rows, cols)), shape=(replicates, big))

    def summed(values: np.ndarray, by) -> np.ndarray:  # type: ignore[no-untyped-def]
        return (pick @ by.multiply(values[:, None]).tocsr()).toarray()

    sy, sf = summed(human, matrix), summed(machine, matrix)
    syy, sff, syf = summed(human, squares), summed(machine, squares), summed(human * machine, squares)
    active = summed(((human != 0) | (machine != 0)).astype(float), carries)
    s_yy, s_ff, s_yf = ((a - b * c / n) / (n - 1) for a, b, c in ((syy, sy, sy), (sff, sf, sf), (syf, sy, sf)))
    lam = s_yf.sum(axis=1, keepdims=True) / np.maximum(s_ff.sum(axis=1, keepdims=True), 1e-300)
    coef = big * big * (1 - n / big) / n
    var = coef * (s_yy - 2 * lam * s_yf + lam**2 * s_ff)
    var = np.where(active < 2, np.maximum(var, coef / n * bound**2), var)
    gap = lam * total + big / n * (sy - lam * sf) - matrix.T @ human
    se = np.sqrt(np.maximum(var, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.where(se > 0, gap / se, np.where(np.abs(gap) < 1e-12, 0.0, np.sign(gap) * np.inf))
    lo, hi = np.quantile(u, [0.025, 0.975])
    return float(lo), float(hi)


def pairs_part(setting, seed: int, draws: int, replicates: int) -> tuple[list[dict], list[dict]]:  # type: ignore[no-untyped-def]
    judges, runs, topics, frame, matrix, human_gain, matrices = setting
    assert set(np.unique(human_gain)) <= {0.0, 1.0}, "the model of part 1 is for binary gains"
    matrix = matrix.tocsr()
    squares = matrix.multiply(matrix).tocsr()
    carries = (matrix != 0).astype(float).tocsr()
    ranked = np.asarray(carries.sum(axis=1)).ravel() > 0  # pairs some run ranks in its top ten
    bound = np.asarray(abs(matrix).max(axis=0).todense()).ravel()
    truth = matrix.T @ human_gain
    big = len(frame)
    split_rows, rows = [], []
    for judge, labels in judges.items():
        machine = labels["annotation"].to_numpy(float)
        grades, grade_of = np.unique(machine, return_inverse=True)
        total = matrix.T @ machine
        for share in SHARES:
            size = int(round(share * big))
            rng = np.random.default_rng([seed, 11])
            boot_rng = np.random.default_rng([seed, 12, size])
            hits: dict[str, list[np.ndarray]] = {}
            split: list[np.ndarray] = []
            for _ in range(draws):
                idx = rng.choice(big, size, replace=False)
                w = matrix[idx].toarray()
                y, f = w * human_gain[idx, None], w * machine[idx, None]
                e = design_estimate(y, f, total, population=[big], bound=bound)
                lam = float(e.weight[0])
                q = stats.t.ppf(0.975, e.df)
                p = confusion(human_gain[idx][ranked[idx]], machine[idx][ranked[idx]], grades)[grade_of]
                v_model = model_variance(matrix, squares, machine, p, lam, size)
                moderated = (PRIOR_DF * v_model + e.df * e.se**2) / (PRIOR_DF + e.df)
                stand_in = (rng.random(big) < p).astype(float)
                stand_in[idx] = human_gain[idx]
                u_lo, u_hi = boot_points(matrix, squares, carries, stand_in, machine, total, bound, size,
                                         replicates, boot_rng)  # fmt: skip
                found = {
                    "t": (e.estimate - q * e.se, e.estimate + q * e.se),
                    "hall": hall_interval(e.estimate, e.se, skewness(y - lam * f, "plug-in"), size, big, q),
                    "confusion z": (e.estimate - Z * np.sqrt(v_model), e.estimate + Z * np.sqrt(v_model)),
                    "moderated": (e.estimate - stats.t.ppf(0.975, PRIOR_DF + e.df) * np.sqrt(moderated),
                                  e.estimate + stats.t.ppf(0.975, PRIOR_DF + e.df) * np.sqrt(moderated)),
                    "confusion boot-t": (e.estimate - u_hi * e.se, e.estimate - u_lo * e.se),
                }  # fmt: skip
                for method, (lo, hi) in found.items():
                    hits.setdefault(method, []).append(np.stack([(lo <= truth + 1e-12) & (truth - 1e-12 <= hi), hi - lo]))
                carried = ((y != 0) | (f != 0)).sum(axis=0)
                differ = ((y != 0) != (f != 0)).sum(axis=0)
                split.append(np.stack([carried, differ, hits["t"][-1][0]]))
            label = f"{share:.0%} ({size:,} pairs)"
            row = {"judge": judge, "audit": label}
            for method, values in hits.items():
                mean = np.stack(values).mean(axis=(0, 2))
                row[method] = f"{mean[0]:.3f} / {mean[1]:.3f}"
            rows.append(row)
            carried, differ, covered = np.concatenate(split, axis=1)
            cut = {"m < 2": carried < 2, "m 2-4": (carried >= 2) & (carried < 5), "m 5-9": (carried >= 5) & (carried < 10),
                   "m >= 10": carried >= 10, "d 0, m >= 2": (differ == 0) & (carried >= 2), "d 1": differ == 1,
                   "d 2": differ == 2, "d >= 3": differ >= 3}  # fmt: skip
            split_rows.append({"judge": judge, "audit": label, **{
                name: f"{covered[k].mean():.3f} ({k.mean():.2f})" if k.any() else "" for name, k in cut.items()}})
            print(f"pairs {judge} {label} done", file=sys.stderr, flush=True)
    return split_rows, rows


def topics_part(setting, seed: int, draws: int) -> list[dict]:  # type: ignore[no-untyped-def]
    judges, runs, topics, frame, matrix, human_gain, matrices = setting
    big = len(topics)
    rows = []
    for j, judge in enumerate(judges):
        for m in MEASURES:
            ys, fs = matrices[("default", m)], matrices[(f"judge{j}_s{seed}", m)]
            truth, total = ys.sum(axis=0), fs.sum(axis=0)
            for n in (3, 5, 10):
                u_lo, u_hi = machine_quantiles(fs, n)
                rng = np.random.default_rng([seed, 11, n])
                coef = big * big * (1 - n / big) / n
                hits: dict[str, list[np.ndarray]] = {}
                for _ in range(draws):
                    chosen = rng.choice(big, n, replace=False)
                    y, f = ys[chosen], fs[chosen]
                    e = design_estimate(y, f, total, population=[big])
                    plug = np.sqrt(coef * (y - e.weight[0] * f).var(axis=0, ddof=1))
                    q = stats.t.ppf(0.975, e.df)
                    for variance, se in (("jackknife", e.se), ("plug-in", plug), ("mixed", np.sqrt((e.se**2 + plug**2) / 2))):
                        for points, (lo, hi) in (("t", (-q, q)), ("machine", (u_lo, u_hi))):
                            a, b = e.estimate - hi * se, e.estimate - lo * se
                            hits.setdefault(f"{variance}, {points}", []).append(
                                np.stack([(a <= truth + 1e-12) & (truth - 1e-12 <= b), b - a]))
                row = {"judge": judge, "measure": m, "audit": f"{n} topics"}
                for method, values in hits.items():
                    mean = np.stack(values).mean(axis=(0, 2))
                    row[method] = f"{mean[0]:.3f} / {mean[1]:.3f}"
                rows.append(row)
            print(f"topics {judge} {m} done", file=sys.stderr, flush=True)
    return rows


def main(trec8: str, pair_draws: int, seed: int, db: str, topic_draws: int, replicates: int) -> None:
    setting = load_setting(trec8, seed, db)
    started = time.perf_counter()
    split_rows, pair_rows = pairs_part(setting, seed, pair_draws, replicates)
    topic_rows = topics_part(setting, seed, topic_draws)
    print(f"# seed {seed}: {pair_draws} audits per pairs cell ({replicates} replicates for the boot-t), "
          f"{topic_draws} per topics cell; {time.perf_counter() - started:.0f} s\n")  # fmt: skip
    print("## Pairs audits, P@10: Student's t coverage by the run's carrying (m) and differing (d) audited pairs "
          "(in brackets the share of runs x audits)\n")  # fmt: skip
    print(pd.DataFrame(split_rows).to_markdown(index=False))
    print("\n## Pairs audits, P@10: coverage / mean width\n")
    print(pd.DataFrame(pair_rows).to_markdown(index=False))
    print("\n## Topics audits, the tuned estimate: variance, points; coverage / mean width\n")
    print(pd.DataFrame(topic_rows).to_markdown(index=False))


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    main(args[0], int(args[1]) if len(args) > 1 else 200, int(args[2]) if len(args) > 2 else 1,
         args[3] if len(args) > 3 else "/tmp/ppi_bench.duckdb", int(args[4]) if len(args) > 4 else 1000,
         int(args[5]) if len(args) > 5 else 400)  # fmt: skip
