"""Benchmark the whole evaluation on Spark against the DuckDB warehouse, on one collection.

Usage: python bench/spark.py [--data /work/bench-data/L] [--master local[2]|cluster]
                             [--engines spark,spark-evalwh,spark-parquet,floor,warehouse]
                             [--measures P@10,AP,nDCG@10,bpref,A_p@10] [--check] [--nice 10]

``--master cluster`` starts a standalone cluster on this machine first (a master and two
one-core workers, evalwh.spark.standalone, as the tests do) and runs Spark on it; its start
is timed apart. ``--data trec8`` reads ../shared/data/trec8_adhoc (qrels and the 129 runs).

The collection is a directory with ``qrels.txt`` and ``runs/*`` as ``bench/generate.py``
writes it (the L collection of ``../shared/bench``: 100 runs x 250 topics x 1,000 documents, 25 M
lines; its README has the command). Each engine runs in a fresh Python
process (``--child``), the same work from the same text files:

* ``spark``: a SparkSession on ``--master`` (start-up timed on its own), then
  ``evalwh.spark.files``: qrels and runs read, checked and ranked by Spark SQL's reader, and
  the metric SQL on Spark, per-topic values collected as pandas;
* ``spark-evalwh``: the same with evalwh's C reader on the executors (``--reader evalwh``):
  the executors hand Spark the judged lines with their running counts and each topic's
  line count, nothing else;
* ``spark-parquet``: ``evalwh spark eval --runs-parquet``: the collection's export (format
  2, checked and ranked; made once by the warehouse beside the round, not timed) read as
  Parquet, qrels included, and evaluated;
* ``floor``: Spark's floor on these cores: a plain job that reads the same run files and
  ranks each topic's lines with one window (no checks, no qrels, no measures);
* ``warehouse``: ``Warehouse.ingest_qrels`` and ``ingest_runs`` into a fresh DuckDB file, then
  ``Warehouse.evaluate(per_query=True)``.

Peak memory is the largest sum of resident set sizes of the child and every process under it
(for Spark: the Python driver, the JVM and its Python workers), sampled every 0.1 s from
/proc. The CPU seconds are every process's: the child's tree (the driver: Python and its JVM,
in local mode the executors' threads and Python workers too) and, with ``--master cluster``,
the cluster's master, workers and executors, printed apart (``cpu driver``, ``cpu executors``).
The machine's load average is printed beside the figures: on a shared machine the wall times
vary, so compare the CPU seconds and the ratio, measured in the same minutes. Each engine
runs under ``nice -n 10`` (``--nice``). ``--check`` compares every engine's per-topic values
with the warehouse's.
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
ENGINES = ("spark", "spark-evalwh", "spark-parquet", "floor", "warehouse")


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
        # (the executors' Python workers, evalwh's reader: this interpreter, where evalwh is)
        config.update({"spark.driver.memory": "1g", "spark.executor.memory": "1500m", "spark.pyspark.python": sys.executable})
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


def child_spark(data: Path, master: str, measures: list[str], reader: str = "spark") -> dict[str, float]:
    """evalwh spark eval's work on text files: Spark SQL's reader, or evalwh's on the executors."""
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
    loaded = load_runs(session, [runs], reader=reader)
    times["runs (read, check, rank)"] = time.perf_counter() - step
    _progress(times)
    step = time.perf_counter()
    frame = evaluate(session, measures, collection="spark")
    times["evaluate"] = time.perf_counter() - step
    _progress(times)
    times["total"] = time.perf_counter() - start
    times["rows"] = float(len(frame))
    times["lines"] = float(sum(loaded.line_counts))
    times["files by evalwh's reader"] = float(loaded.by_reader)
    _save(frame, "spark-evalwh" if reader == "evalwh" else "spark")
    session.stop()
    return times


def child_parquet(data: Path, master: str, measures: list[str]) -> dict[str, float]:
    """evalwh spark eval --runs-parquet: an export's ranked runs and qrels read as Parquet."""
    from evalwh.spark import evaluate, register_export

    times: dict[str, float] = {}
    start = time.perf_counter()
    session = _session(master)
    times["startup"] = time.perf_counter() - start
    _progress(times)
    step = time.perf_counter()
    register_export(session, str(_export(data)))
    times["qrels"] = time.perf_counter() - step
    _progress(times)
    times["runs (read, check, rank)"] = 0.0
    step = time.perf_counter()
    frame = evaluate(session, measures, collection="L")
    times["evaluate"] = time.perf_counter() - step
    _progress(times)
    times["total"] = time.perf_counter() - start
    times["rows"] = float(len(frame))
    times["lines"] = float(session.table("run_results").count())
    _save(frame, "spark-parquet")
    session.stop()
    return times


def _export(data: Path) -> Path:
    """The collection as an evalwh export (format 2, as evalwh spark ingest writes it), made once.

    Made by the warehouse (``evalwh export``: the same layout and rows as ``evalwh spark
    ingest --output``, tests/test_spark_files.py) beside the collection, outside the timing.
    """
    target = Path(os.environ.get("EVALWH_BENCH_EXPORTS", "/tmp")) / f"evalwh-bench-export-{data.name}"
    if (target / "manifest.json").is_file():
        return target
    from evalwh.store import transfer
    from evalwh.warehouse import Warehouse

    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR")) as tmp:
        with Warehouse(Path(tmp) / "export.duckdb") as wh:
            qrels, runs = _files(data)
            wh.ingest_qrels(qrels, collection="L")
            wh.ingest_runs(sorted(Path(runs).parent.glob(Path(runs).name)), collection="L")
            transfer.export(wh, target)
    return target


def _save(frame, name: str) -> None:  # type: ignore[no-untyped-def]
    """The per-topic values, for the comparison with the warehouse's (--check)."""
    folder = os.environ.get("EVALWH_BENCH_VALUES")
    if folder:
        frame[["run_id", "query_id", "measure", "value"]].to_parquet(Path(folder) / f"{name}.parquet")


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
    _save(frame, "warehouse")
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
    command = ["nice", "-n", str(args.nice), sys.executable, __file__, "--child", engine, "--data", str(args.data),
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

    driver: dict[int, float] = {}

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            own: dict[int, float] = {}
            rss = _tree_rss(process.pid, own)
            driver.update(own)
            cpu.update(own)
            peak = max(peak, rss + sum(_tree_rss(pid, cpu) for pid in cluster))
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
    # the driver's share (its Python and JVM); the rest, on a cluster, is the master's, the
    # workers' and the executors' (JVMs and Python workers)
    result["cpu driver"] = sum(driver.values())
    result["cpu executors (and cluster daemons)"] = result["cpu_seconds"] - result["cpu driver"]
    result.update(phases)  # (sampled every 0.1 s: the split between phases is approximate)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("/work/bench-data/L"))
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--engines", default="spark,warehouse")
    parser.add_argument("--measures", default=DEFAULT_MEASURES)
    parser.add_argument("--child", choices=[*ENGINES])
    parser.add_argument("--nice", type=int, default=10, help="niceness of each engine's process (a shared machine)")
    parser.add_argument("--check", action="store_true", help="compare every engine's per-topic values with the warehouse's")
    args = parser.parse_args()
    measures = args.measures.split(",")
    if str(args.data) == "trec8":
        args.data = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec8_adhoc"
    if args.child in ("spark", "spark-evalwh"):
        reader = "evalwh" if args.child == "spark-evalwh" else "spark"
        print(json.dumps(child_spark(args.data, args.master, measures, reader)))
        return
    if args.child == "spark-parquet":
        print(json.dumps(child_parquet(args.data, args.master, measures)))
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
    values = tempfile.mkdtemp(prefix="evalwh-bench-values-") if args.check else None
    if values:
        os.environ["EVALWH_BENCH_VALUES"] = values
    if "spark-parquet" in args.engines.split(","):
        _export(args.data)  # (made once, outside the timing)
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
    keys[keys.index("peak_memory_gib"):keys.index("peak_memory_gib")] = ["cpu driver", "cpu executors (and cluster daemons)"]
    print(f"| {'':36} | " + " | ".join(f"{e:>13}" for e in results) + " |")
    for key in keys:
        print(f"| {key:36} | " + " | ".join(f"{results[e].get(key, 0.0):13.2f}" for e in results) + " |")
    if "warehouse" in results:
        base = results["warehouse"]["cpu_seconds"]
        print("CPU against the warehouse's: " + ", ".join(
            f"{e} {results[e]['cpu_seconds'] / base:.1f}x" for e in results if e != "warehouse"))
    if values:
        _check(Path(values), results)


def _check(folder: Path, results: dict) -> None:  # type: ignore[type-arg]
    """Every engine's per-topic values against the warehouse's: the same keys, equal to 1e-12."""
    import numpy as np
    import pandas as pd

    duck = pd.read_parquet(folder / "warehouse.parquet")
    for engine in results:
        path = folder / f"{engine}.parquet"
        if engine == "warehouse" or not path.is_file():
            continue
        other = pd.read_parquet(path)
        merged = duck.merge(other, on=["run_id", "query_id", "measure"], how="outer", indicator=True)
        a, b = merged["value_x"].to_numpy(), merged["value_y"].to_numpy()
        same = (merged["_merge"] == "both").all() and bool(
            (np.isclose(a, b, rtol=0, atol=1e-12) | (np.isnan(a) & np.isnan(b))).all()
        )
        print(f"{engine}: {len(other):,} per-topic values, {'all equal to' if same else 'NOT equal to'} the warehouse's")


if __name__ == "__main__":
    main()
