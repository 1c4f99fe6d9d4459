"""Coverage of tau_b's bootstrap intervals: percentile, BCa and normal, by a double bootstrap.

Usage: python bench/tau_interval.py WAREHOUSE COLLECTION REFERENCE SET MEASURE [OUTER] [INNER] [SEED]

The warehouse holds the runs and both label sets (e.g. TREC-8's 129 runs, its qrels and a
random half of them). The study takes the collection's topics as the population: each of
OUTER samples (100 by default) draws as many topics with replacement, computes tau_b
between the rankings under REFERENCE and SET on them, and builds three intervals from INNER
(300) bootstrap replicates of that sample, drawn the way ``evalwh sensitivity`` draws them:

* percentile: the replicates' (1 - c)/2 and (1 + c)/2 quantiles (evalwh before issue 36);
* BCa: Efron's bias-corrected and accelerated percentiles, the acceleration from the
  leave-one-topic-out jackknife of the sample;
* normal: tau_b +- z sd(replicates), cut to [-1, 1] (evalwh since issue 36, methods §11.4).

It prints, for each, how often the interval holds the population's tau_b (all topics), how
often it holds its own sample's tau_b, and its mean width. Not a timing benchmark.
"""

from __future__ import annotations

import sys

import numpy as np
from scipy import stats

from evalwh import Warehouse
from evalwh.stats.rankings import _tau_b_rows


def main(db: str, collection: str, reference: str, other: str, measure: str, outer: int, inner: int, seed: int) -> None:
    with Warehouse.open_reader(db) as wh:
        frames = [
            wh.evaluate(measure, collection=collection, qrels_id=q, per_query=True, wide=True)
            for q in (reference, other)
        ]
    topics = sorted(set(frames[0]["query_id"]) | set(frames[1]["query_id"]))
    runs = sorted(set(frames[0]["run_id"]))
    x, y = (f.pivot(index="run_id", columns="query_id", values=measure).reindex(index=runs, columns=topics)
            for f in frames)  # fmt: skip
    mask_x, mask_y = x.notna().any().to_numpy(float), y.notna().any().to_numpy(float)
    x, y = x.fillna(0.0).to_numpy(), y.fillna(0.0).to_numpy()
    n = len(topics)

    def taus(counts: np.ndarray) -> np.ndarray:
        mx = np.round((counts @ x.T) / (counts @ mask_x)[:, None], 12)
        my = np.round((counts @ y.T) / (counts @ mask_y)[:, None], 12)
        return _tau_b_rows(mx, my)

    def counts_of(draws: np.ndarray) -> np.ndarray:
        out = np.zeros((len(draws), n))
        np.add.at(out, (np.repeat(np.arange(len(draws)), draws.shape[1]), draws.ravel()), 1.0)
        return out

    rng = np.random.default_rng(seed)
    population = taus(np.ones((1, n)))[0]
    z = stats.norm.ppf([0.025, 0.975])
    found: dict[str, list[tuple[float, float]]] = {"percentile": [], "BCa": [], "normal": []}
    estimates = []
    for _ in range(outer):
        sample = rng.integers(0, n, n)
        estimate = taus(counts_of(sample[None, :]))[0]
        estimates.append(estimate)
        replicates = taus(counts_of(sample[rng.integers(0, n, (inner, n))]))
        replicates = replicates[np.isfinite(replicates)]
        found["percentile"].append(tuple(np.quantile(replicates, [0.025, 0.975])))
        below = np.mean(replicates < estimate) + 0.5 * np.mean(replicates == estimate)
        z0 = stats.norm.ppf(np.clip(below, 1e-9, 1 - 1e-9))
        jack = taus(counts_of(sample[None, :]) - np.eye(n)[sample])  # leave one drawn topic out
        u = jack.mean() - jack
        a = (u**3).sum() / (6 * (u**2).sum() ** 1.5) if (u**2).sum() > 0 else 0.0
        found["BCa"].append(tuple(np.quantile(replicates, stats.norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z))))))
        sd = np.std(replicates, ddof=1)
        found["normal"].append((max(-1.0, estimate - z[1] * sd), min(1.0, estimate + z[1] * sd)))
    estimates_arr = np.array(estimates)
    print(f"{collection} {measure}, {other} against {reference}: population tau_b {population:.4f}, "
          f"samples' mean {estimates_arr.mean():.4f} (sd {estimates_arr.std():.4f}); {outer} x {inner} replicates")  # fmt: skip
    for name, intervals in found.items():
        low, high = np.array(intervals).T
        print(f"  {name:10} holds the population's {np.mean((low <= population) & (population <= high)):.2f}, "
              f"its estimate {np.mean((low <= estimates_arr) & (estimates_arr <= high)):.2f}, "
              f"width {np.mean(high - low):.3f}")  # fmt: skip


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) < 5:
        sys.exit(__doc__)
    numbers = [int(a) for a in args[5:8]] + [100, 300, 5][len(args[5:8]) :]
    main(args[0], args[1], args[2], args[3], args[4], numbers[0], numbers[1], numbers[2])
