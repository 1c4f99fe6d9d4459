"""Options shared by the decision-matrix commands (compare, matrix, plot)."""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from evalwh.cli._options import number

F = TypeVar("F", bound=Callable[..., Any])


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
    float, typer.Option("--alpha", click_type=number(0, 1, min_open=True, max_open=True), help="Significance level.")
]
RunsOption = Annotated[
    str | None,
    typer.Option(
        "--runs", help="Comma-separated family of runs tested together (default: all runs)."
    ),
]
QrelsIdOption = Annotated[
    str | None,
    typer.Option(
        "--qrels-id",
        help="Stored qrels set to evaluate against (default: the collection's, from evalwh "
        "conventions --qrels-id, else the set named default, else its only set).",
    ),
]
LegacyQrelsOption = Annotated[
    str | None,
    typer.Option(
        "--qrels",
        hidden=True,
        help="A qrels file: not here, this command reads a warehouse (a stored set is --qrels-id).",
    ),
]
SeedOption = Annotated[
    int | None, typer.Option("--seed", min=0, help="Random seed of the resampling tests.")
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


def check_qrels_file(qrels: Path, db: Path) -> None:
    """``--qrels`` names a qrels file; a stored set's name (its meaning before) gets one line naming --qrels-id.

    Raises:
        NotFoundError: for a path that does not exist (saying ``--qrels-id`` when the
            warehouse ``db`` holds a qrels set of that name).
        EvalWhError: for a path that is not a file.
    """
    from evalwh.errors import EvalWhError, NotFoundError

    if qrels.is_file() or str(qrels) == "-" or str(qrels).startswith("irds:"):
        return  # (irds:DATASET_ID is resolved by the ingest, evalwh.io.irds)
    if qrels.exists():
        raise EvalWhError(f"--qrels {qrels}: not a file (a qrels file is expected)")
    if db.is_file():
        from evalwh.warehouse import Warehouse

        try:
            with Warehouse.open_reader(db) as wh:
                stored = wh.con.execute(
                    "SELECT 1 FROM qrels WHERE qrels_id = ? LIMIT 1", [str(qrels)]
                ).fetchall()
        except Exception:  # not a readable warehouse: the missing file is the message
            stored = []
        if stored:
            raise NotFoundError(
                f"--qrels takes a qrels file now; {str(qrels)!r} is a qrels set stored in {db}: "
                f"use --qrels-id {qrels}"
            )
    raise NotFoundError(f"--qrels {qrels}: no such qrels file (a stored qrels set is --qrels-id NAME)")


def warehouse_only(command: str) -> Callable[[F], F]:
    """Decorate a command that reads a warehouse only: ``--qrels FILE`` is refused in one line,
    before the warehouse is opened (see :func:`refuse_qrels_file`)."""

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            refuse_qrels_file(command, kwargs.get("qrels"), Path(kwargs["db"]))
            return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate


def refuse_qrels_file(command: str, qrels: str | None, db: Path) -> None:
    """A command that reads a warehouse only, given ``--qrels``: one line saying what to do."""
    if qrels is None:
        return
    from evalwh.errors import EvalWhError

    check_qrels_file(Path(qrels), db)
    raise EvalWhError(
        f"{command} reads a warehouse: ingest the qrels file and the runs first "
        f"(evalwh ingest qrels {qrels} -c NAME; evalwh ingest runs RUN... -c NAME); "
        "a stored qrels set is --qrels-id"
    )


QrelsOption = QrelsIdOption
"""The former name of :data:`QrelsIdOption` (a stored qrels set is ``--qrels-id`` everywhere)."""
