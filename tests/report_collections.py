"""Generated pooled collections of any number of runs, for the report's tests (1, 8, 150 runs).

Each topic has ``docs`` documents with true grades (graded 0-2, or binary); a run of quality q
scores a document ``q * grade + noise`` and returns its top ``depth``. Every other run is
pooled: the qrels are the true grades of the union of the pooled runs' top ``pool_depth`` (a
depth-``pool_depth`` pool), and run metadata says which runs were pooled. Vectorised: one
argsort for every run and topic.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalwh import Warehouse


def pooled_collection(
    wh: Warehouse,
    runs: int,
    *,
    collection: str = "gen",
    topics: int = 6,
    docs: int = 60,
    depth: int = 20,
    pool_depth: int = 5,
    graded: bool = True,
    seed: int = 0,
    qrels_id: str | None = None,
    metadata: bool = True,
    tied_boundary: bool = False,
) -> list[str]:
    """Ingest a generated collection into ``wh``; returns the run ids (r000, r001, ...).

    ``qrels_id`` names the qrels set (None: ``default``); ``metadata=False`` ingests no run
    metadata (nothing says which runs were pooled). ``tied_boundary`` gives one pooled list
    three documents tied on score at ranks ``pool_depth - 1 .. pool_depth + 1``, the last of
    them (in the generator's order, the pool's) unjudged and the first in trec_eval's order
    (doc_id descending): by trec_eval's order that list is judged only to ``pool_depth - 2``.
    """
    rng = np.random.default_rng(seed)
    levels = [0, 1, 2] if graded else [0, 1]
    weights = [0.85, 0.10, 0.05] if graded else [0.85, 0.15]
    grades = rng.choice(levels, size=(topics, docs), p=weights)
    grades[:, 0] = 1  # every topic has a relevant document
    quality = np.linspace(1.6, 0.3, runs) if runs > 1 else np.array([1.0])
    noise = rng.normal(size=(runs, topics, docs))
    scores = quality[:, None, None] * grades[None, :, :] + noise
    top = np.argsort(-scores, axis=2, kind="stable")[:, :, :depth]  # runs x topics x depth
    run_ids = [f"r{r:03d}" for r in range(runs)]
    r_idx, t_idx, k_idx = np.meshgrid(np.arange(runs), np.arange(topics), np.arange(depth), indexing="ij")
    doc_idx = top.ravel()
    frame = pd.DataFrame(
        {
            "run_id": np.asarray(run_ids, dtype=object)[r_idx.ravel()],
            "query_id": (t_idx.ravel() + 1).astype(str),
            "doc_id": [f"d{d:03d}" for d in doc_idx],
            "score": np.round(scores[r_idx.ravel(), t_idx.ravel(), doc_idx], 6),
        }
    )
    pooled = np.arange(runs) % 2 == 0
    in_pool = np.zeros((topics, docs), dtype=bool)
    for t in range(topics):
        in_pool[t, np.unique(top[pooled, t, :pool_depth])] = True
    if tied_boundary:
        _tie_across_the_boundary(frame, top, pooled, in_pool, depth, pool_depth)
    t_q, d_q = np.nonzero(in_pool)
    qrels = pd.DataFrame(
        {
            "query_id": (t_q + 1).astype(str),
            "doc_id": [f"d{d:03d}" for d in d_q],
            "relevance": grades[t_q, d_q],
        }
    )
    wh.ingest_qrels(qrels, collection=collection, qrels_id=qrels_id)
    wh.ingest_runs(frame, collection=collection)
    if metadata:
        wh.ingest_run_metadata(
            pd.DataFrame({"run_id": run_ids, "pooled": pooled.astype(int)}), collection=collection
        )
    return run_ids


def _tie_across_the_boundary(
    frame: pd.DataFrame, top: np.ndarray, pooled: np.ndarray, in_pool: np.ndarray, depth: int, pool_depth: int
) -> None:
    """Tie one pooled list's ranks pool_depth-1 .. pool_depth+1 on score (in place), where the
    document at pool_depth+1 is unpooled and has the largest doc_id of the three."""
    runs, topics, _ = top.shape
    a, b = pool_depth - 2, pool_depth + 1  # indices of the three ranks
    for r in np.flatnonzero(pooled):
        for t in range(topics):
            docs = top[r, t, a:b]
            if not in_pool[t, docs[-1]] and docs[-1] == docs.max():
                rows = (r * topics + t) * depth + np.arange(a, b)  # frame's row order: run, topic, rank
                assert (frame["doc_id"].iloc[rows] == [f"d{d:03d}" for d in docs]).all()
                frame.loc[frame.index[rows], "score"] = frame["score"].iloc[rows[0]]
                return
    raise AssertionError("no pooled list can take the tie; try another seed")
