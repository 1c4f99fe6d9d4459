"""Run exclusion before the S4 experiments (methods §8.1, after Buckley & Voorhees 2004)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalwh import sql

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.store.connection import Store

_QUERIES = "evalwh.queries.experiments"
CAP = 1000
SHARE = 0.95


def run_exclusion(
    wh: Store,
    collection: str,
    *,
    qrels_id: str = "default",
    rel: int = 1,
    cap: int = CAP,
    share: float = SHARE,
) -> pd.DataFrame:
    """Decide which runs of ``collection`` take part in the S4 experiments.

    A run is excluded when the documents it retrieved over the topic set T (after the cap)
    number strictly fewer than ``share * |T| * cap``, or when it retrieved nothing for some
    topic of T. T holds the topics with at least one relevant document in ``qrels_id``.

    Args:
        wh: The warehouse.
        collection: The collection.
        qrels_id: The qrels set that defines T.
        rel: Relevance threshold (grade >= rel is relevant).
        cap: Documents counted per topic at most (1000 in TREC).
        share: The share of ``|T| * cap`` a run must reach.

    Returns:
        One row per run: ``run_id, total_retrieved, topics_empty, threshold, excluded,
        reason`` (reason is None for retained runs), excluded runs first.

    Examples:
        >>> import pandas as pd
        >>> from evalwh import Warehouse
        >>> wh = Warehouse(":memory:")
        >>> _ = wh.ingest_qrels(pd.DataFrame({"query_id": ["1", "2"], "doc_id": ["a", "b"],
        ...                                    "relevance": [1, 1]}), collection="demo")
        >>> _ = wh.ingest_runs(pd.DataFrame({"query_id": ["1", "2", "1"], "doc_id": ["a", "b", "a"],
        ...                                   "score": [1.0, 1.0, 1.0], "run_id": ["full", "full", "half"]}),
        ...                    collection="demo")
        >>> run_exclusion(wh, "demo", cap=1)[["run_id", "excluded", "reason"]].values.tolist()
        [['half', True, 'retrieved 1 < 1.9 = 0.95 x 2 topics x 1; nothing for 1 of 2 topics'], ['full', False, None]]
    """
    wh.require_collection(collection)
    frame = wh.df(
        sql.query(_QUERIES, "exclusion"),
        {"collection_id": collection, "qrels_id": qrels_id, "rel": rel, "cap": cap, "share": share},
    )
    frame["reason"] = frame["reason"].astype(object).where(frame["reason"].notna(), None)
    return frame


def retained_runs(exclusion: pd.DataFrame) -> list[str]:
    """The run ids that :func:`run_exclusion` keeps, sorted."""
    return sorted(exclusion.loc[~exclusion["excluded"].astype(bool), "run_id"].tolist())
