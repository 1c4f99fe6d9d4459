"""evalwh bounds: lower and upper values of runs across depth (belief and plausibility)."""

from __future__ import annotations

from typing import Annotated

import typer
from evalwh.cli._errors import handle_errors
from evalwh.cli._options import (
    default_collection,
    DEFAULT_DB,
    CollectionOption,
    DbOption,
    FillOption,
    FormatOption,
    OutputFormat,
    OutputOption,
)
from evalwh.cli._render import render

BoundsMeasureOption = Annotated[
    str,
    typer.Option(
        "--measure", "-m", help="P or 'RBP(p=0.8)' (true bounds); AP, nDCG or R (scenario values)."
    ),
]
BoundsDepthsOption = Annotated[
    str | None,
    typer.Option("--depths", help="Comma-separated depth grid [default: 10,30,100,500,1000]."),
]
EveryRankOption = Annotated[
    bool, typer.Option("--every-rank", help="Every depth 1..--max-depth instead of --depths.")
]
MaxDepthOption = Annotated[
    int, typer.Option("--max-depth", min=1, help="Deepest depth with --every-rank.")
]
RunsListOption = Annotated[
    list[str] | None,
    typer.Option(
        "--runs", "-r", help="Runs to include (comma-separated or repeated); all when omitted."
    ),
]
QrelsIdOption = Annotated[
    str | None,
    typer.Option("--qrels-id", help="Qrels set to use (default: the collection's, evalwh conventions)."),
]
RelOption = Annotated[
    int, typer.Option("--rel", "-l", help="Relevance threshold (grade >= rel is relevant).")
]


def runs_from(options: list[str] | None, arguments: list[str] | None) -> list[str] | None:
    """Runs given as --runs (comma-separated, repeatable) and as arguments, in order."""
    names = [n.strip() for text in options or [] for n in text.split(",") if n.strip()]
    names += list(arguments or [])
    return names or None


def depths_from(text: str | None) -> list[int] | None:
    """Parse a comma-separated depth list."""
    from evalwh.errors import MetricParamError

    if not text:
        return None
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise MetricParamError(
            f"--depths {text!r}: expected comma-separated integers, e.g. 10,30,100"
        ) from None


@handle_errors
@default_collection
def bounds(
    collection: CollectionOption = None,
    run_names: Annotated[
        list[str] | None, typer.Argument(help="Runs to include (also --runs).", show_default=False)
    ] = None,
    runs: RunsListOption = None,
    measure: BoundsMeasureOption = "P",
    depths: BoundsDepthsOption = None,
    every_rank: EveryRankOption = False,
    max_depth: MaxDepthOption = 1000,
    aggregation: Annotated[
        str,
        typer.Option(
            "--aggregation",
            "-a",
            help="mean (mean masses) or dempster (Dempster's rule over topics).",
        ),
    ] = "mean",
    compare: Annotated[
        bool,
        typer.Option(
            "--compare",
            help="With two runs: per depth, is one certainly better (Bel > Pl) or open?",
        ),
    ] = False,
    per_query: Annotated[
        bool, typer.Option("--per-query", "-q", help="Per-topic bands instead of aggregates.")
    ] = False,
    qrels_id: QrelsIdOption = None,
    fill: FillOption = None,
    rel: RelOption = 1,
    store: Annotated[
        bool,
        typer.Option("--store", help="Keep the mean and Dempster aggregates in the bounds table."),
    ] = False,
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Lower and upper values per run across depth: P and RBP bounds, AP/nDCG/R scenarios.

    Example: evalwh bounds -c trec8 --runs INQ604,ok8amxc --measure P --depths 10,100,1000
    """
    from evalwh.errors import MetricParamError
    from evalwh.warehouse import Warehouse

    chosen = runs_from(runs, run_names)
    if compare and (chosen is None or len(chosen) != 2):
        raise MetricParamError("--compare needs exactly two runs, e.g. --runs RUN_A,RUN_B")
    # writable when the file exists, as evalwh eval: the judged-rows cache is filled and reused
    with Warehouse(db) if store else Warehouse.open_reader(db) as wh:
        qrels_id = wh.qrels_set(wh.default_collection(collection), qrels_id)
        frame = wh.bounds(
            chosen,
            collection=collection,
            measure=measure,
            depths=depths_from(depths),
            every_rank=every_rank,
            max_depth=max_depth,
            aggregation=aggregation,
            compare=compare,
            per_query=per_query,
            qrels_id=qrels_id,
            rel=rel,
            store=store,
            fill=fill or [],
        )
    if fmt is OutputFormat.table:
        # the terminal is narrow: leave out the constant collection and the all-empty columns
        frame = frame.drop(columns=["collection_id"], errors="ignore").dropna(axis=1, how="all")
    title = f"bounds of {measure} in {collection}" + (f", qrels {'+'.join([qrels_id, *fill])}" if fill else "")
    render(frame.reset_index(drop=True), fmt, output, title=title)


def register(app: typer.Typer) -> None:
    """Add the command of this module to the root app."""
    app.command("bounds")(bounds)
