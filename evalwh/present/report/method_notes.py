"""The report's "How it was computed" section and the one sentence that names a comparison family.

:func:`family_sentence` says which pairs were tested, with which test and correction, at which
alpha (the leaderboard, the comparisons and the pair figures print it); :func:`_methods` writes
one line per method the report used, with its options and its section of methods.
"""

from __future__ import annotations

from typing import Any

from evalwh.present.report import defaults
from evalwh.present.report.model import ReportOptions
from evalwh.stats.compare import family_procedure


_TEST_PHRASES = {
    "anova": "one-way ANOVA gate, then pairwise t with its pooled error",
    "anova2": "two-way ANOVA gate (topics as blocks), then pairwise t with its error",
    "t": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "sign": "sign test",
    "randomization": "paired randomisation test",
    "bootstrap": "paired bootstrap test",
    "tukey": "Tukey's HSD after the two-way ANOVA (family-wise)",
    "randomized_tukey": "randomised Tukey HSD (family-wise)",
}


def family_sentence(opts: ReportOptions, family: dict[str, Any]) -> str:
    """One sentence: which pairs were tested, with which test and correction, at which alpha.

    Examples:
        >>> from evalwh.present.report.model import ReportOptions
        >>> o = ReportOptions(test="t", correction="holm")
        >>> family_sentence(o, {"n_runs": 8, "n_pairs": 28, "mode": "all", "baselines": []})
        'all 28 pairs of the 8 runs, paired t-test, Holm correction over the 28 pairs of each measure, alpha 0.05'
        >>> family_sentence(o, {"n_runs": 2, "n_pairs": 1, "mode": "baseline", "baselines": ["b"]})
        'the 1 run against the baseline b, paired t-test, Holm correction over the 1 pair of each measure, alpha 0.05'
    """
    n_pairs, n_runs = family["n_pairs"], family["n_runs"]
    plural = "pair" if n_pairs == 1 else "pairs"
    if family["mode"] == "baseline":
        bases = family["baselines"]
        others = n_runs - len(bases)
        runs = "run" if others == 1 else "runs"
        against = f"the baseline {bases[0]}" if len(bases) == 1 else f"each of the baselines {', '.join(bases)}"
        which = f"the {others} {runs} against {against}"
    else:
        which = f"all {n_pairs:,} {plural} of the {n_runs} runs"
    test = _TEST_PHRASES.get(str(opts.test), str(opts.test))
    if opts.correction in (None, "none"):
        correction = "no further correction" if opts.test in ("tukey", "randomized_tukey") else "no correction"
    else:
        name = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg", "by": "Benjamini-Yekutieli"}
        correction = f"{name.get(str(opts.correction), opts.correction)} correction over the {n_pairs:,} {plural} of each measure"
    return f"{which}, {test}, {correction}, alpha {opts.alpha}"


def _methods(
    opts: ReportOptions,
    measures: list[str],
    family: dict[str, Any],
    mode: str,
    judged: defaults.JudgedDepth,
    graded: bool,
) -> list[tuple[str, str]]:
    """How every number of the report was computed, one line per kind of number."""
    pairing = "P@d with A_p@d" if opts.pairing == "P" else "MAP@d (AP@d) with A_p@d"
    listed = {
        "baseline": "every run against the baseline(s) " + ", ".join(opts.baselines),
        "all": "every pair",
        "summary": (
            f"the tiers, the pairs weak at some depth (case 2 or 4; the first {opts.listed} down the "
            f"leaderboard) and the pairs the leaderboard's measures disagree on (the first {opts.listed})"
        ),
        "none": "no pair (one run)",
    }[mode]
    seed = "none" if opts.seed is None else str(opts.seed)
    lines = [
        (
            "Measures",
            f"{', '.join(measures)}: means over topics with at least one relevant document "
            f"(methods §0.4); qrels set {opts.qrels_label!r}{_filled(opts)}, relevant = grade >= 1, unjudged "
            "documents count as non-relevant, a topic a run did not answer scores as an empty "
            "ranking. AP's mean is MAP.",
        ),
        (
            "Defaults",
            f"labels {'graded' if graded else 'binary'}, judged depth {judged.sentence()}. "
            "Unless --measures or the collection's conventions name them, the measures are "
            "nDCG@10 first on graded labels and P@10 first on binary ones, then AP and bpref, "
            "at trec_eval's cutoffs whatever the judged depth (methods §14); a measure that "
            "reads past the judged depth is marked †. The decision matrix's depths are those of "
            "10, 30, 100, 500 and 1000 within the judged depth (else 5) and 10.",
        ),
        (
            "Assessment",
            "A_p@d = share of the top d positions holding a judged document (positions past "
            "the end of a short run count as not assessed, methods §2.2). A run is flagged ⚑ "
            "as less assessed when little of what it retrieved is judged: its mean A_p_ret@10 or "
            "A_p_ret@100 (judged share of the min(d, retrieved) documents it returned) lies "
            "below the lower fence of the pooled runs' own shares (first quartile minus 1.5 "
            f"interquartile ranges; every run's when no run metadata says which were pooled) "
            f"and more than {opts.flag_gap:.2f} below their median.",
        ),
    ]
    if family.get("n_pairs"):
        lines.append(
            (
                "Significance",
                f"{family_sentence(opts, family)}, seed {seed} (resampling tests only, "
                f"{opts.n_resamples} resamples): evalwh compare's family, so its p-values are "
                "compare's for the same options. A topic without a score for every run in a "
                "measure is dropped from that measure.",
            )
        )
        lines.append(
            (
                "Decision matrix",
                f"pairing {pairing} at {defaults.depths_phrase(opts.depths or ())}, plus "
                "MAP/MAA (AP with AA), tested over the same family. Cases: 1 (== ==), 2 (== ≠), "
                "3a (≠ ==), 3b (better run assessed significantly less), 4 (better run also "
                f"assessed more). 1 and 3 are strong, 2 and 4 weak. Listed: {listed}; the case "
                "proportions cover every pair of the family.",
            )
        )
    if family.get("n_pairs"):
        from evalwh.stats.rank_intervals import DEFAULT_CONFIDENCE, DEFAULT_REPLICATES, DEFAULT_SEED, rank_note

        attrs = {
            "confidence": DEFAULT_CONFIDENCE, "replicates": DEFAULT_REPLICATES, "seed": DEFAULT_SEED,
            "test": opts.test, "correction": opts.correction, "alpha": opts.alpha,
        }  # fmt: skip
        lines.append(
            (
                "Rank intervals and tiers",
                f"on {measures[0]}: {rank_note(attrs)} (evalwh compare --all-runs --ranks; methods §13). "
                "The interval says where the run's rank could fall on another set of topics like "
                "these, the other runs held fixed; it is not a statement about other runs or "
                "other judgments.",
            )
        )
    lines += [
        (
            "Bounds",
            "P@d belief and plausibility: [P@d, P@d + U@d] with U@d = 1 - A_p@d, mean masses "
            "over topics (methods §7); the interval holds P@d under every completion of the "
            "judgments.",
        ),
        (
            "Unjudged share",
            "at rank k: lists (run, topic, every qrels topic) reaching k whose document at k "
            "is unjudged, over lists reaching k (methods §2.7).",
        ),
    ]
    return lines


def _filled(opts: ReportOptions) -> str:
    """How a composition's labels were chosen, for the methods line (empty for one set)."""
    if not opts.fill:
        return ""
    return (
        f" ({opts.qrels_id}'s labels; a document it did not judge takes the label of the first "
        f"of {', '.join(opts.fill)} that judged it, grade >= 0)"
    )
