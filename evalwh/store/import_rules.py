"""What ``import`` checks of the tables later schema steps added (pools, pool_runs, pool_order,
judgment_probabilities, budget_*, qrels_external, run_ir_metadata, collection_conventions):
keys that no two rows share, and rules as :data:`evalwh.store.transfer._RULES` writes them,
``(table, condition on a row that breaks it, problem shown for that row)``, where ``{c}`` is
the row's collection and ``known_*`` are the rows the warehouse will hold after the import.
"""

from __future__ import annotations

import re

from evalwh.io.printable import terminal

NOT_AN_ID = (
    r"[ \t\n\r\v\f\x00-\x1f\x7f-\x{9f}\x{061c}\x{200e}\x{200f}\x{202a}-\x{202e}"
    r"\x{2066}-\x{2069}\x{2028}\x{2029}]"
)
"""What no id imported may hold (in DuckDB's regular expressions): what ingest refuses in an id,
ASCII whitespace and NUL (no TREC file can hold them) and the control characters of
:data:`evalwh.io.printable.CONTROL` (ESC, DEL, C1, direction overrides)."""

NULLABLE_IDS = {("collection_conventions", "qrels_id")}
"""Id columns where NULL is a value (the conventions' qrels set: NULL for the default one)."""


def id_problem(value: str | None) -> str:
    """Why ``value``, found by :data:`NOT_AN_ID` (or missing or empty), is not an id."""
    if value is None or value == "":
        return "is missing" if value is None else "is empty"
    if re.search(r"[ \t\n\r\v\f\x00]", value):
        return f"{value!r} holds whitespace or a NUL byte, which no TREC file can hold"
    return f"{terminal(repr(value))} holds a control character, which an id may not hold"

LATER_KEYS: dict[str, tuple[str, ...]] = {
    "pools": ("collection_id", "pool_id"),
    "pool_runs": ("collection_id", "pool_id", "run_id"),
    "qrels_external": ("collection_id", "qrels_id"),
    "run_ir_metadata": ("collection_id", "run_id"),
    "collection_conventions": ("collection_id",),
}

# the tables of pools, budgets, probabilities, ir_datasets, ir_metadata and conventions
# (schema 019-022), checked as the older ones: references, ranges, JSON, depths
_REF = "({c}, {key}) NOT IN (SELECT (collection_id, {col}) FROM {known})"
LATER_RULES: list[tuple[str, str, str]] = [
    ("pools", "depth < 1", "depth {depth} is not a whole number >= 1"),
    ("pools", "budget IS NOT NULL AND budget < 1", "budget {budget} is not a whole number >= 1"),
    ("pools", "budget_scope IS NOT NULL AND budget_scope NOT IN ('topic', 'total')", "budget_scope {budget_scope!r} is not topic or total"),
    ("pools", "seed IS NOT NULL AND seed < 0", "seed {seed} is not a whole number >= 0"),
    ("pools", "params IS NOT NULL AND NOT coalesce(json_valid(params), false)", "params {params!r} is not JSON"),
    ("pools", _REF.format(c="{c}", key="pool_id", col="qrels_id", known="known_sets"), "pool {pool_id!r} has no qrels set of its name"),
    ("pools", _REF.format(c="{c}", key="parent_qrels_id", col="qrels_id", known="known_sets"),
     "parent_qrels_id {parent_qrels_id!r} names no qrels set of its collection"),
    ("pool_runs", _REF.format(c="{c}", key="pool_id", col="pool_id", known="known_pools"), "pool {pool_id!r} is not among the pools (pools)"),
    ("pool_runs", _REF.format(c="{c}", key="run_id", col="run_id", known="known_runs"), "run {run_id!r} is not among the runs of its collection (runs)"),
    ("pool_order", _REF.format(c="{c}", key="pool_id", col="pool_id", known="known_pools"), "pool {pool_id!r} is not among the pools (pools)"),
    ("pool_order", "topic_order < 1 OR overall_order < 1", "order {topic_order}/{overall_order} is not a rank >= 1"),
    ("judgment_probabilities", _REF.format(c="{c}", key="qrels_id", col="qrels_id", known="known_sets"),
     "qrels_id {qrels_id!r} names no qrels set of its collection (qrels_sets)"),
    ("judgment_probabilities", "NOT (prob_relevant BETWEEN 0 AND 1) OR len(probs) < 2"
     " OR len(list_filter(probs, lambda x: x IS NULL OR NOT (x BETWEEN 0 AND 1))) > 0 OR list_sum(probs) > 1 + 1e-6",
     "probabilities {probs} (relevant {prob_relevant}) are not in [0, 1] or sum above 1"),
    ("budget_experiments", "NOT coalesce(json_valid(params), false)", "params {params!r} is not JSON"),
    ("budget_experiments", _REF.format(c="{c}", key="reference_id", col="qrels_id", known="known_sets"),
     "reference_id {reference_id!r} names no qrels set of its collection"),
    ("budget_results", _REF.format(c="{c}", key="experiment_id", col="experiment_id", known="known_experiments"),
     "experiment {experiment_id!r} is not among the budget experiments (budget_experiments)"),
    ("budget_results", "budget < 0 OR judged < 0 OR relevant_found < 0 OR (seed IS NOT NULL AND seed < 0)",
     "budget {budget}, judged {judged}, relevant_found {relevant_found} or seed {seed} is negative"),
    ("budget_results", "NOT (budget_share BETWEEN 0 AND 1) OR NOT (relevant_share BETWEEN 0 AND 1)"
     " OR NOT (coalesce(significant_kept, 0) BETWEEN 0 AND 1) OR NOT (coalesce(judged_share, 0) BETWEEN 0 AND 1)",
     "a share (budget {budget_share}, relevant {relevant_share}, kept {significant_kept}, judged {judged_share}) is outside [0, 1]"),
    ("budget_results", "NOT (coalesce(kendall_tau_b, 0) BETWEEN -1 AND 1) OR NOT (coalesce(tau_ap, 0) BETWEEN -1 AND 1)",
     "tau_b {kendall_tau_b} or tau_ap {tau_ap} is outside [-1, 1]"),
    ("qrels_external", _REF.format(c="{c}", key="qrels_id", col="qrels_id", known="known_sets"),
     "qrels_id {qrels_id!r} names no qrels set of its collection (qrels_sets)"),
    ("run_ir_metadata", _REF.format(c="{c}", key="run_id", col="run_id", known="known_runs"),
     "run {run_id!r} is not among the runs of its collection (runs)"),
    ("run_ir_metadata", "NOT coalesce(json_valid(metadata), false) OR json_type(metadata) <> 'OBJECT'",
     "metadata {metadata!r} is not a JSON object"),
    ("run_ir_metadata", "block_lines < 2", "block_lines {block_lines} is not a block's line count (>= 2)"),
    ("collection_conventions", "{c} NOT IN (SELECT collection_id FROM known_collections)",
     "collection {collection!r} is not among the collections (collections)"),
    ("collection_conventions", "judged_depth IS NOT NULL AND judged_depth < 1", "judged_depth {judged_depth} is not a whole number >= 1"),
    ("collection_conventions", "baselines IS NOT NULL AND NOT list_has_all("
     "coalesce((SELECT list(run_id) FROM known_runs WHERE collection_id = {c}), []), baselines)",
     "baselines {baselines} name a run that is not among the runs of its collection"),
]
