"""A small synthetic test collection for the report's demo: qrels and run files on disk.

The collection is pooled the way TREC collections are: the top ``pool_depth`` documents of
the pooled runs are judged, every other document is unjudged. Two runs are left out of the
pool, so the report has something to flag: their rankings are less assessed than the others,
and their comparisons to pooled runs are the ones to distrust.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from evalwh.io.files import atomic_output, atomic_path, new_directory

# run name -> (quality: weight of relevance in the score, pooled)
DEMO_RUNS: dict[str, tuple[float, bool]] = {
    "bm25": (1.0, True),
    "bm25_rm3": (1.15, True),
    "dense": (1.3, True),
    "hybrid": (1.5, True),
    "splade": (1.4, True),
    "ql": (0.95, True),
    "new_dense": (1.45, False),  # a new system: not in the pool
    "tfidf": (0.7, False),
}


@dataclass(frozen=True)
class DemoFiles:
    """Where :func:`write_demo` put the collection.

    Attributes:
        qrels: The qrels file.
        runs: One run file per run, in :data:`DEMO_RUNS` order.
        metadata: A TSV with ``run_id, group, type, pooled`` (for ``ingest run-metadata``).
        pool_depth: The depth each pooled run contributed to the judgments.
    """

    qrels: Path
    runs: list[Path]
    metadata: Path
    pool_depth: int


def write_demo(
    directory: str | Path,
    *,
    topics: int = 30,
    docs_per_topic: int = 400,
    depth: int = 200,
    pool_depth: int = 20,
    rng: np.random.Generator | int | None = 0,
) -> DemoFiles:
    """Write a pooled synthetic collection: a qrels file, run files and run metadata.

    Each topic has ``docs_per_topic`` documents with graded relevance (0, 1, 2; about one in
    twenty relevant). A run scores a document as ``quality * grade + noise`` and returns its top
    ``depth``. The qrels hold the true grades of the union of the pooled runs' top
    ``pool_depth``.

    Args:
        directory: Where the files go (created if missing).
        topics: Number of topics.
        docs_per_topic: Documents per topic.
        depth: Documents per run and topic.
        pool_depth: Pool depth of the pooled runs.
        rng: Random generator or seed; the same seed writes the same files.

    Returns:
        The paths written.

    Examples:
        >>> import tempfile
        >>> files = write_demo(tempfile.mkdtemp(), topics=3, docs_per_topic=50, depth=10,
        ...                    pool_depth=5)
        >>> [p.name for p in files.runs][:2], files.qrels.name
        (['bm25.txt', 'bm25_rm3.txt'], 'qrels.txt')
    """
    # all files or none: each is written beside its target and renamed once every one is
    # whole; a folder made here is removed again on failure (a full disk leaves nothing)
    with new_directory(directory) as out, ExitStack() as files:
        return _write_demo(out, files, topics, docs_per_topic, depth, pool_depth, rng)


def demo_paths(directory: str | Path) -> list[Path]:
    """The files :func:`write_demo` writes into ``directory``: the qrels, the runs, the metadata."""
    out = Path(directory)
    return [out / "qrels.txt", *(out / f"{name}.txt" for name in DEMO_RUNS), out / "runs.tsv"]


def _write_demo(
    out: Path,
    files: ExitStack,
    topics: int,
    docs_per_topic: int,
    depth: int,
    pool_depth: int,
    rng: np.random.Generator | int | None,
) -> DemoFiles:
    """The body of :func:`write_demo`: every file's temporary is entered into ``files``."""
    generator = np.random.default_rng(rng)
    depth = min(depth, docs_per_topic)
    grades = generator.choice([0, 1, 2], p=[0.95, 0.035, 0.015], size=(topics, docs_per_topic))
    # every topic gets at least one relevant document, so none is dropped from the averages
    grades[:, 0] = np.maximum(grades[:, 0], 1)
    qualities = np.array([q for q, _ in DEMO_RUNS.values()])
    pooled = np.array([p for _, p in DEMO_RUNS.values()])
    noise = generator.normal(size=(len(DEMO_RUNS), topics, docs_per_topic))
    scores = qualities[:, None, None] * grades[None, :, :] + noise
    # ranking per (run, topic): the top `depth` documents by score, best first
    order = np.argsort(-scores, axis=2, kind="stable")[:, :, :depth]
    top_scores = np.take_along_axis(scores, order, axis=2)
    judged = np.zeros((topics, docs_per_topic), dtype=bool)
    for run_index in np.flatnonzero(pooled):
        np.put_along_axis(judged, order[run_index, :, :pool_depth], True, axis=1)
    topic_ids = np.array([str(401 + t) for t in range(topics)])
    doc_ids = np.char.add(
        np.char.add(np.char.add("d", topic_ids)[:, None], "-"),
        np.char.zfill(np.arange(docs_per_topic).astype(str), 4)[None, :],
    )
    topic_of_line = np.repeat(np.arange(topics), depth)
    runs = []
    for run_index, name in enumerate(DEMO_RUNS):
        lines = pd.DataFrame(
            {
                "query_id": topic_ids[topic_of_line],
                "q0": "Q0",
                "doc_id": doc_ids[topic_of_line, order[run_index].ravel()],
                "rank": np.tile(np.arange(1, depth + 1), topics),
                "score": top_scores[run_index].ravel(),
                "tag": name,
            }
        )
        path = out / f"{name}.txt"
        lines.to_csv(files.enter_context(atomic_path(path)), sep=" ", header=False, index=False, float_format="%.4f")
        runs.append(path)
    t_judged, d_judged = np.nonzero(judged)
    qrels = out / "qrels.txt"
    pd.DataFrame(
        {
            "query_id": topic_ids[t_judged],
            "iteration": 0,
            "doc_id": doc_ids[t_judged, d_judged],
            "relevance": grades[t_judged, d_judged],
        }
    ).to_csv(files.enter_context(atomic_path(qrels)), sep=" ", header=False, index=False)
    metadata = out / "runs.tsv"
    files.enter_context(atomic_output(metadata)).write(
        "run_id\tgroup\ttype\tpooled\n"
        + "".join(f"{name}\tdemo\tautomatic\t{int(p)}\n" for name, (_, p) in DEMO_RUNS.items())
    )
    return DemoFiles(qrels=qrels, runs=runs, metadata=metadata, pool_depth=pool_depth)
