"""The System Evaluation Decision Matrix (Baillie, Azzopardi and Ruthven; methods §4).

A pair of runs is compared twice, on a performance metric (P@d, MAP@d) and on the matching
assessment metric (A_p@d, MAA), and the two significance outcomes place the pair in one of
four cases. Case 3 splits into 3a (comparable assessment) and 3b (the better run has
significantly *fewer* assessed documents). Cases 1 and 3 are strong, 2 and 4 weak.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

import numpy as np
import pandas as pd

from evalwh.errors import InsufficientDataError
from evalwh.stats import significance
from evalwh.stats.significance import Correction, Procedure


class Case(str, enum.Enum):
    """A case of the decision matrix (methods §4.3)."""

    C1 = "1"
    C2 = "2"
    C3A = "3a"
    C3B = "3b"
    C4 = "4"

    @property
    def group(self) -> str:
        """The case number without the 3a/3b split: ``1``, ``2``, ``3`` or ``4``."""
        return self.value[0]

    @property
    def strength(self) -> Strength:
        """Strong for cases 1 and 3 (3a, 3b), weak for 2 and 4."""
        return Strength.strong if self.group in ("1", "3") else Strength.weak


class Strength(str, enum.Enum):
    """Whether a comparison's verdict can be trusted given the assessment (methods §4.3)."""

    strong = "strong"
    weak = "weak"


OUTCOME_SYMBOL = {1: ">>", -1: "<<", 0: "=="}
CASE_COLUMNS = ["C1", "C2", "C3", "C4"]


def classify(performance: np.ndarray, assessment: np.ndarray) -> np.ndarray:
    """Classify pairs from their significance outcomes (+1, -1, 0) on the two metrics.

    Args:
        performance: Outcome on the performance metric, one per pair.
        assessment: Outcome on the assessment metric, one per pair, same orientation.

    Returns:
        An object array of :class:`Case` members.

    Examples:
        >>> [c.value for c in classify(np.array([0, 0, 1, 1, -1]), np.array([0, -1, 0, -1, -1]))]
        ['1', '2', '3a', '3b', '4']
    """
    p = np.asarray(performance)
    a = np.asarray(assessment)
    if p.shape != a.shape:
        raise InsufficientDataError(f"outcome arrays differ in shape: {p.shape} and {a.shape}")
    conditions = [
        (p == 0) & (a == 0),
        (p == 0) & (a != 0),
        (p != 0) & (a == 0),
        (p != 0) & (a == -p),
    ]
    choices = np.array([Case.C1, Case.C2, Case.C3A, Case.C3B, Case.C4], dtype=object)
    index = np.select(conditions, [0, 1, 2, 3], default=4)
    return choices[index]


def decision_pairs(
    performance: pd.DataFrame,
    assessment: pd.DataFrame,
    *,
    test: Procedure | str = Procedure.anova,
    correction: Correction | str = Correction.bonferroni,
    alpha: float = 0.05,
    runs: Sequence[str] | None = None,
    n_resamples: int = 9999,
    rng: np.random.Generator | int | None = None,
    invert_assessment: bool = False,
) -> pd.DataFrame:
    """Test every pair on a performance and an assessment metric and classify it.

    Both metrics are tested on the same runs and the same topics: a topic that is undefined
    for any run in either metric is dropped from both.

    Args:
        performance: Per-topic performance scores, ``run_id, query_id, value``.
        assessment: Per-topic assessment scores at the same depth, same columns.
        test: Significance procedure (:class:`~evalwh.stats.significance.Procedure`).
        correction: Multiple-comparison correction (see
            :func:`~evalwh.stats.significance.pairwise`).
        alpha: Significance level.
        runs: Runs and their order (pair ``(a, b)`` has ``a`` first); sorted when None.
        n_resamples: Resamples of the randomization test.
        rng: Random generator or seed for the randomization test; one generator serves both
            metrics, so a seed reproduces the whole table.
        invert_assessment: The assessment metric grows as assessment shrinks (an RBP
            residual): its outcomes are negated, so that ``>>`` still reads "run_a is
            better assessed".

    Returns:
        One row per pair: ``run_a, run_b, n_topics``, then ``perf_mean_a, perf_mean_b,
        perf_statistic, perf_p_value, perf_p_adjusted, perf_outcome`` and the same with
        ``assess_``, then ``case`` (``1, 2, 3a, 3b, 4``), ``case_group`` (``1..4``) and
        ``strength``. Outcomes are ``>>``, ``<<`` or ``==`` read as "run_a ... run_b".

    Raises:
        InsufficientDataError: if the two metrics do not cover the same runs, or as
            :func:`~evalwh.stats.significance.pairwise`.

    Examples:
        >>> perf = pd.DataFrame({"run_id": ["a"] * 4 + ["b"] * 4, "query_id": list("wxyz") * 2,
        ...                      "value": [0.9, 0.8, 0.9, 0.7, 0.1, 0.2, 0.1, 0.2]})
        >>> assess = perf.assign(value=[0.5, 0.6, 0.5, 0.6, 0.6, 0.5, 0.6, 0.5])
        >>> decision_pairs(perf, assess)[["perf_outcome", "assess_outcome", "case", "strength"]].values.tolist()
        [['>>', '==', '3a', 'strong']]
    """
    perf_runs = set(performance["run_id"]) if "run_id" in performance else set()
    assess_runs = set(assessment["run_id"]) if "run_id" in assessment else set()
    if perf_runs != assess_runs:
        only = sorted(perf_runs ^ assess_runs)
        raise InsufficientDataError(
            f"performance and assessment scores cover different runs: {only}"
        )
    # one topic set for both metrics (methods §4.1: two complete k x n matrices)
    topics = set(significance.score_matrix(performance, runs).topics) & set(
        significance.score_matrix(assessment, runs).topics
    )
    generator = np.random.default_rng(rng)
    options = {
        "test": test,
        "correction": correction,
        "alpha": alpha,
        "runs": runs,
        "n_resamples": n_resamples,
    }
    perf = significance.pairwise(
        performance[performance["query_id"].isin(topics)], rng=generator, **options
    )
    assess = significance.pairwise(
        assessment[assessment["query_id"].isin(topics)], rng=generator, **options
    )
    if invert_assessment:
        assess = assess.assign(outcome=-assess["outcome"])
    cases = classify(perf["outcome"].to_numpy(), assess["outcome"].to_numpy())
    out = perf[["run_a", "run_b", "n_topics"]].copy()
    for prefix, frame in (("perf", perf), ("assess", assess)):
        out[f"{prefix}_mean_a"] = frame["mean_a"]
        out[f"{prefix}_mean_b"] = frame["mean_b"]
        out[f"{prefix}_statistic"] = frame["statistic"]
        out[f"{prefix}_p_value"] = frame["p_value"]
        out[f"{prefix}_p_adjusted"] = frame["p_adjusted"]
        out[f"{prefix}_outcome"] = frame["outcome"].map(OUTCOME_SYMBOL)
    out["case"] = [c.value for c in cases]
    out["case_group"] = [c.group for c in cases]
    out["strength"] = [c.strength.value for c in cases]
    return out


def case_proportions(pairs: pd.DataFrame, by: Sequence[str] = ()) -> pd.DataFrame:
    """The share of pairs in each case, as in the papers' tables (methods §4.4).

    Args:
        pairs: Output of :func:`decision_pairs` (or several, stacked with key columns).
        by: Key columns to group by (e.g. ``collection_id, pairing, depth``).

    Returns:
        One row per group: the keys, ``runs, pairs, C1, C2, C3, C4, C3a, C3b, strong, weak``
        (shares of the group's pairs; ``C3 = C3a + C3b``).

    Examples:
        >>> pairs = pd.DataFrame({"run_a": ["a", "a", "b"], "run_b": ["b", "c", "c"],
        ...                       "case": ["1", "3b", "4"]})
        >>> case_proportions(pairs)[["runs", "pairs", "C1", "C3", "C3b", "weak"]].round(3).values.tolist()
        [[3.0, 3.0, 0.333, 0.333, 0.333, 0.333]]
    """
    missing = [c for c in ["run_a", "run_b", "case", *by] if c not in pairs.columns]
    if missing:
        raise InsufficientDataError(f"pairs is missing columns {missing}")
    case = pairs["case"].astype(str).reset_index(drop=True)
    flags = pd.DataFrame(
        {
            "C1": case == "1",
            "C2": case == "2",
            "C3": case.str.startswith("3"),
            "C4": case == "4",
            "C3a": case == "3a",
            "C3b": case == "3b",
        }
    ).astype("float64")
    flags["strong"] = flags["C1"] + flags["C3"]
    flags["weak"] = flags["C2"] + flags["C4"]
    keys = list(by)
    frame = pd.concat([pairs[keys + ["run_a", "run_b"]].reset_index(drop=True), flags], axis=1)
    grouped = frame.groupby(keys, sort=False, dropna=False) if keys else frame.groupby(lambda _: 0)
    shares = grouped[list(flags.columns)].mean()
    counts = grouped.apply(
        lambda g: pd.Series({"runs": len(set(g["run_a"]) | set(g["run_b"])), "pairs": len(g)}),
        include_groups=False,
    )
    out = pd.concat([counts, shares], axis=1).reset_index(drop=not keys)
    return out[[*keys, "runs", "pairs", *CASE_COLUMNS, "C3a", "C3b", "strong", "weak"]]


def proportion_table(
    summary: pd.DataFrame, *, row: str = "collection_id", column: str = "column"
) -> pd.DataFrame:
    """Lay out case proportions as the papers' tables: one row per collection, C1..C4 per column.

    Args:
        summary: Output of :func:`case_proportions` grouped by ``row`` and ``column``.
        row: The row key (a collection, labelled with its run and pair counts).
        column: The column key (a depth such as ``@10``, or ``MAP/MAA``), in first-seen order.

    Returns:
        A wide frame: ``row, runs, pairs`` then ``<column> C1 .. <column> C4`` per column.

    Examples:
        >>> summary = pd.DataFrame({"collection_id": ["x", "x"], "column": ["@10", "@30"],
        ...                         "runs": [3.0, 3.0], "pairs": [3.0, 3.0], "C1": [1.0, 0.5],
        ...                         "C2": [0.0, 0.5], "C3": [0.0, 0.0], "C4": [0.0, 0.0]})
        >>> list(proportion_table(summary).columns)[:5]
        ['collection_id', 'runs', 'pairs', '@10 C1', '@10 C2']
    """
    columns = list(dict.fromkeys(summary[column]))
    rows = []
    for key, group in summary.groupby(row, sort=False):
        record: dict[str, object] = {
            row: key,
            "runs": int(group["runs"].max()),
            "pairs": int(group["pairs"].max()),
        }
        by_column = group.set_index(column)
        for name in columns:
            for case in CASE_COLUMNS:
                value = by_column[case].get(name, np.nan) if name in by_column.index else np.nan
                record[f"{name} {case}"] = float(value)
        rows.append(record)
    return pd.DataFrame(rows)
