"""Two versions of a collection's labels side by side: what changed, and which conclusions moved.

:func:`qrels_diff` compares an old and a new label set of one collection (a corrected qrels,
a second round of judging): the (topic, document) pairs added, removed and regraded per topic
(``queries/judgments/diff_*.sql``), and what that does to the runs: each run's score and rank
under both, the rank shifts, tau_b and tau_ap, and the old set's significant pairwise
decisions kept, lost and reversed under the new one. The run-level part is
:func:`evalwh.methods.judgments.sensitivity` with the old set as the reference, so the two
commands count decisions with one implementation (:mod:`evalwh.stats.kept_decisions`, methods
§16).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evalwh import sql
from evalwh.errors import MetricParamError
from evalwh.methods.judgments import check_sets, sensitivity

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.store.connection import Store

_QUERIES = "evalwh.queries.judgments"
SUMMARY_COLUMNS = (
    "old", "new", "measure", "runs", "kendall_tau_b", "tau_b_low", "tau_b_high", "tau_ap", "rbo", "max_rank_change",
    "max_change_run", "test", "correction", "alpha", "pairs", "significant", "kept", "lost", "reversed", "gained",
    "kept_share",
)  # fmt: skip


@dataclass(frozen=True)
class QrelsDiff:
    """What :func:`qrels_diff` finds.

    Attributes:
        topics: One row per topic either set judged: ``query_id, pairs_old, pairs_new, added,
            removed, regraded, unchanged, relevant_old, relevant_new``.
        labels: One row per changed pair: ``query_id, doc_id, old_relevance, new_relevance,
            change`` (``added``, ``removed`` or ``regraded``; a grade is NaN where the set has none).
        summary: One row per measure: ``old, new, measure, runs``, tau_b (with its bootstrap
            interval), tau_ap, RBO, the largest rank change and its run, the test, correction
            and alpha of the decisions, the ``pairs`` of runs, the old set's ``significant``
            ones and how many the new set keeps, loses, reverses; ``gained``, ``kept_share``.
        runs: One row per (measure, run): ``measure, run_id, score_old, score_new,
            score_change, rank_old, rank_new, rank_change`` (positive: the run moved down).
        decisions: The pairs of runs whose decision moved (lost, reversed, gained): ``measure, run_a, run_b,
            outcome_old, outcome_new, change``.
    """

    topics: pd.DataFrame
    labels: pd.DataFrame
    summary: pd.DataFrame
    runs: pd.DataFrame
    decisions: pd.DataFrame

    def totals(self) -> dict[str, int]:
        """The topics' counts summed: pairs added, removed, regraded, unchanged, on both sides."""
        columns = ["pairs_old", "pairs_new", "added", "removed", "regraded", "unchanged", "relevant_old", "relevant_new"]
        return {column: int(self.topics[column].sum()) for column in columns}


def qrels_diff(
    store: Store,
    collection: str,
    old: str,
    new: str,
    measures: Sequence[str],
    *,
    runs: Sequence[str] | None = None,
    test: str | None = None,
    correction: str | None = None,
    alpha: float = 0.05,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = 0,
    with_runs: bool = True,
) -> QrelsDiff:
    """Compare two label sets of ``collection``: their labels, and the runs' scores, ranks and decisions.

    Args:
        store: The warehouse.
        collection: The collection.
        old: The earlier label set (the reference of the ranks and decisions).
        new: The later one.
        measures: Measure specs (``AP``, ``nDCG@10``, ...).
        runs: The runs compared; None: every run of the collection. Without runs, only the
            labels are compared.
        test: The significance test of the pairs of runs (None: ``compare``'s default).
        correction: Its correction over the pairs of one measure (None: ``compare``'s default).
        alpha: Significance level.
        resamples: Bootstrap replicates over topics for tau_b's interval (0: none).
        confidence: Coverage of that interval.
        seed: Seed of the bootstrap and of a resampling test.
        with_runs: Compare the runs too (False: the labels only, as for a collection without runs).

    Returns:
        A :class:`QrelsDiff`.

    Raises:
        NotFoundError: for an unknown collection or set (with a suggestion).
        MetricParamError: when ``old`` and ``new`` are the same set.
    """
    import pandas as pd

    if old == new:
        raise MetricParamError(f"qrels diff: --old and --new are both {old!r}; give two different label sets")
    check_sets(store, collection, [old, new], command="qrels diff")
    params = {"collection_id": collection, "old": old, "new": new}
    topics = store.df(sql.query(_QUERIES, "diff_topics"), params)
    labels = store.df(sql.query(_QUERIES, "diff_pairs"), params)
    if not with_runs or (not runs and not store.run_ids(collection)):  # the labels only
        empty = pd.DataFrame()
        return QrelsDiff(topics=topics, labels=labels, summary=empty, runs=empty, decisions=empty)
    moved = sensitivity(
        store, collection, [old, new], list(measures), runs=runs, resamples=resamples, confidence=confidence,
        seed=seed, test=test, correction=correction, alpha=alpha,
    )  # fmt: skip
    summary = moved.summary.rename(columns={"reference": "old", "qrels_id": "new"})[list(SUMMARY_COLUMNS)]
    per_run = moved.runs
    run_frame = pd.DataFrame({
        "measure": per_run["measure"], "run_id": per_run["run_id"],
        "score_old": per_run[f"{old}_score"], "score_new": per_run[f"{new}_score"],
        "score_change": per_run[f"{new}_score"] - per_run[f"{old}_score"],
        "rank_old": per_run[f"{old}_rank"], "rank_new": per_run[f"{new}_rank"], "rank_change": per_run[f"{new}_change"],
    })  # fmt: skip
    decisions = moved.decisions.rename(columns={"reference_outcome": "outcome_old", "outcome": "outcome_new"})
    decisions = decisions[["measure", "run_a", "run_b", "outcome_old", "outcome_new", "change"]]
    return QrelsDiff(
        topics=topics, labels=labels, summary=summary.reset_index(drop=True), runs=run_frame,
        decisions=decisions.reset_index(drop=True),
    )  # fmt: skip
