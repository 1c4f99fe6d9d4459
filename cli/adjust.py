"""evalwh adjust RUN: score adjustment for pooling bias (methods §6)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalwh.cli._errors import handle_errors
from evalwh.cli._options import DEFAULT_DB, CollectionOption, DbOption, FormatOption, OutputFormat, OutputOption, default_collection, number
from evalwh.cli._progress import progress_bar
from evalwh.cli._render import render


@handle_errors
@default_collection
def adjust(
    run: Annotated[str, typer.Argument(help="The unpooled run to adjust.")],
    pool: Annotated[str, typer.Option("--pool", help="A stored pool (evalwh pool build).")],
    collection: CollectionOption = None,
    measure: Annotated[str, typer.Option("--measure", "-m", help="One measure spec.")] = "RBP_trunc(p=0.8)@10",
    method: Annotated[str, typer.Option("--method", help="'leave-one-out' (Algorithm 1) or 'common-topics' (Algorithm 2).")] = "leave-one-out",
    common_topics: Annotated[
        Path | None, typer.Option("--common-topics", help="File of common topic ids, one per line.", dir_okay=False)
    ] = None,
    unjudged: Annotated[str, typer.Option("--unjudged", help="'nonrelevant' (assumed) or 'condensed'.")] = "nonrelevant",
    confidence: Annotated[float, typer.Option("--confidence", click_type=number(0, 1, min_open=True, max_open=True), help="Confidence of the CLT check.")] = 0.95,
    resamples: Annotated[int, typer.Option("--resamples", min=1, help="Bootstrap resamples.")] = 10_000,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seed of the bootstrap.")] = 1,
    store: Annotated[bool, typer.Option("--store/--no-store", help="Keep the result in the pool_adjustments table.")] = True,
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Adjust an unpooled run's mean score for pooling bias (Webber & Park).

    Example: evalwh adjust CL99SDopt1 --collection trec8 --pool p10 --method leave-one-out
    """
    from evalwh.warehouse import Warehouse

    topics = None
    if common_topics is not None:
        from evalwh.io.formats import TABLE_BYTES, read_bounded

        text = read_bounded(common_topics, TABLE_BYTES, "a list of topics", decompress=False).decode("utf-8", "replace")
        topics = [line.split()[0] for line in text.splitlines() if line.strip()]
    with Warehouse(db) as wh, progress_bar(f"adjusting {run}") as progress:
        frame = wh.adjust(
            run,
            pool,
            collection=collection,
            measure=measure,
            method=method,
            common_topics=topics,
            unjudged=unjudged,
            confidence=confidence,
            resamples=resamples,
            seed=seed,
            store=store,
            progress=progress,
        )
    render(frame, fmt, output, title=f"pooling-bias adjustment of {run}")


def register(app: typer.Typer) -> None:
    """Add the command of this module to the root app."""
    app.command("adjust")(adjust)
