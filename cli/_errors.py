"""The one error path of the CLI: EvalWhError -> 'Error: message' on stderr, exit 1."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import typer

F = TypeVar("F", bound=Callable[..., Any])

DEBUG = {"on": False}


def handle_errors(func: F) -> F:
    """Turn evalwh errors into a one-line message and exit code 1 (``--debug`` re-raises)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from evalwh.errors import EvalWhError

        try:
            return func(*args, **kwargs)
        except EvalWhError as error:
            if DEBUG["on"]:
                raise
            typer.echo(f"Error: {error}", err=True)
            raise typer.Exit(1) from None
        except KeyboardInterrupt:
            typer.echo("Interrupted; nothing was committed by the interrupted command.", err=True)
            sys.exit(130)

    return wrapper  # type: ignore[return-value]
