"""Benchmark the S4 experiments (methods §8) on TREC-8: swap rates and the reduced-qrels sweep.

Usage (on a copy of a warehouse holding the TREC-8 collection; the script writes results):

    cp /tmp/t.duckdb /tmp/bench.duckdb
    python bench/experiments.py --db /tmp/bench.duckdb --collection trec8

Prints one line per step with its wall time. The swap-rate step is timed separately from the
per-topic evaluation it starts from, since the evaluation is the metrics' cost, not the
experiment's.
"""

from __future__ import annotations

import argparse
import platform
import time

MEASURES = ["MAP", "bpref-10", "RankEff"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, help="warehouse file (it is written to)")
    parser.add_argument("--collection", default="trec8")
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--skip-reduced", action="store_true", help="time only the swap rates")
    args = parser.parse_args()

    import os

    from evalwh import Warehouse
    from evalwh.methods.experiments.exclusion import retained_runs, run_exclusion
    from evalwh.methods.experiments.reduced import DEFAULT_LEVELS, run_reduced_qrels
    from evalwh.methods.experiments.swap import run_swap_rates, swap_rates, topic_splits

    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    with Warehouse(args.db) as wh:
        start = time.perf_counter()
        exclusion = run_exclusion(wh, args.collection)
        runs = retained_runs(exclusion)
        print(
            f"exclusion: {len(exclusion) - len(runs)} of {len(exclusion)} runs excluded, {time.perf_counter() - start:.2f} s"
        )

        start = time.perf_counter()
        scores = wh.evaluate(MEASURES, collection=args.collection, runs=runs, per_query=True)
        print(
            f"per-topic evaluation, {len(runs)} runs x 3 measures: {time.perf_counter() - start:.2f} s"
        )

        start = time.perf_counter()
        splits = topic_splits(scores["query_id"].nunique(), args.samples, rng=args.seed)
        for measure in scores["measure"].unique():
            swap_rates(scores[scores["measure"] == measure], splits=splits)
        pairs = len(runs) * (len(runs) - 1) // 2
        print(
            f"swap rates only, {pairs} run pairs x {args.samples} samples x 3 measures: "
            f"{time.perf_counter() - start:.2f} s"
        )

        start = time.perf_counter()
        run_swap_rates(wh, args.collection, MEASURES, samples=args.samples, seed=args.seed)
        print(
            f"evalwh experiment swap-rates end to end (evaluate, rates, store): {time.perf_counter() - start:.2f} s"
        )

        if not args.skip_reduced:
            start = time.perf_counter()
            run_reduced_qrels(wh, args.collection, MEASURES, seed=args.seed)
            print(
                f"evalwh experiment reduced-qrels end to end, {len(DEFAULT_LEVELS)} levels "
                f"(sample, store, evaluate, tau): {time.perf_counter() - start:.1f} s"
            )


if __name__ == "__main__":
    main()
