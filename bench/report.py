"""Benchmark: the evaluation report for every run of a collection (TREC-8: 129 runs).

Usage: python bench/report.py WAREHOUSE.duckdb [COLLECTION] [OUTPUT.html]

Times build_report step by step (collection overview and unjudged share, the one
per-topic evaluation, the decision matrix over all pairs, the P@d bounds of the drawn pairs,
the figures) and the HTML rendering, and prints the machine's load average before and after,
since the shared machine is loaded by other work. The warehouse is opened read-only, so the
judged-rows cache must be current (any earlier `evalwh eval` on it makes it so).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from evalwh import Warehouse
from evalwh.present.report import ReportOptions, build_report, render_html


def main() -> None:
    path = sys.argv[1]
    collection = sys.argv[2] if len(sys.argv) > 2 else "trec8"
    output = Path(sys.argv[3] if len(sys.argv) > 3 else "report_bench.html")
    print(f"cores {os.cpu_count()}, load average before {os.getloadavg()}")
    started = time.perf_counter()
    with Warehouse(path, read_only=True) as wh:
        report = build_report(wh, collection, ReportOptions())
    built = time.perf_counter()
    html = render_html(report)
    output.write_text(html, encoding="utf-8")
    done = time.perf_counter()
    for step, seconds in report.timings.items():
        print(f"{step:>12}: {seconds:6.2f} s")
    print(f"{'build':>12}: {built - started:6.2f} s")
    print(f"{'render':>12}: {done - built:6.2f} s")
    print(f"{'total':>12}: {done - started:6.2f} s")
    print(f"{len(report.leaderboard)} runs, {report.proportions['pairs'].iloc[0]:.0f} pairs")
    print(f"{output} {len(html.encode()) / 1024:.0f} KiB")
    print(f"load average after {os.getloadavg()}")


if __name__ == "__main__":
    main()
