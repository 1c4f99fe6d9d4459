"""Benchmark the whole evaluation on Spark against the DuckDB warehouse, on one collection.

The whole round, unattended (issue #41; about 85 minutes on the quiet 2-core machine, see
docs/spark.md), and the short one (about 20 minutes: TREC-8 with the C reader on local[2],
L with the C reader and from Parquet, each against the warehouse, and L from Parquet again
with Spark's default JVM)::

    python bench/spark.py --round full --out /tmp/spark-round.md
    python bench/spark.py --round short --out /tmp/spark-round-short.md

Each engine runs under ``nice -n 10`` itself (``--nice``); the round's own process only
samples /proc. A round runs each case below (:data:`ROUNDS`) as ``--data D --master M --engines E --check``,
one after another, and ends with one Markdown table: per case and engine the CPU seconds of
every process, the ratio to the warehouse's, the wall time, the CPU of each phase, the
driver's and the executors' CPU (per worker on the cluster), the peak memory, the load, and
whether every per-topic value equals the warehouse's. ``--data-l`` names L's directory
(default /work/bench-data/L); ``--conf KEY=VALUE`` is given to every Spark session (to
compare settings: ``--conf spark.driver.extraJavaOptions=`` runs the JVM with none of
evalwh's local defaults).

One case: python bench/spark.py [--data /work/bench-data/L] [--master local[2]|cluster]
                             [--engines spark,spark-evalwh,spark-parquet,floor,warehouse,spark-start]
                             [--measures P@10,AP,nDCG@10,bpref,A_p@10] [--check] [--nice 10]
                             [--conf KEY=VALUE]

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
* ``spark-start``: Spark's fixed cost alone: the session started and the qrels read and
  checked (its first, small jobs on a cold JVM);
* ``floor``: Spark's floor on these cores: a plain job that reads the same run files and
  ranks each topic's lines with one window (no checks, no qrels, no measures);
* ``warehouse``: ``Warehouse.ingest_qrels`` and ``ingest_runs`` into a fresh DuckDB file, then
  ``Warehouse.evaluate(per_query=True)``.

Peak memory is the largest sum of resident set sizes of the child and every process under it
(for Spark: the Python driver, the JVM and its Python workers), sampled every 0.1 s from
/proc. The CPU seconds are every process's: the child's tree (the driver: Python and its JVM,
in local mode the executors' threads and Python workers too) and, with ``--master cluster``,
the cluster's master, workers and executors, printed apart (``cpu driver``, ``cpu executors``).
Every JVM thread's CPU is sampled too and summed by kind (``jvm JIT (C2)``, ``jvm JIT
(C1)``, ``jvm GC``, ``jvm tasks``, ``jvm driver calls`` (py4j: planning, collecting), ``jvm main``
(the JVM's start), other threads): where Spark's own CPU goes. The machine's load average is printed beside the figures: on a shared machine the wall times
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
ENGINES = ("spark", "spark-evalwh", "spark-parquet", "floor", "warehouse", "spark-start")


def _progress(times: dict[str, float]) -> None:
    """Each phase on stderr as it ends, so a long run shows how far it got."""
    key = next(reversed(times))
    print(f"{key}: {times[key]:.1f} s", file=sys.stderr, flush=True)


def _files(data: Path) -> tuple[Path, str]:
    """The qrels file and the run files' glob of a collection directory."""
    if data.name == "trec8_adhoc":
        return data / "trec8.qrels", str(data / "runs" / "input.*.gz")
    return data / "qrels.txt", str(data / "runs" / "*")


def _session(master: str, lean_jvm: bool = True):  # type: ignore[no-untyped-def]
    """evalwh's own session (quiet, shuffle partitions for the cores), as evalwh spark starts it
    (``lean_jvm``: a local JVM's options, chosen as evalwh spark eval chooses them)."""
    from evalwh.spark.session import start

    config = {"spark.ui.enabled": "false", "spark.driver.memory": "4g"}
    if master.startswith("spark://"):
        # (the executors' Python workers, evalwh's reader: this interpreter, where evalwh is)
        config.update({"spark.driver.memory": "1g", "spark.executor.memory": "1500m", "spark.pyspark.python": sys.executable})
    config.update(json.loads(os.environ.get("EVALWH_BENCH_CONF", "{}")))  # (--conf)
    session = start(master, app_name="evalwh-bench", config=config, lean_jvm=lean_jvm)
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


def child_start(data: Path, master: str) -> dict[str, float]:
    """Spark's fixed cost: the session started, then the qrels read and checked (small first jobs)."""
    from evalwh.spark.files import load_qrels

    times: dict[str, float] = {}
    start = time.perf_counter()
    session = _session(master)
    times["startup"] = time.perf_counter() - start
    _progress(times)
    step = time.perf_counter()
    judgments = load_qrels(session, str(_files(data)[0]))
    times["qrels"] = time.perf_counter() - step
    _progress(times)
    times["runs (read, check, rank)"] = times["evaluate"] = 0.0
    times["total"] = time.perf_counter() - start
    times["rows"] = times["lines"] = 0.0
    times["judgments"] = float(judgments)
    session.stop()
    return times


def child_spark(data: Path, master: str, measures: list[str], reader: str = "spark") -> dict[str, float]:
    """evalwh spark eval's work on text files: Spark SQL's reader, or evalwh's on the executors."""
    from evalwh.spark import evaluate
    from evalwh.spark.files import load_qrels, load_runs

    times: dict[str, float] = {}
    start = time.perf_counter()
    from evalwh.spark.session import lean_for

    session = _session(master, lean_for(reader))  # (as evalwh spark eval --reader chooses)
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
    from evalwh.spark import evaluate, export_rows, register_export
    from evalwh.spark.session import lean_for

    times: dict[str, float] = {}
    start = time.perf_counter()
    session = _session(master, lean_for("spark", export_rows(_export(data))))  # (as spark eval --runs-parquet)
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
            _progress(times)
            step = time.perf_counter()
            qrels, runs = _files(data)
            wh.ingest_qrels(qrels, collection="L")
            times["qrels"] = time.perf_counter() - step
            _progress(times)
            step = time.perf_counter()
            results = wh.ingest_runs(sorted(Path(runs).parent.glob(Path(runs).name)), collection="L")
            times["runs (read, check, rank)"] = time.perf_counter() - step
            _progress(times)
            step = time.perf_counter()
            frame = wh.evaluate(measures, collection="L", per_query=True)
            times["evaluate"] = time.perf_counter() - step
            _progress(times)
    times["total"] = time.perf_counter() - start
    _save(frame, "warehouse")
    times["rows"] = float(len(frame))
    times["lines"] = float(sum(r.lines for r in results))
    return times


_TICKS = os.sysconf("SC_CLK_TCK")


# A JVM's threads by what they do (their names in /proc), for where a JVM's CPU goes.
_THREAD_KINDS = (
    ("C2 Compiler", "JIT (C2)"), ("C1 Compiler", "JIT (C1)"), ("GC Thread", "GC"), ("G1 ", "GC"),
    ("VM Thread", "GC"), ("Executor task", "tasks"), ("Thread-", "driver calls (py4j: planning, collecting)"),
    ("java", "main (the JVM's start)"),
)


def _thread_kind(name: str) -> str:
    return next((kind for prefix, kind in _THREAD_KINDS if name.startswith(prefix)), "other JVM threads")


def _jvm_threads(pid: int, threads: dict[tuple[int, int], tuple[str, float]]) -> None:
    """Each thread of JVM ``pid``: its kind and CPU seconds so far."""
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/stat") as handle:
                text = handle.read()
        except (FileNotFoundError, ProcessLookupError):
            continue
        name = text[text.index("(") + 1:text.rindex(")")]
        fields = text.rsplit(")", 1)[1].split()
        threads[(pid, int(task))] = (_thread_kind(name), (int(fields[11]) + int(fields[12])) / _TICKS)


def _tree_rss(pid: int, cpu: dict[int, float] | None = None, threads: dict | None = None) -> int:  # type: ignore[type-arg]
    """Resident bytes of ``pid`` and all its descendants, from /proc.

    With ``cpu``, each process's CPU seconds so far (user + system) are recorded in it by pid;
    with ``threads``, each JVM thread's (:func:`_jvm_threads`).
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
                    text = handle.read()
                fields = text.rsplit(")", 1)[1].split()
                cpu[current] = (int(fields[11]) + int(fields[12])) / _TICKS
                if threads is not None and text[text.index("(") + 1:text.rindex(")")] == "java":
                    _jvm_threads(current, threads)
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
    per_daemon: dict[int, dict[int, float]] = {}  # a cluster process's tree (a worker: its executors)
    threads: dict[tuple[int, int], tuple[str, float]] = {}  # every JVM thread: kind, CPU seconds
    phases: dict[str, float] = {}

    def phase_cpu() -> None:
        # each phase's line on the child's stderr (_progress): the CPU seconds so far, per phase
        used = 0.0
        for line in process.stderr:  # type: ignore[union-attr]
            print(line, end="", file=sys.stderr, flush=True)
            if ": " in line and line.rstrip().endswith(" s"):
                now = sum(cpu.values()) + sum(sum(d.values()) for d in list(per_daemon.values())) - sum(before.values())
                phases[f"cpu {line.split(': ')[0]}"] = now - used
                used = now

    reader = threading.Thread(target=phase_cpu, daemon=True)
    reader.start()

    driver: dict[int, float] = {}

    def sample() -> None:
        nonlocal peak
        ticks = 0
        while not done.is_set():
            own: dict[int, float] = {}
            ticks += 1
            jvm = threads if ticks % 10 == 1 else None  # (the JVMs' threads every second: cheaper)
            rss = _tree_rss(process.pid, own, jvm)
            driver.update(own)
            cpu.update(own)
            for pid in cluster:
                rss += _tree_rss(pid, per_daemon.setdefault(pid, {}), jvm)
            peak = max(peak, rss)
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
    for tree in per_daemon.values():
        cpu.update(tree)
    result["cpu_seconds"] = sum(cpu.values()) - sum(before.values())
    # the driver's share (its Python and JVM); the rest, on a cluster, is the master's, the
    # workers' and the executors' (JVMs and Python workers)
    result["cpu driver"] = sum(driver.values())
    result["cpu executors (and cluster daemons)"] = result["cpu_seconds"] - result["cpu driver"]
    for number, pid in enumerate(cluster):
        # the master (first), then each worker with the executor it started and its Python workers
        own = {p: c - before.get(p, 0.0) for p, c in per_daemon.get(pid, {}).items()}
        result["cpu cluster master" if number == 0 else f"cpu worker {number} (its executor)"] = sum(own.values())
    # where the JVMs' CPU went, by kind of thread (the JIT compilers, the collector, the tasks)
    for kind, seconds in threads.values():
        result[f"jvm {kind}"] = result.get(f"jvm {kind}", 0.0) + seconds
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
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a Spark setting for every Spark engine's session (repeatable)")
    parser.add_argument("--check", action="store_true", help="compare every engine's per-topic values with the warehouse's")
    parser.add_argument("--round", choices=sorted(ROUNDS), help="every case of a round, one after another (see the top)")
    parser.add_argument("--data-l", type=Path, default=Path("/work/bench-data/L"), help="L's directory, for --round")
    parser.add_argument("--out", type=Path, help="--round: write the round's summary (Markdown) here too")
    parser.add_argument("--results", help=argparse.SUPPRESS)  # (a round's case: its figures as JSON)
    args = parser.parse_args()
    measures = args.measures.split(",")
    if args.round:
        run_round(args)
        return
    if args.conf and not args.child:
        os.environ["EVALWH_BENCH_CONF"] = json.dumps(dict(c.split("=", 1) for c in args.conf))
    if str(args.data) == "trec8":
        args.data = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec8_adhoc"
    if args.child in ("spark", "spark-evalwh"):
        reader = "evalwh" if args.child == "spark-evalwh" else "spark"
        print(json.dumps(child_spark(args.data, args.master, measures, reader)))
        return
    if args.child == "spark-parquet":
        print(json.dumps(child_parquet(args.data, args.master, measures)))
        return
    if args.child == "spark-start":
        print(json.dumps(child_start(args.data, args.master)))
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


# The JVM options of a local session (evalwh.spark.session.LOCAL_JAVA_OPTIONS), given to a
# cluster's driver and executors in the round's "lean" cluster case.
LEAN = ("spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
        "spark.executor.extraJavaOptions=-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
# Spark's own JVM defaults (tiered C1 and C2 compilers, G1) on a local master, instead of
# evalwh's LOCAL_JAVA_OPTIONS: on L from Parquet the second JIT tier may pay (docs/spark.md).
SPARK_JVM = ("spark.driver.extraJavaOptions=",)
# A round's cases: (collection, master, engines, settings), each a run of this script with --check.
ROUNDS = {
    "full": [
        ("trec8", "local[2]", "warehouse,spark-evalwh,spark,spark-parquet", ()),
        ("L", "local[2]", "warehouse,spark-evalwh,spark-parquet,spark", ()),
        ("L", "local[2]", "spark-parquet,spark-evalwh", SPARK_JVM),
        ("trec8", "cluster", "warehouse,spark-evalwh,spark,spark-parquet", ()),
        ("trec8", "cluster", "spark-evalwh,spark-parquet", LEAN),
        ("L", "cluster", "warehouse,spark-evalwh,spark-parquet,spark", ()),
    ],
    "short": [
        ("trec8", "local[2]", "warehouse,spark-evalwh", ()),
        ("L", "local[2]", "warehouse,spark-evalwh,spark-parquet", ()),
        ("L", "local[2]", "spark-parquet", SPARK_JVM),
    ],
}


def run_round(args: argparse.Namespace) -> None:
    """Every case of ``args.round`` in turn, then one summary table (CPU of every process, wall)."""
    began = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    cases = []
    with tempfile.TemporaryDirectory(prefix="evalwh-spark-round-") as scratch:
        for number, (data, master, engines, settings) in enumerate(ROUNDS[args.round]):
            where = str(args.data_l) if data == "L" else data
            out = Path(scratch) / f"{number}.json"
            command = [sys.executable, __file__, "--data", where, "--master", master, "--engines", engines,
                       "--measures", args.measures, "--nice", str(args.nice), "--check", "--results", str(out),
                       *[f"--conf={c}" for c in (*args.conf, *settings)]]
            label = master + {(): "", LEAN: " (lean JVMs)", SPARK_JVM: " (Spark's default JVM)"}[settings]
            print(f"\n## {data}, {label}: {engines} (load {os.getloadavg()[0]:.1f}, "
                  f"{time.strftime('%H:%M:%S UTC', time.gmtime())})", flush=True)
            step = time.perf_counter()
            done = subprocess.run(command, check=False)
            case = json.loads(out.read_text()) if out.is_file() else {"results": {}}
            case.update(data=data, master=label, wall=time.perf_counter() - step,
                        exit=done.returncode)
            cases.append(case)
    summary = _summary(args, began, cases)
    print(summary)
    if args.out:
        args.out.write_text(summary)


def _summary(args: argparse.Namespace, began: str, cases: list[dict]) -> str:  # type: ignore[type-arg]
    """The round as Markdown: per case and engine, CPU of every process, wall, ratio, equality."""
    lines = [
        f"Round `{args.round}` of bench/spark.py, {began} to {time.strftime('%H:%M UTC', time.gmtime())}; "
        f"{os.cpu_count()} cores; measures {args.measures}"
        + (f"; settings {', '.join(args.conf)}" if args.conf else ""),
        "",
        "| collection | master | engine | CPU s (every process) | x warehouse | wall s | CPU s: start-up / qrels "
        "/ runs / evaluation | driver / executors CPU s | peak GiB | load before-after | values |",
        "|---|---|---|---:|---:|---:|---|---|---:|---|---|",
    ]
    warehouse: dict[str, float] = {}  # (a case without the warehouse: the collection's last figure)
    for case in cases:
        results = case["results"]
        base = results.get("warehouse", {}).get("cpu_seconds") or warehouse.get(case["data"])
        if base:
            warehouse[case["data"]] = base
        if not results:
            lines.append(f"| {case['data']} | {case['master']} | (case failed, exit {case['exit']}) | | | | | | | | |")
        for engine, r in results.items():
            if "failed" in r:
                lines.append(f"| {case['data']} | {case['master']} | {engine} | failed: {r['failed']} | | | | | | | |")
                continue
            phases = " / ".join(f"{r.get(f'cpu {p}', 0.0):.1f}" for p in ("startup", "qrels", "runs (read, check, rank)", "evaluate"))
            ratio = f"{r['cpu_seconds'] / base:.1f}x" if base and engine != "warehouse" else ""
            split = f"{r['cpu driver']:.1f} / {r['cpu executors (and cluster daemons)']:.1f}"
            workers = [f"{r[k]:.1f}" for k in sorted(r) if k.startswith("cpu worker")]
            if workers:
                split += f" (workers with their executors: {', '.join(workers)})"
            equal = {True: "all equal", False: "NOT equal"}.get(r.get("equal"), "")
            lines.append(
                f"| {case['data']} | {case['master']} | {engine} | {r['cpu_seconds']:.1f} | {ratio} | {r['total']:.1f} | "
                f"{phases} | {split} | {r['peak_memory_gib']:.2f} | {r['load_before']:.1f}-{r['load_after']:.1f} | {equal} |"
            )
    return "\n".join(lines) + "\n"


def _run_all(args: argparse.Namespace, measures: list[str], cluster: list[int] = ()) -> None:  # type: ignore[assignment]
    results = {}
    values = tempfile.mkdtemp(prefix="evalwh-bench-values-") if args.check else None
    if values:
        os.environ["EVALWH_BENCH_VALUES"] = values
    if "spark-parquet" in args.engines.split(","):
        _export(args.data)  # (made once, outside the timing)
    for engine in args.engines.split(","):
        load = os.getloadavg()
        try:
            results[engine] = measure(engine, args, cluster if engine != "warehouse" else ())
        except SystemExit as failed:  # (one engine's failure does not end a round)
            print(failed, file=sys.stderr, flush=True)
            results[engine] = {"failed": str(failed)}
        results[engine]["load_before"] = load[0]
        results[engine]["load_after"] = os.getloadavg()[0]
        print(engine, json.dumps(results[engine], indent=1), flush=True)
    phases = ["startup", "qrels", "runs (read, check, rank)", "evaluate"]
    jvm = sorted({k for r in results.values() for k in r if k.startswith("jvm ")})
    keys = [*phases, "total", "cpu_seconds", *[f"cpu {p}" for p in phases], *jvm, "peak_memory_gib", "load_before", "load_after"]
    print(f"measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    lines = max((r.get("lines", 0.0) for r in results.values() if "runs (read, check, rank)" in r), default=0.0)
    print(f"\n{args.data}: {lines:,.0f} run lines, measures {measures}, "
          f"{os.cpu_count()} cores; Spark master {args.master}")
    daemons = sorted({k for r in results.values() for k in r if k.startswith(("cpu cluster", "cpu worker"))})
    keys[keys.index("peak_memory_gib"):keys.index("peak_memory_gib")] = ["cpu driver", "cpu executors (and cluster daemons)", *daemons]
    print(f"| {'':36} | " + " | ".join(f"{e:>13}" for e in results) + " |")
    for key in keys:
        print(f"| {key:36} | " + " | ".join(f"{results[e].get(key, 0.0):13.2f}" for e in results) + " |")
    if "cpu_seconds" in results.get("warehouse", {}):
        base = results["warehouse"]["cpu_seconds"]
        print("CPU against the warehouse's: " + ", ".join(
            f"{e} {results[e]['cpu_seconds'] / base:.1f}x" for e in results if e != "warehouse" and "cpu_seconds" in results[e]))
    if values and "warehouse" in results and "failed" not in results["warehouse"]:
        for engine, same in _check(Path(values), results).items():
            results[engine]["equal"] = same
    if args.results:  # (a round's case: its figures for the round's summary)
        Path(args.results).write_text(json.dumps({"data": str(args.data), "master": args.master, "results": results}))


def _check(folder: Path, results: dict) -> dict[str, bool]:  # type: ignore[type-arg]
    """Every engine's per-topic values against the warehouse's: the same keys, equal to 1e-12."""
    import numpy as np
    import pandas as pd

    verdicts = {}
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
        verdicts[engine] = bool(same)
    return verdicts


if __name__ == "__main__":
    main()
