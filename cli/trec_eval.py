"""evalwh trec_eval: trec_eval's command line and output (see evalwh/measures/trec_eval.py)."""

from __future__ import annotations

import sys

import typer

from evalwh.cli._errors import handle_errors


@handle_errors
def trec_eval(ctx: typer.Context) -> None:
    """trec_eval's command line and output, byte for byte (--v9: trec_eval 9.0.8); -h for its flags.

    Example: evalwh trec_eval -q -m all_trec qrels.txt run1.txt run2.txt
    """
    from evalwh.measures import trec_eval as te

    try:
        status = te.run(ctx.args, sys.stdout.write)
    except te.TrecEvalExit as error:
        sys.stdout.flush()
        if error.message:
            typer.echo(error.message, err=True)  # (trec_eval prints -v and its errors on stderr)
        raise typer.Exit(error.status) from None
    raise typer.Exit(status)


def register(app: typer.Typer) -> None:
    """Add the trec_eval command to the app."""
    app.command(
        "trec_eval",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []},
        add_help_option=False,
    )(trec_eval)
