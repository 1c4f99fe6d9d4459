"""Benchmark run ingest: TREC-8 (if ../shared is there) and a generated collection.

Usage: python bench/ingest.py [--cases trec8,generated] [--repeat 3] [--db file|memory]
                              [--runs 100] [--topics 250] [--docs 1000] [--out bench/out]

Each measurement runs in a fresh Python process (``--child``), so the peak memory printed is
that of one ingest: wall seconds of ``Warehouse.ingest_runs`` (the commit included), CPU
seconds and peak RSS of the process (``resource.getrusage``). The generated collection
(``bench/generate.py``, seeded) is written once under ``--out`` and reused. With ``--db file``
the warehouse is a fresh DuckDB file in a temporary directory, as a user's would be; with
``memory`` it is ``:memory:`` (no compression, no disk writes).

The machine is shared and its speed varies; take the minimum over ``--repeat`` runs as the
figure, and the median as a check.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TREC8 = HERE.parents[1] / "shared" / "data" / "trec8_adhoc"


def child(db: str, qrels: str, files: list[str]) -> None:
    """Ingest in this process and print one JSON line of measurements."""
    from evalwh.warehouse import Warehouse

    with tempfile.TemporaryDirectory() as tmp:
        target = ":memory:" if db == "memory" else str(Path(tmp) / "bench.duckdb")
        with Warehouse(target) as wh:
            start = time.perf_counter()
            results = wh.ingest_runs([Path(f) for f in files], collection="bench")
            runs_seconds = time.perf_counter() - start
            start = time.perf_counter()
            wh.ingest_qrels(Path(qrels), collection="bench")
            qrels_seconds = time.perf_counter() - start
        size = Path(target).stat().st_size if db == "file" else 0
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(
        json.dumps(
            {
                "runs": len(results),
                "lines": sum(r.lines for r in results),
                "seconds": runs_seconds,
                "qrels_seconds": qrels_seconds,
                "cpu": usage.ru_utime + usage.ru_stime,
                "peak_mib": usage.ru_maxrss / 1024,
                "file_mib": size / 2**20,
            }
        )
    )


def measure(db: str, qrels: Path, files: list[Path], repeat: int) -> list[dict[str, float]]:
    """Run ``repeat`` child processes and return their measurements."""
    out = []
    for _ in range(repeat):
        args = [sys.executable, __file__, "--child", db, str(qrels), *map(str, files)]
        done = subprocess.run(args, check=True, capture_output=True, text=True)
        out.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return out


def report(name: str, db: str, runs: list[dict[str, float]]) -> None:
    """Print one line: minimum and median seconds, throughput, CPU, memory."""
    best = min(runs, key=lambda r: r["seconds"])
    median = statistics.median(r["seconds"] for r in runs)
    print(
        f"{name:<12} {db:<6} {int(best['runs']):>4} runs {int(best['lines']):>11,} lines  "
        f"{best['seconds']:6.2f} s (median {median:6.2f} s, "
        f"{best['lines'] / best['seconds'] / 1e6:4.1f} M lines/s)  "
        f"cpu {best['cpu']:6.1f} s  peak {best['peak_mib']:6.0f} MiB"
        + (f"  file {best['file_mib']:4.0f} MiB" if db == "file" else "")
        + f"  qrels {best['qrels_seconds']:.2f} s",
        flush=True,
    )


def main() -> None:
    """Command line entry point."""
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], sys.argv[4:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="trec8,generated")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--db", choices=["file", "memory"], default="file")
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--topics", type=int, default=250)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=HERE / "out")
    args = parser.parse_args()

    print(f"machine: {os.cpu_count()} CPUs; python {sys.version.split()[0]}", flush=True)
    cases = args.cases.split(",")
    if "trec8" in cases:
        if TREC8.exists():
            files = sorted((TREC8 / "runs").glob("input.*.gz"))
            report("TREC-8", args.db, measure(args.db, TREC8 / "trec8.qrels", files, args.repeat))
        else:
            print(f"TREC-8: {TREC8} is not there, skipped")
    if "generated" in cases:
        sys.path.insert(0, str(HERE))
        from generate import generate

        name = f"gen-{args.runs}x{args.topics}x{args.docs}-s{args.seed}"
        directory = args.out / name
        if not (directory / "qrels.txt").exists():
            start = time.perf_counter()
            generate(directory, runs=args.runs, topics=args.topics, docs=args.docs, seed=args.seed)
            print(f"generated {directory} in {time.perf_counter() - start:.0f} s", flush=True)
        files = sorted((directory / "runs").glob("run*.txt"))
        report(
            f"{args.runs}x{args.topics}x{args.docs}",
            args.db,
            measure(args.db, directory / "qrels.txt", files, args.repeat),
        )


if __name__ == "__main__":
    main()
