"""Names and notes of the budget experiments: ids that name what changes the result, and what a budget bought.

* :func:`default_id`: the stored name of a replay or hybrid experiment when none is given: it
  names the strategies (or the machine set, selections and calibration), the budgets, the
  scope and every seed, so that a second run with other such options is stored beside the first.
* :func:`check_replace`: an experiment of that name made with other options (a measure, a
  depth, a test, ...) is replaced only when asked (``--replace``); the same options give the
  same rows, and replace them.
* :func:`shortfall_notes` and :func:`ceiling_note`: why a budget judged fewer pairs than it
  allowed (candidates the reference never judged, topics with fewer candidates than the budget),
  and how much of the reference's relevant pairs the candidates can reach at all.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evalwh.errors import EvalWhError
from evalwh.store.connection import params_json

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.store.connection import Store


def _part(values: Sequence[object]) -> str:
    """Values joined by ``+``; a share ``10%`` is written ``10pct`` (ids stay shell- and file-friendly)."""
    return "+".join(str(v).strip().replace("%", "pct") for v in values)


def default_id(
    kind: str, *, budgets: Sequence[object], seeds: Sequence[int], scope: str = "total",
    strategies: Sequence[str] = (), random: Sequence[str] = (), machine: str = "", selections: Sequence[str] = (),
    calibration: str = "",
) -> str:  # fmt: skip
    """The default experiment id: every option that changes which pairs are judged, named.

    The seeds are named when a random strategy or a selection uses them (``random`` lists the
    strategies that draw).

    Examples:
        >>> default_id("replay", budgets=["10%", 500], seeds=[0, 1, 2], strategies=["depth", "mtf"], random=["mtf"])
        'budget-total-depth+mtf-10pct+500-seeds0+1+2'
        >>> default_id("replay", budgets=["25%"], seeds=[0], scope="topic", strategies=["depth"], random=["mtf"])
        'budget-topic-depth-25pct'
        >>> default_id("hybrid", budgets=["10%"], seeds=[3, 4], machine="gpt", selections=["lara"], calibration="isotonic")
        'hybrid-gpt-lara-isotonic-10pct-seeds3+4'
    """
    if kind == "hybrid":
        return f"hybrid-{machine}-{_part(selections)}-{calibration}-{_part(budgets)}-seeds{_part(seeds)}"
    drawn = any(s in random for s in strategies)
    return f"budget-{scope}-{_part(strategies)}-{_part(budgets)}" + (f"-seeds{_part(seeds)}" if drawn else "")


def check_replace(
    wh: Store, collection: str, experiment_id: str, params: dict[str, Any], *, replace: bool
) -> None:
    """Refuse to overwrite an experiment of that name made with other options, unless ``replace``.

    The stored parameters (``budget_experiments.params``) are compared with ``params``; the
    message names the options that differ.
    """
    row = wh.con.execute(
        "SELECT params FROM budget_experiments WHERE collection_id = ? AND experiment_id = ?", [collection, experiment_id]
    ).fetchone()
    if row is None or replace:
        return
    stored = json.loads(row[0]) if row[0] else {}
    mine = json.loads(params_json(params))
    differ = [key for key in dict.fromkeys([*mine, *stored]) if mine.get(key) != stored.get(key)]
    if not differ:
        return  # the same options: the same rows, replaced by themselves
    shown = ", ".join(differ[:6]) + (f" and {len(differ) - 6} more" if len(differ) > 6 else "")
    raise EvalWhError(
        f"experiment budget: collection {collection!r} already has experiment {experiment_id!r}, made with other "
        f"options ({shown}); give --replace to overwrite it, or another --experiment-id"
    )


def shortfall_notes(rows: pd.DataFrame, params: dict[str, Any], reference: str) -> list[str]:
    """One sentence per (strategy, seed, budget) that judged fewer pairs than its budget allowed, saying why.

    A budget ``B`` keeps the first ``B`` candidates (in total, or per topic; a per-topic share
    keeps that share of each topic, ``B`` in all, listed apart from the per-topic counts in
    ``params["per_topic_counts"]``); ``judged`` counts
    those the reference has a label for. Two causes: fewer candidates than ``B`` (the whole
    pool, or topics with fewer candidates than a per-topic budget), and kept candidates the
    reference never judged (candidates deeper than the reference's own pool).
    """
    pool = int(params.get("pool_size") or 0)
    topics = int(params.get("topics") or 0)
    notes = []
    for row in rows.itertuples(index=False):
        per_topic = params.get("scope") == "topic" and int(row.budget) in params.get("per_topic_counts", [row.budget])
        allowed = int(row.budget) * (topics if per_topic else 1)
        kept = int(round(float(row.budget_share) * pool)) if pool else int(row.judged)
        if int(row.judged) >= allowed:
            continue
        who = f"{row.strategy}" + ("" if row.seed is None or str(row.seed) in ("<NA>", "nan") else f" seed {row.seed}")
        reasons = []
        if kept < allowed:
            reasons.append(f"the candidates hold {kept:,} within the budget" + (
                " (topics with fewer candidates than the per-topic budget)" if per_topic else ""
            ))  # fmt: skip
        if int(row.judged) < kept:
            reasons.append(f"{kept - int(row.judged):,} kept candidates have no label in {reference!r}")
        notes.append(f"{who}, budget {int(row.budget):,}: judged {int(row.judged):,} of {allowed:,}: {'; '.join(reasons)}")
    return notes


def ceiling_note(params: dict[str, Any]) -> str | None:
    """How many of the reference's relevant pairs the candidates hold: the relevant share's ceiling."""
    reachable, relevant = params.get("reachable_relevant"), params.get("relevant")
    if reachable is None or not relevant:
        return None
    return (
        f"the candidates (depth {params.get('depth')}) hold {int(reachable):,} of the reference's {int(relevant):,} "
        f"relevant pairs: no budget finds a relevant share above {int(reachable) / int(relevant):.2f}; "
        "reachable_share is relevant_found over those"
    )


def with_reachable(frame: pd.DataFrame, params: dict[str, Any]) -> pd.DataFrame:
    """``frame`` with ``reachable_share``: relevant found over the relevant pairs the candidates hold.

    A replay's ``relevant_share`` is over all of the reference's relevant pairs, some of which
    no candidate reaches; this share is 1 when the budget found every one it could.
    """
    reachable = params.get("reachable_relevant")
    if not reachable or "relevant_found" not in frame.columns:
        return frame
    return frame.assign(reachable_share=frame["relevant_found"] / int(reachable))
