"""Benchmark: evalwh against pytrec_eval, ir_measures and ranx on the same TREC files.

Usage:
    python bench/gen_eval.py /tmp/syn                      # 100 runs x 250 topics x 1000 docs
    python bench/eval.py synthetic=/tmp/syn/qrels.txt:/tmp/syn/runs \\
        trec8=../shared/data/trec8_adhoc/trec8.qrels:../shared/data/trec8_adhoc/runs \\
        [--tools evalwh,evalwh_warehouse,evalwh_ingested,pytrec_eval,ir_measures,ranx] \\
        [--workdir /tmp/evalwh-bench] [--repeat 3]

Every tool runs in its own subprocess (``--child``), so the time includes interpreter start
and imports, and the peak resident memory is the child's own ``ru_maxrss``. Measures: P@10,
P@100, AP (map), AP@100 (map_cut_100), nDCG@10, bpref, A_p@10 and A_p@100 where the tool has
them. The evalwh tools:

* ``evalwh``: end to end from the text files, as trec_eval works: ``evaluate_files``
  (``evalwh eval --qrels QRELS RUN...``), nothing stored;
* ``evalwh_warehouse``: end to end through a warehouse: a fresh warehouse file, ingest of
  qrels and runs (strict, hashed, ranked and stored), then evaluation;
* ``evalwh_ingested``: evaluation on the warehouse ``evalwh_warehouse`` left behind (opened
  for writing, as ``evalwh eval`` does, so the judged-rows cache is used).

trec_eval itself is not installed here; pytrec_eval (trec_eval 9.0.x in-process, parse +
evaluate) stands in.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

EVALWH = ["P@10", "P@100", "AP", "AP@100", "nDCG@10", "bpref", "A_p@10", "A_p@100"]
PYTREC = {"P.10,100", "map", "map_cut.100", "ndcg_cut.10", "bpref"}
IR_MEASURES = ["P@10", "P@100", "AP", "AP@100", "nDCG@10", "Bpref", "Judged@10", "Judged@100"]
RANX = ["precision@10", "precision@100", "map", "map@100", "ndcg@10", "bpref"]


def _run_files(runs: Path) -> list[Path]:
    return sorted(p for p in runs.iterdir() if p.is_file())


def _open(path: Path):  # type: ignore[no-untyped-def]
    import gzip

    return gzip.open(path, "rt") if path.suffix == ".gz" else open(path)


def child(tool: str, qrels: Path, runs: Path, db: Path) -> dict[str, object]:
    """Run one tool over every run; return what it evaluated (the parent times it)."""
    files = _run_files(runs)
    if tool == "evalwh":
        from evalwh.measures.direct import evaluate_files

        frame = evaluate_files(qrels, files, EVALWH)
        return {"values": len(frame), "measures": len(EVALWH)}
    if tool in ("evalwh_warehouse", "evalwh_ingested"):
        from evalwh import Warehouse

        if tool == "evalwh_warehouse":
            db.unlink(missing_ok=True)
            with Warehouse(db) as wh:
                wh.ingest_qrels(qrels, collection="bench")
                wh.ingest_runs(files, collection="bench")
                frame = wh.evaluate(EVALWH, collection="bench")
        else:
            # opened for writing, as `evalwh eval` opens an existing warehouse: the first
            # evaluation fills the judged-rows cache if the end-to-end run did not
            with Warehouse(db) as wh:
                frame = wh.evaluate(EVALWH, collection="bench")
        return {"values": len(frame), "measures": len(EVALWH)}
    if tool == "pytrec_eval":
        import pytrec_eval

        with _open(qrels) as f:
            evaluator = pytrec_eval.RelevanceEvaluator(pytrec_eval.parse_qrel(f), PYTREC)
        count = 0
        for path in files:
            with _open(path) as f:
                result = evaluator.evaluate(pytrec_eval.parse_run(f))
            count += sum(len(v) for v in result.values())
        return {"values": count, "measures": 6}
    if tool == "ir_measures":
        import ir_measures

        measures = [ir_measures.parse_measure(m) for m in IR_MEASURES]
        qrels_frame = ir_measures.read_trec_qrels(str(qrels))
        qrels_list = list(qrels_frame)
        count = 0
        for path in files:
            count += len(
                ir_measures.calc_aggregate(
                    measures, qrels_list, ir_measures.read_trec_run(str(path))
                )
            )
        return {"values": count, "measures": len(IR_MEASURES)}
    if tool == "ranx":
        import shutil
        import tempfile

        from ranx import Qrels, Run, evaluate

        def plain(path: Path, folder: str) -> str:
            """ranx reads plain text only: a gzipped file is decompressed first (timed)."""
            if path.suffix != ".gz":
                return str(path)
            target = Path(folder) / path.stem
            with _open(path) as source, open(target, "w") as sink:
                shutil.copyfileobj(source, sink)
            return str(target)

        with tempfile.TemporaryDirectory() as folder:
            qrels_obj = Qrels.from_file(plain(qrels, folder), kind="trec")
            count = 0
            for path in files:
                run = Run.from_file(plain(path, folder), kind="trec")
                count += len(evaluate(qrels_obj, run, RANX))
        return {"values": count, "measures": len(RANX)}
    raise SystemExit(f"unknown tool {tool!r}")


def measure(tool: str, qrels: Path, runs: Path, db: Path) -> dict[str, object]:
    """Time one tool in a subprocess; peak memory and CPU time are the child's own."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, __file__, "--child", tool, str(qrels), str(runs), str(db)],
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        return {"tool": tool, "seconds": seconds, "error": done.stderr.strip().splitlines()[-1:]}
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return {"tool": tool, "seconds": seconds, **report}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        tool, qrels, runs, db = sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]), Path(sys.argv[5])
        report = child(tool, qrels, runs, db)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        report["peak_mib"] = usage.ru_maxrss / 1024
        report["cpu"] = usage.ru_utime + usage.ru_stime
        print(json.dumps(report))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", nargs="+", help="name=QRELS:RUNS_DIR")
    parser.add_argument(
        "--tools",
        default="evalwh,evalwh_warehouse,evalwh_ingested,pytrec_eval,ir_measures",
        help="comma-separated; ranx is opt-in (its numba compilation alone took minutes here)",
    )
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/evalwh-bench"))
    parser.add_argument(
        "--repeat", type=int, default=1, help="rounds; each round runs every tool once, in turn"
    )
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}, load {os.getloadavg()[0]:.1f}")
    print(
        f"{'dataset':<10} {'tool':<17} {'best s':>7} {'median':>7} {'cpu s':>6} {'/evalwh':>8}"
        f" {'/ingested':>9} {'peak MiB':>9}  values"
    )
    tools = args.tools.split(",")
    for spec in args.datasets:
        name, _, paths = spec.partition("=")
        qrels, _, runs = paths.partition(":")
        db = args.workdir / f"{name}.duckdb"
        if "evalwh_ingested" in tools and "evalwh_warehouse" not in tools and not db.exists():
            measure("evalwh_warehouse", Path(qrels), Path(runs), db)  # what it evaluates on
        rounds = [
            {tool: measure(tool, Path(qrels), Path(runs), db) for tool in tools}
            for _ in range(args.repeat)
        ]
        summary: dict[str, dict[str, object]] = {}
        for tool in tools:
            done = [r[tool] for r in rounds if "error" not in r[tool]]
            if not done:
                summary[tool] = rounds[-1][tool]
                continue
            times = sorted(float(r["seconds"]) for r in done)  # type: ignore[arg-type]
            summary[tool] = {
                **done[-1],
                "best": times[0],
                "median": statistics.median(times),
                "cpu": min(float(r["cpu"]) for r in done),  # type: ignore[arg-type]
                "peak_mib": max(float(r["peak_mib"]) for r in done),  # type: ignore[arg-type]
            }
        best = {t: float(r["best"]) for t, r in summary.items() if "best" in r}  # type: ignore[arg-type]

        def ratio(seconds: float, ref: str, best: dict[str, float] = best) -> str:
            return f"{seconds / best[ref]:.1f}" if ref in best else "-"

        for tool, r in summary.items():
            if "best" not in r:
                print(f"{name:<10} {tool:<17} error: {r.get('error')}")
                continue
            print(
                f"{name:<10} {tool:<17} {r['best']:>7.1f} {r['median']:>7.1f} {r['cpu']:>6.1f}"
                f" {ratio(float(r['best']), 'evalwh'):>8}"  # type: ignore[arg-type]
                f" {ratio(float(r['best']), 'evalwh_ingested'):>9} {r['peak_mib']:>9.0f}"  # type: ignore[arg-type]
                f"  {r['values']} values, {r['measures']} measures"
            )
        sys.stdout.flush()


if __name__ == "__main__":
    main()
