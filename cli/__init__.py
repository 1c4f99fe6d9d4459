"""The evalwh command line: a thin doorway onto the evalwh package.

Each command group lives in its own module and is registered here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalwh.cli import eval as eval_cmd
from evalwh.cli import exclusions as exclusions_cmd
from evalwh.cli import audit as audit_cmd
from evalwh.cli import demo, info, ingest
from evalwh.cli import bounds as bounds_cmd
from evalwh.cli import label_uncertainty as label_uncertainty_cmd
from evalwh.cli import meta as meta_cmd
from evalwh.cli import experiment as experiment_cmd
from evalwh.cli import judgments as judgments_cmd
from evalwh.cli import compare as compare_commands
from evalwh.cli import pool as pool_cmd
from evalwh.cli import report as report_cmd
from evalwh.cli import sql as sql_cmd
from evalwh.cli import spark as spark_cmd
from evalwh.cli import trec_eval as trec_eval_cmd
from evalwh.cli._errors import DEBUG, OneLineGroup
from evalwh.cli._render import CSV_SAFE
from evalwh.cli._help import fold_long_words

fold_long_words()

app = typer.Typer(
    name="evalwh",
    help="An SQL-backed evaluation warehouse for IR test collections.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
    cls=OneLineGroup,  # (usage errors in one line, exit 2; every float option finite)
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


app.add_typer(ingest.app, name="ingest")
app.add_typer(experiment_cmd.app, name="experiment")
app.add_typer(spark_cmd.app, name="spark")
app.add_typer(exclusions_cmd.app, name="exclusions")
info.register(app)
compare_commands.register(app)
eval_cmd.register(app)
pool_cmd.register(app)
sql_cmd.register(app)
report_cmd.register(app)
bounds_cmd.register(app)
label_uncertainty_cmd.register(app)
demo.register(app)
trec_eval_cmd.register(app)
judgments_cmd.register(app)
meta_cmd.register(app)
audit_cmd.register(app)


def _resolve_annotations(group: typer.Typer) -> None:
    """Give every command's function its annotations as objects, once, instead of as text.

    The CLI's modules use postponed annotations (text), and typer reads each command's
    hints several times while it builds the command line (and those of the function a
    command wraps, and of its options' callbacks), compiling and evaluating every
    annotation's text each time: more than half of the start-up cost typer adds to every
    command (90 ms of 140 CPU ms). Resolved here once, the later reads are lookups.
    """
    for info in [*group.registered_commands, group.registered_callback]:
        _resolve(getattr(info, "callback", None))
    for sub in group.registered_groups:
        if sub.typer_instance is not None:
            _resolve_annotations(sub.typer_instance)


def _resolve(function: object) -> None:
    """Resolve the annotations of ``function``, of what it wraps and of its options' callbacks."""
    import typing

    # (typer reads the wrapped function's signature too: every function of the chain)
    while callable(function) and isinstance(getattr(function, "__annotations__", None), dict):
        hints = typing.get_type_hints(function, include_extras=True)
        function.__annotations__ = hints
        for hint in hints.values():
            for meta in getattr(hint, "__metadata__", ()):
                callback = getattr(meta, "callback", None)
                if callback is not None and any(
                    isinstance(a, str) for a in getattr(callback, "__annotations__", {}).values()
                ):
                    _resolve(callback)
        function = getattr(function, "__wrapped__", None)


_resolve_annotations(app)
