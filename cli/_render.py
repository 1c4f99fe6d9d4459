"""Rendering of DataFrames for the terminal and for machines.

No identifier or number is ever cut short. ``--format table`` on a terminal draws a rich table
whose cells fold onto more lines when the terminal is narrow; anywhere else (a pipe, a file
given with ``--output``) it prints plain text aligned in columns, every value whole, so that
``evalwh runs | head`` or ``| grep`` see what the warehouse holds. A command whose table is
a wide view (one column per measure, per depth and case) passes its long form as well: that is
printed instead in a pipe, and on a terminal when the wide view does not fit.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import typer

from evalwh.cli._options import OutputFormat
from evalwh.io.printable import terminal

if TYPE_CHECKING:
    import pandas as pd

WIDE_COLUMNS = 12
"""On a terminal, a wide view with more columns than this is printed in its long form."""
FOLD_WIDER_THAN = 12
"""On a narrow terminal, only columns wider than this fold onto more lines."""


def require_output(fmt: OutputFormat, output: Path | None) -> None:
    """Refuse ``--format parquet`` without ``--output`` (a command calls it before its work, too)."""
    from evalwh.errors import EvalWhError

    if fmt is OutputFormat.parquet and output is None:
        raise EvalWhError("--format parquet writes a file; give --output FILE")


def render(
    frame: pd.DataFrame,
    fmt: OutputFormat,
    output: Path | None = None,
    *,
    title: str | None = None,
    digits: int = 4,
    long_form: pd.DataFrame | None = None,
) -> None:
    """Print or write ``frame`` as a table, CSV, JSON lines or Parquet.

    Args:
        frame: The rows to show.
        fmt: The output format.
        output: A file to write instead of standard output.
        title: A line above the table (``# title`` in plain text); table format only.
        digits: Decimals of float cells in the table format (CSV, JSON and Parquet keep
            every digit).
        long_form: The same content in long form (one value per row), for a wide ``frame``:
            the table format prints it when the output is not a terminal, or when the wide
            view would not fit the terminal.
    """
    if fmt is OutputFormat.parquet:
        require_output(fmt, output)
        from evalwh.io.files import atomic_path

        with atomic_path(output) as part:
            frame.to_parquet(part, index=False)
        typer.echo(f"wrote {len(frame):,} rows to {output}", err=True)
        return
    if fmt is OutputFormat.csv:
        text = csv_text(frame, safe=CSV_SAFE["on"])
    elif fmt is OutputFormat.json:
        text = _iso_times(frame).to_json(orient="records", lines=True, double_precision=15)
    elif fmt in (OutputFormat.markdown, OutputFormat.latex):
        from evalwh.present import paper_table

        if fmt is OutputFormat.markdown:
            text = paper_table.frame_to_markdown(frame, digits)
        else:
            text = paper_table.frame_to_latex(frame, digits=digits)
    else:
        text = None
    if text is not None:
        if output is None:
            sys.stdout.write(text)
        else:
            from evalwh.io.files import write_text

            write_text(output, text)
        return
    cells = _cells(frame, digits)
    if output is not None or not sys.stdout.isatty():
        shown = cells if long_form is None else _cells(long_form, digits)
        if output is None:
            _write_plain(shown, title, sys.stdout)
        else:
            from evalwh.io.files import atomic_output

            with atomic_output(output) as file:
                _write_plain(shown, title, file)
        return
    from rich.console import Console

    console = Console()
    if long_form is not None and (len(frame.columns) > WIDE_COLUMNS or _natural_width(cells) > console.width):
        cells = _cells(long_form, digits)
    console.print(_rich_table(cells, title, console.width))


def _iso_times(frame: pd.DataFrame) -> pd.DataFrame:
    """Timestamps as ISO 8601 text (``2026-12-07T21:32:21.583156``), as CSV and the table show them,
    not JSON's epoch milliseconds."""
    import pandas as pd

    times = [c for c in frame.columns if pd.api.types.is_datetime64_any_dtype(frame[c])]
    if not times:
        return frame
    out = frame.copy()
    for column in times:
        out[column] = out[column].dt.strftime("%Y-%m-%dT%H:%M:%S.%f").where(out[column].notna(), None)
    return out


CSV_SAFE = {"on": False}
"""Set by the root option ``--csv-safe`` (env ``EVALWH_CSV_SAFE=1``): CSV cells made safe for spreadsheets."""
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")
"""What a spreadsheet may take for the start of a formula (OWASP's CSV injection list, with
the full-width ``＝ ＋ － ＠`` some spreadsheets read as their ASCII forms)."""


def csv_text(frame: pd.DataFrame, *, safe: bool = False) -> str:
    """``frame`` as CSV: every value as the warehouse holds it, or made safe for spreadsheets.

    With ``safe`` (OWASP's rule against CSV injection), a text cell or column name that
    begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return (or a full-width
    ``＝ ＋ － ＠``) gets a leading ``'``, which a spreadsheet shows and does not evaluate, and
    every text cell is quoted. Numbers are written as they are: ``-3.5`` stays a number.

    Examples:
        >>> import pandas as pd
        >>> frame = pd.DataFrame({"run_id": ["=1+1", "bm25"], "value": [-0.5, 0.25]})
        >>> print(csv_text(frame, safe=True), end="")
        "run_id","value"
        "'=1+1",-0.5
        "bm25",0.25
    """
    import csv

    if not safe:
        return frame.to_csv(index=False)

    def guard(value: object) -> object:
        return "'" + value if isinstance(value, str) and value.startswith(FORMULA_STARTS) else value

    guarded = frame.copy()
    guarded.columns = range(len(frame.columns))  # (by position: SQL may name two columns alike)
    for position, dtype in enumerate(frame.dtypes):
        if dtype.kind not in "biufcmM":
            guarded[position] = guarded[position].map(guard)
    header = [str(guard(str(name))) for name in frame.columns]
    return guarded.to_csv(index=False, header=header, quoting=csv.QUOTE_NONNUMERIC)


Cells = tuple[list[str], list[bool], list[list[str]]]
"""Column names, whether each column is numeric (right-aligned), and the rows as text."""


def _cells(frame: pd.DataFrame, digits: int) -> Cells:
    # every name and cell printable: an ESC in a run id or an ir_metadata block is shown as
    # \x1b, never sent to the terminal (evalwh.io.printable)
    names = [terminal(column) for column in frame.columns]
    numeric = [frame[column].dtype.kind in "fiu" for column in frame.columns]
    rows = [[_cell(value, digits) for value in row] for row in frame.itertuples(index=False)]
    return names, numeric, rows


def _natural_width(cells: Cells) -> int:
    """Characters a rich table needs to show every cell on one line (3 per border and padding)."""
    names, _, rows = cells
    widths = [max([len(name)] + [len(row[i]) for row in rows]) for i, name in enumerate(names)]
    return sum(widths) + 3 * len(widths) + 1


def _write_plain(cells: Cells, title: str | None, out: TextIO) -> None:
    """Columns separated by two spaces, padded to the widest value; nothing is cut."""
    names, numeric, rows = cells
    widths = [max([len(name)] + [len(row[i]) for row in rows]) for i, name in enumerate(names)]

    def line(values: list[str]) -> str:
        parts = [
            value.rjust(width) if right else value.ljust(width)
            for value, width, right in zip(values, widths, numeric, strict=True)
        ]
        return "  ".join(parts).rstrip() + "\n"

    if title:
        out.write(f"# {terminal(title)}\n")
    out.write(line(names))
    for row in rows:
        out.write(line(row))


def _rich_table(cells: Cells, title: str | None, width: int) -> object:
    """A rich table that fits ``width``: cells fold (wrap inside a word), never end in an ellipsis."""
    from rich.table import Table
    from rich.text import Text

    names, numeric, rows = cells
    # Text, not str: rich would read "[red]" in a run id as its markup
    table = Table(title=None if title is None else Text(terminal(title)), show_lines=False, header_style="bold")
    content = [max([1] + [len(row[i]) for row in rows]) for i in range(len(names))]
    widths = _fitted([max(len(name), w) for name, w in zip(names, content, strict=True)], content, width)
    for name, right, column_width in zip(names, numeric, widths, strict=True):
        table.add_column(Text(name), justify="right" if right else "left", overflow="fold", width=column_width)
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    return table


def _fitted(widths: list[int], content: list[int], width: int) -> list[int]:
    """Column widths within a table ``width`` characters wide (3 per column for borders and padding).

    Columns that fit keep their width (``widths``: header or widest cell). Otherwise headers
    fold, short columns (numbers, most names) keep their widest cell (``content``) and the long
    ones (digests, paths) share the rest; if even that does not fit, every column gets a share
    in proportion to its widest cell.
    """
    room = max(width - 3 * len(widths) - 1, len(widths))
    if sum(widths) <= room:
        return widths
    short = sum(w for w in content if w <= FOLD_WIDER_THAN)
    long = [w for w in content if w > FOLD_WIDER_THAN]
    if short + 4 * len(long) <= room:
        if not long:
            return content
        share = (room - short) / sum(long)
        return [w if w <= FOLD_WIDER_THAN else max(4, int(w * share)) for w in content]
    share = room / sum(content)
    return [max(1, int(w * share)) for w in content]


def _cell(value: object, digits: int) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if value != value:
            return ""
        return f"{value:.{digits}f}"
    return terminal(value)
