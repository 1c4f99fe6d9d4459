"""Benchmark: how evalwh's costs grow with the input, beside its peers, in one run.

The headline collections are the shared bench's (``../shared/bench/README.md``: L = 100 runs x
250 topics x 1,000, XL = 20 x 5,000 x 1,000) and TREC-8::

    python ../shared/bench/gen_collection.py --runs 100 --topics 250 --depth 1000 \\
        --docs-per-topic-pool 5000 --seed 7 --out DATA/L --workers 2
    python ../shared/bench/gen_collection.py --runs 20 --topics 5000 --depth 1000 \\
        --docs-per-topic-pool 3000 --seed 11 --out DATA/XL --workers 2
    python bench/scale.py L=DATA/L XL=DATA/XL \\
        trec8=../shared/data/trec8_adhoc/trec8.qrels:../shared/data/trec8_adhoc/runs \\
        [--peers pytrec_eval,ranx,ir_measures] [--no-peers XL]

The project's own generator makes the other shapes (1 M, 10 M lines, a billion):

Usage:
    python bench/generate.py DATA/m1  --runs 10  --topics 100  --max-grade 3    #   1 M lines
    python bench/generate.py DATA/m10 --runs 40  --topics 250  --max-grade 3    #  10 M
    python bench/generate.py DATA/l   --runs 100 --topics 250  --max-grade 3    #  25 M (L)
    python bench/generate.py DATA/xl  --runs 20  --topics 5000 --max-grade 3 --pool-depth 50  # 100 M (XL)
    python bench/scale.py m1=DATA/m1 m10=DATA/m10 l=DATA/l xl=DATA/xl \\
        trec8=../shared/data/trec8_adhoc/trec8.qrels:../shared/data/trec8_adhoc/runs \\
        [--rounds 1] [--workdir /tmp/evalwh-scale] [--json out.json] \\
        [--baseline OLD_SOURCE_TREE --baseline-sets l,trec8] [--trec-eval PATH] \\
        [--warehouse-only b1] [--peers pytrec_eval,ranx,ir_measures] [--no-peers xl]

The billion-line size (200 runs x 5,000 topics x 1,000) is XL's runs written ten times under
other tags (``bench/replicate.py``, 39 GB of text)::

    python bench/replicate.py DATA/xl DATA/b1 --copies 10
    python bench/scale.py b1=DATA/b1 --warehouse-only b1 --workdir BIG_DISK

``--warehouse-only`` runs only the warehouse's steps (ingest, first and warm eval) for the
named data sets: pytrec_eval on a billion lines takes over a quarter of an hour on this
machine, and its figure is about ten times XL's.

A data set is ``name=DIR`` (``DIR/qrels.txt`` and ``DIR/runs/``) or ``name=QRELS:RUNS_DIR``.
Every step is the command a user types, run as its own process: the figures include
interpreter start and imports, CPU is the process's user + system time and the peak is its
own ``ru_maxrss`` (from ``wait4``). Per data set:

* ``ingest qrels`` and ``ingest runs`` into a fresh warehouse file (wall, CPU, peak), and the
  warehouse's size after them;
* the first ``evalwh eval`` on it, and whether it wrote anything (the file's size and
  modification time before and after), then a warm one;
* the direct path ``evalwh eval --qrels QRELS RUN...`` (nothing stored);
* the warehouse end to end the fast way, ``evalwh eval --qrels QRELS RUN... --into W -c bench``
  on a fresh file (the qrels and runs stored as the two ingests store them, and evaluated
  from the warehouse, in one process), beside the three commands' sum;
* the peers, each in a process of its own (``bench/eval.py --child``: parse + evaluate, one
  run at a time): pytrec_eval (always: the ratios' reference), ranx and ir_measures (``--peers``;
  ``--no-peers SETS`` leaves them out on slow sets, ranx takes about 5x pytrec_eval's CPU), and
  the trec_eval binary (one process per run) where one is given (``--trec-eval``) or on the
  PATH; without one the bench says so in a line and goes on. trec_eval
  10 builds with ``make`` from its repository (github.com/usnistgov/trec_eval); its measures
  are the first six (``-m P.10,100 -m map -m map_cut.100 -m ndcg_cut.10 -m bpref``); it reads
  only plain files, so a gzipped run is decompressed to a file first, within the step.

With ``--baseline`` (a source tree of an earlier evalwh, e.g. ``git archive`` of a commit with
its C reader built in place) the warehouse steps, the direct path and ``--into`` also run on
that code, in the same rounds (which code goes first alternates from round to round), for the
data sets named by ``--baseline-sets``; ``--no-reference SETS`` leaves pytrec_eval out there
(the ratios to the direct path are what a before/after round compares); the tree is laid out as
installed first (:func:`as_installed`), so that its command line, SQL and schema are used.

Measures: P@10, P@100, AP, AP@100, nDCG@10, bpref, A_p@10, A_p@100 (pytrec_eval and ranx:
the first six; ir_measures all eight, ``Judged@k``). The table gives every step's wall, CPU and
peak, its ratio to pytrec_eval, and the warehouse end to end's (``--into``, and the three
commands') ratio to the direct path. Rounds are interleaved (each round runs every step of every data set) and the load
average of the machine is recorded beside every figure, as the machine may be shared.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MEASURES = ["P@10", "P@100", "AP", "AP@100", "nDCG@10", "bpref", "A_p@10", "A_p@100"]
PEERS = ("pytrec_eval", "ranx", "ir_measures")  # bench/eval.py --child TOOL
TREC_EVAL = ["-m", "P.10,100", "-m", "map", "-m", "map_cut.100", "-m", "ndcg_cut.10", "-m", "bpref"]
# the console script's own entry (evalwh.__main__:main), as a user runs `evalwh`
CLI = [sys.executable, "-c", "from evalwh.__main__ import main; main()"]
NEUTRAL = "/"  # the folder every step runs in (see run)


def run(command: list[str], code: Path | None = None) -> dict[str, float]:
    """Run one command; its wall time, CPU time, peak RSS and the load average around it.

    ``code``: a source tree of evalwh to import instead of the installed one.
    """
    env = dict(os.environ, PYTHONPATH=str(code)) if code is not None else None
    load = os.getloadavg()[0]
    start = time.perf_counter()
    # from a neutral folder: ``python -c`` puts the current folder first on sys.path, so in a
    # checkout it would import the checkout's evalwh instead of ``code``
    with subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=NEUTRAL
    ) as child:
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        error = child.stderr.read().decode() if child.stderr else ""
    wall = time.perf_counter() - start
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(command[:6])}... failed: {error.strip()[-500:]}")
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "peak_gib": usage.ru_maxrss / 2**20,
        "load": (load + os.getloadavg()[0]) / 2,
    }


# Folders of a source tree that the installed package holds inside evalwh/ (pyproject's
# package-dir): evalwh.cli is cli/, evalwh.queries is queries/, evalwh.schema is schema/.
MAPPED = ("cli", "queries", "schema")


def as_installed(tree: Path, into: Path) -> Path:
    """A folder to put on PYTHONPATH that imports ``tree``'s evalwh whole, as installed.

    With a source tree itself on PYTHONPATH, evalwh comes from the tree but evalwh.cli,
    evalwh.queries and evalwh.schema, which are not inside its evalwh/ folder, fall through
    to the installed (editable) evalwh's: the baseline would run this checkout's command
    line, SQL and schema. Here ``into``/evalwh links to every entry of the tree's evalwh/
    and to its cli/, queries/ and schema/. An unpacked wheel is used as it is.
    """
    package = tree / "evalwh"
    if not any((tree / name).is_dir() and not (package / name).exists() for name in MAPPED):
        return tree
    shutil.rmtree(into, ignore_errors=True)
    (into / "evalwh").mkdir(parents=True)
    for entry in package.iterdir():
        (into / "evalwh" / entry.name).symlink_to(entry)
    for name in MAPPED:
        if (tree / name).is_dir() and not (package / name).exists():
            (into / "evalwh" / name).symlink_to(tree / name)
    return into


def data_set(spec: str) -> tuple[str, Path, list[Path]]:
    name, _, where = spec.partition("=")
    where = ":".join(str(Path(part).resolve()) for part in where.split(":", 1))
    if ":" in where:
        qrels, runs = (Path(p) for p in where.split(":", 1))
    else:
        qrels, runs = Path(where) / "qrels.txt", Path(where) / "runs"
    files = sorted(p for p in runs.iterdir() if p.is_file())
    return name, qrels, files


def lines_of(files: list[Path]) -> int:
    """Run lines (the files' newline count; gzipped files decompressed)."""
    import gzip

    total = 0
    for path in files:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rb") as handle:
            total += sum(chunk.count(b"\n") for chunk in iter(lambda h=handle: h.read(1 << 24), b""))
    return total


def one_round(
    name: str,
    qrels: Path,
    files: list[Path],
    workdir: Path,
    baseline: Path | None,
    trec_eval: str | None,
    warehouse_only: bool = False,
    peers: tuple[str, ...] = (),
    *,
    reference: bool = True,
    baseline_first: bool = False,
) -> dict[str, object]:
    """Every step once for one data set (and on the baseline code, if given).

    ``reference``: run pytrec_eval (the ratios' reference; without it, ratios are to the
    direct path only). ``baseline_first``: the baseline's steps before this code's (rounds
    alternate which code goes first, so that neither always meets a warmer page cache).
    """
    db = workdir / f"{name}.duckdb"
    args = [str(p) for p in files]
    out: dict[str, object] = {}
    measures = [a for m in MEASURES for a in ("-m", m)]
    if not warehouse_only and (reference or peers):
        for peer in (*(("pytrec_eval",) if reference else ()), *(p for p in peers if p != "pytrec_eval")):
            out[peer] = run(
                [sys.executable, str(HERE / "eval.py"), "--child", peer, str(qrels), str(files[0].parent), str(db)]
            )
    codes = [("", None)] + ([("before_", baseline)] if baseline else [])
    for prefix, code in reversed(codes) if baseline_first else codes:
        for stale in workdir.glob(f"{name}.duckdb*"):
            stale.unlink()
        ingest = [*CLI, "ingest"]
        evaluate = [*CLI, "eval", *measures, "--format", "csv"]
        out[prefix + "ingest_qrels"] = run([*ingest, "qrels", str(qrels), "-c", "bench", "--db", str(db)], code)
        out[prefix + "ingest_runs"] = run([*ingest, "runs", *args, "-c", "bench", "--db", str(db)], code)
        out[prefix + "warehouse_gib"] = db.stat().st_size / 2**30
        if warehouse_only and not prefix:  # the lines as stored (counting them costs a read)
            import duckdb

            with duckdb.connect(str(db), read_only=True) as con:
                out["lines"] = int(con.execute("SELECT sum(line_count) FROM runs").fetchall()[0][0])
        before = (db.stat().st_size, db.stat().st_mtime_ns)
        out[prefix + "first_eval"] = run([*evaluate, "-c", "bench", "--db", str(db)], code)
        out[prefix + "first_eval_wrote"] = (db.stat().st_size, db.stat().st_mtime_ns) != before
        out[prefix + "warm_eval"] = run([*evaluate, "-c", "bench", "--db", str(db)], code)
        if not warehouse_only:
            out[prefix + "direct"] = run([*evaluate, "--qrels", str(qrels), *args], code)
        if not warehouse_only:
            # the fast way: qrels, runs and the first evaluation in one process, on a fresh file
            into = workdir / f"{name}-into.duckdb"
            for stale in workdir.glob(f"{name}-into.duckdb*"):
                stale.unlink()
            command = [*evaluate, "--qrels", str(qrels), *args, "--into", str(into), "-c", "bench"]
            out[prefix + "into"] = run(command, code)
            out[prefix + "into_gib"] = into.stat().st_size / 2**30
            into.unlink()
    if trec_eval and not warehouse_only:
        plain = workdir / f"{name}.run"

        def one(path: Path) -> list[str]:
            if path.suffix != ".gz":
                return [trec_eval, *TREC_EVAL, str(qrels), str(path)]
            # trec_eval 10 reads only a plain, seekable file: decompressed first, in the step
            script = 'gzip -dc "$1" > "$2" && binary="$3" && shift 3 && exec "$binary" "$@"'
            return ["sh", "-c", script, "sh", str(path), str(plain), trec_eval, *TREC_EVAL, str(qrels), str(plain)]

        parts = [run(one(p)) for p in files]
        plain.unlink(missing_ok=True)
        out["trec_eval"] = {
            "wall": sum(p["wall"] for p in parts),
            "cpu": sum(p["cpu"] for p in parts),
            "peak_gib": max(p["peak_gib"] for p in parts),
            "load": statistics.mean(p["load"] for p in parts),
        }
    for stale in workdir.glob(f"{name}.duckdb*"):
        stale.unlink()
    return out


def table(results: dict[str, list[dict[str, object]]], lines: dict[str, int]) -> str:
    """The Markdown table: medians over rounds, ratios against pytrec_eval's wall time."""

    def ratio(reference: float, value: float) -> str:
        return "" if reference != reference else f"{reference / value:.2f}x"  # (NaN: no reference)

    def bold(text: str) -> str:
        return f"**{text}**" if text else ""

    def median(name: str, step: str, key: str) -> float:
        return statistics.median(float(r[step][key]) for r in results[name])  # type: ignore[index]

    rows = [
        "| data set | lines | step | wall s | CPU s | peak GiB | load | vs pytrec_eval (wall) | (CPU) |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    against_direct: list[str] = []
    for name, rounds in results.items():
        if "pytrec_eval" in rounds[0]:
            reference = median(name, "pytrec_eval", "wall")
            reference_cpu = median(name, "pytrec_eval", "cpu")
        else:  # (--warehouse-only: no ratios)
            reference = reference_cpu = float("nan")
        steps = [*PEERS, "trec_eval", "ingest_qrels", "ingest_runs", "first_eval", "warm_eval", "direct", "into"]
        for step in steps + ["before_" + s for s in steps[len(PEERS) + 1 :]]:
            if step not in rounds[0]:
                continue
            wall, cpu = median(name, step, "wall"), median(name, step, "cpu")
            rows.append(
                f"| {name} | {lines[name]:,} | {step} | {wall:.2f} | {cpu:.2f} |"
                f" {median(name, step, 'peak_gib'):.2f} | {median(name, step, 'load'):.1f} |"
                f" {ratio(reference, wall)} | {ratio(reference_cpu, cpu)} |"
            )
        for prefix in ("", "before_"):
            if prefix + "ingest_runs" not in rounds[0]:
                continue
            chain = [prefix + s for s in ("ingest_qrels", "ingest_runs", "first_eval")]
            end_to_end = sum(median(name, s, "wall") for s in chain)
            end_to_end_cpu = sum(median(name, s, "cpu") for s in chain)
            wrote = any(bool(r[prefix + "first_eval_wrote"]) for r in rounds)
            size = statistics.median(float(r[prefix + "warehouse_gib"]) for r in rounds)  # type: ignore[arg-type]
            rows.append(
                f"| {name} | {lines[name]:,} | {prefix}three commands (ingest qrels + ingest runs + first"
                f" eval) | {end_to_end:.2f} | {end_to_end_cpu:.2f} | | | {ratio(reference, end_to_end)} |"
                f" {ratio(reference_cpu, end_to_end_cpu)} |"
            )
            chains = [(f"{prefix}three commands", end_to_end, end_to_end_cpu)]
            if prefix + "into" in rounds[0]:  # the fast way, one process: the warehouse end to end
                into, into_cpu = median(name, prefix + "into", "wall"), median(name, prefix + "into", "cpu")
                rows.append(
                    f"| {name} | {lines[name]:,} | **{prefix}warehouse end to end** (eval --qrels ... --into,"
                    f" one process) | {into:.2f} | {into_cpu:.2f} | {median(name, prefix + 'into', 'peak_gib'):.2f} |"
                    f" {median(name, prefix + 'into', 'load'):.1f} | {bold(ratio(reference, into))} |"
                    f" {bold(ratio(reference_cpu, into_cpu))} |"
                )
                chains.insert(0, (f"{prefix}warehouse end to end (--into)", into, into_cpu))
            rows.append(
                f"| {name} | | {prefix}warehouse file {size:.2f} GiB; the first eval "
                f"{'WROTE to it' if wrote else 'wrote nothing'} | | | | | | |"
            )
            if prefix + "direct" in rounds[0]:
                direct, direct_cpu = median(name, prefix + "direct", "wall"), median(name, prefix + "direct", "cpu")
                for label, wall, cpu in chains:
                    against_direct.append(
                        f"| {name} | {label} / direct | {wall / direct:.2f}x | {cpu / direct_cpu:.2f}x |"
                    )
    if against_direct:
        rows += ["", "| data set | ratio | wall | CPU |", "|---|---|---:|---:|", *against_direct]
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", nargs="+", help="name=DIR or name=QRELS:RUNS_DIR")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/evalwh-scale"))
    parser.add_argument("--json", type=Path, help="also write every measurement here")
    parser.add_argument("--baseline", type=Path, help="source tree of an earlier evalwh to compare")
    parser.add_argument("--baseline-sets", default="", help="data sets to run the baseline on")
    parser.add_argument("--trec-eval", default=shutil.which("trec_eval"), help="trec_eval binary")
    parser.add_argument("--warehouse-only", default="", help="data sets with only the warehouse steps")
    parser.add_argument(
        "--peers", default=",".join(PEERS), help=f"peers to run beside pytrec_eval (of {', '.join(PEERS)})"
    )
    parser.add_argument("--no-peers", default="", help="data sets where only pytrec_eval runs of the peers")
    parser.add_argument(
        "--no-reference", default="", help="data sets where not even pytrec_eval runs (ratios to the direct path only)"
    )
    args = parser.parse_args()
    args.workdir = args.workdir.resolve()
    args.workdir.mkdir(parents=True, exist_ok=True)
    args.baseline = as_installed(args.baseline.resolve(), args.workdir / "baseline") if args.baseline else None
    sets = [data_set(spec) for spec in args.datasets]
    only = args.warehouse_only.split(",")
    peers = tuple(p for p in args.peers.split(",") if p)
    unknown = set(peers) - set(PEERS)
    if unknown:
        parser.error(f"unknown peers: {', '.join(sorted(unknown))} (known: {', '.join(PEERS)})")
    if args.trec_eval is None:
        print(
            "# trec_eval: no binary on the PATH, its rows are left out (build trec_eval 10 with"
            " `make` from its repository and put it on the PATH, or give --trec-eval PATH)",
            flush=True,
        )
    lines = {name: lines_of(files) for name, _, files in sets if name not in only}
    print(
        f"# {platform.node()}: {os.cpu_count()} cores, {platform.processor() or platform.machine()},"
        f" python {platform.python_version()}, load at start {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    results: dict[str, list[dict[str, object]]] = {name: [] for name, _, _ in sets}
    for number in range(args.rounds):
        for name, qrels, files in sets:
            baseline = args.baseline if name in args.baseline_sets.split(",") else None
            outcome = one_round(
                name,
                qrels,
                files,
                args.workdir,
                baseline,
                args.trec_eval,
                name in only,
                () if name in args.no_peers.split(",") + args.no_reference.split(",") else peers,
                reference=name not in args.no_reference.split(","),
                baseline_first=number % 2 == 1,
            )
            results[name].append(outcome)
            lines.setdefault(name, int(outcome.get("lines", 0)))  # type: ignore[call-overload]
            print(f"round {number + 1} {name}: {json.dumps(outcome)}", flush=True)
            if args.json:
                args.json.write_text(json.dumps({"lines": lines, "results": results}, indent=1))
    print(table(results, lines))


if __name__ == "__main__":
    main()
