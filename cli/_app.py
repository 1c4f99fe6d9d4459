"""The typer application, ``evalwh.cli.app``: the root command, its options and its commands.

It lives apart from the package's ``__init__`` so that importing ``evalwh.cli`` (and its
typer-free :mod:`evalwh.cli._root_help`, the plain root help screen) imports no typer;
``from evalwh.cli import app`` imports this module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from evalwh.cli._errors import DEBUG
from evalwh.cli._lazy import LazyGroup, _resolve_annotations
from evalwh.cli._render import CSV_SAFE
from evalwh.cli._root_help import HELP, OPTIONS

# (the root's options' help and environment variables: cli/_root_help.py, which the plain root
# help screen is drawn from too)
_OPTION = {flag: (text, env or None) for flag, _, text, env in OPTIONS}

app = typer.Typer(
    name="evalwh",
    help=HELP,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
    # (usage errors in one line, exit 2; every float option finite; each command's module
    # imported when the command is used: cli/_lazy.py)
    cls=LazyGroup,
)


@app.callback()
def _root(
    debug: Annotated[bool, typer.Option("--debug", help=_OPTION["--debug"][0])] = False,
    db: Annotated[
        Path | None,
        typer.Option("--db", help=_OPTION["--db"][0], dir_okay=False, show_default=False),
    ] = None,
    csv_safe: Annotated[
        bool,
        typer.Option("--csv-safe", envvar=_OPTION["--csv-safe"][1], help=_OPTION["--csv-safe"][0]),
    ] = False,
) -> None:
    """An SQL-backed evaluation warehouse for IR test collections."""
    # (each command's --db option reads this one when it is not given itself: cli/_options.py)
    DEBUG["on"] = debug
    CSV_SAFE["on"] = csv_safe


_resolve_annotations(app)  # (the root's callback; each command's module when it is loaded)
