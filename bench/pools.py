"""Benchmark: the pooling-bias experiments and leave-one-out re-pooling on TREC-8.

Usage (a warehouse with TREC-8 and its run metadata ingested; it gains the completed qrels
'default-completed' and the pool 'official' if they are missing):

    python bench/pools.py --db trec8.duckdb [--collection trec8] [--repeats 100] [--topic-samples 200]

Times (wall clock and process CPU, all threads) the full Algorithm 3 run of methods §6.8 (I run samplings x J topic
samplings, widths 2, 4, 10, 20, 40, both handlings, Algorithm 1 included), each of its
set-wise scoring passes, the numpy topic resampling alone, and leave-one-out for every member
of the official depth-100 pool (71 runs). Nothing is stored except the qrels and pool above.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from evalwh.methods import pools
from evalwh.methods.experiments import pool_bias
from evalwh.warehouse import Warehouse


def main() -> None:
    """Run the benchmark and print one line per timed step."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--collection", default="trec8")
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--topic-samples", type=int, default=200)
    parser.add_argument("--measure", default="RBP_trunc(p=0.8)@10")
    args = parser.parse_args()

    with Warehouse(args.db) as wh:
        start, cpu = time.perf_counter(), time.process_time()
        marks: list[float] = []
        result = pool_bias.run_pool_bias(
            wh, args.collection, repeats=args.repeats, topic_samples=args.topic_samples, measure=args.measure,
            store=False, progress=lambda done, total: marks.append(time.perf_counter()),
        )  # fmt: skip
        total, cpu = time.perf_counter() - start, time.process_time() - cpu
        passes = np.diff([start, *marks])
        print(f"pool-bias (I={args.repeats}, J={args.topic_samples}, widths 2,4,10,20,40, both handlings,"
              f" Algorithm 1): {total:.1f} s wall, {cpu:.1f} s CPU, in {len(passes)} passes"
              f" (per pass min {passes.min():.1f} s, max {passes.max():.1f} s)")  # fmt: skip
        n_topics = int(result["experiment"]["n_topics"].iloc[0])

        gen = np.random.default_rng(1)
        true, unpooled = gen.random((args.repeats, n_topics)), gen.random((args.repeats, n_topics))
        start = time.perf_counter()
        for _width in range(5):
            for n in (5, 10, 20):
                idx = pool_bias.draw_common_topics(args.repeats, args.topic_samples, n_topics, n, rng=gen)
                pool_bias.common_topics_errors(true, unpooled, idx)
        print(f"topic resampling alone (numpy, 5 widths x 3 n, {args.repeats}x{args.topic_samples}x{n_topics}):"
              f" {time.perf_counter() - start:.2f} s")  # fmt: skip

        if wh.con.execute("SELECT count(*) FROM pools WHERE pool_id = 'official'").fetchone()[0] == 0:  # type: ignore[index]
            pools.build_pool(wh, args.collection, depth=100, runs_from="pooled", pool_id="official")
        for handling in ("nonrelevant", "condensed"):
            start, cpu = time.perf_counter(), time.process_time()
            loo = pools.leave_one_out(wh, args.collection, "official", [args.measure, "P@10", "AP"], unjudged=handling)
            print(f"leave-one-out, {loo['run_id'].nunique()} pooled runs, depth 100, {args.measure}, P@10, AP,"
                  f" {handling}: {time.perf_counter() - start:.1f} s wall, {time.process_time() - cpu:.1f} s CPU")  # fmt: skip


if __name__ == "__main__":
    main()
