"""The report's significance: ``evalwh compare``'s family, test and correction, on the report's measures.

One definition of the comparison family serves both commands. The runs are
:func:`evalwh.methods.comparisons.family_runs` of the baselines and every run (``compare -b B
--all-runs``; ``compare --all-runs`` without baselines); the pairs are
:func:`evalwh.stats.compare.family_pairs` of them (each run against each baseline, else all
pairs); the test and correction are :func:`evalwh.stats.compare.family_procedure` of the options
(the paired t-test and Holm when none are named), and the statistics are
:func:`evalwh.stats.compare.compare` itself, called on the report's per-topic scores. So a
p-value in the report is the p-value ``evalwh compare`` prints for the same runs, measures,
baselines, test, correction, alpha, resamples and seed (tests/test_report_family.py holds the
two equal).

Two calls: one on the leaderboard's measures (the marks beside its means), one on the decision
matrix's measures in column order (P@d, A_p@d for each depth d, then AP, AA), whose outcomes
place each pair in a case of the matrix (methods §4.3).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from evalwh.stats.compare import compare, family_procedure, rank_table
from evalwh.stats.decision import OUTCOME_SYMBOL, classify

if TYPE_CHECKING:
    from evalwh.present.report.model import ReportOptions
    from evalwh.stats.compare import Comparison


def family_compare(
    scores: pd.DataFrame,
    family: Sequence[str],
    measures: Sequence[str],
    opts: ReportOptions,
    retrieved: pd.DataFrame | None = None,
) -> Comparison:
    """``evalwh compare`` on the report's scores: the same family, test, correction and seed.

    ``retrieved`` (``run_id, query_id, value``: the documents each run ranked per topic, as
    ``evalwh compare`` takes them) adds compare's note when the runs' topic sets differ.
    """
    test, correction = family_procedure(opts.test, opts.correction)
    chosen = scores[scores["measure"].isin(list(measures))]
    return compare(
        chosen,
        runs=list(family),
        measures=list(measures),
        baselines=list(opts.baselines),
        test=test,
        correction=correction,
        alpha=opts.alpha,
        n_resamples=opts.n_resamples,
        rng=opts.seed,
        retrieved=retrieved,
    )


def decision_rows(
    comparison: Comparison,
    columns: list[tuple[str, str, str, int | None]],
    order: Sequence[str],
    baselines: Sequence[str],
) -> pd.DataFrame:
    """The decision matrix's rows from a comparison on its performance and assessment measures.

    A pair's outcome on a measure is ``>>`` or ``<<`` when the family's test rejects (adjusted
    p below alpha), by the sign of the mean difference, else ``==``; the two outcomes give the
    case (:func:`evalwh.stats.decision.classify`). Each pair is turned to read down ``order``
    (the leaderboard): ``run_a`` is the higher run, or the run compared with a baseline
    (``run_b``).

    Returns:
        One row per column and pair: ``column, performance, assessment, depth, run_a, run_b,
        n_topics``, ``perf_`` and ``assess_`` ``mean_a, mean_b, p_value, p_adjusted,
        outcome``, ``case, case_group, strength``.
    """
    pairs = comparison.pairs
    position = {run: i for i, run in enumerate(order)}
    base = set(baselines)
    frames = []
    for label, perf, assess, depth in columns:
        sides = {}
        for prefix, spec in (("perf", perf), ("assess", assess)):
            part = pairs[pairs["measure"] == spec].reset_index(drop=True)
            sides[prefix] = part
        perf_rows, assess_rows = sides["perf"], sides["assess"]
        # the pairs come in family order in both (one compare call over one family)
        a, b = perf_rows["run_a"].to_numpy(), perf_rows["run_b"].to_numpy()
        pos_a = np.array([position[r] for r in a])
        pos_b = np.array([position[r] for r in b])
        in_base_a = np.array([r in base for r in a])
        in_base_b = np.array([r in base for r in b])
        # turn a pair when its baseline is on the a side, or (no baseline or both) when b ranks higher
        flip = np.where(in_base_a != in_base_b, in_base_a, pos_b < pos_a)
        out = pd.DataFrame(
            {
                "column": label,
                "performance": perf,
                "assessment": assess,
                "depth": depth,
                "run_a": np.where(flip, b, a),
                "run_b": np.where(flip, a, b),
                "n_topics": np.minimum(perf_rows["n_topics"], assess_rows["n_topics"]),
            }
        )
        outcomes = {}
        for prefix, rows in sides.items():
            mean_a, mean_b = rows["mean_a"].to_numpy(), rows["mean_b"].to_numpy()
            outcome = np.where(rows["reject"], np.sign(mean_a - mean_b), 0).astype(np.int8)
            outcome = np.where(flip, -outcome, outcome)
            outcomes[prefix] = outcome
            out[f"{prefix}_mean_a"] = np.where(flip, mean_b, mean_a)
            out[f"{prefix}_mean_b"] = np.where(flip, mean_a, mean_b)
            out[f"{prefix}_p_value"] = rows["p_value"].to_numpy()
            out[f"{prefix}_p_adjusted"] = rows["p_adjusted"].to_numpy()
            out[f"{prefix}_outcome"] = pd.Series(outcome).map(OUTCOME_SYMBOL).to_numpy()
        cases = classify(outcomes["perf"], outcomes["assess"])
        out["case"] = [c.value for c in cases]
        out["case_group"] = [c.group for c in cases]
        out["strength"] = [c.strength.value for c in cases]
        frames.append(out)
    result = pd.concat(frames, ignore_index=True)
    result["depth"] = result["depth"].astype("Int64")
    return result


def marks(comparison: Comparison, order: Sequence[str], baselines: Sequence[str]) -> pd.DataFrame:
    """Per run and leaderboard measure, its significance at a glance.

    Returns:
        One row per measure and run: ``measure, run_id``, ``better, worse`` (how many runs of
        the family it is significantly better or worse than), ``top`` (no run is significantly
        better than it: the group the best run cannot be told apart from) and, per baseline
        in order, ``vs`` (``+1`` significantly better than the baseline, ``-1`` worse, ``0``
        not distinguishable, absent for the baseline itself) as a tuple.
    """
    pairs = comparison.pairs
    rows = []
    for measure, part in pairs.groupby("measure", sort=False):
        sign = np.where(part["reject"], np.sign(part["mean_a"] - part["mean_b"]), 0)
        a, b = part["run_a"].to_numpy(), part["run_b"].to_numpy()
        wins = pd.Series(
            np.concatenate([a[sign > 0], b[sign < 0]]), dtype=object
        ).value_counts()
        losses = pd.Series(
            np.concatenate([a[sign < 0], b[sign > 0]]), dtype=object
        ).value_counts()
        versus = {}
        for base in baselines:
            against = {}
            for run_a, run_b, s in zip(a, b, sign, strict=True):
                if run_b == base:
                    against[run_a] = int(s)
                elif run_a == base:
                    against[run_b] = -int(s)
            versus[base] = against
        for run in order:
            rows.append(
                {
                    "measure": measure,
                    "run_id": run,
                    "better": int(wins.get(run, 0)),
                    "worse": int(losses.get(run, 0)),
                    "vs": tuple(versus[base].get(run) for base in baselines),
                }
            )
    out = pd.DataFrame(rows, columns=["measure", "run_id", "better", "worse", "vs"])
    out["top"] = out["worse"].eq(0)
    return out


def family_ranks(
    scores: pd.DataFrame, family: Sequence[str], measure: str, opts: ReportOptions, comparison: Comparison
) -> pd.DataFrame:
    """Each run's rank, 95% bootstrap rank interval and tier on ``measure`` (methods §13).

    The tiers are those of ``evalwh compare --all-runs --ranks`` with the report's test,
    correction, alpha, resamples and seed: they need every pair, so without baselines the
    leaderboard's ``comparison`` (all pairs) is reused, and with baselines the pairs are
    tested once more, all of them.
    """
    test, correction = family_procedure(opts.test, opts.correction)
    return rank_table(
        scores[scores["measure"] == measure], runs=list(family), measures=[measure], test=test,
        correction=correction, alpha=opts.alpha, n_resamples=opts.n_resamples, rng=opts.seed,
        comparison=None if opts.baselines else comparison,
    )  # fmt: skip


def disagreements(comparison: Comparison, order: Sequence[str]) -> pd.DataFrame:
    """The pairs whose significance differs between the leaderboard's measures.

    Per pair (turned so that ``run_a`` is the higher on the leaderboard ``order``) and measure,
    the outcome is +1 (``run_a`` significantly better), -1 (worse) or 0. A pair is a
    ``conflict`` when one measure finds ``run_a`` better and another worse, ``partial`` when
    some measures find a difference and others none; pairs all measures agree on are left out.

    Returns:
        One row per such pair, conflicts first, then down the leaderboard: ``run_a, run_b,
        kind``, and per measure ``outcome <m>`` (+1, 0, -1), ``mean_a <m>``, ``mean_b <m>``.
    """
    pairs = comparison.pairs
    measures = list(dict.fromkeys(pairs["measure"]))
    columns = ["run_a", "run_b", "kind"] + [f"{c} {m}" for m in measures for c in ("outcome", "mean_a", "mean_b")]
    if len(measures) < 2:
        return pd.DataFrame(columns=columns)
    position = {run: i for i, run in enumerate(order)}
    frame = pairs.assign(
        sign=np.where(pairs["reject"], np.sign(pairs["mean_a"] - pairs["mean_b"]), 0).astype(int)
    )
    flip = frame["run_a"].map(position) > frame["run_b"].map(position)
    frame = frame.assign(
        a=np.where(flip, frame["run_b"], frame["run_a"]),
        b=np.where(flip, frame["run_a"], frame["run_b"]),
        sign=np.where(flip, -frame["sign"], frame["sign"]),
        ma=np.where(flip, frame["mean_b"], frame["mean_a"]),
        mb=np.where(flip, frame["mean_a"], frame["mean_b"]),
    )
    wide = frame.pivot_table(index=["a", "b"], columns="measure", values=["sign", "ma", "mb"], sort=False)
    signs = wide["sign"][measures].to_numpy()
    conflict = (signs > 0).any(axis=1) & (signs < 0).any(axis=1)
    partial = ~conflict & (signs != 0).any(axis=1) & (signs == 0).any(axis=1)
    keep = conflict | partial
    out = pd.DataFrame(
        {
            "run_a": wide.index.get_level_values(0)[keep],
            "run_b": wide.index.get_level_values(1)[keep],
            "kind": np.where(conflict[keep], "conflict", "partial"),
        }
    )
    for i, m in enumerate(measures):
        out[f"outcome {m}"] = signs[keep, i].astype(int)
        out[f"mean_a {m}"] = wide["ma"][m].to_numpy()[keep]
        out[f"mean_b {m}"] = wide["mb"][m].to_numpy()[keep]
    out = out.assign(_k=(out["kind"] != "conflict"), _a=out["run_a"].map(position), _b=out["run_b"].map(position))
    out = out.sort_values(["_k", "_a", "_b"], kind="stable").drop(columns=["_k", "_a", "_b"])
    return out.reset_index(drop=True)[columns]


def weak_pairs(all_pairs: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    """Every pair weak (case 2 or 4) at some column: ``run_a, run_b, columns``, down the leaderboard."""
    weak = all_pairs[all_pairs["strength"] == "weak"]
    rank = {run: i for i, run in enumerate(order)}
    grouped = weak.groupby(["run_a", "run_b"], sort=False)["column"].agg(lambda c: ", ".join(dict.fromkeys(c)))
    out = grouped.reset_index().rename(columns={"column": "columns"})
    out = out.assign(_a=out["run_a"].map(rank), _b=out["run_b"].map(rank))
    return out.sort_values(["_a", "_b"], kind="stable").drop(columns=["_a", "_b"]).reset_index(drop=True)


def first_pairs(all_pairs: pd.DataFrame, weak: pd.DataFrame, limit: int) -> pd.DataFrame:
    """The decision-matrix rows of the first ``limit`` weak pairs, in their order."""
    chosen = weak.head(limit)[["run_a", "run_b"]].assign(_order=range(min(limit, len(weak))))
    rows = all_pairs.merge(chosen, on=["run_a", "run_b"])
    return rows.sort_values("_order", kind="stable").drop(columns="_order").reset_index(drop=True)
