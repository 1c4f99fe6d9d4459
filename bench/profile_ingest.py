"""Where does a run ingest spend its time? Times every shipped SQL file, the scans and the commit.

Usage: python bench/profile_ingest.py RUN_FILES... [--db FILE] [--collection NAME] [--threads N]

Wraps ``Warehouse.run`` (every shipped ``.sql`` file goes through it) and
``evalwh.io.formats.scan`` (run in worker threads beside DuckDB, so their time overlaps the
SQL steps) and prints one line per step: calls, seconds. ``--db`` defaults to a fresh file in a
temporary directory, since writing to a file (compression, checkpoint) is part of the cost.

On a busy machine wall times mean little; ``--threads 1`` runs DuckDB in the calling thread, so
the CPU seconds printed per step are exact and comparable between versions.
"""

from __future__ import annotations

import argparse
import glob
import resource
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from evalwh.io import formats
from evalwh.warehouse import Warehouse


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="run files or glob patterns")
    parser.add_argument("--db", default=None, help="warehouse file (default: a temporary file)")
    parser.add_argument("--collection", default="bench")
    parser.add_argument(
        "--threads", type=int, default=None, help="DuckDB threads (default: all cores)"
    )
    args = parser.parse_args()
    files = sorted(p for pattern in args.files for p in glob.glob(pattern)) or args.files

    seconds: dict[str, float] = defaultdict(float)
    cpu: dict[str, float] = defaultdict(float)
    calls: dict[str, int] = defaultdict(int)
    lock = threading.Lock()

    original_run = Warehouse.run
    original_scan = formats.scan

    def timed_run(self: Warehouse, file: Any, params: Any = None) -> Any:
        start, start_cpu = time.perf_counter(), time.thread_time()
        try:
            return original_run(self, file, params)
        finally:
            seconds[f"sql {file.name}"] += time.perf_counter() - start
            cpu[f"sql {file.name}"] += time.thread_time() - start_cpu
            calls[f"sql {file.name}"] += 1

    def timed_scan(path: Path, copy_to: Path | None = None) -> formats.Scan:
        start, start_cpu = time.perf_counter(), time.thread_time()
        try:
            return original_scan(path, copy_to)
        finally:
            with lock:
                seconds["scan (threads, overlaps)"] += time.perf_counter() - start
                cpu["scan (threads, overlaps)"] += time.thread_time() - start_cpu
                calls["scan (threads, overlaps)"] += 1

    Warehouse.run = timed_run  # type: ignore[method-assign]
    formats.scan = timed_scan  # type: ignore[assignment]

    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or str(Path(tmp) / "profile.duckdb")
        start = time.perf_counter()
        with Warehouse(db) as wh:
            if args.threads:
                wh.con.execute("SET threads = $n", {"n": args.threads})
            opened = time.perf_counter()
            results = wh.ingest_runs([Path(f) for f in files], collection=args.collection)
            ingested = time.perf_counter()
            wh.con.execute("CHECKPOINT")
            checkpointed = time.perf_counter()
        closed = time.perf_counter()
        size = Path(db).stat().st_size if Path(db).exists() else 0

    lines = sum(r.lines for r in results)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(
        f"{len(results)} runs, {lines:,} lines into {'a temporary file' if args.db is None else db}"
    )
    for step in sorted(seconds, key=lambda s: -seconds[s]):
        print(f"  {step:<40} {calls[step]:>4} calls {seconds[step]:8.2f} s  cpu {cpu[step]:7.2f} s")
    print(f"  {'open + migrate':<40} {'':>10} {opened - start:8.2f} s")
    print(f"  {'ingest_runs (incl. commit)':<40} {'':>10} {ingested - opened:8.2f} s")
    print(f"  {'checkpoint':<40} {'':>10} {checkpointed - ingested:8.2f} s")
    print(f"  {'close':<40} {'':>10} {closed - checkpointed:8.2f} s")
    print(
        f"total {closed - start:.2f} s wall, {usage.ru_utime + usage.ru_stime:.2f} s CPU, "
        f"peak RSS {usage.ru_maxrss / 1024:.0f} MiB, file {size / 2**20:.0f} MiB"
    )


if __name__ == "__main__":
    main()
