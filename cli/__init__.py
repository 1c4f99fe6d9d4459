"""The evalwh command line: a thin doorway onto the evalwh package.

Each command group lives in its own module; the root group (:mod:`evalwh.cli._lazy`) lists
them by name and imports a module when one of its commands is used, so that ``evalwh
--help`` and a mistyped command import none of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from evalwh.cli._errors import DEBUG
from evalwh.cli._help import fold_long_words
from evalwh.cli._lazy import LazyGroup, _resolve_annotations
from evalwh.cli._render import CSV_SAFE

fold_long_words()

app = typer.Typer(
    name="evalwh",
    help="An SQL-backed evaluation warehouse for IR test collections.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
    # (usage errors in one line, exit 2; every float option finite; each command's module
    # imported when the command is used: cli/_lazy.py)
    cls=LazyGroup,
)


@app.callback()
def _root(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks instead of one-line errors.")] = False,
    db: Annotated[
        Path | None,
        typer.Option(
            "--db",
            help="DuckDB warehouse file for the command (as the command's own --db; env EVALWH_DB).",
            dir_okay=False,
            show_default=False,
        ),
    ] = None,
    csv_safe: Annotated[
        bool,
        typer.Option(
            "--csv-safe",
            envvar="EVALWH_CSV_SAFE",
            help="CSV for spreadsheets: prefix cells beginning =, +, -, @ with ' and quote text (env EVALWH_CSV_SAFE=1).",
        ),
    ] = False,
) -> None:
    """An SQL-backed evaluation warehouse for IR test collections."""
    # (each command's --db option reads this one when it is not given itself: cli/_options.py)
    DEBUG["on"] = debug
    CSV_SAFE["on"] = csv_safe


_resolve_annotations(app)  # (the root's callback; each command's module when it is loaded)
