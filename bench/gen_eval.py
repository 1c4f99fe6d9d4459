"""Generate a seeded synthetic collection as TREC files: N runs x T topics x D documents.

Usage: python bench/gen_eval.py OUT_DIR [--runs 100] [--topics 250] [--docs 1000] [--seed 0]

Writes OUT_DIR/qrels.txt and OUT_DIR/runs/run<i>.txt. Each topic has a universe of 3 x D
documents; the first R of them (R between 5 and 150) are relevant, and the next 400 are judged
non-relevant, so deep ranks hold many unjudged documents, as in TREC. A run ranks the universe
by noise plus a run-specific bonus for relevant documents and keeps the top D; scores are
rounded to three decimals, so ties occur.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd


def generate(out: Path, runs: int, topics: int, docs: int, seed: int) -> None:
    """Write the qrels and the run files under ``out``."""
    rng = np.random.default_rng(seed)
    universe = 3 * docs
    out.mkdir(parents=True, exist_ok=True)
    (out / "runs").mkdir(exist_ok=True)
    relevant = rng.integers(5, 151, size=topics)
    judged = relevant + 400
    query_ids = np.array([str(401 + t) for t in range(topics)])
    topic_of = np.repeat(np.arange(topics), judged)
    position = np.concatenate([np.arange(n) for n in judged])
    qrels = pd.DataFrame(
        {
            "query_id": query_ids[topic_of],
            "iteration": "0",
            "doc_id": [f"D{t}-{p}" for t, p in zip(topic_of, position, strict=True)],
            "relevance": (position < relevant[topic_of]).astype(int),
        }
    )
    qrels.to_csv(out / "qrels.txt", sep=" ", header=False, index=False)
    is_relevant = np.arange(universe)[None, :] < relevant[:, None]  # topics x universe
    doc_names = np.arange(universe).astype(str)
    prefixes = np.array([f"D{t}-" for t in range(topics)])
    for run in range(runs):
        quality = rng.uniform(0.2, 2.0)
        key = (
            rng.random((topics, universe)) + quality * rng.random((topics, universe)) * is_relevant
        )
        top = np.argsort(-key, axis=1, kind="stable")[:, :docs]
        scores = np.round(np.take_along_axis(key, top, axis=1) * 10, 3)
        frame = pd.DataFrame(
            {
                "query_id": np.repeat(query_ids, docs),
                "q0": "Q0",
                "doc_id": np.char.add(np.repeat(prefixes, docs), doc_names[top.ravel()]),
                "rank": np.tile(np.arange(1, docs + 1), topics),
                "score": scores.ravel(),
                "tag": f"run{run:03d}",
            }
        )
        frame.to_csv(out / "runs" / f"run{run:03d}.txt", sep=" ", header=False, index=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--topics", type=int, default=250)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    generate(args.out, args.runs, args.topics, args.docs, args.seed)


if __name__ == "__main__":
    main()
