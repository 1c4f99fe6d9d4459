"""What a collection can support: its judged depth, its grades, and the measures they imply.

The report (``evalwh report``, :meth:`evalwh.Warehouse.report`) and ``evalwh plot runs`` take
their measures and depths from here when none are given, so that a report on a depth-10 pool
does not rank by P@1000 and a graded collection is led by nDCG@10 (docs/report.md, "Defaults
from the collection"):

* the **judged depth**: the depth of the pool whose qrels set is evaluated (``evalwh pool
  build``), else the shortest judged prefix of the runs flagged pooled (run metadata), else
  the deepest depth to which some run has every list judged (``queries/report/judged_depth.sql``);
  ``--pool-depth`` overrides all three;
* **graded or binary** labels: any grade above 1 is graded (``queries/report/grades.sql``);
* the **measures**: graded ``nDCG@k, P@k, AP, bpref``, binary ``P@k, AP, nDCG@k, bpref``, with
  ``k = 10`` or the judged depth when it is shallower; the first leads (ranks the board);
* the **depths** of the decision matrix: 10, 30, 100, 500, 1000 up to the judged depth, plus
  the judged depth itself (all of them, cut at the deepest ranking, when it is unknown).

A measure the user names that cuts deeper than the judged depth (``P@100`` on a depth-10 pool)
is kept, and marked with why (:func:`deeper_than_judged`).

A collection may also store its **conventions** (``evalwh conventions``, table
``collection_conventions``): leaderboard measures, baselines and judged depth, which then take
the place of the defaults above wherever the user names none (:func:`read_conventions`,
:func:`store_conventions`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from evalwh import sql

if TYPE_CHECKING:
    from evalwh.store.connection import Store

_QUERIES = "evalwh.queries.report"
GRID = (10, 30, 100, 500, 1000)
LEAD_DEPTH = 10
_CUTOFF = re.compile(r"@(\d+)$")


@dataclass(frozen=True)
class JudgedDepth:
    """How deep the judgments reach, and how that is known.

    Attributes:
        depth: The judged depth, or None when nothing says it.
        source: One phrase: ``given``, ``the depth of pool P``, ``inferred from the pooled
            runs' fully judged prefixes``, ``inferred from the runs' fully judged prefixes``
            or ``unknown ...``.
    """

    depth: int | None
    source: str


@dataclass(frozen=True)
class Conventions:
    """A collection's stored conventions; empty (None, ()) where none are set.

    Attributes:
        measures: Leaderboard measures, the lead first.
        baselines: Baseline runs, in order.
        judged_depth: The depth the judgments cover.
        qrels_id: The qrels set every command uses when none is given (``--qrels-id``).
    """

    measures: tuple[str, ...] | None = None
    baselines: tuple[str, ...] = ()
    judged_depth: int | None = None
    qrels_id: str | None = None


def read_conventions(wh: Store, collection: str) -> Conventions:
    """The stored conventions of ``collection`` (empty when none are set, or when the
    warehouse predates schema/018 and is opened read-only, so it has no such table)."""
    exists = wh.con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'collection_conventions'"
    ).fetchone()
    if not exists or not exists[0]:
        return Conventions()
    frame = wh.df(sql.query(_QUERIES, "conventions"), {"collection_id": collection})
    if frame.empty:
        return Conventions()
    row = frame.iloc[0]
    measures = row["measures"]
    baselines = row["baselines"]
    return Conventions(
        measures=None if measures is None or len(measures) == 0 else tuple(str(m) for m in measures),
        baselines=() if baselines is None else tuple(str(b) for b in baselines),
        judged_depth=None if pd.isna(row["judged_depth"]) else int(row["judged_depth"]),
        qrels_id=None if row["qrels_id"] is None else str(row["qrels_id"]),
    )


def store_conventions(wh: Store, collection: str, conventions: Conventions) -> Conventions:
    """Replace the stored conventions of ``collection`` (all empty: remove them).

    Raises:
        MetricParamError: for a measure the registry does not know.
        NotFoundError: for an unknown collection, baseline run or qrels set.
        InsufficientDataError: for a judged depth below 1.
    """
    from evalwh.errors import InsufficientDataError, NotFoundError
    from evalwh.measures import catalog

    wh.require_writer("set a collection's conventions")
    wh.require_collection(collection)
    if conventions.measures is not None:
        catalog.expand(list(conventions.measures))  # (raises for an unknown measure)
    runs = set(wh.run_ids(collection))
    for name in conventions.baselines:
        if name not in runs:
            raise NotFoundError(
                f"conventions: collection {collection!r} has no run {name!r}; "
                f"evalwh runs -c {collection} lists them"
            )
    if conventions.qrels_id is not None:
        from evalwh.store.context import check_qrels_sets

        check_qrels_sets(wh, collection, [conventions.qrels_id])
    if conventions.judged_depth is not None and conventions.judged_depth < 1:
        raise InsufficientDataError(f"conventions: the judged depth must be at least 1, got {conventions.judged_depth}")
    with wh.transaction():
        wh.run(
            sql.query(_QUERIES, "conventions_set"),
            {
                "collection_id": collection,
                "measures": None if conventions.measures is None else list(conventions.measures),
                "baselines": list(conventions.baselines) or None,
                "judged_depth": conventions.judged_depth,
                "qrels_id": conventions.qrels_id,
            },
        )
    return read_conventions(wh, collection)


@dataclass(frozen=True)
class CollectionDefaults:
    """The defaults a collection supports (see the module docstring).

    Attributes:
        judged: The judged depth and its source.
        graded: True when the labels have more than two levels (a grade above 1).
        measures: The leaderboard's measures, the lead first.
        depths: The decision matrix's depths; None: the grid cut at the deepest ranking.
    """

    judged: JudgedDepth
    graded: bool
    measures: tuple[str, ...]
    depths: tuple[int, ...] | None

    @property
    def lead(self) -> str:
        """The measure that ranks the leaderboard (and ``plot runs``)."""
        return self.measures[0]


def judged_depth(frame: pd.DataFrame, given: int | None = None) -> JudgedDepth:
    """The judged depth from ``queries/report/judged_depth.sql``'s one row (or ``given``).

    Examples:
        >>> row = pd.DataFrame({"pool_depth": [None], "pooled_depth": [None], "runs_depth": [12],
        ...                     "pooled_runs": [0]})
        >>> judged_depth(row)
        JudgedDepth(depth=12, source="inferred from the runs' fully judged prefixes")
        >>> judged_depth(row, given=5).depth
        5
    """
    if given is not None:
        return JudgedDepth(int(given), "given")
    row = frame.iloc[0]
    for column, source in (
        ("pool_depth", "the depth of the pool evaluated (evalwh pool build)"),
        ("pooled_depth", "inferred from the pooled runs' fully judged prefixes"),
        ("runs_depth", "inferred from the runs' fully judged prefixes"),
    ):
        if not pd.isna(row[column]):
            return JudgedDepth(int(row[column]), source)
    return JudgedDepth(None, "unknown (every ranked list is judged to its end)")


def read_judged_depth(wh: Store, collection: str, qrels_id: str) -> pd.DataFrame:
    """Run ``judged_depth.sql`` over the evaluation context already built (one row)."""
    return wh.df(
        sql.query(_QUERIES, "judged_depth"), {"collection_id": collection, "qrels_id": qrels_id}
    )


def is_graded(wh: Store, collection: str, qrels_ids: Sequence[str]) -> bool:
    """True when the label sets hold a grade above 1."""
    frame = wh.df(
        sql.query(_QUERIES, "grades"), {"collection_id": collection, "qrels_ids": list(qrels_ids)}
    )
    top = frame["max_grade"].iloc[0]
    return bool(not pd.isna(top) and float(top) > 1)


def default_measures(graded: bool, depth: int | None) -> tuple[str, ...]:
    """The leaderboard's measures, the lead first: nDCG@k for graded labels, P@k for binary.

    Examples:
        >>> default_measures(True, 100), default_measures(False, 5)
        (('nDCG@10', 'P@10', 'AP', 'bpref'), ('P@5', 'AP', 'nDCG@5', 'bpref'))
    """
    k = LEAD_DEPTH if depth is None else min(LEAD_DEPTH, depth)
    cut = ("nDCG", "P") if graded else ("P", "nDCG")
    first, second = (f"{name}@{k}" for name in cut)
    return (first, second, "AP", "bpref") if graded else (first, "AP", second, "bpref")


def default_depths(depth: int | None, deepest: int) -> tuple[int, ...] | None:
    """The decision matrix's depths: the grid up to the judged depth, and that depth.

    None (the grid cut at the deepest ranking) when the judged depth is unknown or reaches the
    deepest ranking.

    Examples:
        >>> default_depths(10, 1000), default_depths(5, 1000), default_depths(100, 1000)
        ((10,), (5,), (10, 30, 100))
        >>> default_depths(40, 1000), default_depths(None, 1000), default_depths(2000, 1000)
        ((10, 30, 40), None, None)
    """
    if depth is None or depth >= deepest:
        return None
    return tuple(sorted({*(d for d in GRID if d <= depth), depth}))


def cutoff(measure: str) -> int | None:
    """The rank cutoff of a measure's name (``P@100`` -> 100), None for none (``AP``)."""
    match = _CUTOFF.search(measure)
    return int(match.group(1)) if match else None


def deeper_than_judged(measures: Sequence[str], depth: int | None) -> dict[str, str]:
    """The measures that cut deeper than the judged depth, each with why it is marked.

    Examples:
        >>> deeper_than_judged(["P@10", "P@100", "AP"], 10)
        {'P@100': 'ranks 11-100 are judged only where another run put them in the pool (judged depth 10)'}
    """
    if depth is None:
        return {}
    out = {}
    for measure in measures:
        k = cutoff(measure)
        if k is not None and k > depth:
            out[measure] = (
                f"ranks {depth + 1}-{k} are judged only where another run put them in the pool "
                f"(judged depth {depth})"
            )
    return out


def collection_defaults(
    wh: Store,
    collection: str,
    *,
    qrels_id: str = "default",
    fill: Sequence[str] = (),
    pool_depth: int | None = None,
    deepest: int | None = None,
) -> CollectionDefaults:
    """Read a collection's defaults: builds the evaluation context (every run, every topic).

    Args:
        wh: The warehouse.
        collection: The collection.
        qrels_id: The label set evaluated with (a pool's set has its pool's depth).
        fill: Sets filling ``qrels_id``'s gaps (their grades count too).
        pool_depth: The judged depth, when the caller knows it.
        deepest: The deepest ranking (read from the runs when None).
    """
    from evalwh.store.context import Averaging, Options, build_context

    stored = read_conventions(wh, collection)
    options = Options(qrels_id=qrels_id, averaging=Averaging.trec_eval_c, fill=tuple(fill))
    with wh.transaction():
        build_context(wh, collection, None, options)
        frame = read_judged_depth(wh, collection, qrels_id)
    judged = judged_depth(frame, pool_depth)
    if pool_depth is None and stored.judged_depth is not None:
        judged = JudgedDepth(stored.judged_depth, "the collection's conventions (evalwh conventions)")
    graded = is_graded(wh, collection, [qrels_id, *fill])
    if deepest is None:
        deepest = int(wh.runs(collection)["max_depth"].max())
    measures = stored.measures or default_measures(graded, judged.depth)
    return CollectionDefaults(judged, graded, measures, default_depths(judged.depth, deepest))


def leaderboard_order(
    wh: Store,
    collection: str,
    lead: str,
    *,
    runs: Sequence[str] | None = None,
    qrels_id: str = "default",
    fill: Sequence[str] = (),
) -> list[str]:
    """The runs best first by mean ``lead``, ties by run id: the report's leaderboard order."""
    from evalwh.measures.evaluation import evaluate

    means = evaluate(wh, [lead], collection=collection, runs=runs, qrels_id=qrels_id, fill=fill)
    ranked = means.sort_values(["value", "run_id"], ascending=[False, True], kind="stable")
    return [str(r) for r in ranked["run_id"]]
