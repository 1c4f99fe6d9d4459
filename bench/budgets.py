"""Judging budgets on TREC-8: what each strategy's first judgments buy, and people with a biased LLM.

Usage (a warehouse with TREC-8 and its run metadata ingested, e.g. the tests' ingest):

    python bench/budgets.py --db trec8.duckdb [--collection trec8] [--seeds 0,1,2] [--out docs/img]

1. Replays the strategies depth, rbp, rrf, random, mtf and bandit over the official depth-100
   pool of the 71 pooled runs (86,830 judgments) against the official qrels, total budgets of
   5, 10, 25, 50 and 75 % of the pool, seeds 0..2 for the random ones; ranks all 129 runs by
   MAP. Prints the table (mean over seeds) as Markdown and writes the figure
   ``budgets_trec8.png``.
2. Simulates a machine judge with a known bias (``evalwh.methods.budget.simulated_judge``:
   bias +2 on the logit, separation 1.5, noise 1, seed 7) over every judged pair, writes its
   LARA CSV, ingests it as the label set ``sim-llm`` (source llm) and runs the hybrid: people
   judge 5, 10, 25 % of the pairs (random, most uncertain, LARA-style), isotonic calibration
   learnt on them, the rest filled calibrated or not. Prints that table too.

Nothing but the replays' rows (``budget_results``) and the ``sim-llm`` set is stored. CPU
seconds and wall time are printed beside ``uptime``'s load.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from evalwh.methods import budget
from evalwh.present.plots.budget import budget_figure
from evalwh.warehouse import Warehouse

COLUMNS = ["strategy", "seeds", "budget", "budget_share", "relevant_found", "relevant_share",
           "kendall_tau_b", "tau_ap", "significant_kept", "judged_share"]  # fmt: skip


def _markdown(frame) -> str:  # type: ignore[no-untyped-def]
    shown = frame[[c for c in COLUMNS if c in frame.columns]].copy()
    for column in shown.columns:
        if shown[column].dtype.kind == "f":
            shown[column] = shown[column].map(lambda v: f"{v:.4f}")
    return shown.to_markdown(index=False)


def main() -> None:
    """Run both studies and print their tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--collection", default="trec8")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--out", type=Path, default=Path("docs/img"))
    parser.add_argument("--skip-replay", action="store_true")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    print(f"load: {os.getloadavg()}")
    with Warehouse(args.db) as wh:
        if not args.skip_replay:
            start, cpu = time.perf_counter(), time.process_time()
            rows = budget.replay(
                wh, args.collection, strategies=["depth", "rbp", "rrf", "random", "mtf", "bandit"],
                budgets=["5%", "10%", "25%", "50%", "75%"], scope="total", seeds=seeds, measure="AP",
                experiment_id="budget-trec8", progress=lambda d, n: print(f"  replay {d}/{n}", flush=True),
            )  # fmt: skip
            print(f"replay: {time.perf_counter() - start:.0f} s wall, {time.process_time() - cpu:.0f} s CPU")
            summary = budget.summarise(rows)
            print(_markdown(summary))
            figure = budget_figure(summary, title="TREC-8: what a judging budget buys (MAP, 129 runs)")
            figure.savefig(args.out / "budgets_trec8.png", dpi=100)
        truth = wh.df(
            "SELECT query_id, doc_id, relevance FROM qrels WHERE collection_id = $c AND qrels_id = 'default'",
            {"c": args.collection},
        )
        lara = Path("/tmp") / "evalwh-sim-llm.csv"
        budget.simulated_judge(truth, bias=2.0, separation=1.5, noise=1.0, seed=7).to_csv(lara, index=False)
        wh.ingest_qrels(lara, collection=args.collection, qrels_id="sim-llm", source="llm", model="simulated",
                        replace=True)  # fmt: skip
        start, cpu = time.perf_counter(), time.process_time()
        mixed = budget.hybrid(
            wh, args.collection, "sim-llm", budgets=["5%", "10%", "25%"],
            selections=["random", "uncertain", "lara"], calibration="isotonic", seeds=seeds[:1],
            experiment_id="hybrid-trec8",
        )  # fmt: skip
        print(f"hybrid: {time.perf_counter() - start:.0f} s wall, {time.process_time() - cpu:.0f} s CPU")
        print(_markdown(budget.summarise(mixed)))
    print(f"load: {os.getloadavg()}")


if __name__ == "__main__":
    main()
