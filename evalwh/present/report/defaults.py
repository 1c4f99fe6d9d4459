"""What a collection can support: its judged depth, its grades, and the measures they imply.

The report (``evalwh report``, :meth:`evalwh.Warehouse.report`) and ``evalwh plot runs`` take
their measures and depths from here when none are given, so that a report on a depth-10 pool
does not rank by P@1000 and a graded collection is led by nDCG@10 (docs/report.md, "Defaults
from the collection"):

* the **judged depth** (methods §14.2): the depth of the pool whose qrels set is evaluated
  (``evalwh pool build``), else the most common depth at which the pooled runs' lists stop
  being judged (run metadata), else the same over every run's lists, each only when most
  lists are judged to it or deeper (``queries/report/judged_depth.sql``); ``--pool-depth``
  overrides them all;
* **graded or binary** labels: any grade above 1 is graded (``queries/report/grades.sql``);
* the **measures** (methods §14.1): graded ``nDCG@10, P@10, AP, bpref``, binary ``P@10, AP,
  nDCG@10, bpref``; the first leads (ranks the board). The cutoffs are trec_eval's
  (:data:`CUTOFFS`), never one made from the judged depth;
* the **depths** of the decision matrix: those of 10, 30, 100, 500, 1000 within the judged
  depth (else the deepest of trec_eval's cutoffs within it), and 10, the lead measure's
  cutoff (all of them, cut at the deepest ranking, when the depth is unknown).

Every measure that reads ranks past the judged depth, a cutoff's (``P@100`` on a depth-10
pool) or the whole ranking's (AP, bpref, R-precision), is kept and marked with the same
reason (:func:`deeper_than_judged`).

A collection may also store its **conventions** (``evalwh conventions``, table
``collection_conventions``): leaderboard measures, baselines and judged depth, which then take
the place of the defaults above wherever the user names none (:func:`read_conventions`,
:func:`store_conventions`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from evalwh import sql

if TYPE_CHECKING:
    from evalwh.store.connection import Store

_QUERIES = "evalwh.queries.report"
GRID = (10, 30, 100, 500, 1000)
LEAD_DEPTH = 10
CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
"""trec_eval's cut list (``-m P``, ``ndcg_cut``, ...): the cutoffs papers report."""
_CUTOFF = re.compile(r"@(\d+)$")
# measures that read no rank's judgment (counts of the run or of the qrels): never marked
_UNRANKED = frozenset({"num_q", "num_rel", "num_ret"})


@dataclass(frozen=True)
class JudgedDepth:
    """How deep the judgments reach, and how that is known.

    Attributes:
        depth: The judged depth, or None when nothing says it.
        source: One phrase: ``given``, ``the depth of the pool evaluated``, ``inferred from the
            pooled runs' lists``, ``inferred from the runs' lists`` or ``unknown ...``.
        evidence: For an inferred depth, the sentence that says why (``816 of 1,680 pooled
            lists are judged to exactly rank 7, 1,674 to rank 7 or deeper``); else empty.
    """

    depth: int | None
    source: str
    evidence: str = ""

    def sentence(self) -> str:
        """The depth with its source and evidence, as the report prints it.

        Examples:
            >>> JudgedDepth(7, "inferred from the pooled runs' lists", "816 of 1,680 ...").sentence()
            "7, inferred from the pooled runs' lists: 816 of 1,680 ..."
            >>> JudgedDepth(None, "unknown (no depth stands out)").sentence()
            'unknown (no depth stands out)'
        """
        if self.depth is None:
            return self.source
        return f"{self.depth}, {self.source}" + (f": {self.evidence}" if self.evidence else "")


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
        >>> row = pd.DataFrame({"pool_depth": [None], "pooled_depth": [None], "pooled_exact": [None],
        ...                     "pooled_deeper": [None], "pooled_lists": [0], "runs_depth": [7],
        ...                     "runs_exact": [816], "runs_deeper": [1674], "runs_lists": [1680]})
        >>> judged_depth(row).sentence()
        "7, inferred from the runs' lists: 816 of 1,680 lists are judged to exactly rank 7, 1,674 to rank 7 or deeper"
        >>> judged_depth(row, given=5)
        JudgedDepth(depth=5, source='given (--pool-depth)', evidence='')
    """
    if given is not None:
        return JudgedDepth(int(given), "given (--pool-depth)")
    row = frame.iloc[0]
    if not pd.isna(row["pool_depth"]):
        return JudgedDepth(int(row["pool_depth"]), "the depth of the pool evaluated (evalwh pool build)")
    for prefix, source, lists in (
        ("pooled", "inferred from the pooled runs' lists", "pooled lists"),
        ("runs", "inferred from the runs' lists", "lists"),
    ):
        if not pd.isna(row[f"{prefix}_depth"]):
            depth = int(row[f"{prefix}_depth"])
            evidence = (
                f"{int(row[f'{prefix}_exact']):,} of {int(row[f'{prefix}_lists']):,} {lists} are judged to "
                f"exactly rank {depth}, {int(row[f'{prefix}_deeper']):,} to rank {depth} or deeper"
            )
            return JudgedDepth(depth, source, evidence)
    return JudgedDepth(
        None, "unknown (no depth at which most ranked lists stop being judged, or every list is judged to its end)"
    )


def read_judged_depth(wh: Store, collection: str, qrels_id: str, fill: Sequence[str] = ()) -> pd.DataFrame:
    """Run ``judged_depth.sql`` on the label sets ``qrels_id`` and ``fill`` (one row)."""
    return wh.df(
        sql.query(_QUERIES, "judged_depth"),
        {"collection_id": collection, "qrels_id": qrels_id, "qrels_ids": [qrels_id, *fill]},
    )


def is_graded(wh: Store, collection: str, qrels_ids: Sequence[str]) -> bool:
    """True when the label sets hold a grade above 1."""
    frame = wh.df(
        sql.query(_QUERIES, "grades"), {"collection_id": collection, "qrels_ids": list(qrels_ids)}
    )
    top = frame["max_grade"].iloc[0]
    return bool(not pd.isna(top) and float(top) > 1)


def default_measures(graded: bool) -> tuple[str, ...]:
    """The leaderboard's measures, the lead first: nDCG@10 for graded labels, P@10 for binary.

    The cutoff is trec_eval's 10 whatever the judged depth: a measure past it is marked
    (:func:`deeper_than_judged`), not cut to a depth no paper reports.

    Examples:
        >>> default_measures(True), default_measures(False)
        (('nDCG@10', 'P@10', 'AP', 'bpref'), ('P@10', 'AP', 'nDCG@10', 'bpref'))
    """
    k = LEAD_DEPTH
    cut = ("nDCG", "P") if graded else ("P", "nDCG")
    first, second = (f"{name}@{k}" for name in cut)
    return (first, second, "AP", "bpref") if graded else (first, "AP", second, "bpref")


def default_depths(depth: int | None, deepest: int) -> tuple[int, ...] | None:
    """The decision matrix's depths: the grid within the judged depth, and the lead's 10.

    Within the judged depth: the grid's depths (10, 30, 100, 500, 1000), else the deepest of
    trec_eval's cutoffs (5); and 10, the lead measure's cutoff, also past it (marked). None
    (the grid cut at the deepest ranking) when the judged depth is unknown or reaches the
    deepest ranking. Every depth is one of trec_eval's cutoffs.

    Examples:
        >>> default_depths(10, 1000), default_depths(7, 1000), default_depths(100, 1000)
        ((10,), (5, 10), (10, 30, 100))
        >>> default_depths(40, 1000), default_depths(3, 1000), default_depths(None, 1000)
        ((10, 30), (10,), None)
    """
    if depth is None or depth >= deepest:
        return None
    within = [d for d in GRID if d <= depth] or [c for c in CUTOFFS if c <= depth][-1:]
    return tuple(sorted({*within, LEAD_DEPTH}))


def depths_phrase(depths: Sequence[int]) -> str:
    """``depth 5``, ``depths 5 and 10``, ``depths 10, 30 and 100``: depths in a sentence.

    Examples:
        >>> depths_phrase([5]), depths_phrase([5, 10]), depths_phrase([10, 30, 100])
        ('depth 5', 'depths 5 and 10', 'depths 10, 30 and 100')
    """
    names = [str(d) for d in depths]
    if len(names) <= 1:
        return f"depth {''.join(names)}"
    return f"depths {', '.join(names[:-1])} and {names[-1]}"


def cutoff(measure: str) -> int | None:
    """The rank cutoff of a measure's name (``P@100`` -> 100), None for none (``AP``)."""
    match = _CUTOFF.search(measure)
    return int(match.group(1)) if match else None


def reach(measure: str, deepest: int | None = None) -> int | None:
    """The deepest rank whose judgment ``measure`` reads: its cutoff, else the whole ranking.

    ``deepest`` is the deepest ranking (None: unknown, read as "the whole ranking"); counts
    that read no rank's judgment (``NumRet``, ``NumRel``, ``NumQ``) reach nothing (0).

    Examples:
        >>> reach("P@10"), reach("AP", 1000), reach("Rprec", 1000), reach("NumRet", 1000)
        (10, 1000, 1000, 0)
    """
    from evalwh.errors import EvalWhError
    from evalwh.measures import catalog

    k = cutoff(measure)
    if k is not None:
        return k
    try:
        (spec,) = catalog.expand([measure])
    except EvalWhError:  # (not one measure: read as reaching the whole ranking)
        return deepest
    if spec.metric.key in _UNRANKED:
        return 0
    k = (getattr(spec, "params", None) or {}).get("k")
    return int(k) if k is not None else deepest


def deeper_than_judged(
    measures: Sequence[str], depth: int | None, deepest: int | None = None
) -> dict[str, str]:
    """The measures that read ranks past the judged depth, each with how far (methods §14.1).

    A cutoff past the depth (``P@100`` on a depth-10 pool) and a measure of the whole ranking
    (AP, bpref, R-precision, nDCG without a cutoff) are marked alike: past the judged depth
    a document is judged only where a pooled run put it in the pool, so the measure counts
    the others as non-relevant. The value says how far it reads (:func:`deeper_note` is the
    one sentence the report prints for all of them).

    Examples:
        >>> deeper_than_judged(["P@10", "P@100", "AP", "NumRet"], 10, 1000)
        {'P@100': 'to rank 100', 'AP': 'the whole ranking, to rank 1000'}
    """
    if depth is None:
        return {}
    out = {}
    for measure in measures:
        k = cutoff(measure)
        far = reach(measure, deepest)
        if k is not None:
            if k > depth:
                out[measure] = f"to rank {k}"
        elif far is None:
            out[measure] = "the whole ranking"
        elif far > depth:
            out[measure] = f"the whole ranking, to rank {far}"
    return out


def deeper_note(marked: dict[str, str], depth: int | None, label: Callable[[str], str] = str) -> str:
    """The one sentence that explains the mark † on every measure past the judged depth.

    Examples:
        >>> deeper_note({"P@100": "to rank 100", "AP": "the whole ranking, to rank 1000"}, 10)
        '† Past the judged depth (10): ranks 11 and deeper are judged only where a pooled run put the document in the pool, so these measures count the unjudged documents there as non-relevant: P@100 (to rank 100), AP (the whole ranking, to rank 1000).'
    """
    if not marked or depth is None:
        return ""
    listed = ", ".join(f"{label(m)} ({far})" for m, far in marked.items())
    return (
        f"† Past the judged depth ({depth}): ranks {depth + 1} and deeper are judged only where a "
        "pooled run put the document in the pool, so these measures count the unjudged documents "
        f"there as non-relevant: {listed}."
    )


def collection_defaults(
    wh: Store,
    collection: str,
    *,
    qrels_id: str = "default",
    fill: Sequence[str] = (),
    pool_depth: int | None = None,
    deepest: int | None = None,
) -> CollectionDefaults:
    """Read a collection's defaults (its conventions first, then what its judgments say).

    Args:
        wh: The warehouse.
        collection: The collection.
        qrels_id: The label set evaluated with (a pool's set has its pool's depth).
        fill: Sets filling ``qrels_id``'s gaps (their grades count too).
        pool_depth: The judged depth, when the caller knows it.
        deepest: The deepest ranking (read from the runs when None).
    """
    from evalwh.store.context import check_qrels_sets

    wh.require_collection(collection)
    check_qrels_sets(wh, collection, [qrels_id, *fill])
    stored = read_conventions(wh, collection)
    if pool_depth is None and stored.judged_depth is not None:
        judged = JudgedDepth(stored.judged_depth, "the collection's conventions (evalwh conventions)")
    elif pool_depth is not None:
        judged = judged_depth(pd.DataFrame(), pool_depth)
    else:
        judged = judged_depth(read_judged_depth(wh, collection, qrels_id, fill))
    graded = is_graded(wh, collection, [qrels_id, *fill])
    if deepest is None:
        deepest = int(wh.runs(collection)["max_depth"].max())
    measures = stored.measures or default_measures(graded)
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
