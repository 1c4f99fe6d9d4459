"""Benchmark: every test of `evalwh compare` over all pairs of TREC-8's 129 runs (8,256 pairs).

Usage: python bench/comparisons.py WAREHOUSE.duckdb [COLLECTION] [RESAMPLES]

Reads per-topic AP of every run once, then times :func:`evalwh.stats.compare.compare` on
all pairs with each test (resampling tests with RESAMPLES resamples, 10,000 by default)
beside peers, as ratios:

* paired randomisation: ranx's ``fisher_randomization_test`` (numba, one pair per call), on
  200 pairs, scaled to all pairs;
* Tukey HSD: :func:`scipy.stats.tukey_hsd` over the same runs (the one-way version; the cost
  is the same studentized-range evaluations, about 1 ms each); both on the first 40 runs
  (780 pairs), since this exact test costs one numerical integral per pair;
* randomised Tukey HSD: the same test written as one numpy step per resample (the usual way
  of writing it), on a tenth of the resamples, scaled up.

Prints wall time, the ratios, the peak memory of the process and the machine's load average
(the machine may be shared).
"""

from __future__ import annotations

import os
import resource
import sys
import time

import numpy as np
from scipy import stats

from evalwh import Warehouse
from evalwh.stats.compare import compare


def reference_randomized_tukey(values: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """The randomised Tukey HSD test, one resample at a time (the reference for the ratio)."""
    rng = np.random.default_rng(seed)
    k, n = values.shape
    means = values.mean(axis=1)
    a, b = np.triu_indices(k, 1)
    observed = np.abs(means[a] - means[b])
    count = np.zeros(a.size)
    for _ in range(n_resamples):
        shuffled = rng.permuted(values, axis=0)  # each topic's column permuted across runs
        m = shuffled.mean(axis=1)
        count += (m.max() - m.min()) >= observed
    return (1 + count) / (1 + n_resamples)


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    path = sys.argv[1]
    collection = sys.argv[2] if len(sys.argv) > 2 else "trec8"
    resamples = int(sys.argv[3]) if len(sys.argv) > 3 else 10_000
    with Warehouse(path, read_only=True) as wh:
        runs = wh.run_ids(collection)
        start = time.perf_counter()
        scores = wh.evaluate(["AP"], collection=collection, per_query=True)
        read = time.perf_counter() - start
    n_pairs = len(runs) * (len(runs) - 1) // 2
    print(f"{collection}: {len(runs)} runs, {n_pairs:,} pairs, {resamples:,} resamples")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    print(f"read per-topic AP: {read:.1f} s")
    frame = scores[["run_id", "query_id", "measure", "value"]]
    timings = {}
    for test in ("t", "wilcoxon", "sign", "randomization", "bootstrap", "randomized_tukey", "tukey"):
        family = runs[:40] if test == "tukey" else runs
        start = time.perf_counter()
        result = compare(frame, runs=family, test=test, n_resamples=resamples, rng=1)
        timings[test] = time.perf_counter() - start
        rejected = int(result.pairs["reject"].sum())
        print(
            f"{test:>17}: {timings[test]:7.2f} s  ({rejected:,} of {len(result.pairs):,} pairs "
            "significant)"
        )
    values = frame.pivot(index="run_id", columns="query_id", values="value").loc[runs].to_numpy()
    tenth = max(1, resamples // 10)
    start = time.perf_counter()
    reference_randomized_tukey(values, tenth, 1)
    reference = (time.perf_counter() - start) * resamples / tenth
    print(
        f"randomised Tukey HSD, reference (one numpy step per resample, {tenth:,} run, scaled): "
        f"{reference:.2f} s; evalwh is {reference / timings['randomized_tukey']:.1f}x faster"
    )
    start = time.perf_counter()
    stats.tukey_hsd(*values[:40])
    scipy_tukey = time.perf_counter() - start
    print(
        f"Tukey HSD, scipy.stats.tukey_hsd (one-way) on the same 40 runs: {scipy_tukey:.2f} s; "
        f"evalwh is {scipy_tukey / timings['tukey']:.1f}x faster"
    )
    try:
        from ranx.statistical_tests.fisher_randomization_test import fisher_randomization_test
    except ImportError:
        print("ranx is not installed: no randomisation peer")
    else:
        a, b = np.triu_indices(len(runs), 1)
        fisher_randomization_test(values[0], values[1], 10, 0.05, 1)  # numba compiles once
        sample = np.random.default_rng(0).choice(a.size, size=200, replace=False)
        start = time.perf_counter()
        for i in sample:
            fisher_randomization_test(values[a[i]], values[b[i]], resamples, 0.05, 1)
        ranx_time = (time.perf_counter() - start) * a.size / sample.size
        print(
            f"paired randomisation, ranx fisher_randomization_test (200 pairs, scaled): "
            f"{ranx_time:.2f} s; evalwh is {ranx_time / timings['randomization']:.1f}x faster"
        )
    print(f"peak memory (max RSS): {peak_mib():.0f} MiB")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
