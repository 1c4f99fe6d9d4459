"""Benchmark: the decision matrix over all pairs of TREC-8's 129 runs (8,256 pairs).

Usage: python bench/decision_matrix.py WAREHOUSE.duckdb [COLLECTION] [TEST]

Times (1) reading the per-topic scores for P@d, AP@d, A_p@d at 5 depths plus AP and AA in
one evaluation, and (2) the statistics: 8,256 pairs x 5 depths x 2 pairings (P@d/A_p@d and
MAP@d/A_p@d), each pairing tested on both metrics, plus the MAP/MAA column. Prints the
papers' case tables and Kendall's tau of MAP against A_p@1000.
"""

from __future__ import annotations

import sys
import time

import pandas as pd

from evalwh import Warehouse
from evalwh.stats import decision, significance

DEPTHS = (10, 30, 100, 500, 1000)


def main() -> None:
    path = sys.argv[1]
    collection = sys.argv[2] if len(sys.argv) > 2 else "trec8"
    test = sys.argv[3] if len(sys.argv) > 3 else "anova"
    with Warehouse(path, read_only=True) as wh:
        runs = wh.run_ids(collection)
        specs = [f"{m}@{d}" for m in ("P", "AP", "A_p") for d in DEPTHS] + ["AP", "AA", "A_p@200"]
        start = time.perf_counter()
        scores = wh.evaluate(specs, collection=collection, per_query=True)
        read = time.perf_counter() - start
    by = {m: g[["run_id", "query_id", "value"]] for m, g in scores.groupby("measure")}
    start = time.perf_counter()
    frames = []
    for perf in ("P", "AP"):
        for d in DEPTHS:
            pairs = decision.decision_pairs(
                by[f"{perf}@{d}"], by[f"A_p@{d}"], test=test, runs=runs, rng=1
            )
            frames.append(pairs.assign(table=f"{perf}@d / A_p@d", column=f"@{d}"))
    tested = time.perf_counter() - start
    full = decision.decision_pairs(by["AP"], by["AA"], test=test, runs=runs, rng=1)
    for table in ("P@d / A_p@d", "AP@d / A_p@d"):
        frames.append(full.assign(table=table, column="MAP/MAA"))
    pairs = pd.concat(frames, ignore_index=True).assign(collection_id=collection)
    summary = decision.case_proportions(pairs, by=["table", "collection_id", "column"])
    means = scores.groupby(["measure", "run_id"])["value"].mean()
    tau = significance.kendall_tau(means["AP"], means["A_p@1000"])
    n_pairs = len(runs) * (len(runs) - 1) // 2
    print(f"{len(runs)} runs, {n_pairs:,} pairs, test {test}")
    print(f"read per-topic scores (17 measures, one evaluation): {read:.1f} s")
    print(
        f"statistics, {n_pairs:,} pairs x {len(DEPTHS)} depths x 2 pairings x 2 metrics: {tested:.2f} s"
    )
    for table, part in summary.groupby("table", sort=False):
        print(f"\n{table}")
        print(
            part[["column", "C1", "C2", "C3", "C4", "C3a", "C3b", "strong", "weak"]]
            .round(3)
            .to_string(index=False)
        )
    print(f"\nKendall tau_b, MAP vs A_p@1000: {tau['tau']:.3f} over {tau['n_runs']} runs")
    _deeper_assessment(by, runs, test)


def _deeper_assessment(by: dict[str, pd.DataFrame], runs: list[str], test: str) -> None:
    """S1's @100 column against P@100 paired with A_p of deeper lists (docs/reproductions.md)."""
    judged = by["A_p@100"].groupby("run_id")["value"].min()
    fully = set(judged[judged >= 1 - 1e-12].index)
    rows = []
    for depth in (100, 200, 500, 1000):
        pairs = decision.decision_pairs(by["P@100"], by[f"A_p@{depth}"], test=test, runs=runs, rng=1)
        if depth == 100:
            both = pairs["run_a"].isin(fully) & pairs["run_b"].isin(fully)
            forced = int((both & pairs["case"].isin(["3a", "3b"])).sum())
            print(
                f"\n{len(fully)} runs have A_p@100 = 1 on every topic; {forced} of their pairs are case 3 "
                f"under same-depth pairing ({forced / len(pairs):.3f} of all pairs)"
            )
        rows.append(decision.case_proportions(pairs.assign(collection_id="", column=f"P@100 / A_p@{depth}"), by=["collection_id", "column"]))
    print(pd.concat(rows)[["column", "C1", "C2", "C3", "C4"]].round(3).to_string(index=False))


if __name__ == "__main__":
    main()
