"""Compare runs on any measures: against baselines or all pairs, with intervals and effect sizes.

A pure function over a DataFrame of per-topic scores (``run_id, query_id, measure, value``),
from the warehouse or from any other tool. Per measure, the family of runs is aligned on the
topics every run has (the others are dropped from all runs, and counted); the chosen test
runs over the pairs of the family; the correction runs over the pairs of one measure.

Per comparison: the mean difference and its confidence interval, Hedges-corrected d_z and
Sakai's ES_E (the difference over the square root of the two-way ANOVA's residual variance
V_E of the family), wins / ties / losses over topics, raw and corrected p, and whether the
null hypothesis is rejected at alpha. Per measure: the two-way ANOVA table and Sakai's margin
of error (MOE).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalwh.errors import InsufficientDataError
from evalwh.stats import family, paired
from evalwh.stats.significance import (
    Correction,
    Procedure,
    corrected,
    default_correction,
    interval_alpha,
    interval_note,
    pair_tests,
)

COLUMNS = ["run_id", "query_id", "measure", "value"]

# the comparison family's procedure when none is named, for `evalwh compare` and `evalwh report`
# alike (:func:`family_procedure`): the paired t-test, Holm over the family's pairs
DEFAULT_TEST = Procedure.t
DEFAULT_CORRECTION = Correction.holm


def family_procedure(
    test: Procedure | str | None = None, correction: Correction | str | None = None
) -> tuple[Procedure, Correction]:
    """The test and correction of a comparison family, the defaults filled in.

    One definition for every command that compares runs (``compare`` and ``report``): the
    paired t-test when no test is named; Holm over the family's pairs when no correction is
    named (none for the Tukey procedures, family-wise already). Holm, unlike the papers'
    one-way ANOVA gate with Bonferroni, keeps power as the family grows: it is uniformly more
    powerful than Bonferroni and has no gate that a single weak run can close.

    Examples:
        >>> [x.value for x in family_procedure()], [x.value for x in family_procedure("tukey")]
        (['t', 'holm'], ['tukey', 'none'])
    """
    chosen = DEFAULT_TEST if test is None else Procedure(test)
    if correction is None:
        return chosen, default_correction(chosen, DEFAULT_CORRECTION)
    return chosen, Correction(correction)


@dataclass(frozen=True)
class Comparison:
    """The result of :func:`compare`.

    Attributes:
        pairs: One row per measure and comparison: ``measure, run_a, run_b, n_topics,
            mean_a, mean_b, mean_diff, ci_low, ci_high, effect_size, es_e, wins, ties, losses,
            statistic, p_value, p_adjusted, reject``. ``run_b`` is the baseline where there is
            one; ``ci_low, ci_high`` is the interval of the test (NaN for a test without one); ``mean_diff = mean_a - mean_b``; ``wins`` counts topics where ``run_a`` is
            better; ``effect_size`` is Hedges-corrected d_z.
        runs: One row per measure and run: ``measure, run_id, n_topics, mean, ci_low,
            ci_high`` (t-based interval of the run's mean over the kept topics).
        anova: Per measure, the two-way ANOVA table (``measure, source, ss, df, ms, F,
            p_value``) of the family of runs.
        families: One row per measure: ``measure, n_runs, n_topics, topics_dropped, n_pairs,
            v_e, moe, test, correction, alpha, interval`` (``interval`` says which interval
            ``ci_low, ci_high`` are and what they cover, :func:`~evalwh.stats.significance.interval_note`).
        baselines: The baselines, in the order given.
        notes: Sentences a reader must see (topics dropped), one per measure concerned.
        ranks: With ``ranks=True``, one row per measure and run, best first: ``measure,
            run_id, n_topics, mean, rank, rank_low, rank_high, tier``
            (:func:`evalwh.stats.compare.rank_table`; its ``attrs`` say the replicates,
            seed and confidence); None otherwise.
    """

    pairs: pd.DataFrame
    runs: pd.DataFrame
    anova: pd.DataFrame
    families: pd.DataFrame
    baselines: list[str]
    notes: list[str] = field(default_factory=list)
    ranks: pd.DataFrame | None = None


def family_pairs(
    runs: Sequence[str], baselines: Sequence[str] = (), *, all_pairs: bool = False
) -> list[tuple[str, str]]:
    """The oriented pairs ``(run_a, run_b)`` of a comparison.

    With baselines and without ``all_pairs``: every other run against each baseline, as
    ``(run, baseline)``; a pair of two baselines appears once. Otherwise all pairs of ``runs``
    in their order, a baseline (if any) on the ``run_b`` side.

    Examples:
        >>> family_pairs(["b", "x", "y"], ["b"])
        [('x', 'b'), ('y', 'b')]
        >>> family_pairs(["x", "y", "z"])
        [('x', 'y'), ('x', 'z'), ('y', 'z')]
        >>> family_pairs(["b", "c", "x"], ["b", "c"])
        [('c', 'b'), ('x', 'b'), ('x', 'c')]
    """
    runs = list(runs)
    unknown = [b for b in baselines if b not in runs]
    if unknown:
        raise InsufficientDataError(f"baseline(s) {unknown} are not among the runs compared")
    out: list[tuple[str, str]] = []
    seen: set[frozenset[str]] = set()
    if baselines and not all_pairs:
        for base in baselines:
            for run in runs:
                key = frozenset((run, base))
                if run != base and key not in seen:
                    seen.add(key)
                    out.append((run, base))
        return out
    position = {b: i for i, b in enumerate(baselines)}
    for i, a in enumerate(runs):
        for b in runs[i + 1 :]:
            if a in position and (b not in position or position[b] > position[a]):
                a_side, b_side = b, a
            else:
                a_side, b_side = a, b
            out.append((a_side, b_side))
    return out


def compare(
    scores: pd.DataFrame,
    *,
    runs: Sequence[str] | None = None,
    measures: Sequence[str] | None = None,
    baselines: Sequence[str] = (),
    all_pairs: bool = False,
    test: Procedure | str = Procedure.t,
    correction: Correction | str | None = None,
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    rng: np.random.Generator | int | None = None,
    retrieved: pd.DataFrame | None = None,
    ranks: bool = False,
) -> Comparison:
    """Compare runs on every measure of ``scores``.

    Args:
        scores: Per-topic scores, columns ``run_id, query_id, measure, value`` (``measure``
            may be absent for one measure). NaN values count as missing.
        runs: The family of runs, in order; every run of ``scores`` (sorted) when None.
        measures: The measures, in order; every measure of ``scores`` (first seen) when None.
        baselines: Runs every other run is compared with; none means all pairs.
        all_pairs: Compare all pairs even when baselines are given.
        test: The procedure (:class:`~evalwh.stats.significance.Procedure`); the paired t-test
            by default.
        correction: Over the comparisons of one measure; Holm when None (none for the Tukey
            procedures, which are family-wise already).
        alpha: Significance level (also sets the intervals' coverage, ``1 - alpha``).
        n_resamples: Resamples of the resampling tests.
        rng: Random generator or seed; one generator serves every measure in order, so a
            seed reproduces the whole comparison.
        retrieved: Optionally, the documents each run ranked per topic scored (``run_id,
            query_id, value``; 0 for a topic the run has no ranking for, which scored it as
            an empty ranking). When the runs' sets of such topics differ, a note says how
            many each lacks (:func:`coverage_note`): a topic one run lacks scores 0 for it
            and counts as a win for the others, so a test may find a difference that lies
            in the topics the runs were given, not in their rankings.
        ranks: Also each run's rank, its 95% bootstrap rank interval and its tier
            (:mod:`evalwh.stats.rank_intervals`, with its fixed seed and replicates): the
            tiers come from the comparison of all pairs with the same test and correction
            (computed besides, when the comparison is against baselines).

    Returns:
        A :class:`Comparison`.

    Raises:
        InsufficientDataError: for missing columns, duplicate scores, unknown runs or
            baselines, fewer than two runs, or fewer than two topics shared by all runs.

    Examples:
        >>> frame = pd.DataFrame({"run_id": ["a"] * 4 + ["b"] * 4, "query_id": list("wxyz") * 2,
        ...                       "measure": "AP", "value": [0.9, 0.8, 0.9, 0.7, 0.1, 0.2, 0.1, 0.2]})
        >>> out = compare(frame, baselines=["b"])
        >>> out.pairs[["run_a", "run_b", "wins", "losses", "reject"]].values.tolist()
        [['a', 'b', 4, 0, True]]
    """
    test, correction = family_procedure(test, correction)
    if not 0.0 < alpha < 1.0:
        raise InsufficientDataError(f"alpha must lie in (0, 1), got {alpha}")
    frame = _checked(scores)
    present = list(dict.fromkeys(frame["measure"]))
    chosen = list(measures) if measures is not None else present
    absent = [m for m in chosen if m not in present]
    if absent:
        raise InsufficientDataError(f"scores have no values for measure(s) {absent}")
    family_runs = list(runs) if runs is not None else sorted(frame["run_id"].unique())
    if len(set(family_runs)) != len(family_runs):
        raise InsufficientDataError("runs lists a run more than once")
    if len(family_runs) < 2:
        raise InsufficientDataError(f"need at least two runs to compare, got {len(family_runs)}")
    pairs = family_pairs(family_runs, baselines, all_pairs=all_pairs)
    index = {r: i for i, r in enumerate(family_runs)}
    a_idx = np.array([index[a] for a, _ in pairs], dtype=np.intp)
    b_idx = np.array([index[b] for _, b in pairs], dtype=np.intp)
    generator = np.random.default_rng(rng)
    pair_frames, run_frames, anova_frames, family_rows, notes = [], [], [], [], []
    if retrieved is not None:
        note = coverage_note(retrieved, family_runs)
        if note is not None:
            notes.append(note)
    for measure in chosen:
        values, topics, dropped = _matrix(frame[frame["measure"] == measure], family_runs, measure)
        if dropped:
            notes.append(
                f"{measure}: {dropped} topic(s) without a score for every run were dropped "
                f"from all runs ({len(topics)} kept)"
            )
        n = values.shape[1]
        tests = pair_tests(
            values, a_idx, b_idx, test=test, alpha=alpha, n_resamples=n_resamples, rng=generator,
            ci_alpha=interval_alpha(test, correction, alpha, len(pairs)),
        )
        adjusted = corrected(tests, test, correction, alpha)
        anova = family.two_way_anova(values)
        diffs = paired.rounded_differences(values[a_idx], values[b_idx])
        wins, ties, losses = paired.win_tie_loss(diffs)
        means = values.mean(axis=1)
        mean_diff = means[a_idx] - means[b_idx]
        with np.errstate(divide="ignore", invalid="ignore"):
            es_e = mean_diff / np.sqrt(anova.v_e)
        pair_frames.append(
            pd.DataFrame(
                {
                    "measure": measure,
                    "run_a": [a for a, _ in pairs],
                    "run_b": [b for _, b in pairs],
                    "n_topics": n,
                    "mean_a": means[a_idx],
                    "mean_b": means[b_idx],
                    "mean_diff": mean_diff,
                    "ci_low": tests.ci_low,
                    "ci_high": tests.ci_high,
                    "effect_size": paired.hedges_dz(diffs),
                    "es_e": es_e,
                    "wins": wins,
                    "ties": ties,
                    "losses": losses,
                    "statistic": tests.statistic,
                    "p_value": tests.p_value,
                    "p_adjusted": adjusted,
                    "reject": np.nan_to_num(adjusted, nan=1.0) < alpha,
                }
            )
        )
        low, high = paired.t_interval(values, alpha)
        run_frames.append(
            pd.DataFrame(
                {
                    "measure": measure,
                    "run_id": family_runs,
                    "n_topics": n,
                    "mean": means,
                    "ci_low": low,
                    "ci_high": high,
                }
            )
        )
        anova_frames.append(anova.table().assign(measure=measure))
        family_rows.append(
            {
                "measure": measure,
                "n_runs": len(family_runs),
                "n_topics": n,
                "topics_dropped": dropped,
                "n_pairs": len(pairs),
                "v_e": anova.v_e,
                "moe": anova.moe(alpha),
                "test": test.value,
                "correction": correction.value,
                "alpha": alpha,
                "interval": interval_note(test, correction, alpha, len(pairs)),
            }
        )
    anova_table = pd.concat(anova_frames, ignore_index=True)
    rank_frame = None
    if ranks:
        everyone = len(pairs) == len(family_runs) * (len(family_runs) - 1) // 2
        rank_frame = rank_table(
            frame, runs=family_runs, measures=chosen, test=test, correction=correction, alpha=alpha,
            n_resamples=n_resamples, rng=rng,
            comparison=Comparison(pd.concat(pair_frames), pd.DataFrame(), pd.DataFrame(),
                                  pd.DataFrame(family_rows), []) if everyone else None,
        )  # fmt: skip
    return Comparison(
        pairs=pd.concat(pair_frames, ignore_index=True),
        runs=pd.concat(run_frames, ignore_index=True),
        anova=anova_table[["measure", *[c for c in anova_table.columns if c != "measure"]]],
        families=pd.DataFrame(family_rows),
        baselines=list(baselines),
        notes=notes,
        ranks=rank_frame,
    )


def rank_table(
    scores: pd.DataFrame,
    *,
    runs: Sequence[str] | None = None,
    measures: Sequence[str] | None = None,
    test: Procedure | str | None = None,
    correction: Correction | str | None = None,
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    rng: int | None = None,
    confidence: float = 0.95,
    replicates: int = 2000,
    seed: int | None = 0,
    comparison: Comparison | None = None,
) -> pd.DataFrame:
    """Ranks, rank intervals and tiers of every run on every measure of per-topic ``scores``.

    The runs are aligned on the topics every run has, as :func:`compare` aligns them (topics
    sorted as text, the order the bootstrap's draws index); rank intervals and tiers are
    those of :func:`evalwh.stats.rank_intervals.rank_frame` (methods §13), the tiers from
    :func:`compare`'s comparison of all pairs with ``test``,
    ``correction``, ``alpha``, ``n_resamples`` and ``rng`` (the defaults of ``evalwh
    compare``), or from ``comparison`` when one of all pairs is given.

    Returns:
        One row per measure and run, best rank first: ``measure, run_id, n_topics, mean,
        rank, rank_low, rank_high, tier``. ``DataFrame.attrs`` holds ``replicates``, ``seed``,
        ``confidence``, ``test``, ``correction`` and ``alpha``.

    Examples:
        >>> import pandas as pd
        >>> frame = pd.DataFrame({"run_id": ["a"] * 5 + ["b"] * 5 + ["c"] * 5, "query_id": list("vwxyz") * 3,
        ...                       "measure": "AP", "value": [0.9, 0.8, 0.7, 0.9, 0.6, 0.5, 0.4, 0.9, 0.2, 0.3,
        ...                                                  0.5, 0.6, 0.4, 0.3, 0.4]})
        >>> rank_table(frame)[["run_id", "rank", "rank_low", "rank_high", "tier"]].values.tolist()
        [['a', 1, 1, 1, 1], ['b', 2, 2, 3, 1], ['c', 3, 2, 3, 2]]
    """
    from evalwh.stats import rank_intervals as ri

    frame = _checked(scores)
    family_runs = list(runs) if runs is not None else sorted(frame["run_id"].unique())
    chosen = list(measures) if measures is not None else list(dict.fromkeys(frame["measure"]))
    if comparison is None:
        comparison = compare(
            frame, runs=family_runs, measures=chosen, all_pairs=True, test=test or "t", correction=correction,
            alpha=alpha, n_resamples=n_resamples, rng=rng,
        )  # fmt: skip
        chosen_test, chosen_correction = family_procedure(test, correction)
        test_name, correction_name = chosen_test.value, chosen_correction.value
    else:
        first = comparison.families.iloc[0]
        test_name, correction_name, alpha = str(first["test"]), str(first["correction"]), float(first["alpha"])
    out = []
    for measure in chosen:
        # the topics in compare's order (sorted as text): the bootstrap's draws index them
        matrix, _topics, _dropped = _matrix(frame[frame["measure"] == measure], family_runs, measure)
        distinct = ri.distinguishable(comparison.pairs, family_runs, measure)
        out.append(
            ri.rank_frame(
                matrix, family_runs, distinct, measure=measure, confidence=confidence, replicates=replicates,
                seed=seed,
            )  # fmt: skip
        )
    result = pd.concat(out, ignore_index=True)
    result.attrs.update(
        replicates=replicates, seed=seed, confidence=confidence, test=test_name, correction=correction_name,
        alpha=alpha,
    )  # fmt: skip
    return result


def coverage_note(retrieved: pd.DataFrame, runs: Sequence[str]) -> str | None:
    """A note when the runs lack different topics (an empty ranking scored 0), else None.

    ``retrieved`` holds ``run_id, query_id, value``: the documents each run ranked per topic
    scored. A topic every run lacks is the same for all and is not noted.

    Examples:
        >>> frame = pd.DataFrame({"run_id": ["x", "x", "y", "y"], "query_id": ["1", "2"] * 2, "value": [5, 0, 0, 3]})
        >>> coverage_note(frame, ["x", "y"])
        "the runs' topic sets differ: x has no ranking for 1 of the 2 topics scored, y for 1; such a topic scores 0 for that run (an empty ranking), so part of a difference may be the topics a run lacks"
        >>> coverage_note(frame.assign(value=1), ["x", "y"]) is None
        True
    """
    frame = retrieved[retrieved["run_id"].astype(str).isin([str(r) for r in runs])]
    topics = frame["query_id"].astype(str)
    lacking = {str(run): set(topics[(frame["run_id"].astype(str) == str(run)) & (frame["value"] <= 0)]) for run in runs}
    if len({frozenset(t) for t in lacking.values()}) <= 1:
        return None
    scored = topics.nunique()
    counts = [(run, len(t)) for run, t in lacking.items() if t]
    first, *others = counts
    listed = f"{first[0]} has no ranking for {first[1]} of the {scored} topics scored"
    listed += "".join(f", {run} for {n}" for run, n in others)
    return (
        f"the runs' topic sets differ: {listed}; such a topic scores 0 for that run (an empty ranking), "
        "so part of a difference may be the topics a run lacks"
    )


def _checked(scores: pd.DataFrame) -> pd.DataFrame:
    """The columns in order (a single ``measure`` named ``value`` when absent), validated."""
    frame = scores if "measure" in scores.columns else scores.assign(measure="value")
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise InsufficientDataError(f"scores is missing columns {missing}; expected {COLUMNS}")
    frame = frame[COLUMNS].astype({"run_id": str, "query_id": str, "measure": str})
    frame = frame.assign(value=pd.to_numeric(frame["value"], errors="raise").astype("float64"))
    duplicated = frame.duplicated(["run_id", "query_id", "measure"])
    if duplicated.any():
        first = frame[duplicated].iloc[0]
        raise InsufficientDataError(
            f"scores has more than one value for run {first['run_id']!r}, topic "
            f"{first['query_id']!r}, measure {first['measure']!r}"
        )
    return frame


def _matrix(
    scores: pd.DataFrame, runs: list[str], measure: str
) -> tuple[np.ndarray, list[str], int]:
    """The runs x topics matrix of one measure over the topics every run has; the dropped count."""
    wide = scores.pivot(index="run_id", columns="query_id", values="value")
    absent = [r for r in runs if r not in wide.index]
    if absent:
        raise InsufficientDataError(f"{measure}: scores have no values for run(s) {absent}")
    wide = wide.loc[runs]
    kept = wide.dropna(axis=1, how="any")
    kept = kept.reindex(columns=sorted(kept.columns))
    if kept.shape[1] < 2:
        raise InsufficientDataError(
            f"{measure}: only {kept.shape[1]} topic(s) have a score for every run; need at least 2"
        )
    return kept.to_numpy(dtype=np.float64), [str(t) for t in kept.columns], wide.shape[1] - kept.shape[1]
