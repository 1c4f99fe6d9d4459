"""Benchmark: evalwh against pytrec_eval, ir_measures and ranx on the same TREC files.

Usage:
    python bench/gen_eval.py /tmp/syn                      # 100 runs x 250 topics x 1000 docs
    python bench/eval.py synthetic=/tmp/syn/qrels.txt:/tmp/syn/runs \\
        trec8=../shared/data/trec8_adhoc/trec8.qrels:../shared/data/trec8_adhoc/runs \\
        [--tools evalwh,evalwh_ingested,pytrec_eval,ir_measures,ranx] [--workdir /tmp/evalwh-bench]

Every tool runs in its own subprocess (``--child``), so the time includes interpreter start
and imports, and the peak resident memory is the child's own ``ru_maxrss``. Measures: P@10,
P@100, AP (map), AP@100 (map_cut_100), nDCG@10, bpref, A_p@10 and A_p@100 where the tool has
them. ``evalwh`` is end to end (fresh warehouse file: ingest qrels and runs, then evaluate);
``evalwh_ingested`` evaluates on the warehouse ``evalwh`` left behind (opened for
writing, as ``evalwh eval`` does, so the judged-rows cache is used). trec_eval itself is
not installed here; pytrec_eval (trec_eval 9.0.x in-process, parse + evaluate) stands in.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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
    if tool in ("evalwh", "evalwh_ingested"):
        from evalwh import Warehouse

        if tool == "evalwh":
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
        from ranx import Qrels, Run, evaluate

        qrels_obj = Qrels.from_file(str(qrels), kind="trec")
        count = 0
        for path in files:
            count += len(evaluate(qrels_obj, Run.from_file(str(path), kind="trec"), RANX))
        return {"values": count, "measures": len(RANX)}
    raise SystemExit(f"unknown tool {tool!r}")


def measure(tool: str, qrels: Path, runs: Path, db: Path) -> dict[str, object]:
    """Time one tool in a subprocess; peak memory is the child's own ru_maxrss."""
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
        report["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(report))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", nargs="+", help="name=QRELS:RUNS_DIR")
    parser.add_argument(
        "--tools",
        default="evalwh,evalwh_ingested,pytrec_eval,ir_measures",
        help="comma-separated; ranx is opt-in (its numba compilation alone took minutes here)",
    )
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/evalwh-bench"))
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}")
    print(
        f"{'dataset':<10} {'tool':<17} {'seconds':>8} {'/evalwh':>8} {'/ingested':>9}"
        f" {'peak MiB':>9}  values"
    )
    for spec in args.datasets:
        name, _, paths = spec.partition("=")
        qrels, _, runs = paths.partition(":")
        db = args.workdir / f"{name}.duckdb"
        results = [measure(tool, Path(qrels), Path(runs), db) for tool in args.tools.split(",")]
        base = {r["tool"]: r["seconds"] for r in results if "error" not in r}

        def ratio(seconds: float, ref: str, base: dict[str, float] = base) -> str:
            return f"{seconds / base[ref]:.1f}" if ref in base else "-"

        for r in results:
            if "error" in r:
                print(f"{name:<10} {r['tool']:<17} {r['seconds']:>8.1f}  error: {r['error']}")
                continue
            print(
                f"{name:<10} {r['tool']:<17} {r['seconds']:>8.1f}"
                f" {ratio(r['seconds'], 'evalwh'):>8}"
                f" {ratio(r['seconds'], 'evalwh_ingested'):>9} {r['peak_mib']:>9.0f}"
                f"  {r['values']} values, {r['measures']} measures"
            )
        sys.stdout.flush()


if __name__ == "__main__":
    main()
