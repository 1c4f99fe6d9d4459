"""Benchmark the whole evaluation on Spark against the DuckDB warehouse, on one collection.

Usage: python bench/spark.py [--data /work/benchdata/L] [--master local[2]|cluster]
                             [--engines floor,spark,warehouse] [--measures P@10,AP,nDCG@10,bpref,A_p@10]

``--master cluster`` starts a standalone cluster on this machine first (a master and two
one-core workers, evalwh.spark.standalone, as the tests do) and runs Spark on it; its start
is timed apart. ``--data trec8`` reads ../shared/data/trec8_adhoc (qrels and the 129 runs).

The collection is a directory with ``qrels.txt`` and ``runs/*`` as ``bench/generate.py``
writes it (the L collection: 100 runs x 250 topics x 1,000 documents, 25 M lines; generate it
once with ``python bench/generate.py /work/benchdata/L``). Each engine runs in a fresh Python
process (``--child``), the same work from the same text files:

* ``spark``: a SparkSession on ``--master`` (start-up timed on its own), then
  ``evalwh.spark.files``: qrels and runs read, checked and ranked by Spark, and the metric SQL
  on Spark, per-topic values collected as pandas;
* ``floor``: Spark's floor on these cores: a plain job that reads the same run files and
  ranks each topic's lines with one window (no checks, no qrels, no measures);
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


def _files(data: Path) -> tuple[Path, str]:
    """The qrels file and the run files' glob of a collection directory."""
    if data.name == "trec8_adhoc":
        return data / "trec8.qrels", str(data / "runs" / "input.*.gz")
    return data / "qrels.txt", str(data / "runs" / "*")


def _session(master: str):  # type: ignore[no-untyped-def]
    """evalwh's own session (quiet, shuffle partitions for the cores), as evalwh spark starts it."""
    from evalwh.spark.session import start

    config = {"spark.ui.enabled": "false", "spark.driver.memory": "4g"}
    if master.startswith("spark://"):
        config.update({"spark.driver.memory": "1g", "spark.executor.memory": "1500m"})
    session = start(master, app_name="evalwh-bench", config=config)
    session.range(1).collect()  # the first job starts the executors' machinery
    return session


def child_floor(data: Path, master: str) -> dict[str, float]:
    """Read the run files and rank each topic's lines with one window: Spark's floor."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    times: dict[str, float] = {}
    start = time.perf_counter()
    session = _session(master)
    times["startup"] = time.perf_counter() - start
    _progress(times)
    step = time.perf_counter()
    fields = F.split(F.trim("value"), r"\s+")
    lines = session.read.text(_files(data)[1]).select(
        F.input_file_name().alias("file"), fields[0].alias("query_id"), fields[2].alias("doc_id"),
        fields[4].cast("double").alias("score"),
    )
    window = Window.partitionBy("file", "query_id").orderBy(F.desc("score"), F.desc("doc_id"))
    ranked = lines.select(F.row_number().over(window).alias("rank"))
    row = ranked.agg(F.count("*").alias("n"), F.sum("rank").alias("s")).collect()[0]
    times["runs (read, check, rank)"] = time.perf_counter() - step
    _progress(times)
    times["qrels"] = times["evaluate"] = 0.0
    times["total"] = time.perf_counter() - start
    times["rows"] = 0.0
    times["lines"] = float(row["n"])
    session.stop()
    return times


def child_spark(data: Path, master: str, measures: list[str]) -> dict[str, float]:
    from evalwh.spark import evaluate
    from evalwh.spark.files import load_qrels, load_runs

    times: dict[str, float] = {}
    start = time.perf_counter()
    session = _session(master)
    times["startup"] = time.perf_counter() - start
    _progress(times)
    step = time.perf_counter()
    qrels, runs = _files(data)
    load_qrels(session, str(qrels))
    times["qrels"] = time.perf_counter() - step
    _progress(times)
    step = time.perf_counter()
    loaded = load_runs(session, [runs])
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
            qrels, runs = _files(data)
            wh.ingest_qrels(qrels, collection="L")
            times["qrels"] = time.perf_counter() - step
            step = time.perf_counter()
            results = wh.ingest_runs(sorted(Path(runs).parent.glob(Path(runs).name)), collection="L")
            times["runs (read, check, rank)"] = time.perf_counter() - step
            step = time.perf_counter()
            frame = wh.evaluate(measures, collection="L", per_query=True)
            times["evaluate"] = time.perf_counter() - step
    times["total"] = time.perf_counter() - start
    times["rows"] = float(len(frame))
    times["lines"] = float(sum(r.lines for r in results))
    return times


_TICKS = os.sysconf("SC_CLK_TCK")


def _tree_rss(pid: int, cpu: dict[int, float] | None = None) -> int:
    """Resident bytes of ``pid`` and all its descendants, from /proc.

    With ``cpu``, each process's CPU seconds so far (user + system) are recorded in it by pid.
    """
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        try:
            with open(f"/proc/{current}/status") as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
            if cpu is not None:
                with open(f"/proc/{current}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
                cpu[current] = (int(fields[11]) + int(fields[12])) / _TICKS
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as handle:
                    stack += [int(p) for p in handle.read().split()]
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return total


def measure(engine: str, args: argparse.Namespace, cluster: list[int] = ()) -> dict[str, float]:  # type: ignore[assignment]
    """Run one engine in a child process; its timings plus the peak memory of its process tree.

    ``cluster``: the standalone cluster's processes (master, workers): their trees (the
    executors' JVMs and Python workers are the workers' children) count in the CPU seconds
    and the peak memory too, from before the child starts to its end.
    """
    command = [sys.executable, __file__, "--child", engine, "--data", str(args.data),
               "--master", args.master, "--measures", args.measures]
    before: dict[int, float] = {}
    for pid in cluster:
        _tree_rss(pid, before)
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = 0
    done = threading.Event()
    cpu: dict[int, float] = {}
    phases: dict[str, float] = {}

    def phase_cpu() -> None:
        # each phase's line on the child's stderr (_progress): the CPU seconds so far, per phase
        used = 0.0
        for line in process.stderr:  # type: ignore[union-attr]
            print(line, end="", file=sys.stderr, flush=True)
            if ": " in line and line.rstrip().endswith(" s"):
                now = sum(cpu.values()) - sum(before.values())
                phases[f"cpu {line.split(': ')[0]}"] = now - used
                used = now

    reader = threading.Thread(target=phase_cpu, daemon=True)
    reader.start()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _tree_rss(process.pid, cpu) + sum(_tree_rss(pid, cpu) for pid in cluster))
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out = process.stdout.read()  # type: ignore[union-attr]
    process.wait()
    reader.join()
    done.set()
    sampler.join()
    if process.returncode != 0:
        raise SystemExit(f"{engine} failed (exit {process.returncode})")
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_memory_gib"] = peak / 2**30
    # CPU seconds of the child's process tree (driver, its JVM): on a shared machine the wall
    # time stretches with the load, the CPU time much less. On a cluster the executors' JVMs
    # are the workers' children, not the child's: with ``cluster`` they count too (less what
    # the cluster's processes had used before).
    result["cpu_seconds"] = sum(cpu.values()) - sum(before.values())
    result.update(phases)  # (sampled every 0.1 s: the split between phases is approximate)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("/work/benchdata/L"))
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--engines", default="spark,warehouse")
    parser.add_argument("--measures", default=DEFAULT_MEASURES)
    parser.add_argument("--child", choices=["spark", "warehouse", "floor"])
    args = parser.parse_args()
    measures = args.measures.split(",")
    if str(args.data) == "trec8":
        args.data = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec8_adhoc"
    if args.child == "spark":
        print(json.dumps(child_spark(args.data, args.master, measures)))
        return
    if args.child == "floor":
        print(json.dumps(child_floor(args.data, args.master)))
        return
    if args.child == "warehouse":
        print(json.dumps(child_warehouse(args.data, measures)))
        return
    if not _files(args.data)[0].is_file():
        raise SystemExit(f"{args.data}: no qrels.txt; generate it with: python bench/generate.py {args.data}")
    if args.master == "cluster":
        from evalwh.spark.standalone import StandaloneCluster

        with tempfile.TemporaryDirectory() as scratch:
            began = time.perf_counter()
            with StandaloneCluster(scratch, workers=2, cores=1, memory="2g", timeout=600) as cluster:
                print(f"standalone cluster (a master, two one-core workers) up in "
                      f"{time.perf_counter() - began:.1f} s, load {os.getloadavg()[0]:.1f}", flush=True)
                args.master = cluster.url
                _run_all(args, measures, cluster.pids)
        return
    _run_all(args, measures)


def _run_all(args: argparse.Namespace, measures: list[str], cluster: list[int] = ()) -> None:  # type: ignore[assignment]
    results = {}
    for engine in args.engines.split(","):
        load = os.getloadavg()
        results[engine] = measure(engine, args, cluster if engine != "warehouse" else ())
        results[engine]["load_before"] = load[0]
        results[engine]["load_after"] = os.getloadavg()[0]
        print(engine, json.dumps(results[engine], indent=1), flush=True)
    phases = ["startup", "qrels", "runs (read, check, rank)", "evaluate"]
    keys = [*phases, "total", "cpu_seconds", *[f"cpu {p}" for p in phases], "peak_memory_gib", "load_before", "load_after"]
    print(f"measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"\n{args.data}: {results[next(iter(results))]['lines']:,.0f} run lines, measures {measures}, "
          f"{os.cpu_count()} cores; Spark master {args.master}")
    print(f"| {'':28} | " + " | ".join(f"{e:>10}" for e in results) + " |")
    for key in keys:
        print(f"| {key:28} | " + " | ".join(f"{results[e].get(key, 0.0):10.2f}" for e in results) + " |")


if __name__ == "__main__":
    main()
