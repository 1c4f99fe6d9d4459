"""The report's rank intervals, tiers and disagreements as the leaderboard and the comparisons show them.

The numbers come from the :class:`~evalwh.present.report.model.Report` (``ranks``, ``weak``,
``disagreements``, filled by :mod:`~evalwh.present.report.build`); this module formats them
and writes the sentences around them, for both the HTML and the Markdown report
(:mod:`~evalwh.present.report.render` hands them to the templates). Methods §13.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from evalwh.present.report.model import short_id

if TYPE_CHECKING:
    from evalwh.present.report.model import Report

# a measure's name as the report prints it (render.py's labels): AP's mean is MAP
_MEASURE_LABEL = {"AP": "MAP", "AA": "MAA"}


def _label(measure: str) -> str:
    return _MEASURE_LABEL.get(measure, measure)


def _count_of(n: int, noun: str) -> str:
    """``1 run``, ``2 runs``, ``1,234 pairs``."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def rank_of(report: Report) -> dict[str, dict[str, Any]]:
    """run -> its rank, rank interval (``2–5``) and tier on the lead measure; empty for one run."""
    if report.ranks is None:
        return {}
    return {
        r["run_id"]: {
            "rank": int(r["rank"]),
            "low": int(r["rank_low"]),
            "high": int(r["rank_high"]),
            "interval": f"{int(r['rank_low'])}–{int(r['rank_high'])}",
            "tier": int(r["tier"]),
        }
        for r in report.ranks.to_dict("records")
    }


def rank_sentence(report: Report) -> str:
    """What the rank interval and tier columns are (empty for one run)."""
    if report.ranks is None:
        return ""
    from evalwh.stats.rank_intervals import rank_note

    lead = _label(str(report.ranks["measure"].iloc[0]))
    tiers = int(report.ranks["tier"].max())
    top = int((report.ranks["tier"] == 1).sum())
    n = len(report.ranks)
    if tiers == 1:
        spread = f"All {n} runs are in tier 1: the test tells none of them from the best."
    else:
        spread = f"{tiers} tiers; tier 1 holds {_count_of(top, 'run')} of {n}."
    return f"On {lead}, {rank_note(report.ranks.attrs)}. {spread}"


def tiers_display(report: Report) -> pd.DataFrame:
    """One row per tier: its runs' ranks and rank intervals, the lead measure's range, the runs."""
    if report.ranks is None or report.pair_mode != "summary":
        return pd.DataFrame()
    lead = _label(str(report.ranks["measure"].iloc[0]))
    rows = []
    for tier, group in report.ranks.groupby("tier", sort=True):
        rows.append(
            {
                "tier": int(tier),
                "runs": len(group),
                "ranks": f"{int(group['rank'].min())}–{int(group['rank'].max())}",
                lead: f"{group['mean'].max():.4f}–{group['mean'].min():.4f}",
                "members": ", ".join(short_id(r, 24) for r in group["run_id"]),
            }
        )
    return pd.DataFrame(rows)


def tiers_sentence(report: Report) -> str:
    if report.ranks is None or report.pair_mode != "summary":
        return ""
    lead = _label(str(report.ranks["measure"].iloc[0]))
    from evalwh.present.report.build import family_sentence

    return (
        f"Tiers on {lead}: tier 1 is the best run and every run the test cannot tell from it "
        f"({family_sentence(report.options, report.family)}); tier 2 the same among the rest, "
        "and so on. A run may sit in a later tier than a run below it on the board when it is "
        "distinguishable from the earlier tier's best run and the lower run is not."
    )


def disagreements_display(report: Report) -> pd.DataFrame:
    """The first ``listed`` pairs the measures disagree on: each measure's outcome and means."""
    frame = report.disagreements
    if frame is None or frame.empty:
        return pd.DataFrame()
    measures = [c.removeprefix("outcome ") for c in frame.columns if c.startswith("outcome ")]
    symbol = {1: ">>", 0: "==", -1: "<<"}
    out = frame.head(report.options.listed)[["run_a", "run_b", "kind"]].copy()
    shown = frame.head(report.options.listed)
    for m in measures:
        out[_label(m)] = [
            f"{symbol[int(o)]} {a:.3f} vs {b:.3f}"
            for o, a, b in zip(shown[f"outcome {m}"], shown[f"mean_a {m}"], shown[f"mean_b {m}"], strict=True)
        ]
    return out


def disagreements_sentence(report: Report) -> str:
    frame = report.disagreements
    if report.pair_mode != "summary" or frame is None:
        return ""
    conflicts = int((frame["kind"] == "conflict").sum())
    partial = len(frame) - conflicts
    total = report.family.get("n_pairs", 0)
    if frame.empty:
        return f"The leaderboard's measures agree on every one of the {total:,} pairs (same significant outcomes)."
    shown = min(report.options.listed, len(frame))
    conflict = (
        "on no pair does one measure find the first run significantly better and another significantly worse"
        if conflicts == 0
        else f"on {_count_of(conflicts, 'pair')} one measure finds the first run significantly better and "
        "another significantly worse (conflict)"
    )
    partly = (
        ""
        if partial == 0
        else f"; on {partial:,} some measures find a significant difference and others none (partial)"
    )
    which = "It" if shown == 1 else ("They" if shown == len(frame) else f"The first {shown}")
    order = ", conflicts first, then down the leaderboard" if conflicts and partial else ", down the leaderboard"
    return (
        f"The leaderboard's measures disagree on {len(frame):,} of the {total:,} pairs: {conflict}"
        f"{partly}. {which}{order if shown > 1 else ''}:"
    )
