"""evalwh export | import: move a warehouse to and from Parquet files with a manifest."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated

import typer
from evalwh.cli._errors import handle_errors
from evalwh.cli._options import DEFAULT_DB, DbOption


class ExportFormat(str, enum.Enum):
    """File formats of ``evalwh export``."""

    parquet = "parquet"


@handle_errors
def export(
    directory: Annotated[
        Path, typer.Argument(help="A new or empty directory to write.", file_okay=False)
    ],
    fmt: Annotated[
        ExportFormat, typer.Option("--format", "-f", help="File format.")
    ] = ExportFormat.parquet,
    collection: Annotated[
        list[str] | None,
        typer.Option("--collection", "-c", help="Export only this collection; repeatable."),
    ] = None,
    table: Annotated[
        list[str] | None, typer.Option("--table", "-t", help="Export only this table; repeatable.")
    ] = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Write the warehouse's tables as Parquet, partitioned by collection, with manifest.json.

    Example: evalwh export trec8-parquet --collection trec8 --db trec.duckdb
    """
    from evalwh.warehouse import Warehouse

    with Warehouse.open_reader(db, allowed_directories=[directory.absolute().parent]) as wh:
        manifest = wh.export(directory, collections=collection, tables=table)
    files = sum(len(t["files"]) for t in manifest["tables"].values())
    rows = sum(t["rows"] for t in manifest["tables"].values())
    typer.echo(
        f"exported {rows:,} rows of {len(manifest['tables'])} tables "
        f"({', '.join(manifest['collections']) or 'no collections'}) to {directory} in {files} files"
    )


@handle_errors
def import_(
    directory: Annotated[
        Path, typer.Argument(help="A directory written by evalwh export.", file_okay=False)
    ],
    replace: Annotated[
        bool,
        typer.Option(
            "--replace", help="Replace rows of the imported collections that the warehouse holds."
        ),
    ] = False,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Load an evalwh export into a new or existing warehouse, in one transaction.

    Example: evalwh import trec8-parquet --db copy.duckdb
    """
    from evalwh.warehouse import Warehouse

    with Warehouse(db) as wh:
        imported = wh.import_export(directory, replace=replace)
    rows = sum(imported.values())
    typer.echo(
        f"imported {rows:,} rows into {sum(1 for n in imported.values() if n)} tables of {db}"
    )


def register(app: typer.Typer) -> None:
    """Add ``export`` and ``import`` to the root app."""
    app.command("export")(export)
    app.command("import")(import_)
