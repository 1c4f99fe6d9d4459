"""evalwh plot ...: figures for papers (other groups add their own subcommands here)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from evalwh.cli._decision_options import (
    AlphaOption,
    CorrectionChoice,
    CorrectionOption,
    DepthsOption,
    Measure,
    MeasureOption,
    LegacyQrelsOption,
    QrelsIdOption,
    RunsOption,
    TestChoice,
    TestOption,
    parse_depths,
    parse_runs,
    warehouse_only,
)
from evalwh.cli._errors import handle_errors
from evalwh.cli._options import DEFAULT_DB, CollectionOption, DbOption, default_collection

app = typer.Typer(help="Draw figures (PNG, PDF or SVG by the file suffix).", no_args_is_help=True)

DEFAULT_DEPTHS = "10,30,100,500,1000"
FigureOption = Annotated[
    Path,
    typer.Option(
        "--output", "-o", help="The figure file; png, pdf or svg by suffix.", dir_okay=False
    ),
]
TitleOption = Annotated[str | None, typer.Option("--title", help="Figure title.")]


@app.command("compare")
@handle_errors
@warehouse_only("plot compare")
@default_collection
def compare(
    run_a: Annotated[str, typer.Argument(help="The first run.")],
    run_b: Annotated[str, typer.Argument(help="The second run.")],
    output: FigureOption,
    collection: CollectionOption = None,
    measure: MeasureOption = Measure.P,
    depths: DepthsOption = DEFAULT_DEPTHS,
    test: TestOption = TestChoice.anova,
    correction: CorrectionOption = CorrectionChoice.bonferroni,
    alpha: AlphaOption = 0.05,
    runs: RunsOption = None,
    qrels_id: QrelsIdOption = None,
    qrels: LegacyQrelsOption = None,
    title: TitleOption = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Plot two runs' performance and A_p against depth, with comparison intervals and cases.

    Example: evalwh plot compare INQ604 ok8amxc --collection trec8 -o fig.png
    """
    from evalwh.methods.decisions import compare_runs
    from evalwh.present.plots.pair import plot_pair
    from evalwh.warehouse import Warehouse

    with Warehouse.open_reader(db) as wh:
        qrels_id = wh.qrels_set(collection, qrels_id)
        result = compare_runs(
            wh, collection, run_a, run_b, measure=measure.value, depths=parse_depths(depths), full=False,
            runs=parse_runs(runs), test=test.value, correction=correction.value, alpha=alpha, qrels_id=qrels_id,
        )  # fmt: skip
    plot_pair(result, output, title=title)
    typer.echo(f"wrote {output}", err=True)


@app.command("runs")
@handle_errors
@warehouse_only("plot runs")
@default_collection
def runs_(
    output: FigureOption,
    collection: CollectionOption = None,
    measure: Annotated[
        Measure | None,
        typer.Option(
            "--measure", "-m",
            help="P (P@d with A_p@d) or MAP (MAP@d with A_p@d); default P, as evalwh report.",
        ),
    ] = None,
    depths: Annotated[
        str | None,
        typer.Option(
            "--depths", "-d",
            help="Comma-separated depths (default: evalwh report's, from the collection's "
            "judged depth).",
        ),
    ] = None,
    runs: RunsOption = None,
    qrels_id: QrelsIdOption = None,
    qrels: LegacyQrelsOption = None,
    title: TitleOption = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Plot all runs, ranked as evalwh report's leaderboard ranks them, with mean A_p at every depth.

    The defaults are the report's, from the collection (docs/report.md): runs ranked by its
    lead measure (nDCG@10 on graded labels, P@10 on binary, whatever the judged depth), P@d at
    the report's decision-matrix depths. With --measure or --depths, runs are ranked by
    performance at the first depth, as before.

    Example: evalwh plot runs --collection trec8 --measure MAP -o runs.png
    """
    from evalwh.methods.decisions import run_profile
    from evalwh.present.plots.pair import plot_runs
    from evalwh.present.report import defaults
    from evalwh.warehouse import Warehouse

    chosen = parse_runs(runs)
    with Warehouse.open_reader(db) as wh:
        qrels_id = wh.qrels_set(collection, qrels_id)
        order = ranked_by = None
        grid = parse_depths(depths) if depths is not None else None
        if measure is None or depths is None:
            found = defaults.collection_defaults(wh, collection, qrels_id=qrels_id)
            if grid is None:
                deepest = int(wh.runs(collection)["max_depth"].max())
                grid = list(found.depths or _cut_grid(deepest))
            if measure is None and depths is None:
                ranked_by = found.lead
                order = defaults.leaderboard_order(wh, collection, found.lead, runs=chosen, qrels_id=qrels_id)
        profile = run_profile(
            wh,
            collection,
            measure=(measure or Measure.P).value,
            depths=grid,
            runs=chosen,
            qrels_id=qrels_id,
        )
    plot_runs(
        profile, output, title=title or f"{collection}: {profile['run_id'].nunique()} runs",
        order=order, ranked_by=ranked_by,
    )
    typer.echo(f"wrote {output}", err=True)


def _cut_grid(deepest: int) -> list[int]:
    """The default grid cut at the deepest ranking, which is added (as evalwh report does)."""
    grid = [d for d in parse_depths(DEFAULT_DEPTHS) if d < deepest]
    return [*grid, min(deepest, parse_depths(DEFAULT_DEPTHS)[-1])]


@app.command("reduced-qrels")
@handle_errors
@default_collection
def reduced_qrels(
    output: FigureOption,
    collection: CollectionOption = None,
    experiment_id: Annotated[
        str | None,
        typer.Option("--experiment-id", help="The stored experiment (default: the latest)."),
    ] = None,
    title: TitleOption = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Plot Kendall tau vs full qrels and the change of mean against the reduced-qrels level, per measure.

    Reads the results of `evalwh experiment reduced-qrels` from the warehouse.

    Example: evalwh plot reduced-qrels --collection trec8 -o tau.png
    """
    from evalwh.methods.experiments.reduced import stored_levels
    from evalwh.present.plots.experiments import reduced_qrels_figure, save_figure
    from evalwh.warehouse import Warehouse

    with Warehouse.open_reader(db) as wh:
        levels = stored_levels(wh, collection, experiment_id=experiment_id)
    name = levels["experiment_id"].iloc[0]
    save_figure(reduced_qrels_figure(levels, title=title or f"{collection}: {name}"), output)
    typer.echo(f"wrote {output}", err=True)


@app.command("bounds")
@handle_errors
@default_collection
def bounds(
    run_names: Annotated[list[str], typer.Argument(help="The runs to draw.")],
    output: FigureOption,
    collection: CollectionOption = None,
    measure: Annotated[
        str,
        typer.Option(
            "--measure", "-m", help="P or 'RBP(p=0.8)' (true bounds); AP, nDCG or R (scenarios)."
        ),
    ] = "P",
    depths: Annotated[
        str | None,
        typer.Option(
            "--depths", help="Comma-separated depth grid; every rank to --max-depth when omitted."
        ),
    ] = None,
    max_depth: Annotated[int, typer.Option("--max-depth", min=1, help="Deepest depth drawn.")] = 1000,
    aggregation: Annotated[
        str, typer.Option("--aggregation", "-a", help="mean or dempster.")
    ] = "mean",
    pool_depth: Annotated[
        int | None, typer.Option("--pool-depth", min=1, help="Mark the pool depth with a line.")
    ] = None,
    title: TitleOption = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Plot the lower and upper curves of runs against depth (the bands widen past the pool depth).

    Example: evalwh plot bounds INQ604 ok8amxc --collection trec8 --pool-depth 100 -o bounds.png
    """
    from evalwh.cli.bounds import depths_from

    from evalwh.methods.bounds import compute_bounds
    from evalwh.present.plots.bounds import plot_bounds
    from evalwh.warehouse import Warehouse

    grid = depths_from(depths)
    with Warehouse.open_reader(db) as wh:
        frame = compute_bounds(
            wh,
            collection=collection,
            measure=measure,
            runs=run_names,
            depths=grid,
            every_rank=grid is None,
            max_depth=max_depth,
            aggregation=aggregation,
        )
    path = plot_bounds(frame, output, pool_depth=pool_depth, title=title)
    typer.echo(f"wrote {path}", err=True)


@handle_errors
@default_collection
def pool_bias(
    output: FigureOption,
    collection: CollectionOption = None,
    experiment_id: Annotated[
        str | None,
        typer.Option(
            "--experiment-id", help="The stored pool-bias experiment (default: the latest)."
        ),
    ] = None,
    title: TitleOption = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Plot pooling bias and MAE against pool width and against the number of common topics.

    Reads the results of `evalwh experiment pool-bias` from the warehouse.

    Example: evalwh plot pool-bias --collection trec8 -o pool-bias.png
    """
    from evalwh.methods.experiments.pool_bias import stored_pool_bias
    from evalwh.present.plots.experiments import save_figure
    from evalwh.present.plots.pools import pool_bias_figure
    from evalwh.warehouse import Warehouse

    with Warehouse.open_reader(db) as wh:
        stored = stored_pool_bias(wh, collection, experiment_id=experiment_id)
    name = stored["experiment"]["experiment_id"].iloc[0]
    save_figure(
        pool_bias_figure(
            stored["summary"], stored["common_topics"], title=title or f"{collection}: {name}"
        ),
        output,
    )
    typer.echo(f"wrote {output}", err=True)


app.command("pool-bias")(pool_bias)
