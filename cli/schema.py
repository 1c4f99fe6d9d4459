"""evalwh schema: the tables and documented views, with their columns and comments."""

from __future__ import annotations

from typing import Annotated

import typer
from evalwh.cli._errors import handle_errors
from evalwh.cli._options import DEFAULT_DB, DbOption, FormatOption, OutputFormat, OutputOption
from evalwh.cli._render import render


@handle_errors
def schema(
    relation: Annotated[
        str | None,
        typer.Argument(help="Show the columns of this table or view.", show_default=False),
    ] = None,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """List the views for ad-hoc SQL and the tables, or the columns of one of them.

    Example: evalwh schema ranked_judgments --db trec.duckdb
    """
    from evalwh.warehouse import Warehouse

    with Warehouse.open_reader(db) as wh:
        frame = wh.schema(relation)
    render(frame, fmt, output, title=relation or "evalwh schema")


def register(app: typer.Typer) -> None:
    """Add ``schema`` to the root app."""
    app.command("schema")(schema)
