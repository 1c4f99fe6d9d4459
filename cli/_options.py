"""Options shared by every command, as Annotated aliases."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated

import typer

DbOption = Annotated[
    Path,
    typer.Option(
        "--db",
        envvar="EVALWH_DB",
        help="DuckDB warehouse file (env EVALWH_DB).",
        dir_okay=False,
    ),
]
CollectionOption = Annotated[
    str, typer.Option("--collection", "-c", help="Collection name inside the warehouse.")
]


class OutputFormat(str, enum.Enum):
    """How a command prints a table."""

    table = "table"
    csv = "csv"
    json = "json"
    parquet = "parquet"
    markdown = "markdown"
    latex = "latex"


FormatOption = Annotated[
    OutputFormat, typer.Option("--format", "-f", help="Output format (parquet needs --output).")
]
OutputOption = Annotated[
    Path | None,
    typer.Option("--output", "-o", help="Write to this file instead of standard output.", dir_okay=False),
]
DEFAULT_DB = Path("evalwh.duckdb")
