"""Coverage of tau_b intervals by simulation: topics drawn from a population, several label-set reductions.

Usage: python bench/tau_coverage.py WAREHOUSE COLLECTION REFERENCE SETS MEASURES [SIZES] [OUTER] [INNER] [SEED]

SETS, MEASURES and SIZES are comma-separated (e.g. ``depth10,half,quarter AP,bpref 25,50``).
The collection's topics are the population: its tau_b (between the runs' means under
REFERENCE and under a set, over all topics) is the truth. Each of OUTER simulated
collections (200 by default) draws SIZE topics with replacement from the population, computes
tau_b on them and four 95% intervals from INNER (400) bootstrap replicates of its topics,
drawn as ``evalwh sensitivity`` draws them:

* normal: tau_b +- z sd(replicates), cut to [-1, 1] (``evalwh sensitivity`` from issue 36 to 53);
* bias-corrected normal: centred on 2 tau_b - mean(replicates) instead (the bootstrap's
  estimate of the bias removed), the same half-width, cut to [-1, 1];
* union (evalwh sensitivity since issue 53): the union of the two, from tau_b - z sd to max(tau_b, 2 tau_b - mean) + z sd
  (it still contains tau_b; its upper end moves up by the bootstrap's estimate of the bias);
* percentile: the replicates' 2.5% and 97.5% quantiles;
* BCa: Efron's bias-corrected and accelerated percentiles (acceleration from the
  leave-one-topic-out jackknife of the drawn topics).

Prints one markdown row per (set, measure, size): the population's tau_b, the simulated
collections' mean tau_b, each interval's coverage of the population's tau_b and mean width.
Not a timing benchmark (the machine's load is printed for the record).
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np
from scipy import stats

from evalwh import Warehouse
from evalwh.stats.rankings import _tau_b_rows

METHODS = ("normal", "bias-corrected", "union", "percentile", "BCa")


def _matrices(db: str, collection: str, reference: str, other: str, measure: str) -> tuple[np.ndarray, ...]:
    with Warehouse.open_reader(db) as wh:
        frames = [wh.evaluate(measure, collection=collection, qrels_id=q, per_query=True, wide=True) for q in (reference, other)]
    topics = sorted(set(frames[0]["query_id"]) | set(frames[1]["query_id"]))
    runs = sorted(set(frames[0]["run_id"]))
    x, y = (f.pivot(index="run_id", columns="query_id", values=measure).reindex(index=runs, columns=topics) for f in frames)
    return (x.notna().any().to_numpy(float), y.notna().any().to_numpy(float), x.fillna(0.0).to_numpy(), y.fillna(0.0).to_numpy())


def cell(mats: tuple[np.ndarray, ...], size: int, outer: int, inner: int, rng: np.random.Generator) -> dict[str, float]:
    mask_x, mask_y, x, y = mats
    n = x.shape[1]

    def taus(counts: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            mx = np.round((counts @ x.T) / (counts @ mask_x)[:, None], 12)
            my = np.round((counts @ y.T) / (counts @ mask_y)[:, None], 12)
        return _tau_b_rows(mx, my)

    def counts_of(draws: np.ndarray) -> np.ndarray:
        out = np.zeros((len(draws), n))
        np.add.at(out, (np.repeat(np.arange(len(draws)), draws.shape[1]), draws.ravel()), 1.0)
        return out

    population = float(taus(np.ones((1, n)))[0])
    z = stats.norm.ppf([0.025, 0.975])
    found: dict[str, list[tuple[float, float]]] = {m: [] for m in METHODS}
    estimates = []
    for _ in range(outer):
        sample = rng.integers(0, n, size)
        estimate = float(taus(counts_of(sample[None, :]))[0])
        estimates.append(estimate)
        replicates = taus(counts_of(sample[rng.integers(0, size, (inner, size))]))
        replicates = replicates[np.isfinite(replicates)]
        sd = np.std(replicates, ddof=1)
        found["normal"].append((max(-1.0, estimate - z[1] * sd), min(1.0, estimate + z[1] * sd)))
        centre = 2 * estimate - replicates.mean()
        found["bias-corrected"].append((max(-1.0, centre - z[1] * sd), min(1.0, centre + z[1] * sd)))
        found["union"].append((max(-1.0, min(estimate, centre) - z[1] * sd), min(1.0, max(estimate, centre) + z[1] * sd)))
        found["percentile"].append(tuple(np.quantile(replicates, [0.025, 0.975])))
        below = np.mean(replicates < estimate) + 0.5 * np.mean(replicates == estimate)
        z0 = stats.norm.ppf(np.clip(below, 1e-9, 1 - 1e-9))
        jack = taus(counts_of(sample[None, :]) - np.eye(n)[sample])  # leave one drawn topic out
        jack = jack[np.isfinite(jack)]
        u = jack.mean() - jack
        a = (u**3).sum() / (6 * (u**2).sum() ** 1.5) if (u**2).sum() > 0 else 0.0
        found["BCa"].append(tuple(np.quantile(replicates, stats.norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z))))))
    out = {"population": population, "mean": float(np.mean(estimates))}
    for name, intervals in found.items():
        low, high = np.array(intervals).T
        out[name] = float(np.mean((low <= population) & (population <= high)))
        out[f"{name} width"] = float(np.mean(high - low))
    return out


def main(argv: list[str]) -> None:
    if len(argv) < 5:
        sys.exit(__doc__)
    db, collection, reference, sets, measures = argv[:5]
    sizes = [int(s) for s in (argv[5] if len(argv) > 5 else "25,50").split(",")]
    outer, inner, seed = (int(v) for v in (argv[6:9] + ["200", "400", "1"][len(argv[6:9]) :]))
    rng = np.random.default_rng(seed)
    print(f"load {os.getloadavg()[0]:.1f}; {outer} simulated collections x {inner} replicates, seed {seed}\n")
    header = "| set | measure | topics | population tau_b | mean tau_b | " + " | ".join(METHODS) + " | widths |"
    print(header)
    print("|" + "|".join([":--", ":--", "--:", "--:", "--:"] + ["--:"] * (len(METHODS) + 1)) + "|")
    started = time.process_time()
    for other in sets.split(","):
        for measure in measures.split(","):
            mats = _matrices(db, collection, reference, other, measure)
            for size in sizes:
                r = cell(mats, size, outer, inner, rng)
                widths = " / ".join(f"{r[f'{m} width']:.3f}" for m in METHODS)
                print(f"| {other} | {measure} | {size} | {r['population']:.3f} | {r['mean']:.3f} | "
                      + " | ".join(f"{r[m]:.2f}" for m in METHODS) + f" | {widths} |", flush=True)  # fmt: skip
    print(f"\nCPU {time.process_time() - started:.0f} s; load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main(sys.argv[1:])
