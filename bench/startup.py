"""Benchmark: one call's cost (issue #54): evalwh trec_eval / eval --qrels / --help beside trec_eval,
and the ir_measures provider beside pytrec_eval.

Usage:
    python bench/startup.py calls --qrels ../shared/data/trec8_adhoc/trec8.qrels \\
        --run RUN [--trec-eval /path/to/trec_eval] [--repeat 7] [--also /other/venv/bin/evalwh]
    python bench/startup.py provider --trec8 ../shared/data/trec8_adhoc [--repeat 3]

``calls``: each command runs in a fresh process, ``--repeat`` times; the figures are the
child's CPU time (user + system, from ``wait4``), median and minimum, and its peak resident
memory, from one more call through ``/usr/bin/time -f %M`` (a child's ``ru_maxrss`` counts the
memory of the process that started it, about 14 MB of this script, before its ``exec``). The trec_eval binary (built from github.com/usnistgov/trec_eval; not part
of evalwh) runs in the same loop, so the machine's load weighs on both alike. Python's own
start (``python -c pass``) is listed as the floor under any evalwh call, and ``import numpy``
beside it (the quick paths do without it). ``--also`` measures the three targets' commands
through another installation's ``evalwh`` too (for instance a wheel installed in a venv of its
own, without the editable install's import hook), with that interpreter's own floor.

``provider``: ``ir_measures.providers.registry[NAME].calc_aggregate`` for every run, in this
process, the runs read into DataFrames beforehand (the same frames for every provider): 8
generated runs of 30 topics x 1,000 documents and the 129 TREC-8 runs, with 9 measures.

Both print a Markdown table and the load (``os.getloadavg``) before and after.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _child(argv: list[str], env: dict[str, str], ok: tuple[int, ...] = (0,)) -> tuple[float, float]:
    """CPU seconds (user + system) and peak RSS in MB of one run of ``argv`` (exit code in ``ok``)."""
    with open(os.devnull, "wb") as sink:
        process = subprocess.Popen(argv, stdout=sink, stderr=sink, env=env)
        _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in ok:
        raise SystemExit(f"{' '.join(argv)} failed with {process.returncode}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _peak(argv: list[str], env: dict[str, str]) -> str:
    """Peak resident memory of one run of ``argv`` in MB, by ``/usr/bin/time`` ("?" without it)."""
    if not os.path.exists("/usr/bin/time"):
        return "?"
    with tempfile.NamedTemporaryFile("r") as out:
        _child(["/usr/bin/time", "-f", "%M", "-o", out.name, *argv], env, (0, 2))
        return f"{int(out.read().split()[-1]) / 1024:.0f}"


def calls(args: argparse.Namespace) -> None:
    env = dict(os.environ)
    # an installed package has its bytecode compiled once; a checkout run with
    # PYTHONDONTWRITEBYTECODE=1 compiles evalwh's modules in every process
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.setdefault("PYTHONPYCACHEPREFIX", "/tmp/evalwh-bench-pycache")
    python = sys.executable
    evalwh = shutil.which("evalwh", path=str(Path(python).parent)) or "evalwh"
    qrels, run = str(args.qrels), str(args.run)
    commands: list[tuple[str, list[str]]] = []
    if args.trec_eval:
        commands.append(("trec_eval QRELS RUN (the C binary)", [args.trec_eval, qrels, run]))
        commands.append(("trec_eval -q QRELS RUN (the C binary)", [args.trec_eval, "-q", qrels, run]))
    targets = {
        "evalwh trec_eval QRELS RUN": 0.25,
        "evalwh eval --qrels QRELS RUN": 0.3,
        "evalwh --help": 0.1,
    }
    commands += [
        ("evalwh trec_eval QRELS RUN", [evalwh, "trec_eval", qrels, run]),
        ("evalwh trec_eval -q QRELS RUN", [evalwh, "trec_eval", "-q", qrels, run]),
        ("python -m evalwh trec_eval QRELS RUN", [python, "-m", "evalwh", "trec_eval", qrels, run]),
        ("evalwh eval --qrels QRELS RUN", [evalwh, "eval", "--qrels", qrels, run]),
        ("python -m evalwh eval --qrels QRELS RUN", [python, "-m", "evalwh", "eval", "--qrels", qrels, run]),
        ("evalwh --help", [evalwh, "--help"]),
        ("python -m evalwh --help", [python, "-m", "evalwh", "--help"]),
        ("evalwh evl (a usage error, exit 2)", [evalwh, "evl"]),
        ("(floor) python -c pass", [python, "-c", "pass"]),
        ("(floor) python -c 'import numpy'", [python, "-c", "import numpy"]),
    ]
    for other in args.also or ():
        where = f" [{other}]"
        other_python = str(Path(other).parent / "python")
        commands += [
            ("evalwh trec_eval QRELS RUN" + where, [other, "trec_eval", qrels, run]),
            ("evalwh eval --qrels QRELS RUN" + where, [other, "eval", "--qrels", qrels, run]),
            ("evalwh --help" + where, [other, "--help"]),
            ("(floor) python -c pass" + where, [other_python, "-c", "pass"]),
        ]
        targets.update({name + where: targets[name] for name in list(targets)})
    for _, argv in commands:  # once, to compile the bytecode and warm the page cache
        _child(argv, env, (0, 2))
    peak = {name: _peak(argv, env) for name, argv in commands}
    load = os.getloadavg()
    figures: dict[str, list[float]] = {name: [] for name, _ in commands}
    for _ in range(args.repeat):  # interleaved: the load weighs on every command alike
        for name, argv in commands:
            figures[name].append(_child(argv, env, (0, 2))[0])
    after = os.getloadavg()
    print(f"{args.repeat} calls each, interleaved; load average before {load[0]:.2f}, after {after[0]:.2f}")
    print(f"(CPU: {os.cpu_count()} cores; {Path(run).name}: {Path(run).stat().st_size / 1e6:.1f} MB)\n")
    print("| command | CPU s (median) | CPU s (min) | peak RSS MB | target CPU s |")
    print("|---|---:|---:|---:|---:|")
    for name, cpu in figures.items():
        target = f"{targets[name]:g}" if name in targets else ""
        print(
            f"| `{name}` | {statistics.median(cpu):.3f} | {min(cpu):.3f} "
            f"| {peak[name]} | {target} |"
        )


MEASURES = ["AP", "nDCG@10", "P@10", "P@100", "R@100", "RR", "Rprec", "Bpref", "NumRelRet"]


def _generated(seed: int = 0) -> tuple[object, list[object]]:
    """8 runs of 30 topics x 1,000 documents (scores with ties), graded qrels of 200 per topic."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    qrels = []
    for topic in range(30):
        docs = rng.choice(5000, size=200, replace=False)
        qrels += [(str(topic), f"d{d}", int(rng.integers(0, 3))) for d in docs]
    runs = []
    for _ in range(8):
        rows = []
        for topic in range(30):
            docs = rng.choice(5000, size=1000, replace=False)
            scores = np.round(rng.normal(size=1000), 2)
            rows += [(str(topic), f"d{d}", float(s)) for d, s in zip(docs, scores, strict=True)]
        runs.append(pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]))
    return pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]), runs


def _trec8(folder: Path) -> tuple[object, list[object]]:
    import gzip

    import pandas as pd

    qrels = pd.read_csv(folder / "trec8.qrels", sep=" ", names=["query_id", "it", "doc_id", "relevance"],
                        dtype={"query_id": str})[["query_id", "doc_id", "relevance"]]  # fmt: skip
    runs = []
    for path in sorted((folder / "runs").glob("input.*.gz")):
        with gzip.open(path, "rt") as handle:
            rows = [line.split() for line in handle]
        runs.append(pd.DataFrame({"query_id": [r[0] for r in rows], "doc_id": [r[2] for r in rows],
                                  "score": [float(r[4]) for r in rows]}))  # fmt: skip
    return qrels, runs


def provider(args: argparse.Namespace) -> None:
    import ir_measures

    import evalwh.ir_measures  # noqa: F401  (registers the provider)

    measures = [ir_measures.parse_measure(m) for m in MEASURES]
    registry = ir_measures.providers.registry
    names = ["pytrec_eval", "evalwh", "evalwh_trec_eval10"]
    inputs = [("8 generated runs, 30 topics x 1,000", _generated())]
    if args.trec8:
        inputs.append(("129 TREC-8 runs, 50 topics x 1,000", _trec8(Path(args.trec8))))
    load = os.getloadavg()
    print("| input | provider | seconds (min of %d) | CPU s |" % args.repeat)
    print("|---|---|---:|---:|")
    for label, (qrels, runs) in inputs:
        for name in names:
            best, best_cpu = float("inf"), float("inf")
            for _ in range(args.repeat):
                start, cpu = time.perf_counter(), time.process_time()
                evaluator = registry[name].evaluator(measures, qrels)
                for run in runs:
                    evaluator.calc_aggregate(run)
                best = min(best, time.perf_counter() - start)
                best_cpu = min(best_cpu, time.process_time() - cpu)
            print(f"| {label} | `{name}` | {best:.2f} | {best_cpu:.2f} |")
    after = os.getloadavg()
    print(f"\nmeasures: {', '.join(MEASURES)}; load average before {load[0]:.2f}, after {after[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    one = sub.add_parser("calls")
    one.add_argument("--qrels", type=Path, required=True)
    one.add_argument("--run", type=Path, required=True)
    one.add_argument("--trec-eval", default=shutil.which("trec_eval"))
    one.add_argument("--repeat", type=int, default=7)
    one.add_argument("--also", action="append", help="another installation's evalwh script")
    two = sub.add_parser("provider")
    two.add_argument("--trec8", type=Path)
    two.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    calls(args) if args.what == "calls" else provider(args)


if __name__ == "__main__":
    main()
