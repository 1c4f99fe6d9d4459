"""Benchmark: bounds for all TREC-8 runs x all topics x every depth 1..1000.

Usage: python bench/bounds.py WAREHOUSE.duckdb [COLLECTION] [--repeat N]

WAREHOUSE is a warehouse with TREC-8 ingested (see the README's quickstart); it is copied to
a temporary file first and never written. The copy's judged-rows cache (judged_results) is
emptied, then:

- no cache: P on a read-only connection while the cache is empty, which joins the judged
  rows of every run anew on each call;
- cold: the first ``compute_bounds`` on the writable copy, which also fills the cache, as
  the first ``evalwh eval`` or ``evalwh bounds`` on a fresh warehouse does;
- warm: every measure and aggregation again, the cache filled (what a user pays from then on,
  context included).

Each line gives the wall time, the CPU time of the process (all DuckDB threads) and the
load average of the machine before the measurement, since the machine may be shared.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from evalwh import Warehouse
from evalwh.methods.bounds import compute_bounds

CASES = [
    ("P", "mean"),
    ("P", "dempster"),
    ("P", None),
    ("RBP(p=0.8)", None),
    ("AP", "mean"),
    ("nDCG", "mean"),
    ("R", "mean"),
]


def _time(wh: Warehouse, collection: str, measure: str, aggregation: str | None) -> tuple:
    load = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    frame = compute_bounds(
        wh,
        collection=collection,
        measure=measure,
        every_rank=True,
        max_depth=1000,
        aggregation=aggregation,
    )
    return time.perf_counter() - wall, time.process_time() - cpu, load, frame


def _line(label: str, measure: str, aggregation: str | None, runs: list[tuple]) -> str:
    walls = [r[0] for r in runs]
    cpus = [r[1] for r in runs]
    loads = [r[2] for r in runs]
    return (
        f"{label:<9} {measure:<11} {aggregation or 'both':<9} "
        f"wall {statistics.median(walls):6.2f} s (min {min(walls):6.2f})  "
        f"cpu {statistics.median(cpus):6.2f} s  load {min(loads):5.1f}-{max(loads):5.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("warehouse", type=Path)
    parser.add_argument("collection", nargs="?", default="trec8")
    parser.add_argument("--repeat", type=int, default=3, help="warm runs per case (median)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.duckdb"
        shutil.copy(args.warehouse, path)
        with Warehouse(path) as wh:
            # the cache is stored by build key (schema/013_keyed_results.sql)
            wh.con.execute(
                "DELETE FROM judged_results WHERE build_key IN"
                " (SELECT build_key FROM judged_builds WHERE collection_id = ?)",
                [args.collection],
            )
            wh.con.execute("DELETE FROM judged_builds WHERE collection_id = ?", [args.collection])
            runs = len(wh.run_ids(args.collection))
        with Warehouse(path, read_only=True) as wh:
            uncached = [_time(wh, args.collection, "P", "mean") for _ in range(args.repeat)]
        with Warehouse(path) as wh:
            cold = _time(wh, args.collection, "P", "mean")
            topics = int(cold[3]["n_topics"].max())
            print(
                f"{runs} runs x {topics} topics x 1000 depths = {runs * topics * 1000:,} cells; "
                f"{os.cpu_count()} CPUs"
            )
            print(_line("no cache", "P", "mean", uncached))
            print(_line("cold", "P", "mean", [cold]))
            for measure, aggregation in CASES:
                timed = [
                    _time(wh, args.collection, measure, aggregation) for _ in range(args.repeat)
                ]
                print(_line("warm", measure, aggregation, timed), flush=True)


if __name__ == "__main__":
    main()
