"""The report's judgments section: a collection's label sets side by side.

When a collection holds more than one label set (human, LLM or inferred judgments of the same
topics; evalwh's derived sets do not count), the report shows where each came from, how each
agrees with the report's set (:func:`evalwh.methods.judgments.agreement`), how the leaderboard
reads under each (ranks and their changes against the report's own evaluation), and how much
of each run's top documents each source judged (``A_p(source=...)@d``). :func:`build_judgments`
gathers it, :func:`judgments_context` formats it for the templates
(``templates/_judgments.html.j2``, ``templates/_judgments.md.j2``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from evalwh import sql
from evalwh.methods.judgments import SCORE_DECIMALS
from evalwh.present.report.model import Judgments, ReportOptions

if TYPE_CHECKING:
    from evalwh.store.connection import Store

_QUERIES = "evalwh.queries.report"
SOURCES = ("human", "llm", "inferred", "derived")
SHARE_DEPTH = 10  # the depth of the judged shares by source
MAX_SET_COLUMNS = 8  # label sets shown as columns of the per-run ranks table


def build_judgments(
    wh: Store,
    collection: str,
    opts: ReportOptions,
    leaderboard: pd.DataFrame,
    measure: str,
) -> Judgments | None:
    """The judgments section, or None when the collection has at most one label set.

    Args:
        wh: The warehouse.
        collection: The collection.
        opts: The report's options (``qrels_id`` and ``fill``: the report's own evaluation).
        leaderboard: The report's leaderboard (runs best first, ``measure`` among its columns).
        measure: The measure the sets' leaderboards rank by.
    """
    from scipy import stats

    from evalwh.measures.evaluation import evaluate

    provenance = wh.df(sql.query(_QUERIES, "label_sets"), {"collection_id": collection})
    if len(provenance) < 2:
        return None
    for column in ("topics", "pairs", "relevant"):
        provenance[column] = provenance[column].astype("int64")
    provenance["round"] = provenance["round"].astype("Int64")
    notes = []
    others = [s for s in provenance["qrels_id"] if s != opts.qrels_id]
    agreement = _agreement(wh, collection, opts.qrels_id, others, notes)

    # means rounded to 12 decimals before they are ranked (methods §11.4): two paths to the same mean
    # differ in the last bits, and the report's own set against itself must give tau_b 1 and no change
    reference = leaderboard[["run_id", measure]].rename(columns={measure: "reference_score"})
    reference["reference_score"] = reference["reference_score"].astype(float).round(SCORE_DECIMALS)
    reference = reference.sort_values(["reference_score", "run_id"], ascending=[False, True], kind="stable")
    reference["reference_rank"] = np.arange(1, len(reference) + 1)
    rankings = []
    shifts = []
    for name in provenance["qrels_id"]:
        means = evaluate(wh, [measure], collection=collection, qrels_id=name)
        means["value"] = means["value"].astype(float).round(SCORE_DECIMALS)
        board = _ranked(means[["run_id", "value"]].rename(columns={"value": "score"}))
        board = reference.merge(board, on="run_id", how="left")
        board["change"] = board["rank"] - board["reference_rank"]
        board.insert(0, "qrels_id", name)
        rankings.append(board[["qrels_id", "run_id", "score", "rank", "reference_rank", "change"]])
        shifts.append(_shift(board, stats))
    shares = _shares(wh, collection, opts, provenance, leaderboard["run_id"].tolist())
    samples = wh.df(sql.query(_QUERIES, "audit_samples"), {"collection_id": collection})
    if len(samples):
        held = samples.groupby("qrels_id", sort=True)["audit_id"].agg(lambda a: ", ".join(sorted(a)))
        named = "; ".join(f"{name} (audit{'s' if ', ' in audits else ''} {audits})" for name, audits in held.items())
        notes.append(
            f"Label sets that hold only the pairs of a random audit rank the runs on that sample alone, as if it "
            f"were complete qrels: {named}. Their estimates are the audit figures' (methods §15)."
        )
    if len(provenance) > MAX_SET_COLUMNS:
        notes.append(
            f"The table of ranks shows the first {MAX_SET_COLUMNS} of {len(provenance)} label sets; "
            "the summary above it covers all."
        )
    return Judgments(
        reference=opts.qrels_label,
        measure=measure,
        depth=SHARE_DEPTH,
        provenance=provenance,
        agreement=agreement,
        rankings=pd.concat(rankings, ignore_index=True),
        shifts=pd.DataFrame(shifts),
        shares=shares,
        note=" ".join(notes),
    )


def _agreement(
    wh: Store, collection: str, reference: str, others: list[str], notes: list[str]
) -> pd.DataFrame | None:
    """Agreement of the other label sets with the report's set, or None with a note."""
    if not others:
        notes.append(f"No other label set to compare with {reference!r}.")
        return None
    from evalwh.methods.judgments import agreement

    return agreement(wh, collection, reference, others)


def _ranked(scores: pd.DataFrame) -> pd.DataFrame:
    """``run_id, score, rank``: best first, ties by run id (the leaderboard's order)."""
    board = scores.sort_values(["score", "run_id"], ascending=[False, True], kind="stable")
    board = board.reset_index(drop=True)
    board["rank"] = np.arange(1, len(board) + 1)
    return board


def _shift(board: pd.DataFrame, stats: Any) -> dict[str, Any]:
    """How far a set's ranking lies from the reference's: tau_b, mean and largest rank change."""
    both = board.dropna(subset=["score", "reference_score"])
    tau = float(stats.kendalltau(both["reference_score"], both["score"]).statistic) if len(both) > 1 else np.nan
    change = both["change"].abs()
    largest = both.loc[change.idxmax()] if len(both) else None
    top = board.loc[board["rank"] == 1, "run_id"]
    return {
        "qrels_id": board["qrels_id"].iloc[0],
        "kendall_tau": tau,
        "mean_abs_change": float(change.mean()) if len(both) else np.nan,
        "largest_change": int(largest["change"]) if largest is not None else 0,
        "run": largest["run_id"] if largest is not None and int(largest["change"]) else "",  # none moved: none named
        "top_run": top.iloc[0] if len(top) else "",
    }


def _shares(
    wh: Store, collection: str, opts: ReportOptions, provenance: pd.DataFrame, order: Sequence[str]
) -> pd.DataFrame:
    """Per run, the mean share of the top ``SHARE_DEPTH`` judged by each source of the report's sets."""
    from evalwh.measures.evaluation import evaluate

    used = [opts.qrels_id, *opts.fill]
    known = dict(zip(provenance["qrels_id"], provenance["source"], strict=True))
    present = [s for s in SOURCES if s in {known.get(name, "derived") for name in used}]
    specs = [f"A_p(source={s})@{SHARE_DEPTH}" for s in [*present, "none"]]
    means = evaluate(
        wh, specs, collection=collection, qrels_id=opts.qrels_id, fill=opts.fill, typed_names=True
    )
    wide = means.pivot(index="run_id", columns="measure", values="value")[specs]
    wide.columns = [*present, "none"]
    return wide.reindex(list(order)).reset_index()


# -- the templates' context ---------------------------------------------------------------------


def judgments_context(judgments: Judgments | None) -> dict[str, Any] | None:
    """Tables of formatted cells for ``_judgments.*.j2``; None when there is no section."""
    if judgments is None:
        return None
    j = judgments
    provenance = j.provenance.copy()
    provenance["prompt_sha256"] = provenance["prompt_sha256"].map(lambda v: "" if _missing(v) else str(v)[:12])
    tables = {"provenance": _table(provenance)}
    if j.agreement is not None:
        columns = [c for c in ("qrels_id", "pairs", "only_reference", "only_set", "agreement", "kappa",
                               "kappa_quadratic", "alpha_ordinal", "note") if c in j.agreement.columns]  # fmt: skip
        tables["agreement"] = _table(j.agreement[columns])
    shifts = j.shifts.rename(columns={"kendall_tau": "kendall_tau_b", "run": "run_moved"})
    tables["shifts"] = _table(shifts)
    tables["ranks"] = _table(_rank_table(j))
    shares = j.shares.rename(columns={c: f"{c}@{j.depth}" for c in j.shares.columns if c != "run_id"})
    tables["shares"] = _table(shares)
    return {
        "reference": j.reference,
        "measure": j.measure,
        "depth": j.depth,
        "note": j.note,
        "has_agreement": j.agreement is not None,
        "reference_set": j.reference.split("+")[0],
        "tables": tables,
    }


def _rank_table(j: Judgments) -> pd.DataFrame:
    """One row per run (the reference's order): its rank there, then per set ``rank (change)``."""
    names = list(dict.fromkeys(j.rankings["qrels_id"]))[:MAX_SET_COLUMNS]
    first = j.rankings[j.rankings["qrels_id"] == names[0]]
    out = pd.DataFrame({"run_id": first["run_id"].to_numpy(), j.reference: first["reference_rank"].to_numpy()})
    for name in names:
        part = j.rankings[j.rankings["qrels_id"] == name].set_index("run_id")
        out[name] = [_rank_cell(part.loc[run, "rank"], part.loc[run, "change"]) for run in out["run_id"]]
    return out


def _rank_cell(rank: object, change: object) -> str:
    if _missing(rank):
        return ""
    delta = int(change)  # type: ignore[call-overload]
    return f"{int(rank)} ({delta:+d})" if delta else f"{int(rank)}"  # type: ignore[call-overload]


def _table(frame: pd.DataFrame) -> dict[str, Any]:
    """Column names and rows of text cells (numbers to four decimals, counts as integers)."""
    rows = []
    for record in frame.itertuples(index=False):
        rows.append([_cell(v) for v in record])
    columns = [str(c) for c in frame.columns]
    return {"columns": columns, "rows": rows, "frame": pd.DataFrame(rows, columns=columns)}


def _cell(value: object) -> str:
    if _missing(value):
        return ""
    if isinstance(value, float | np.floating):
        return f"{float(value):.4f}"
    return str(value)


def _missing(value: object) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float | np.floating) and np.isnan(value))
