"""Benchmark the whole evaluation on Spark against the DuckDB warehouse, on one collection.

Usage: python bench/spark.py [--data /work/benchdata/L] [--master local[2]] [--engines spark,warehouse]
                             [--measures P@10,AP,nDCG@10,bpref,A_p@10]

The collection is a directory with ``qrels.txt`` and ``runs/*`` as ``bench/generate.py``
writes it (the L collection: 100 runs x 250 topics x 1,000 documents, 25 M lines; generate it
once with ``python bench/generate.py /work/benchdata/L``). Each engine runs in a fresh Python
process (``--child``), the same work from the same text files:

* ``spark``: a SparkSession on ``--master`` (start-up timed on its own), then
  ``evalwh.spark.files``: qrels and runs read, checked and ranked by Spark, and the metric SQL
  on Spark, per-topic values collected as pandas;
* ``warehouse``: ``Warehouse.ingest_qrels`` and ``ingest_runs`` into a fresh DuckDB file, then
  ``Warehouse.evaluate(per_query=True)``.

Peak memory is the largest sum of resident set sizes of the child and every process under it
(for Spark: the Python driver, the JVM and its Python workers), sampled every 0.1 s from
/proc. The machine's load average is printed beside the figures: on a shared machine the
wall times vary, so compare the ratio, measured in the same minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

DEFAULT_MEASURES = "P@10,AP,nDCG@10,bpref,A_p@10"


def _progress(times: dict[str, float]) -> None:
    """Each phase on stderr as it ends, so a long run shows how far it got."""
    key = next(reversed(times))
    print(f"{key}: {times[key]:.1f} s", file=sys.stderr, flush=True)


def child_spark(data: Path, master: str, measures: list[str]) -> dict[str, float]:
    from pyspark.sql import SparkSession

    from evalwh.spark import evaluate
    from evalwh.spark.files import load_qrels, load_runs

    times: dict[str, float] = {}
    start = time.perf_counter()
    session = (
        SparkSession.builder.master(master)
        .appName("evalwh-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "4g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    session.range(1).collect()  # the first job starts the executors' machinery
    times["startup"] = time.perf_counter() - start
    _progress(times)
    step = time.perf_counter()
    load_qrels(session, str(data / "qrels.txt"))
    times["qrels"] = time.perf_counter() - step
    _progress(times)
    step = time.perf_counter()
    loaded = load_runs(session, [str(data / "runs" / "*")])
    times["runs (read, check, rank)"] = time.perf_counter() - step
    _progress(times)
    step = time.perf_counter()
    frame = evaluate(session, measures, collection="spark")
    times["evaluate"] = time.perf_counter() - step
    _progress(times)
    times["total"] = time.perf_counter() - start
    times["rows"] = float(len(frame))
    times["lines"] = float(sum(loaded.line_counts))
    session.stop()
    return times


def child_warehouse(data: Path, measures: list[str]) -> dict[str, float]:
    from evalwh.warehouse import Warehouse

    times: dict[str, float] = {}
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR")) as tmp:
        with Warehouse(Path(tmp) / "bench.duckdb") as wh:
            times["startup"] = time.perf_counter() - start
            step = time.perf_counter()
            wh.ingest_qrels(data / "qrels.txt", collection="L")
            times["qrels"] = time.perf_counter() - step
            step = time.perf_counter()
            results = wh.ingest_runs(sorted((data / "runs").iterdir()), collection="L")
            times["runs (read, check, rank)"] = time.perf_counter() - step
            step = time.perf_counter()
            frame = wh.evaluate(measures, collection="L", per_query=True)
            times["evaluate"] = time.perf_counter() - step
    times["total"] = time.perf_counter() - start
    times["rows"] = float(len(frame))
    times["lines"] = float(sum(r.lines for r in results))
    return times


def _tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and all its descendants, from /proc."""
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        try:
            with open(f"/proc/{current}/status") as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as handle:
                    stack += [int(p) for p in handle.read().split()]
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return total


def measure(engine: str, args: argparse.Namespace) -> dict[str, float]:
    """Run one engine in a child process; its timings plus the peak memory of its process tree."""
    command = [sys.executable, __file__, "--child", engine, "--data", str(args.data),
               "--master", args.master, "--measures", args.measures]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _tree_rss(process.pid))
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, _ = process.communicate()
    done.set()
    sampler.join()
    if process.returncode != 0:
        raise SystemExit(f"{engine} failed (exit {process.returncode})")
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_memory_gib"] = peak / 2**30
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("/work/benchdata/L"))
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--engines", default="spark,warehouse")
    parser.add_argument("--measures", default=DEFAULT_MEASURES)
    parser.add_argument("--child", choices=["spark", "warehouse"])
    args = parser.parse_args()
    measures = args.measures.split(",")
    if args.child == "spark":
        print(json.dumps(child_spark(args.data, args.master, measures)))
        return
    if args.child == "warehouse":
        print(json.dumps(child_warehouse(args.data, measures)))
        return
    if not (args.data / "qrels.txt").is_file():
        raise SystemExit(f"{args.data}: no qrels.txt; generate it with: python bench/generate.py {args.data}")
    results = {}
    for engine in args.engines.split(","):
        load = os.getloadavg()
        results[engine] = measure(engine, args)
        results[engine]["load_before"] = load[0]
        results[engine]["load_after"] = os.getloadavg()[0]
        print(engine, json.dumps(results[engine], indent=1), flush=True)
    keys = ["startup", "qrels", "runs (read, check, rank)", "evaluate", "total", "peak_memory_gib", "load_before", "load_after"]
    print(f"\n{args.data}: {results[next(iter(results))]['lines']:,.0f} run lines, measures {measures}, "
          f"{os.cpu_count()} cores; Spark master {args.master}")
    print(f"| {'':28} | " + " | ".join(f"{e:>10}" for e in results) + " |")
    for key in keys:
        print(f"| {key:28} | " + " | ".join(f"{results[e][key]:10.2f}" for e in results) + " |")


if __name__ == "__main__":
    main()
