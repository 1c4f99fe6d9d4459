"""Compare runs of a warehouse collection on any measures (the warehouse side of ``evalwh compare``).

Per-topic scores come from one :func:`evalwh.measures.evaluation.evaluate` call; the statistics are
the pure function :func:`evalwh.stats.compare.compare`, which takes the same long frame from
any other source (see :mod:`evalwh.io.score_files`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evalwh.errors import NotFoundError
from evalwh.measures.evaluation import evaluate
from evalwh.store.context import composition_label

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.stats.compare import Comparison
    from evalwh.store.connection import Store


def family_runs(
    wh: Store,
    collection: str,
    runs: Sequence[str],
    baselines: Sequence[str] = (),
    *,
    all_runs: bool = False,
) -> list[str]:
    """The runs compared: the baselines first, then the runs named (all of the collection on request).

    Raises:
        NotFoundError: for a run the collection does not have, or for no runs at all.
    """
    known = wh.run_ids(collection)
    if not known:
        raise NotFoundError(f"compare: collection {collection!r} has no runs")
    wanted = list(dict.fromkeys([*baselines, *runs, *(known if all_runs else [])]))
    missing = [r for r in wanted if r not in set(known)]
    if missing:
        raise NotFoundError(
            f"compare: run {missing[0]!r} is not in collection {collection!r}; "
            f"evalwh runs -c {collection} lists them"
        )
    if len(wanted) < 2:
        raise NotFoundError(
            "compare: name at least two runs (or a baseline and a run, or --all-runs)"
        )
    return wanted


def collection_scores(
    wh: Store,
    collection: str,
    measures: Sequence[str],
    runs: Sequence[str],
    *,
    qrels_id: str = "default",
    fill: Sequence[str] = (),
) -> pd.DataFrame:
    """Per-topic scores ``run_id, query_id, measure, value`` of ``runs`` on ``measures``."""
    frame = evaluate(wh, 
        list(measures), collection=collection, runs=list(runs), per_query=True, qrels_id=qrels_id, fill=fill,
        typed_names=True,
    )
    return frame[["run_id", "query_id", "measure", "value"]]


RETRIEVED = "NumRet"


def with_retrieved(measures: Sequence[str], *, typed_names: bool) -> tuple[list[str], str, bool]:
    """``measures`` with ``NumRet`` added, the name its rows will carry, and whether it was asked for.

    Evaluated in the same call as the measures, ``NumRet`` per topic says which topics a run
    has no ranking for (0): :func:`split_retrieved` takes those rows out again for
    :func:`evalwh.stats.compare.compare`'s ``retrieved``.
    """
    from evalwh.measures.catalog import expand

    asked = {str(m): (m.name if typed_names else str(m)) for m in expand(list(measures))}
    if RETRIEVED in asked:
        return list(measures), asked[RETRIEVED], True
    return [*measures, RETRIEVED], RETRIEVED, False


def split_retrieved(scores: pd.DataFrame, name: str, asked: bool) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The per-topic scores (without the added ``NumRet`` rows unless asked for) and those rows."""
    rows = scores["measure"] == name
    retrieved = scores.loc[rows, ["run_id", "query_id", "value"]]
    return (scores if asked else scores[~rows]), retrieved


def compare_collection(
    wh: Store,
    collection: str,
    measures: Sequence[str],
    runs: Sequence[str] = (),
    *,
    baselines: Sequence[str] = (),
    all_runs: bool = False,
    qrels_id: str = "default",
    fill: Sequence[str] = (),
    **options: Any,
) -> Comparison:
    """Compare runs of a collection on ``measures`` (see :func:`evalwh.stats.compare.compare`).

    Args:
        wh: The warehouse.
        collection: The collection.
        measures: Measure specs (``AP``, ``nDCG@10``, ``RBP(p=0.9)@100``, ...).
        runs: The runs compared (besides the baselines).
        baselines: Runs every other run is compared with.
        all_runs: Add every run of the collection to the family.
        qrels_id: The qrels set.
        fill: Sets whose labels fill the pairs ``qrels_id`` did not judge, in order
            (:func:`evalwh.measures.evaluation.evaluate`); ``pairs`` and ``runs`` then carry
            a ``qrels_id`` column naming the sets (``A+B``).
        **options: ``all_pairs, test, correction, alpha, n_resamples, rng`` of
            :func:`~evalwh.stats.compare.compare`.

    Examples:
        >>> import pandas as pd
        >>> from evalwh import Warehouse
        >>> wh = Warehouse(":memory:")
        >>> qrels = pd.DataFrame({"query_id": ["1", "2", "3"], "doc_id": ["a"] * 3, "relevance": [1] * 3})
        >>> _ = wh.ingest_qrels(qrels, collection="demo")
        >>> for run, docs in {"x": ["a", "b"], "y": ["b", "a"]}.items():
        ...     lines = pd.DataFrame({"query_id": ["1", "2", "3"] * 2, "doc_id": [docs[0]] * 3 + [docs[1]] * 3,
        ...                           "score": [2.0] * 3 + [1.0] * 3})
        ...     _ = wh.ingest_runs(lines, collection="demo", run_id=run)
        >>> out = compare_collection(wh, "demo", ["AP"], ["x"], baselines=["y"])
        >>> out.pairs[["run_a", "run_b", "mean_diff", "wins"]].values.tolist()
        [['x', 'y', 0.5, 3]]
    """
    from evalwh.stats.compare import compare

    family = family_runs(wh, collection, runs, baselines, all_runs=all_runs)
    asked, name, kept = with_retrieved(measures, typed_names=True)
    scores, retrieved = split_retrieved(
        collection_scores(wh, collection, asked, family, qrels_id=qrels_id, fill=fill), name, kept
    )
    chosen = list(dict.fromkeys(scores["measure"]))
    result = compare(scores, runs=family, measures=chosen, baselines=baselines, retrieved=retrieved, **options)
    if fill:
        for frame in (result.pairs, result.runs):
            frame.insert(0, "qrels_id", composition_label(qrels_id, fill))
    return result
