"""Uncertainty from machine labels: a judge's confusion matrix propagated to scores and rankings.

A reference label set ``H`` (human assessors, possibly incomplete) is filled by a machine set
``M`` (an LLM judge, say): a document ``H`` judged keeps its grade, a document only ``M``
judged is not taken at its word but as evidence of known reliability. The judge's confusion
matrix ``P(human grade | machine grade)`` is estimated on the pairs both sets judged,
smoothed by a symmetric Dirichlet prior (methods §12.2). Each Monte Carlo replicate draws,
for every document only ``M`` judged, one human-equivalent grade from the row of its machine
grade; every run is scored on those labels, so the runs of one replicate share them
(methods §12.1). Over the replicates each run (and topic) gets a mean, a standard deviation
and a central interval, and each pair of runs the probability that the replicates order them
the other way round (methods §12.4).

Measures: ``P@k``, ``nDCG`` / ``nDCG@k`` (gain = grade) and ``AP`` / ``AP@k``. The number of
relevant documents ``R`` (AP's denominator) and the ideal gain vector (nDCG's) are drawn too:
they count every document of the topic only ``M`` judged, retrieved or not (methods §12.3).
Documents neither set judged are non-relevant, as every measure takes them (methods §3.1).

The rankings' judged positions come from SQL (``queries/label_uncertainty/``); the replicates
are arrays: all draws of a block of replicates at once, per-list sums by ``np.add.reduceat``,
no Python loop over documents or replicates (only over blocks of replicates, to bound memory).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from evalwh import sql
from evalwh.errors import InsufficientDataError, MetricParamError, NotFoundError
from evalwh.measures import catalog

if TYPE_CHECKING:
    from evalwh.store.connection import Store

_QUERIES = "evalwh.queries.label_uncertainty"
FAMILIES = ("p", "ndcg", "ap")
FEW_SHARED_PAIRS = 30  # below this the confusion matrix is mostly prior: warn
BLOCK = 4  # replicates drawn from one child generator: the draws do not depend on chunking
CELL_BUDGET = 1 << 22  # judged positions x replicates held at once (32 MB per float array)
LABEL_BUDGET = 1 << 22  # machine documents x replicates drawn at once


class FewSharedPairsWarning(UserWarning):
    """The machine set shares few judged pairs with the reference: the confusion is mostly prior."""


@dataclass(frozen=True)
class Confusion:
    """A judge's confusion matrix: the probability of each human grade given its grade.

    ``probabilities[i, j] = P(human grade = human_grades[j] | machine grade = machine_grades[i])``;
    each row sums to 1. ``counts`` are the shared pairs it was estimated from (zeros when the
    matrix was given) and ``prior`` the Dirichlet concentration added to each cell.
    """

    machine_grades: np.ndarray
    human_grades: np.ndarray
    counts: np.ndarray
    probabilities: np.ndarray
    prior: float

    def frame(self) -> pd.DataFrame:
        """One row per (machine grade, human grade): ``machine_grade, human_grade, pairs, probability``."""
        rows, cols = np.meshgrid(
            np.arange(len(self.machine_grades)), np.arange(len(self.human_grades)), indexing="ij"
        )
        return pd.DataFrame(
            {
                "machine_grade": self.machine_grades[rows.ravel()],
                "human_grade": self.human_grades[cols.ravel()],
                "pairs": self.counts.ravel().astype(int),
                "probability": self.probabilities.ravel(),
            }
        )


def estimate_confusion(
    shared: pd.DataFrame,
    machine_grades: Sequence[float],
    human_grades: Sequence[float],
    *,
    prior: float = 1.0,
) -> Confusion:
    """Estimate ``P(human | machine)`` from shared pairs with a symmetric Dirichlet prior (methods §12.2).

    ``P[i, j] = (n_ij + prior) / (n_i + prior * G)`` over the ``G`` human grades: the posterior
    mean under a Dirichlet(prior) row prior (``prior = 1``: Laplace's rule; 0: the raw shares).

    Args:
        shared: ``machine_grade, reference_grade, pairs`` (counts of pairs both sets judged).
        machine_grades: Every grade the machine set gave (the rows).
        human_grades: Every grade the reference gave (the columns).
        prior: The concentration added to every cell, >= 0.

    Raises:
        MetricParamError: for a negative prior.
        InsufficientDataError: for a machine grade without shared pairs when ``prior`` is 0.

    Examples:
        >>> shared = pd.DataFrame({"machine_grade": [0, 0, 1, 1], "reference_grade": [0, 1, 0, 1],
        ...                        "pairs": [8, 0, 1, 3]})
        >>> estimate_confusion(shared, [0, 1], [0, 1], prior=1.0).probabilities.round(3).tolist()
        [[0.9, 0.1], [0.333, 0.667]]
    """
    if not (prior >= 0 and np.isfinite(prior)):  # (inf would make every cell 1/n, through inf/inf)
        raise MetricParamError(f"label uncertainty: prior {prior} must be a finite number >= 0")
    rows = np.asarray(sorted({float(g) for g in machine_grades}), dtype=float)
    cols = np.asarray(sorted({float(g) for g in human_grades}), dtype=float)
    counts = np.zeros((len(rows), len(cols)))
    if len(shared):
        i = np.searchsorted(rows, shared["machine_grade"].to_numpy(float))
        j = np.searchsorted(cols, shared["reference_grade"].to_numpy(float))
        np.add.at(counts, (i, j), shared["pairs"].to_numpy(float))
    totals = counts.sum(axis=1, keepdims=True) + prior * len(cols)
    empty = totals[:, 0] <= 0
    if empty.any():
        raise InsufficientDataError(
            f"label uncertainty: machine grade(s) {rows[empty].tolist()} have no pair the reference "
            "judged too, and the prior is 0: give a prior > 0 (e.g. --prior 1)"
        )
    return Confusion(rows, cols, counts, (counts + prior) / totals, float(prior))


def given_confusion(matrix: pd.DataFrame) -> Confusion:
    """A confusion matrix given as a frame: index = machine grades, columns = human grades.

    Rows are normalised to sum to 1 (so counts may be given); a row of zeros is refused.

    Examples:
        >>> m = given_confusion(pd.DataFrame([[1, 0], [0, 1]], index=[0, 1], columns=[0, 1]))
        >>> m.probabilities.tolist()
        [[1.0, 0.0], [0.0, 1.0]]
    """
    values = matrix.to_numpy(dtype=float)
    if (values < 0).any() or not np.isfinite(values).all():
        raise MetricParamError("label uncertainty: a confusion matrix holds non-negative finite numbers")
    totals = values.sum(axis=1, keepdims=True)
    if (totals <= 0).any():
        raise MetricParamError("label uncertainty: every row of the confusion matrix needs a positive entry")
    order_rows = np.argsort(matrix.index.to_numpy(float))
    order_cols = np.argsort(matrix.columns.to_numpy(float))
    values = (values / totals)[order_rows][:, order_cols]
    return Confusion(
        matrix.index.to_numpy(float)[order_rows],
        matrix.columns.to_numpy(float)[order_cols],
        np.zeros_like(values),
        values,
        0.0,
    )


@dataclass(frozen=True)
class _Measure:
    """A supported measure: its label, family (p, ndcg, ap) and depth (None: whole list)."""

    label: str
    family: str
    k: int | None


def parse_measures(specs: Sequence[str]) -> list[_Measure]:
    """Resolve measure specs; only P@k, nDCG[@k] and AP[@k] with default parameters.

    Examples:
        >>> [(m.family, m.k) for m in parse_measures(["P@10", "nDCG@10", "MAP"])]
        [('p', 10), ('ndcg', 10), ('ap', None)]
    """
    if not specs:
        raise MetricParamError("label uncertainty: give at least one measure, e.g. -m P@10")
    out = []
    for spec in specs:
        parsed = catalog.parse(spec)
        key = parsed.metric.key
        others = {n: v for n, v in parsed.params.items() if n != "k"}
        defaults = {p.name: p.default for p in parsed.metric.params if p.name != "k"}
        if key not in FAMILIES or parsed.options or others != defaults:
            raise MetricParamError(
                f"label uncertainty: {spec}: supported are P@k, nDCG, nDCG@k, AP and AP@k "
                "(default parameters)"
            )
        out.append(_Measure(parsed.name, key, parsed.params.get("k")))
    return out


@dataclass
class _Collection:
    """The arrays one evaluation reads: lists (run x topic), judged positions, machine documents."""

    run_ids: list[str]
    topic_ids: list[str]
    grades: np.ndarray  # every grade value, ascending: labels are indices into it
    doc_topic: np.ndarray  # per machine-only document: its topic number
    doc_machine: np.ndarray  # ... the index of its machine grade in grades
    ref_counts: np.ndarray  # (topics, grades): documents H judged with each grade
    row_list: np.ndarray  # per judged position, sorted by list and rank: list number
    row_rank: np.ndarray
    row_doc: np.ndarray  # machine document number, -1 for a position H judged
    row_grade: np.ndarray  # H's grade, then its index in grades (-1 where row_doc >= 0)

    @property
    def n_lists(self) -> int:
        return len(self.run_ids) * len(self.topic_ids)


def _load(wh: Store, collection: str, reference: str, machine: str, runs: Sequence[str] | None,
          rel: float, max_depth: int | None) -> tuple[_Collection, pd.DataFrame, dict[str, np.ndarray]]:  # fmt: skip
    """Read the labels and the rankings' judged positions; returns the arrays, shared pairs, grades."""
    wh.require_collection(collection)
    known = [r[0] for r in wh.con.execute(
        "SELECT qrels_id FROM qrels_sets WHERE collection_id = ? ORDER BY qrels_id", [collection]
    ).fetchall()]  # fmt: skip
    for name in (reference, machine):
        if name not in known:
            import difflib

            close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
            hint = f" Did you mean {' or '.join(close)}?" if close else ""
            raise NotFoundError(
                f"collection {collection!r} has no qrels set {name!r}.{hint} (it has: {', '.join(known)})"
            )
    if reference == machine:
        raise MetricParamError("label uncertainty: the reference and the machine set are the same set")
    if runs is not None:
        missing = sorted(set(runs) - set(wh.run_ids(collection)))
        if missing:
            raise NotFoundError(f"collection {collection!r} has no run(s) {missing}")
    key = {"collection_id": collection, "reference": reference, "machine": machine, "rel": float(rel)}
    wh.run(sql.query(_QUERIES, "labels"), key)
    wh.run(sql.query(_QUERIES, "runs"), {"collection_id": collection, "runs": None if runs is None else list(runs)})
    run_ids = [r[0] for r in wh.con.execute("SELECT run_id FROM lu_runs ORDER BY run_no").fetchall()]
    topic_ids = [r[0] for r in wh.con.execute("SELECT query_id FROM lu_topics ORDER BY topic_no").fetchall()]
    if not run_ids:
        raise InsufficientDataError(f"collection {collection!r} has no runs to evaluate")
    if not topic_ids:
        raise InsufficientDataError(
            f"label uncertainty: no topic of {reference!r} filled by {machine!r} has a relevant document"
        )
    grades_frame = wh.df(sql.query(_QUERIES, "grades"))
    side_grades = {
        side: np.sort(grades_frame.loc[grades_frame["side"] == side, "grade"].to_numpy(float))
        for side in ("machine", "reference")
    }
    shared = wh.df(sql.query(_QUERIES, "shared_pairs"))
    docs = wh.df(sql.query(_QUERIES, "machine_docs"))
    counts = wh.df(sql.query(_QUERIES, "reference_counts"))
    rows = wh.arrow(sql.query(_QUERIES, "rows"), {"collection_id": collection, "max_depth": max_depth})
    data = _Collection(
        run_ids=run_ids,
        topic_ids=topic_ids,
        grades=np.zeros(0),
        doc_topic=docs["topic_no"].to_numpy(np.int64),
        doc_machine=docs["machine_grade"].to_numpy(float),
        ref_counts=counts.to_numpy(),
        row_list=rows["run_no"].to_numpy().astype(np.int64) * len(topic_ids)
        + rows["topic_no"].to_numpy().astype(np.int64),
        row_rank=rows["rank"].to_numpy().astype(np.int64),
        row_doc=rows["doc_no"].fill_null(-1).to_numpy().astype(np.int64),
        row_grade=rows["reference_grade"].fill_null(np.nan).to_numpy().astype(float),
    )
    return data, shared, side_grades


def _index_grades(data: _Collection, confusion: Confusion) -> None:
    """Turn every grade into an index of one ascending grade vector (H's, the confusion's, M's)."""
    grades = np.unique(np.concatenate([
        data.ref_counts[:, 1].astype(float) if len(data.ref_counts) else np.zeros(0),
        confusion.human_grades, data.doc_machine,
    ]))  # fmt: skip
    counts = np.zeros((len(data.topic_ids), len(grades)), dtype=np.int64)
    if len(data.ref_counts):
        topic = data.ref_counts[:, 0].astype(np.int64)
        np.add.at(counts, (topic, np.searchsorted(grades, data.ref_counts[:, 1])), data.ref_counts[:, 2].astype(np.int64))
    data.grades = grades
    data.ref_counts = counts
    data.doc_machine = np.searchsorted(grades, data.doc_machine)
    reference_rows = data.row_doc < 0
    data.row_grade = np.where(reference_rows, np.searchsorted(grades, np.nan_to_num(data.row_grade)), -1)


class _Scorer:
    """Per-list scores of every measure for a block of label vectors (replicates x machine documents)."""

    def __init__(self, data: _Collection, measures: Sequence[_Measure], rel: float) -> None:
        self.data = data
        self.measures = measures
        self.n_topics = len(data.topic_ids)
        self.relevant_grade = data.grades >= rel
        self.positive = np.where(data.grades > 0, data.grades, 0.0)
        self.list_topic = np.tile(np.arange(self.n_topics), len(data.run_ids))
        # positions per depth: a subset of the rows, where each list's stretch starts, and
        # per position its machine document (or H's fixed relevance and gain) and weights
        self.subsets: dict[int | None, dict[str, np.ndarray]] = {}
        for m in measures:
            if m.k in self.subsets:
                continue
            keep = np.flatnonzero(np.ones(len(data.row_rank), bool) if m.k is None else data.row_rank <= m.k)
            lists = data.row_list[keep]
            starts = np.flatnonzero(np.r_[True, lists[1:] != lists[:-1]]) if len(lists) else np.zeros(0, np.int64)
            doc = data.row_doc[keep]
            fixed = np.maximum(data.row_grade[keep], 0)
            rank = data.row_rank[keep].astype(np.float64)
            self.subsets[m.k] = {
                "lists": lists[starts],
                "starts": starts,
                "machine": doc >= 0,
                "doc": np.maximum(doc, 0),
                "fixed_relevant": self.relevant_grade[fixed] & (doc < 0),
                "fixed_gain": np.where(doc < 0, self.positive[fixed], 0.0),
                "inverse_rank": 1.0 / rank,
                "discount": 1.0 / np.log2(rank + 1.0),
            }
        # the ideal list's discount, summed: disc[n] = sum_{i <= n} 1 / log2(i + 1)
        deepest = int(data.ref_counts.sum(axis=1).max(initial=0)) + len(data.doc_topic) + 1
        self.discount = np.r_[0.0, np.cumsum(1.0 / np.log2(np.arange(2, deepest + 2)))]

    def scores(self, labels: np.ndarray) -> dict[str, np.ndarray]:
        """``labels``: (replicates, machine documents) grade indices; returns (replicates, lists) per measure.

        Positions are the first axis of the arrays below and replicates the second, so that
        gathering a document's draws, the per-list sums and the running counts each move whole
        rows of replicates. The positions are taken a stretch of whole lists at a time, so
        that no array holds more than about ``CELL_BUDGET`` cells.
        """
        b = labels.shape[0]
        topic_counts = self._topic_counts(labels)  # (b, topics, grades)
        # (machine documents, b); one row that no position reads when no document is drawn
        drawn = np.ascontiguousarray(labels.T) if labels.shape[1] else np.zeros((1, b), dtype=labels.dtype)
        relevant_doc = self.relevant_grade[drawn]
        gain_doc = self.positive[drawn] if any(m.family == "ndcg" for m in self.measures) else None
        relevant_topic = (topic_counts * self.relevant_grade).sum(axis=2)  # R per replicate and topic
        out = {}
        for m in self.measures:
            s = self.subsets[m.k]
            sums = np.zeros((self.data.n_lists, b))
            for first, end in self._stretches(s, b):
                rows = slice(int(s["starts"][first]), int(s["starts"][end]) if end < len(s["starts"]) else len(s["doc"]))
                starts = s["starts"][first:end] - rows.start
                machine, doc = s["machine"][rows, None], s["doc"][rows]
                if m.family == "ndcg":
                    values = np.where(machine, gain_doc[doc], s["fixed_gain"][rows, None])  # type: ignore[index]
                    values *= s["discount"][rows, None]
                else:
                    relevant = np.where(machine, relevant_doc[doc], s["fixed_relevant"][rows, None])
                    values = relevant if m.family == "p" else self._precision(relevant, starts, s["inverse_rank"][rows])
                sums[s["lists"][first:end]] = np.add.reduceat(values, starts, axis=0, dtype=np.float64)
            sums = sums.T
            if m.family == "p":
                out[m.label] = sums / m.k
            elif m.family == "ndcg":
                ideal = self._ideal(topic_counts, m.k)[:, self.list_topic]
                out[m.label] = np.where(ideal > 0, sums / np.where(ideal > 0, ideal, 1.0), 0.0)
            else:
                r = relevant_topic[:, self.list_topic]
                out[m.label] = np.where(r > 0, sums / np.where(r > 0, r, 1), 0.0)
        return out

    @staticmethod
    def _precision(relevant: np.ndarray, starts: np.ndarray, inverse_rank: np.ndarray) -> np.ndarray:
        """AP's precision at each relevant position (0 elsewhere) of a stretch of whole lists.

        The relevant at or above each position within its list: each list's total is cancelled
        at the next list's first position, so that one cumulative sum restarts per list.
        """
        counts = relevant.astype(np.int32)
        if len(starts) > 1:
            counts[starts[1:]] -= np.add.reduceat(counts, starts, axis=0)[:-1]
        precision = np.cumsum(counts, axis=0, dtype=np.int32) * inverse_rank[:, None]
        precision *= relevant
        return precision

    @staticmethod
    def _stretches(subset: dict[str, np.ndarray], b: int) -> list[tuple[int, int]]:
        """Ranges [first, end) of the subset's lists (with positions) holding about CELL_BUDGET / b positions each."""
        starts = subset["starts"]
        if not len(starts):
            return []
        step = max(1, CELL_BUDGET // max(1, b))
        cuts = np.unique(np.r_[np.searchsorted(starts, np.arange(0, len(subset["doc"]), step), side="right") - 1, len(starts)])
        cuts = cuts[cuts >= 0]
        return list(zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True))

    def _sum(self, values: np.ndarray, subset: dict[str, np.ndarray], b: int) -> np.ndarray:
        """Per-list sums of (positions, b) values as (b, lists); lists without positions are 0."""
        out = np.zeros((self.data.n_lists, b))
        if len(subset["starts"]):
            out[subset["lists"]] = np.add.reduceat(values, subset["starts"], axis=0, dtype=np.float64)
        return out.T

    def _topic_counts(self, labels: np.ndarray) -> np.ndarray:
        """(b, topics, grades): H's fixed counts plus the machine documents' drawn grades."""
        b = labels.shape[0]
        g = len(self.data.grades)
        flat = (np.arange(b)[:, None] * self.n_topics + self.data.doc_topic[None, :]) * g + labels
        drawn = np.bincount(flat.ravel(), minlength=b * self.n_topics * g).reshape(b, self.n_topics, g)
        return drawn + self.data.ref_counts[None, :, :]

    def _ideal(self, topic_counts: np.ndarray, k: int | None) -> np.ndarray:
        """(b, topics) ideal DCG: the judged gains of the topic, best first, cut at k."""
        # documents with a grade at least each positive grade, best grade first
        order = np.argsort(-self.data.grades)
        at_least = np.cumsum(topic_counts[:, :, order], axis=2)
        cap = at_least if k is None else np.minimum(at_least, k)
        reached = self.discount[cap]
        previous = np.concatenate([np.zeros_like(reached[:, :, :1]), reached[:, :, :-1]], axis=2)
        return ((reached - previous) * self.positive[order][None, None, :]).sum(axis=2)


def _draw(confusion: Confusion, machine_rows: np.ndarray, col_to_grade: np.ndarray, count: int,
          rng: np.random.Generator, resample: bool) -> np.ndarray:  # fmt: skip
    """(count, documents) grade indices: each document's human-equivalent grade, drawn from its row."""
    uniform = rng.random((count, len(machine_rows)))
    if resample:
        # one confusion per replicate from the rows' Dirichlet posteriors (methods §12.2)
        alpha = confusion.counts + confusion.prior
        gamma = rng.standard_gamma(np.broadcast_to(alpha, (count, *alpha.shape)))
        cumulative = np.cumsum(gamma / gamma.sum(axis=2, keepdims=True), axis=2)[:, machine_rows, :-1]
    else:
        cumulative = np.cumsum(confusion.probabilities, axis=1)[machine_rows, :-1][None, :, :]
    column = (uniform[:, :, None] >= cumulative).sum(axis=2)
    return col_to_grade[column]


@dataclass(frozen=True)
class LabelUncertainty:
    """What :func:`label_uncertainty` returns.

    ``runs``: one row per (run, measure): ``value`` (H filled by M, as the composed
    evaluation), ``mean``, ``sd``, ``lower``, ``upper`` over the replicates, ``expected`` (the
    exact expectation, P@k only), ``n_topics``. ``topics``: the same per (run, topic), or None.
    ``pairs``: per measure and pair of runs, ``first`` (ranked higher by ``value``),
    ``second``, both values, ``p_swap = P(first < second)`` and ``p_tie`` over the
    replicates, or None. ``confusion``: the matrix used (:meth:`Confusion.frame`).
    """

    reference: str
    machine: str
    samples: int
    seed: int | None
    runs: pd.DataFrame
    topics: pd.DataFrame | None
    pairs: pd.DataFrame | None
    confusion: pd.DataFrame


def label_uncertainty(
    wh: Store,
    collection: str,
    *,
    reference: str,
    machine: str,
    measures: Sequence[str],
    runs: Sequence[str] | None = None,
    samples: int = 1000,
    seed: int | None = 1,
    level: float = 0.95,
    prior: float = 1.0,
    resample_confusion: bool = False,
    confusion: pd.DataFrame | None = None,
    rel: int = 1,
    per_query: bool = False,
    pairs: bool = False,
) -> LabelUncertainty:
    """Scores of runs under ``reference`` filled by ``machine``, with the machine labels' uncertainty.

    Args:
        wh: The warehouse.
        collection: The collection.
        reference: The reference (human) qrels set ``H``.
        machine: The machine qrels set ``M`` that fills ``H``'s holes.
        measures: ``P@k``, ``nDCG``, ``nDCG@k``, ``AP``, ``AP@k``.
        runs: The runs (None: every run of the collection).
        samples: Monte Carlo replicates.
        seed: Seed of the replicates (None: fresh entropy).
        level: Coverage of the central interval ``[lower, upper]``.
        prior: Dirichlet concentration added to each confusion cell (methods §12.2).
        resample_confusion: Draw a confusion matrix per replicate from the rows' Dirichlet
            posteriors, carrying the estimation uncertainty of the matrix too.
        confusion: A matrix to use instead of the estimate (index: machine grades, columns:
            human grades; rows normalised).
        rel: Relevance threshold (grade >= rel is relevant) of P and AP.
        per_query: Also the per-topic table.
        pairs: Also the pairwise swap probabilities.

    Raises:
        NotFoundError: for an unknown collection, set or run.
        MetricParamError: for an unsupported measure or a bad argument.
        InsufficientDataError: when the sets share no pair, or nothing can be scored.
    """
    chosen = parse_measures(measures)
    if samples < 1:
        raise MetricParamError(f"label uncertainty: samples {samples} must be at least 1")
    if not 0 < level < 1:
        raise MetricParamError(f"label uncertainty: level {level} must lie strictly between 0 and 1")
    if resample_confusion and confusion is not None:
        raise MetricParamError("label uncertainty: a given confusion matrix cannot be resampled")
    depths = [m.k for m in chosen]
    max_depth = None if None in depths else max(d for d in depths if d is not None)
    with wh.transaction():
        data, shared, side_grades = _load(wh, collection, reference, machine, runs, rel, max_depth)
    shared_pairs = int(shared["pairs"].sum()) if len(shared) else 0
    if confusion is None:
        if shared_pairs == 0:
            raise InsufficientDataError(
                f"label uncertainty: {machine!r} and {reference!r} judged no pair in common, so the "
                "judge's confusion matrix cannot be estimated"
            )
        if shared_pairs < FEW_SHARED_PAIRS:
            warnings.warn(
                f"label uncertainty: {machine!r} shares only {shared_pairs} judged pairs with "
                f"{reference!r}; the confusion matrix is mostly the prior",
                FewSharedPairsWarning,
                stacklevel=2,
            )
        matrix = estimate_confusion(shared, side_grades["machine"], side_grades["reference"], prior=prior)
    else:
        matrix = given_confusion(confusion)
    machine_values = data.doc_machine.astype(float)
    unknown = np.setdiff1d(np.unique(machine_values), matrix.machine_grades)
    if len(unknown):
        raise MetricParamError(f"label uncertainty: the confusion matrix has no row for machine grade(s) {unknown.tolist()}")
    machine_rows = np.searchsorted(matrix.machine_grades, machine_values)
    _index_grades(data, matrix)
    col_to_grade = np.searchsorted(data.grades, matrix.human_grades).astype(np.int16 if len(data.grades) < 1 << 15 else np.int64)
    scorer = _Scorer(data, chosen, rel)

    point = scorer.scores(data.doc_machine[None, :])  # M's own grades: the composed evaluation
    replicates = {m.label: np.empty((samples, data.n_lists)) for m in chosen}
    n_blocks = -(-samples // BLOCK)
    streams = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(n_blocks)]
    per_chunk = max(1, LABEL_BUDGET // max(1, len(machine_rows)) // BLOCK)
    for first in range(0, n_blocks, per_chunk):
        blocks = range(first, min(n_blocks, first + per_chunk))
        sizes = [min(BLOCK, samples - i * BLOCK) for i in blocks]
        labels = np.concatenate([
            _draw(matrix, machine_rows, col_to_grade, size, streams[i], resample_confusion)
            for i, size in zip(blocks, sizes, strict=True)
        ])  # fmt: skip
        start = first * BLOCK
        for label, values in scorer.scores(labels).items():
            replicates[label][start : start + len(labels)] = values
    expected = _expected_precision(data, matrix, machine_rows, scorer, chosen)
    return _tables(data, chosen, point, replicates, expected, matrix, reference, machine, samples, seed,
                   level, per_query, pairs)  # fmt: skip


def _expected_precision(data: _Collection, matrix: Confusion, machine_rows: np.ndarray, scorer: _Scorer,
                        chosen: Sequence[_Measure]) -> dict[str, np.ndarray]:  # fmt: skip
    """Exact E[P@k] per list: H's relevant plus each machine document's P(relevant | its grade), over k."""
    relevant_col = scorer.relevant_grade[np.searchsorted(data.grades, matrix.human_grades)]
    p_relevant = (matrix.probabilities * relevant_col[None, :]).sum(axis=1)[machine_rows]
    out = {}
    for m in chosen:
        if m.family != "p":
            continue
        s = scorer.subsets[m.k]
        machine = p_relevant[s["doc"]] if len(p_relevant) else np.zeros(len(s["doc"]))  # (none: all H's)
        chance = np.where(s["machine"], machine, s["fixed_relevant"].astype(float))
        out[m.label] = scorer._sum(chance[:, None], s, 1)[0] / m.k
    return out


def _summary(values: np.ndarray, level: float) -> dict[str, np.ndarray]:
    """Mean, sd and central interval over axis 0 (replicates)."""
    tail = (1.0 - level) / 2.0
    lower, upper = np.quantile(values, [tail, 1.0 - tail], axis=0)
    return {
        "mean": values.mean(axis=0),
        "sd": values.std(axis=0, ddof=1) if len(values) > 1 else np.zeros(values.shape[1:]),
        "lower": lower,
        "upper": upper,
    }


def _tables(data: _Collection, chosen: Sequence[_Measure], point: dict[str, np.ndarray],
            replicates: dict[str, np.ndarray], expected: dict[str, np.ndarray], matrix: Confusion,
            reference: str, machine: str, samples: int, seed: int | None, level: float, per_query: bool,
            pairs: bool) -> LabelUncertainty:  # fmt: skip
    n_runs, n_topics = len(data.run_ids), len(data.topic_ids)
    run_parts, topic_parts, pair_parts = [], [], []
    for m in chosen:
        sims = replicates[m.label]
        means = sims.reshape(len(sims), n_runs, n_topics).mean(axis=2)  # (samples, runs)
        value = point[m.label][0].reshape(n_runs, n_topics)
        exact = expected.get(m.label)
        run_parts.append(pd.DataFrame({
            "run_id": data.run_ids, "measure": m.label, "value": value.mean(axis=1),
            **_summary(means, level),
            "expected": exact.reshape(n_runs, n_topics).mean(axis=1) if exact is not None else np.nan,
            "n_topics": n_topics,
        }))  # fmt: skip
        if per_query:
            topic_parts.append(pd.DataFrame({
                "run_id": np.repeat(data.run_ids, n_topics), "query_id": np.tile(data.topic_ids, n_runs),
                "measure": m.label, "value": value.ravel(), **_summary(sims, level),
                "expected": exact if exact is not None else np.nan,
            }))  # fmt: skip
        if pairs and n_runs > 1:
            pair_parts.append(_swaps(data.run_ids, m.label, value.mean(axis=1), means))
    runs_frame = pd.concat(run_parts, ignore_index=True)
    return LabelUncertainty(
        reference=reference,
        machine=machine,
        samples=samples,
        seed=seed,
        runs=runs_frame,
        topics=pd.concat(topic_parts, ignore_index=True) if per_query else None,
        pairs=(pd.concat(pair_parts, ignore_index=True) if pair_parts else _swaps([], "", np.zeros(0), np.zeros((1, 0))))
        if pairs
        else None,
        confusion=matrix.frame(),
    )  # fmt: skip


def swap_probabilities(run_ids: Sequence[str], values: np.ndarray, replicates: np.ndarray) -> pd.DataFrame:
    """For every pair of runs, the share of replicates that order them against their values.

    ``first`` is the run with the higher ``value`` (ties: the first in ``run_ids``);
    ``p_swap`` is the share of replicates with ``first < second``, ``p_tie`` with equal scores.

    Examples:
        >>> sims = np.array([[0.5, 0.4], [0.3, 0.4], [0.6, 0.6], [0.7, 0.1]])
        >>> swap_probabilities(["a", "b"], np.array([0.5, 0.4]), sims)[["first", "p_swap", "p_tie"]].values.tolist()
        [['a', 0.25, 0.25]]
    """
    i, j = np.triu_indices(len(run_ids), 1)
    flip = values[j] > values[i]
    first = np.where(flip, j, i)
    second = np.where(flip, i, j)
    a, b = replicates[:, first], replicates[:, second]
    names = np.asarray(run_ids, dtype=object)
    return pd.DataFrame({
        "first": names[first], "second": names[second], "value_first": values[first],
        "value_second": values[second], "p_swap": (a < b).mean(axis=0), "p_tie": (a == b).mean(axis=0),
    })  # fmt: skip


def _swaps(run_ids: Sequence[str], label: str, values: np.ndarray, means: np.ndarray) -> pd.DataFrame:
    frame = swap_probabilities(run_ids, values, means)
    frame.insert(0, "measure", label)
    return frame

