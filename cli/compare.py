"""evalwh compare | matrix | kendall: the System Evaluation Decision Matrix (methods §4)."""

from __future__ import annotations

import enum
from typing import Annotated

import typer
from evalwh.cli import plot
from evalwh.cli._decision_options import (
    AlphaOption,
    CorrectionChoice,
    CorrectionOption,
    DepthsOption,
    FullOption,
    Measure,
    MeasureOption,
    QrelsOption,
    ResamplesOption,
    RunsOption,
    SeedOption,
    TestChoice,
    TestOption,
    parse_depths,
    parse_runs,
)
from evalwh.cli._errors import handle_errors
from evalwh.cli._options import (
    DEFAULT_DB,
    CollectionOption,
    DbOption,
    FormatOption,
    OutputFormat,
    OutputOption,
)
from evalwh.cli._progress import progress_bar
from evalwh.cli._render import render

DEFAULT_DEPTHS = "10,30,100,500,1000"


class Layout(str, enum.Enum):
    """What `evalwh matrix` prints."""

    summary = "summary"  # one row per column (depth): C1..C4, 3a/3b, strong/weak
    paper = "paper"  # the papers' tables: one row per collection, C1..C4 per depth
    pairs = "pairs"  # one row per pair and column


_PAIR_COLUMNS = [
    "column", "run_a", "run_b", "n_topics", "perf_mean_a", "perf_mean_b", "perf_p_adjusted",
    "perf_outcome", "assess_mean_a", "assess_mean_b", "assess_p_adjusted", "assess_outcome",
    "case", "strength",
]  # fmt: skip


@handle_errors
def compare(
    run_a: Annotated[str, typer.Argument(help="The first run; outcomes read 'RUN_A >> RUN_B'.")],
    run_b: Annotated[str, typer.Argument(help="The second run.")],
    collection: CollectionOption,
    measure: MeasureOption = Measure.P,
    depths: DepthsOption = DEFAULT_DEPTHS,
    full: FullOption = True,
    test: TestOption = TestChoice.anova,
    correction: CorrectionOption = CorrectionChoice.bonferroni,
    alpha: AlphaOption = 0.05,
    runs: RunsOption = None,
    qrels: QrelsOption = "default",
    seed: SeedOption = None,
    resamples: ResamplesOption = 9999,
    all_columns: Annotated[
        bool, typer.Option("--all-columns", help="Print statistics and raw p-values too.")
    ] = False,
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Compare two runs at every depth: outcomes on performance and assessment, and the case.

    Example: evalwh compare INQ604 ok8amxc --collection trec8 --measure P --depths 10,30,100,500,1000
    """
    from evalwh.decisions import compare_runs
    from evalwh.warehouse import Warehouse

    with Warehouse.open_reader(db) as wh:
        result = compare_runs(
            wh, collection, run_a, run_b, measure=measure.value, depths=parse_depths(depths), full=full,
            runs=parse_runs(runs), test=test.value, correction=correction.value, alpha=alpha,
            qrels_id=qrels, n_resamples=resamples, rng=seed,
        )  # fmt: skip
    frame = result.pairs if all_columns else result.pairs[_PAIR_COLUMNS]
    render(
        frame,
        fmt,
        output,
        title=f"{run_a} vs {run_b} ({test.value}, {correction.value}, alpha {alpha})",
    )


@handle_errors
def matrix(
    collection: CollectionOption,
    measure: MeasureOption = Measure.P,
    depths: DepthsOption = DEFAULT_DEPTHS,
    full: FullOption = True,
    test: TestOption = TestChoice.anova,
    correction: CorrectionOption = CorrectionChoice.bonferroni,
    alpha: AlphaOption = 0.05,
    runs: RunsOption = None,
    qrels: QrelsOption = "default",
    seed: SeedOption = None,
    resamples: ResamplesOption = 9999,
    layout: Annotated[
        Layout, typer.Option("--layout", help="summary, paper (the papers' table) or pairs.")
    ] = Layout.summary,
    store: Annotated[
        bool,
        typer.Option(
            "--store/--no-store",
            help="Keep pairs and proportions in decision_pairs / decision_summary.",
        ),
    ] = True,
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Classify every pair of runs at every depth and print the case proportions.

    Example: evalwh matrix --collection trec8 --measure MAP --test wilcoxon --correction holm --format csv
    """
    from evalwh.decisions import decision_matrix
    from evalwh.warehouse import Warehouse

    with (
        Warehouse(db) if store else Warehouse.open_reader(db) as wh,
        progress_bar("testing pairs") as bar,
    ):
        result = decision_matrix(
            wh, collection, measure=measure.value, depths=parse_depths(depths), full=full,
            runs=parse_runs(runs), test=test.value, correction=correction.value, alpha=alpha,
            qrels_id=qrels, n_resamples=resamples, rng=seed, store=store, progress=bar,
        )  # fmt: skip
    if layout is Layout.pairs:
        frame = result.pairs
    elif layout is Layout.paper:
        frame = result.table
    else:
        frame = result.summary.drop(columns=["collection_id"])
    pairing = "P@d / A_p@d" if measure is Measure.P else "MAP@d / A_p@d"
    render(
        frame,
        fmt,
        output,
        title=f"{collection}: {pairing} ({test.value}, {correction.value}, alpha {alpha})",
        digits=3,
    )


@handle_errors
def kendall(
    collection: CollectionOption,
    x: Annotated[str, typer.Option("--x", help="Measure of the first ranking.")] = "AP",
    y: Annotated[str, typer.Option("--y", help="Measure of the second ranking.")] = "A_p@1000",
    runs: RunsOption = None,
    qrels: QrelsOption = "default",
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Kendall's tau_b between the run rankings by two measures (MAP against A_p@1000 by default).

    Example: evalwh kendall --collection trec8 --x AP --y A_p@1000
    """
    import pandas as pd

    from evalwh.decisions import rank_correlation
    from evalwh.warehouse import Warehouse

    with Warehouse.open_reader(db) as wh:
        result = rank_correlation(wh, collection, x=x, y=y, runs=parse_runs(runs), qrels_id=qrels)
    render(pd.DataFrame([result]), fmt, output, title=f"{collection}: Kendall tau_b")


def register(app: typer.Typer) -> None:
    """Add compare, matrix, kendall and the plot group to the root app."""
    app.command("compare")(compare)
    app.command("matrix")(matrix)
    app.command("kendall")(kendall)
    app.add_typer(plot.app, name="plot")
