"""Options shared by the decision-matrix commands (compare, matrix, plot)."""

from __future__ import annotations

import enum
from typing import Annotated

import typer


class Measure(str, enum.Enum):
    """The performance side of a decision-matrix pairing."""

    P = "P"
    MAP = "MAP"


class TestChoice(str, enum.Enum):
    """Significance procedures (methods §4.2; evalwh.stats.significance.Procedure)."""

    anova = "anova"
    anova2 = "anova2"
    t = "t"
    wilcoxon = "wilcoxon"
    sign = "sign"
    randomization = "randomization"
    bootstrap = "bootstrap"
    tukey = "tukey"
    randomized_tukey = "randomized_tukey"


class CorrectionChoice(str, enum.Enum):
    """Multiple-comparison corrections over a family of pairs."""

    bonferroni = "bonferroni"
    holm = "holm"
    bh = "bh"
    by = "by"
    none = "none"


MeasureOption = Annotated[
    Measure, typer.Option("--measure", "-m", help="P (P@d with A_p@d) or MAP (MAP@d with A_p@d).")
]
PairingMeasureOption = Annotated[
    str,
    typer.Option(
        "--measure",
        "-m",
        help="Performance measure without depth: P (P@d), MAP (AP@d), nDCG, 'RBP(p=0.9)', bpref, ...",
    ),
]
AssessmentOption = Annotated[
    str,
    typer.Option(
        "--assessment",
        help="Assessment measure without depth: A_p (the papers'), A_p_ret or 'RBP_resid(p=0.8)'.",
    ),
]
DepthsOption = Annotated[
    str, typer.Option("--depths", "-d", help="Comma-separated depths, e.g. 10,30,100,500,1000.")
]
FullOption = Annotated[
    bool, typer.Option("--full/--no-full", help="Add the full-list MAP/MAA pairing (AP with AA).")
]
TestOption = Annotated[
    TestChoice,
    typer.Option(
        "--test",
        "-t",
        help="anova (one-way, the papers'), anova2 (blocked by topic), t, wilcoxon, sign, "
        "randomization, bootstrap, tukey (HSD after two-way ANOVA), randomized_tukey.",
    ),
]
CorrectionOption = Annotated[
    CorrectionChoice,
    typer.Option("--correction", help="Correction over the pairs: bonferroni, holm, bh, by, none."),
]
AlphaOption = Annotated[
    float, typer.Option("--alpha", min=0.0, max=1.0, help="Significance level.")
]
RunsOption = Annotated[
    str | None,
    typer.Option(
        "--runs", help="Comma-separated family of runs tested together (default: all runs)."
    ),
]
QrelsOption = Annotated[str, typer.Option("--qrels", help="Qrels set to evaluate against.")]
SeedOption = Annotated[
    int | None, typer.Option("--seed", help="Random seed of the resampling tests.")
]
ResamplesOption = Annotated[
    int,
    typer.Option(
        "--resamples", min=1, help="Resamples of the randomization, bootstrap and randomised Tukey tests."
    ),
]


def parse_depths(text: str) -> list[int]:
    """Parse ``10,30,100`` into integers; a usage error for anything else."""
    try:
        depths = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter(
            f"expected comma-separated integers, got {text!r}", param_hint="--depths"
        ) from None
    if any(d < 1 for d in depths):
        raise typer.BadParameter(f"depths must be positive, got {text!r}", param_hint="--depths")
    return depths


def parse_runs(text: str | None) -> list[str] | None:
    """Parse a comma-separated run list (None stays None: all runs)."""
    if text is None:
        return None
    return [part.strip() for part in text.split(",") if part.strip()]
