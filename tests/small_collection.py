"""A small generated collection for the ad-hoc SQL, transfer, Spark and migration tests.

Built to exercise every edge the metrics handle: graded and negative grades, a topic with no
relevant document, a run missing a topic, tied scores, lists shorter and longer than k; and
:func:`catalog_specs`, every registered metric as a measure to evaluate on it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalwh import Warehouse
from evalwh.measures import catalog

# values for the parameters some metrics require besides k
REQUIRED = {"recall": "0.5", "mult": "2", "max_rel": "3"}


def catalog_specs(*, condensed: bool = False, sources: bool = True) -> list[str]:
    """Every registered metric: at depth 5, and also whole-list where k is optional.

    ``condensed``: only the condensable metrics, at depth 5 only (a metric's SQL is the same
    text under every option set, the options change only the context views it reads, and its
    whole-list form agrees under the default set). ``sources=False`` leaves out the judged
    share by source, which reads provenance (qrels_sets): not on Spark.
    """
    specs = []
    for metric in catalog.metrics():
        if condensed and not metric.condensable:
            continue
        if not sources and "ev_judged_sources" in metric.file.text:
            continue
        given = [
            f"{p.name}={REQUIRED[p.name]}" for p in metric.params if p.required and p.name != "k"
        ]
        name = metric.name + (f"({','.join(given)})" if given else "")
        k = metric.param("k")
        if k is None:
            specs.append(name)
        else:
            specs.append(f"{name}@5")
            if not k.required and not condensed:
                specs.append(name)
    return specs


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
