"""Generate a seeded synthetic test collection as TREC text files.

Usage: python bench/generate.py OUT_DIR [--runs 100] [--topics 250] [--docs 1000] [--seed 0]
                                        [--pool-depth 100] [--max-grade 2] [--gzip]

Writes ``OUT_DIR/qrels.txt`` and ``OUT_DIR/runs/run<i>.txt`` (``.txt.gz`` with ``--gzip``):
``runs`` runs, each ranking ``docs`` documents for each of ``topics`` topics.

How it is built (deterministic for a seed):

* Each topic draws a universe of ``2 x docs`` documents from a collection of named documents
  (``doc0001234``), so runs overlap as TREC runs do. A few percent of the universe is
  relevant (grade 1, or 2 for about a third of them; with ``--max-grade 3`` about a third of
  the grade-2 documents become grade 3, as in the issue's graded 0-3 collections).
* A run has a quality (how much relevance lifts a score) and a score precision: scores are
  rounded to between one and four decimals, so coarse runs have heavy ties, as many TREC runs
  do (the TREC-8 runs have a median of 1,300 tied topic-score pairs). The file lists each
  topic's top ``docs`` by score; one run in ten is written unsorted with ranks from 0, as the
  TREC-8 ``kdd8*`` runs are.
* The qrels are the depth-``pool_depth`` pool of all runs (each run's top documents in
  trec_eval's order: score descending, then docno descending), about 2 % of it relevant.

The ingest benchmark (``bench/ingest.py``) uses it; ``evalwh demo`` writes the much smaller
demo collection of ``evalwh.io.demo_data`` instead.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Generated:
    """What :func:`generate` wrote."""

    qrels: Path
    runs: list[Path]
    lines: int
    judged: int
    relevant: int


def generate(
    out: Path,
    *,
    runs: int = 100,
    topics: int = 250,
    docs: int = 1000,
    seed: int = 0,
    pool_depth: int = 100,
    max_grade: int = 2,
    gzip: bool = False,
) -> Generated:
    """Write a synthetic collection under ``out``; see the module docstring for its shape.

    Args:
        out: Directory to write into (created; existing files of the same names are replaced).
        runs: Number of runs.
        topics: Number of topics (query ids ``1`` to ``topics``).
        docs: Documents per topic in every run.
        seed: Seed of the random generator; equal seeds give byte-identical files.
        pool_depth: Depth of the pool that the qrels judge.
        max_grade: Highest grade, 2 or 3 (grade 3 is drawn from a second generator, so files
            made with the default stay byte-identical to earlier versions).
        gzip: Write gzipped files.

    Returns:
        The paths written and the line, judgment and relevant counts.
    """
    rng = np.random.default_rng(seed)
    universe = 2 * docs
    collection_size = max(100_000, 4 * universe)
    out.mkdir(parents=True, exist_ok=True)
    (out / "runs").mkdir(exist_ok=True)
    suffix = ".txt.gz" if gzip else ".txt"

    # Per topic: which documents of the collection it may retrieve, and which are relevant.
    members = np.stack(
        [np.sort(rng.choice(collection_size, size=universe, replace=False)) for _ in range(topics)]
    )
    relevant_share = rng.uniform(0.005, 0.04, size=topics)
    grades = (rng.random((topics, universe)) < relevant_share[:, None]).astype(np.int8)
    grades[(grades == 1) & (rng.random((topics, universe)) < 0.35)] = 2
    if max_grade not in (2, 3):
        raise ValueError("max_grade must be 2 or 3")
    names = np.array([f"doc{i:07d}" for i in range(collection_size)], dtype=object)
    query_ids = np.array([str(t + 1) for t in range(topics)], dtype=object)
    if max_grade == 3:
        upgrade = np.random.default_rng(seed + 1).random((topics, universe)) < 1 / 3
        grades[(grades == 2) & upgrade] = 3

    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    pooled = np.zeros((topics, universe), dtype=bool)
    paths: list[Path] = []
    for run in range(runs):
        quality = rng.uniform(0.3, 3.0)
        decimals = int(rng.integers(1, 5))
        noise = rng.standard_normal((topics, universe))
        latent = noise + quality * grades
        top = np.argpartition(-latent, docs - 1, axis=1)[:, :docs]  # each topic's top `docs`
        scores = np.round(np.take_along_axis(latent, top, axis=1) + 5.0, decimals)
        doc_index = np.take_along_axis(members, top, axis=1)
        # trec_eval's order: score descending, then docno descending; names sort like indexes
        order = np.lexsort((-doc_index, -scores), axis=1)
        top = np.take_along_axis(top, order, axis=1)
        scores = np.take_along_axis(scores, order, axis=1)
        doc_index = np.take_along_axis(doc_index, order, axis=1)
        np.put_along_axis(pooled, top[:, :pool_depth], True, axis=1)

        ranks = np.tile(np.arange(1, docs + 1), topics)
        frame = pd.DataFrame(
            {
                "query_id": np.repeat(query_ids, docs),
                "q0": "Q0",
                "doc_id": names[doc_index.ravel()],
                "rank": ranks,
                "score": scores.ravel(),
                "tag": f"run{run:03d}",
            }
        )
        if run % 10 == 9:
            # unsorted, ranks from 0: evalwh must not trust line order or the rank column
            frame = frame.sample(frac=1.0, random_state=run).reset_index(drop=True)
            frame["rank"] = np.arange(len(frame)) % docs
        path = out / "runs" / f"run{run:03d}{suffix}"
        _write(con, frame, path, gzip)
        paths.append(path)

    topic_of, position = np.nonzero(pooled)
    qrels = pd.DataFrame(
        {
            "query_id": query_ids[topic_of],
            "iteration": "0",
            "doc_id": names[members[topic_of, position]],
            "relevance": grades[topic_of, position].astype(np.int64),
        }
    )
    qrels_path = out / f"qrels{suffix}"
    _write(con, qrels, qrels_path, gzip)
    con.close()
    return Generated(
        qrels_path,
        paths,
        lines=runs * topics * docs,
        judged=len(qrels),
        relevant=int((qrels["relevance"] > 0).sum()),
    )


def _write(con: duckdb.DuckDBPyConnection, frame: pd.DataFrame, path: Path, gzip: bool) -> None:
    """Write ``frame`` as space-separated lines with DuckDB's CSV writer (fast, no quoting)."""
    con.register("frame", frame)
    try:
        con.execute(
            "COPY frame TO $path (FORMAT csv, DELIMITER ' ', HEADER false, QUOTE '', ESCAPE '',"
            " COMPRESSION $compression)",
            {"path": str(path), "compression": "gzip" if gzip else "none"},
        )
    finally:
        con.unregister("frame")


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--topics", type=int, default=250)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pool-depth", type=int, default=100)
    parser.add_argument("--max-grade", type=int, default=2, choices=[2, 3])
    parser.add_argument("--gzip", action="store_true", help="write .gz files")
    args = parser.parse_args()
    start = time.perf_counter()
    made = generate(
        args.out,
        runs=args.runs,
        topics=args.topics,
        docs=args.docs,
        seed=args.seed,
        pool_depth=args.pool_depth,
        max_grade=args.max_grade,
        gzip=args.gzip,
    )
    print(
        f"wrote {len(made.runs)} runs ({made.lines:,} lines) and {made.qrels} "
        f"({made.judged:,} judgments, {made.relevant:,} relevant = "
        f"{made.relevant / max(made.judged, 1):.1%}) in {time.perf_counter() - start:.1f} s"
    )


if __name__ == "__main__":
    main()
