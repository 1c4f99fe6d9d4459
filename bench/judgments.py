"""Benchmark: `evalwh agreement` on LLMJudge and `evalwh sensitivity` on TREC-8, from the CLI.

Usage: python bench/judgments.py SHARED_DATA [WORKDIR] [REPEATS]

SHARED_DATA is the folder holding ``llmjudge/`` and ``trec8_adhoc/``. The warehouses are built
in WORKDIR (a temporary folder by default) unless they are there already: LLMJudge's human
test labels and its 33 LLM label sets (one qrels set each), and TREC-8's 129 runs with the
full qrels (``full``) and the depth-10 qrels (``depth10``). Building is not timed.

Timed, each REPEATS times (3 by default), as a user runs them (a fresh ``evalwh`` process):

* ``evalwh agreement -c llmjudge --reference human --binary-at 2``: 33 sets against the
  reference (target: under 2 s);
* ``evalwh sensitivity -c trec8 --qrels-id full --qrels-id depth10`` with the four default
  measures and 1,000 bootstrap samples (target: under 10 s).

Prints the wall time of each run, the CPU time the child used, and the machine's load average
before and after (the machine may be shared: a load above the core count slows every figure).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from evalwh import Warehouse


def build(shared: Path, work: Path) -> tuple[Path, Path]:
    llm, trec8 = work / "llmjudge.duckdb", work / "trec8.duckdb"
    if not llm.exists():
        with Warehouse(llm) as wh:
            wh.ingest_qrels(shared / "llmjudge" / "human.test.qrels", collection="llmjudge", qrels_id="human")
            for path in sorted((shared / "llmjudge" / "judges").glob("*.txt")):
                wh.ingest_qrels(path, collection="llmjudge", qrels_id=path.stem)
    if not trec8.exists():
        root = shared / "trec8_adhoc"
        with Warehouse(trec8) as wh:
            wh.ingest_qrels(root / "trec8.qrels", collection="trec8", qrels_id="full")
            wh.ingest_qrels(root / "depth10" / "depth10.qrels", collection="trec8", qrels_id="depth10")
            wh.ingest_runs(sorted((root / "runs").glob("input.*.gz")), collection="trec8")
    return llm, trec8


def timed(args: list[str]) -> tuple[float, float]:
    """Wall and child CPU seconds of one ``evalwh`` command (its output is discarded)."""
    evalwh = str(Path(sys.executable).with_name("evalwh"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([evalwh, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    shared = Path(sys.argv[1])
    work = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(tempfile.mkdtemp(prefix="evalwh-bench-"))
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    work.mkdir(parents=True, exist_ok=True)
    llm, trec8 = build(shared, work)
    jobs = {
        "agreement, LLMJudge, 33 sets (target < 2 s)": [
            "agreement", "-c", "llmjudge", "--reference", "human", "--binary-at", "2", "--db", str(llm),
        ],
        "sensitivity, TREC-8, 129 runs x 4 measures x 2 sets, 1,000 bootstrap samples (target < 10 s)": [
            "sensitivity", "-c", "trec8", "--qrels-id", "full", "--qrels-id", "depth10", "--bootstrap", "1000",
            "--seed", "1", "--db", str(trec8),
        ],
    }  # fmt: skip
    print(f"cores: {os.cpu_count()}, load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    for name, args in jobs.items():
        runs = [timed(args) for _ in range(repeats)]
        walls = ", ".join(f"{wall:.2f}" for wall, _ in runs)
        cpus = ", ".join(f"{cpu:.2f}" for _, cpu in runs)
        print(f"{name}\n  wall s: {walls} (best {min(w for w, _ in runs):.2f})\n  cpu s:  {cpus}")
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
