"""evalwh meta: one system's effect over another, pooled across collections (meta-analysis)."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated

import typer
from evalwh.cli._decision_options import AlphaOption
from evalwh.cli._errors import handle_errors
from evalwh.cli._options import DEFAULT_DB, DbOption, FormatOption, OutputFormat, OutputOption
from evalwh.cli._render import render


class EffectChoice(str, enum.Enum):
    """The effect each collection contributes (evalwh.stats.meta.Effect)."""

    smd = "smd"
    dz = "dz"
    raw = "raw"


class Tau2Choice(str, enum.Enum):
    """The between-collection variance's estimator (evalwh.stats.meta.Tau2)."""

    dl = "dl"
    pm = "pm"
    reml = "reml"


class IntervalChoice(str, enum.Enum):
    """The pooled effects' interval (evalwh.stats.meta.Interval)."""

    z = "z"
    hksj = "hksj"


class MetaTable(str, enum.Enum):
    """Which table evalwh meta prints."""

    pooled = "pooled"
    effects = "effects"
    heterogeneity = "heterogeneity"


@handle_errors
def meta(
    systems_compared: Annotated[
        list[str] | None,
        typer.Argument(help="Two systems A B (A's effect over B); none with --baseline.", show_default=False),
    ] = None,
    measures: Annotated[
        str, typer.Option("--measures", "-m", help="Comma-separated measures, each analysed on its own.")
    ] = "nDCG@10",
    collections: Annotated[
        list[str] | None,
        typer.Option("--collection", "-c", help="A collection to pool (repeatable; default: every collection with runs).",
                     show_default=False),
    ] = None,
    baseline: Annotated[
        str | None,
        typer.Option("--baseline", "-b", help="Each other system in two of its collections over this one.", show_default=False),
    ] = None,
    runs: Annotated[
        str | None,
        typer.Option("--runs", help="With --baseline: only these systems (comma-separated).", show_default=False),
    ] = None,
    systems: Annotated[
        Path | None,
        typer.Option(
            "--systems",
            help="Mapping file, lines 'collection_id run_id system': which run is which system (default: the run ids).",
            dir_okay=False, show_default=False,
        ),
    ] = None,
    effect: Annotated[
        EffectChoice,
        typer.Option("--effect", help="smd: mean difference over the within-system SD (Hedges' g); dz: over the "
                     "SD of the differences; raw: the mean difference."),
    ] = EffectChoice.smd,
    tau2: Annotated[
        Tau2Choice,
        typer.Option("--tau2", help="Between-collection variance: dl (DerSimonian-Laird), pm (Paule-Mandel), reml."),
    ] = Tau2Choice.dl,
    interval: Annotated[
        IntervalChoice,
        typer.Option("--interval", help="Pooled intervals: z (normal) or hksj (Hartung-Knapp-Sidik-Jonkman, t; for few collections)."),
    ] = IntervalChoice.z,
    alpha: AlphaOption = 0.05,
    qrels_id: Annotated[
        str | None,
        typer.Option("--qrels-id", help="The qrels set of every collection (default: each collection's own default set).",
                     show_default=False),
    ] = None,
    table: Annotated[
        MetaTable, typer.Option("--table", help="pooled (fixed and random effects), effects (per collection) or heterogeneity.")
    ] = MetaTable.pooled,
    figure: Annotated[
        Path | None,
        typer.Option("--figure", help="Write the forest plot here (png, pdf or svg).", dir_okay=False, show_default=False),
    ] = None,
    report: Annotated[
        Path | None,
        typer.Option("--report", help="Write the meta-analysis report here (.html with forest plots, or .md).",
                     dir_okay=False, show_default=False),
    ] = None,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Meta-analysis across collections: one system's effect over another, per collection and pooled.

    Scores are not comparable across collections, effects are: each collection contributes
    the standardised paired effect of A over B on its own topics, with its variance; the
    effects are pooled by inverse-variance weights, as one fixed effect and as the mean of a
    random-effects model whose between-collection variance tau^2 is estimated, with Cochran's
    Q, I^2 and the prediction interval of a new collection's effect (methods §18).

    Example: evalwh meta -c robust04 -c covid -c dl2019 -m nDCG@10 rm3 bm25 --figure forest.png
    """
    from evalwh.errors import EvalWhError
    from evalwh.io.files import refuse_database
    from evalwh.warehouse import Warehouse

    compared = list(systems_compared or [])
    if compared and len(compared) != 2:
        raise EvalWhError(f"meta: {len(compared)} systems given; give two (A B) or --baseline")
    for target in (figure, report, output):
        if target is not None:
            refuse_database(target, db)
    if report is not None and report.suffix.lower() not in (".html", ".htm", ".md"):
        raise EvalWhError(f"meta: --report {report}: give a .html or .md file")
    with Warehouse.open_reader(db) as wh:
        result = wh.meta_analysis(
            [m.strip() for m in measures.split(",") if m.strip()], *(compared or [None, None]),
            collections=list(collections or []), baseline=baseline,
            runs=[r.strip() for r in runs.split(",") if r.strip()] if runs else [], systems=systems,
            effect=effect.value, tau2=tau2.value, interval=interval.value, alpha=alpha, qrels_id=qrels_id,
        )  # fmt: skip
        shown = wh.collections()
    # every output is prepared before any is written, so a failure writes none of them
    page = None
    if report is not None:
        from evalwh.present.report.meta import meta_report

        names = set(result.effects["collection_id"])
        page = meta_report(result, shown[shown["collection_id"].isin(names)],
                           format="md" if report.suffix.lower() == ".md" else "html", qrels_id=qrels_id or "each collection's default")  # fmt: skip
    drawn = None
    if figure is not None:
        from evalwh.present.plots.forest import forest_figure

        drawn = forest_figure(result)
    frame = {"pooled": result.pooled, "effects": result.effects, "heterogeneity": result.heterogeneity}[table.value]
    if drawn is not None and figure is not None:
        from evalwh.present.plots.experiments import save_figure

        save_figure(drawn, figure)
        typer.echo(f"wrote the forest plot to {figure}", err=True)
    if page is not None and report is not None:
        from evalwh.io.files import write_text

        write_text(report, page)
        typer.echo(f"wrote the meta-analysis report to {report}", err=True)
    level = round(100 * (1 - alpha))
    render(frame, fmt, output, title=f"meta-analysis ({result.effect}, tau^2 {tau2.value}, {level}% {interval.value} intervals): {table.value}")


def register(app: typer.Typer) -> None:
    """Add ``evalwh meta`` to the command line."""
    app.command(name="meta")(meta)
