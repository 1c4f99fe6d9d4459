"""Rendering of DataFrames for the terminal and for machines."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from evalwh.cli._options import OutputFormat

if TYPE_CHECKING:
    import pandas as pd


def render(frame: pd.DataFrame, fmt: OutputFormat, output: Path | None = None, *, title: str | None = None, digits: int = 4) -> None:
    """Print or write ``frame`` as a rich table, CSV, JSON lines or Parquet."""
    from evalwh.errors import EvalWhError

    if fmt is OutputFormat.parquet:
        if output is None:
            raise EvalWhError("--format parquet writes a file; give --output FILE")
        from evalwh.files import atomic_path

        with atomic_path(output) as part:
            frame.to_parquet(part, index=False)
        typer.echo(f"wrote {len(frame):,} rows to {output}", err=True)
        return
    if fmt is OutputFormat.csv:
        text = frame.to_csv(index=False)
    elif fmt is OutputFormat.json:
        text = frame.to_json(orient="records", lines=True, double_precision=15)
    else:
        text = None
    if text is not None:
        if output is None:
            sys.stdout.write(text)
        else:
            from evalwh.files import write_text

            write_text(output, text)
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, show_lines=False, header_style="bold")
    for column in frame.columns:
        numeric = frame[column].dtype.kind in "fiu"
        table.add_column(str(column), justify="right" if numeric else "left")
    for row in frame.itertuples(index=False):
        table.add_row(*(_cell(v, digits) for v in row))
    if output is None:
        Console().print(table)
        return
    from evalwh.files import atomic_output

    with atomic_output(output) as handle:
        Console(file=handle, width=200).print(table)


def _cell(value: object, digits: int) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if value != value:
            return ""
        return f"{value:.{digits}f}"
    return str(value)
