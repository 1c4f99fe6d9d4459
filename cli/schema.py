"""evalwh schema | upgrade: the tables and documented views; bringing an older warehouse up to date."""

from __future__ import annotations

from pathlib import Path
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


@handle_errors
def upgrade(db: DbOption = DEFAULT_DB) -> None:
    """Apply the schema steps a warehouse written by an older evalwh lacks (a writer command).

    Reading commands never change a warehouse: on an older one they stop and ask for this.
    A DuckDB file that is not an evalwh warehouse is refused and left as it is.

    Example: evalwh upgrade --db trec.duckdb
    """
    from evalwh.errors import NotFoundError
    from evalwh.warehouse import Warehouse

    if not Path(db).is_file():
        raise NotFoundError(f"{db}: no such warehouse file")
    with Warehouse(db) as wh:
        applied = wh.upgrade()
    if applied:
        typer.echo(f"{db}: applied {len(applied)} schema step(s): {', '.join(applied)}", err=True)
    else:
        typer.echo(f"{db}: up to date; nothing to apply", err=True)


def register(app: typer.Typer) -> None:
    """Add ``schema`` and ``upgrade`` to the root app."""
    app.command("schema")(schema)
    app.command("upgrade")(upgrade)
