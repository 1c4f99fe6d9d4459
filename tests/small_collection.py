"""A small generated collection for the ad-hoc SQL, transfer and Spark tests.

Built to exercise every edge the metrics handle: graded and negative grades, a topic with no
relevant document, a run missing a topic, tied scores, lists shorter and longer than k.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalwh import Warehouse


def fill(
    wh: Warehouse, *, collection: str = "small", seed: int = 7, runs: int = 3, topics: int = 6
) -> None:
    """Ingest qrels and runs of a generated collection into ``wh``."""
    rng = np.random.default_rng(seed)
    pool = [f"d{i:03d}" for i in range(40)]
    qrels = []
    for t in range(topics):
        judged = rng.choice(pool, size=20, replace=False)
        grades = rng.choice([-1, 0, 0, 1, 2], size=20)
        if t == 0:
            grades[:] = 0  # a topic without relevant documents
        qrels += [(f"q{t}", d, int(g)) for d, g in zip(judged, grades, strict=True)]
    wh.ingest_qrels(
        pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]), collection=collection
    )
    rows = []
    for r in range(runs):
        for t in range(topics):
            if r == 1 and t == 2:
                continue  # a run that lacks a topic
            n = int(rng.integers(1, 26))
            docs = rng.choice(pool, size=n, replace=False)
            scores = np.round(rng.normal(size=n), 1)  # one decimal: ties
            rows += [(f"run{r}", f"q{t}", d, float(s)) for d, s in zip(docs, scores, strict=True)]
    frame = pd.DataFrame(rows, columns=["run_id", "query_id", "doc_id", "score"])
    wh.ingest_runs(frame, collection=collection)
