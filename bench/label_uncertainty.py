"""Benchmark: `evalwh label-uncertainty` on TREC-8, depth-10 labels filled by a synthetic judge.

Usage: python bench/label_uncertainty.py SHARED_DATA [WORKDIR] [SAMPLES]

SHARED_DATA is the folder holding ``trec8_adhoc/``. The warehouse is built in WORKDIR (a
temporary folder by default) unless it is there already: the 129 runs, the depth-10 qrels
(``depth10``) and the full qrels passed through a synthetic judge (``noisy``: a relevant
document stays relevant with probability 0.8, a non-relevant one turns relevant with
probability 0.05, seed 7), the setting of docs/bounds.md. Building is not timed.

Timed, once each, as a user runs them (a fresh ``evalwh`` process), SAMPLES replicates (1000
by default), seed 1:

* ``-m P@10 -m nDCG@10``: the top 10 of every ranking (judged positions: the top 10 only);
* ``-m AP``: every judged position of every ranking (2.8 M on TREC-8);
* ``-m AP --pairs``: the same with the 8,256 swap probabilities.

Prints the wall time, the CPU time and the peak resident memory of the child, and the machine's
load average before and after (on a shared machine a load above the core count slows the wall
time; the CPU time is the steadier figure).
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


def build(shared: Path, work: Path) -> Path:
    path = work / "trec8_lu.duckdb"
    if path.exists():
        return path
    import numpy as np

    root = shared / "trec8_adhoc"
    with Warehouse(path) as wh:
        wh.ingest_qrels(root / "trec8.qrels", collection="trec8", qrels_id="full")
        wh.ingest_qrels(root / "depth10" / "depth10.qrels", collection="trec8", qrels_id="depth10")
        wh.ingest_runs(sorted((root / "runs").glob("input.*.gz")), collection="trec8")
        full = wh.sql("SELECT query_id, doc_id, relevance FROM qrels WHERE qrels_id = 'full'")
        u = np.random.default_rng(7).random(len(full))
        noisy = np.where(full.relevance >= 1, (u >= 0.2).astype(int), (u < 0.05).astype(int))
        wh.ingest_qrels(full.assign(relevance=noisy), collection="trec8", qrels_id="noisy")
    return path


def timed(args: list[str]) -> tuple[float, float, float]:
    """Wall seconds, child CPU seconds and the children's peak resident MB of one ``evalwh`` command."""
    evalwh = str(Path(sys.executable).with_name("evalwh"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([evalwh, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss / 1024  # (the largest of any child so far, in kB on Linux)


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    shared = Path(sys.argv[1])
    work = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(tempfile.mkdtemp())
    samples = sys.argv[3] if len(sys.argv) > 3 else "1000"
    db = build(shared, work)
    common = ["label-uncertainty", "--db", str(db), "-c", "trec8", "--reference", "depth10", "--machine", "noisy",
              "--samples", samples, "--seed", "1"]  # fmt: skip
    cases = {
        "P@10, nDCG@10": ["-m", "P@10", "-m", "nDCG@10"],
        "AP": ["-m", "AP"],
        "AP --pairs": ["-m", "AP", "--pairs"],
    }
    print(f"load average before: {os.getloadavg()}; {os.cpu_count()} cores; {samples} replicates")
    for name, extra in cases.items():
        wall, cpu, rss = timed(common + extra)
        print(f"{name:16s} wall {wall:7.2f} s   cpu {cpu:7.2f} s   peak rss {rss:7.0f} MB")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
