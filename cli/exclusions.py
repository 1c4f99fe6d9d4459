"""evalwh exclusions add|identical-ids|remove|show|losses: documents no run may count (methods §17)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from evalwh.cli._errors import handle_errors
from evalwh.cli._options import (
    DEFAULT_DB,
    CollectionOption,
    DbOption,
    FormatOption,
    OutputFormat,
    OutputOption,
    default_collection,
)
from evalwh.cli._render import render

app = typer.Typer(
    help="Excluded documents: exclusion files, the identical-id rule, and what they take from each run.",
    no_args_is_help=True,
)


def _changed(runs: list[str]) -> str:
    if not runs:
        return "no run's lists changed"
    return f"{len(runs)} run(s) filtered again, ranks closed up and evaluation cache rebuilt"


@app.command("add")
@handle_errors
@default_collection
def add(
    file: Annotated[Path, typer.Argument(help="An exclusion file: 'topic docid' a line, plain or .gz.")],
    collection: CollectionOption = None,
    name: Annotated[
        str | None, typer.Option("--name", help="Name the source (default: the file's name as given).")
    ] = None,
    replace: Annotated[bool, typer.Option("--replace", help="Replace a stored file of the same name.")] = False,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Store an exclusion file and remove its (topic, document) pairs from every run, ranks closed up.

    Runs ingested later lose them too. A qrels line labelled -100 is an exclusion already
    (`evalwh ingest qrels` moves it here).

    Example: evalwh exclusions add bright/excluded.txt --collection bright-biology
    """
    from evalwh.io.formats import require_file
    from evalwh.warehouse import Warehouse

    require_file(file)  # before opening: a mistyped name must not create a warehouse file
    with Warehouse(db) as wh:
        done = wh.add_exclusions(file, collection=collection, name=name, replace=replace)
    typer.echo(f"exclusions from {name or file}: {done['status']} ({done['pairs']:,} pairs); {_changed(done['runs'])}")


@app.command("identical-ids")
@handle_errors
@default_collection
def identical_ids(
    collection: CollectionOption = None,
    off: Annotated[bool, typer.Option("--off", help="Stop excluding them (the rows return to the runs).")] = False,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Exclude every document whose id equals its topic's id (BEIR's ArguAna and Quora).

    ir_datasets' and BEIR's ignore_identical_ids: a query that is itself a document of the
    corpus must not be retrieved for itself.

    Example: evalwh exclusions identical-ids --collection arguana
    """
    from evalwh.warehouse import Warehouse

    with Warehouse(db) as wh:
        changed = wh.exclude_identical_ids(not off, collection=collection)
    state = "off" if off else "on"
    typer.echo(f"rule identical_ids {state} for collection {collection!r}; {_changed(changed)}")


@app.command("remove")
@handle_errors
@default_collection
def remove(
    source: Annotated[str, typer.Argument(help="The exclusion file's name as stored, or identical_ids.")],
    collection: CollectionOption = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Remove an exclusion file or the rule identical_ids; what it removed returns to the runs.

    Example: evalwh exclusions remove excluded.txt --collection bright-biology
    """
    from evalwh.warehouse import Warehouse

    with Warehouse(db) as wh:
        changed = wh.remove_exclusions(source, collection=collection)
    typer.echo(f"exclusions {source!r} removed from collection {collection!r}; {_changed(changed)}")


@app.command("show")
@handle_errors
@default_collection
def show(
    collection: CollectionOption = None,
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """List a collection's sources of exclusions: qrels sets with -100 lines, files, the rule.

    Example: evalwh exclusions show --collection bright-biology
    """
    from evalwh.warehouse import Warehouse

    with Warehouse.open_reader(db) as wh:
        render(wh.exclusion_sources(collection=collection), fmt, output, title=f"exclusions of {collection}")


@app.command("losses")
@handle_errors
@default_collection
def losses(
    collection: CollectionOption = None,
    per_topic: Annotated[
        bool, typer.Option("--per-topic", help="One row per run and topic where documents were removed.")
    ] = False,
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """What the exclusions removed from each run: documents, those in the top 10, the best rank.

    Ranks are those the run gave, before the ranks closed up.

    Example: evalwh exclusions losses --collection bright-biology --per-topic
    """
    from evalwh.warehouse import Warehouse

    with Warehouse.open_reader(db) as wh:
        frame = wh.exclusion_losses(collection=collection, per_topic=per_topic)
    render(frame, fmt, output, title=f"documents removed from the runs of {collection} by its exclusions")
