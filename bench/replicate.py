"""Make a large collection from a generated one: each run written again under other tags.

Usage: python bench/replicate.py SOURCE_DIR OUT_DIR --copies 10 [--sources N]

``SOURCE_DIR`` is what ``bench/generate.py`` wrote (plain ``qrels.txt`` and ``runs/run*.txt``).
``OUT_DIR`` gets the same qrels and, for every run ``runNNN``, the run itself and ``copies - 1``
more files whose lines are the run's lines with the tag ``runNNNcK`` (K = 1 ...): distinct runs
to evalwh (the tag names the run), each with the ranking, scores and ties of its source. The
source's files are hard links where the file system allows, so they take no disk twice.
``--sources N`` takes only the first N runs of the source (10 of XL's x 10 copies: 500 M lines).

Used for the billion-line size of ``docs/scale.md``: ``bench/generate.py`` makes XL's 20 runs
x 5,000 topics x 1,000 (100 M lines) and ten copies make 200 runs, 1,000 M lines, in the
time it takes to write them (generating 200 runs takes about an hour on two cores). The
(topic, document) pairs and the judgments are XL's, as they would be for 200 runs drawn from
the same topics' universes; what grows is the number of lines, runs and ranked lists.
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path


def place(source: Path, target: Path) -> None:
    """``target`` as a hard link to ``source``, or a copy where links are not possible."""
    target.unlink(missing_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def replicate(source: Path, out: Path, copies: int, sources: int | None = None) -> int:
    """Write the collection; returns the number of run files in ``out``."""
    (out / "runs").mkdir(parents=True, exist_ok=True)
    place(source / "qrels.txt", out / "qrels.txt")
    written = 0
    for run in sorted((source / "runs").glob("run*.txt"))[:sources]:
        place(run, out / "runs" / run.name)
        written += 1
        text = run.read_bytes()
        tag = run.stem.encode()
        old = b" " + tag + b"\n"
        if text.count(old) != text.count(b"\n"):
            raise SystemExit(f"{run}: not every line ends with the tag {tag.decode()}")
        for copy in range(1, copies):
            name = f"{run.stem}c{copy}"
            (out / "runs" / f"{name}.txt").write_bytes(text.replace(old, b" " + name.encode() + b"\n"))
            written += 1
    return written


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--sources", type=int, default=None, help="the first N source runs only")
    args = parser.parse_args()
    start = time.perf_counter()
    files = replicate(args.source, args.out, args.copies, args.sources)
    print(f"wrote {files} run files in {args.out} in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
