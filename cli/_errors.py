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
import os
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import typer

F = TypeVar("F", bound=Callable[..., Any])

DEBUG = {"on": False}

INTERRUPTED = "Interrupted; nothing was committed by the interrupted command."
INTERRUPTED_AFTER_COMMIT = (
    "Interrupted after the command had committed its changes: the warehouse holds them."
)
_UNCHANGED = "the warehouse and the output files are as they were"
_CONTEXT_LINE = re.compile(r"^\s*(LINE \d+:.*|\^+|\s*)$")


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def one_line(text: str) -> str:
    """A message on one line: DuckDB's and sqlglot's quoted query lines and carets are left out.

    Examples:
        >>> one_line('Catalog Error: no function x!\\nDid you mean "exp"?\\n\\nLINE 1: SELECT x(1)\\n       ^')
        'Catalog Error: no function x! Did you mean "exp"?'
    """
    kept = [line.strip() for line in text.splitlines() if not _CONTEXT_LINE.match(line)]
    return " ".join(kept) or text.strip()


def interrupted_message() -> str:
    """What an interrupted command reports: decided where the interrupt met the commit."""
    from evalwh.store.connection import Outcome

    return INTERRUPTED_AFTER_COMMIT if Outcome.commits else INTERRUPTED


def _interrupted(error: BaseException) -> bool:
    """DuckDB turns Ctrl-C during a query into an error of its own."""
    name = type(error).__name__
    return name == "InterruptException" or "Query interrupted" in str(error) or "INTERRUPT" in str(error)[:40]


def message_for(error: BaseException) -> str:
    """The one line (without ``Error: ``) that the CLI prints for ``error``."""
    from evalwh.errors import EvalWhError, IngestError
    from evalwh.io.files import is_disk_full

    cause = error.__cause__ or error.__context__
    if not isinstance(error, IngestError) and (is_disk_full(error) or (cause is not None and is_disk_full(cause))):
        where = f" writing {error.filename}" if isinstance(error, OSError) and error.filename else ""
        return f"the disk is full (or a file-size limit was reached){where}; {_UNCHANGED}"
    if isinstance(error, EvalWhError):
        return one_line(str(error))
    if isinstance(error, MemoryError) or type(error).__name__ == "OutOfMemoryException":
        return f"out of memory ({_first_line(error)}); {_UNCHANGED}"
    if isinstance(error, OSError):
        where = f": {error.filename}" if error.filename else ""
        return f"{error.strerror or _first_line(error)}{where}; {_UNCHANGED}"
    module = type(error).__module__ or ""
    if module.startswith(("duckdb", "_duckdb")):
        return f"DuckDB: {_first_line(error)}"
    return f"unexpected {type(error).__name__}: {_first_line(error)} (run with --debug for the traceback)"


def _quiet_stdout() -> None:
    """Point standard output at /dev/null: its reader is gone (``| head``), nothing more to say."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


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
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        # started with SIGINT ignored (`evalwh ... &` in a script, a supervisor): the parent
        # asked for no interrupt, so none is taken. (Blocked, an ignored SIGINT would still
        # reach the watcher, which would then refuse the commit without stopping the command.)
        yield
        return
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            if signal.sigtimedwait({signal.SIGINT}, 0.1) is not None and not stop.is_set():
                from evalwh.store.connection import request_interrupt

                request_interrupt()  # (waits for a commit under way: see Outcome)
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
        from evalwh.store.connection import Outcome

        Outcome.reset()
        try:
            if kwargs.get("output") is not None:
                # before any work: no output may overwrite the warehouse, its WAL or any DuckDB file
                from evalwh.io.files import refuse_database

                refuse_database(kwargs["output"], *([kwargs["db"]] if kwargs.get("db") is not None else []))
            with _interruptible():
                return func(*args, **kwargs)
        except (typer.Exit, typer.Abort, typer.exceptions.TyperException, SystemExit):
            # usage errors (typer.BadParameter) and exits keep their own codes
            raise
        except KeyboardInterrupt:
            typer.echo(interrupted_message(), err=True)
            sys.exit(130)
        except BrokenPipeError:
            # the reader of standard output went away (evalwh runs | head -1): normal for a filter
            _quiet_stdout()
            sys.exit(0)
        except Exception as error:
            if DEBUG["on"]:
                raise
            if Outcome.interrupted or _interrupted(error):
                typer.echo(interrupted_message(), err=True)
                sys.exit(130)
            typer.echo(f"Error: {one_line(message_for(error))}", err=True)
            raise typer.Exit(1) from None

    wrapper.handles_errors = True  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]
