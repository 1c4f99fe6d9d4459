"""The one error path of the CLI: every failure is one line on stderr, exit 1 (130 for Ctrl-C).

evalwh's own errors print their message; faults of the machine (a full disk, too little
memory, a file that cannot be written) and DuckDB's interrupted queries are named in one line
too, and anything unexpected still ends in one line naming the error (``--debug`` shows the
traceback). Nothing is lost by a failure: warehouse writes are one transaction and output
files are written whole or not at all (``evalwh.io.files``).
"""

from __future__ import annotations

import _thread
import contextlib
import functools
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import typer

F = TypeVar("F", bound=Callable[..., Any])

DEBUG = {"on": False}

INTERRUPTED = "Interrupted; nothing was committed by the interrupted command."
_UNCHANGED = "the warehouse and the output files are as they were"


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _interrupted(error: BaseException) -> bool:
    """DuckDB turns Ctrl-C during a query into an error of its own."""
    name = type(error).__name__
    return name == "InterruptException" or "Query interrupted" in str(error) or "INTERRUPT" in str(error)[:40]


def message_for(error: BaseException) -> str:
    """The one line (without ``Error: ``) that the CLI prints for ``error``."""
    from evalwh.errors import EvalWhError
    from evalwh.io.files import is_disk_full

    if isinstance(error, EvalWhError):
        return str(error)
    if is_disk_full(error):
        where = f" writing {error.filename}" if isinstance(error, OSError) and error.filename else ""
        return f"the disk is full (or a file-size limit was reached){where}; {_UNCHANGED}"
    if isinstance(error, MemoryError) or type(error).__name__ == "OutOfMemoryException":
        return f"out of memory ({_first_line(error)}); {_UNCHANGED}"
    if isinstance(error, OSError):
        where = f": {error.filename}" if error.filename else ""
        return f"{error.strerror or _first_line(error)}{where}; {_UNCHANGED}"
    module = type(error).__module__ or ""
    if module.startswith(("duckdb", "_duckdb")):
        return f"DuckDB: {_first_line(error)}"
    return f"unexpected {type(error).__name__}: {_first_line(error)} (run with --debug for the traceback)"


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """Let Ctrl-C stop a running DuckDB query too (exit 130), not only Python code.

    A query runs in DuckDB's threads without returning to Python, so Python's own SIGINT
    handler would wait for it to end. Here SIGINT is blocked and a watcher thread waits for it:
    it interrupts every open warehouse's query and raises KeyboardInterrupt in the main thread.
    """
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "sigtimedwait"):
        # (macOS has no sigtimedwait: there Ctrl-C raises KeyboardInterrupt once DuckDB returns)
        yield
        return
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            if signal.sigtimedwait({signal.SIGINT}, 0.1) is not None and not stop.is_set():
                from evalwh.store.connection import interrupt_all

                interrupt_all()
                _thread.interrupt_main()

    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    watcher = threading.Thread(target=watch, name="evalwh-ctrl-c", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        stop.set()
        watcher.join()
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def handle_errors(func: F) -> F:
    """Turn every failure into a one-line message and exit code 1, 130 for Ctrl-C (``--debug`` re-raises)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with _interruptible():
                return func(*args, **kwargs)
        except (typer.Exit, typer.Abort, typer.exceptions.TyperException, SystemExit):
            # usage errors (typer.BadParameter) and exits keep their own codes
            raise
        except KeyboardInterrupt:
            typer.echo(INTERRUPTED, err=True)
            sys.exit(130)
        except Exception as error:
            if DEBUG["on"]:
                raise
            if _interrupted(error):
                typer.echo(INTERRUPTED, err=True)
                sys.exit(130)
            typer.echo(f"Error: {message_for(error)}", err=True)
            raise typer.Exit(1) from None

    wrapper.handles_errors = True  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]
