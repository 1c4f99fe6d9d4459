"""evalwh collections | runs | qrels: what the warehouse holds."""

from __future__ import annotations

import typer

from evalwh.cli._errors import handle_errors
from evalwh.cli._options import DEFAULT_DB, CollectionOption, DbOption, FormatOption, OutputFormat, OutputOption, default_collection
from evalwh.cli._render import render


@handle_errors
def collections(
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """List the collections: topics, judged and relevant documents, runs, label sets.

    The counts are those of one label set, named in counted_set: `default` when the
    collection has it, else its first human set (a collection of label sets without runs,
    say human and LLM labels, is counted on its human labels); qrels_sets counts every set.

    Example: evalwh collections --db trec.duckdb
    """
    from evalwh.warehouse import Warehouse

    with Warehouse.open_reader(db) as wh:
        render(wh.collections(), fmt, output, title="collections")


@handle_errors
@default_collection
def runs(
    collection: CollectionOption = None,
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """List the runs of a collection: topics, documents, depth, source file, sha256.

    Example: evalwh runs --collection trec8
    """
    from evalwh.warehouse import Warehouse

    with Warehouse.open_reader(db) as wh:
        render(wh.runs(collection), fmt, output, title=f"runs of {collection}")


@handle_errors
@default_collection
def qrels(
    collection: CollectionOption = None,
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """List the qrels sets of a collection: provenance (source, judge, model, prompt, round), topics, pairs, relevant, file.

    Example: evalwh qrels --collection llmjudge
    """
    from evalwh.warehouse import Warehouse

    with Warehouse.open_reader(db) as wh:
        render(wh.qrels_sets(collection), fmt, output, title=f"qrels sets of {collection}")


def register(app: typer.Typer) -> None:
    """Add the commands of this module to the root app."""
    app.command("collections")(collections)
    app.command("runs")(runs)
    app.command("qrels")(qrels)
