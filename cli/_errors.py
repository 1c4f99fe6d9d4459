"""The one error path of the CLI: every failure is one line on stderr, exit 1 (130 for Ctrl-C).

evalwh's own errors print their message; faults of the machine (a full disk, too little
memory, a file that cannot be written) and DuckDB's interrupted queries are named in one line
too, and anything unexpected still ends in one line naming the error (``--debug`` shows the
traceback). Nothing is lost by a failure: warehouse writes are one transaction and output
files are written whole or not at all (``evalwh.io.files``).

Usage errors (an unknown option, a value outside an option's choices or range, a missing
option) are click's, raised while the command line is parsed: :class:`OneLineGroup`, the root
command's class, prints them as one line too, naming the option first
(``Error: --source: 'bogus' is not one of human, llm, inferred``), with exit code 2.

Exit codes: 0 success, 1 error, 2 usage error, 130 interrupted.
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
import typer.core

F = TypeVar("F", bound=Callable[..., Any])

DEBUG = {"on": False}

INTERRUPTED = "Interrupted; nothing was committed by the interrupted command."
INTERRUPTED_AFTER_COMMIT = (
    "Interrupted after the command had committed its changes: the warehouse holds them."
)
_UNCHANGED = "the warehouse and the output files are as they were"
_COMMITTED = (
    "the command had committed its changes to the warehouse before this failed (it holds them); "
    "the output files are as they were"
)
_COMMITTED_STDOUT = (
    "the command had committed its changes to the warehouse before it wrote its output (it holds them)"
)
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
    from evalwh.io.printable import terminal

    kept = [line.strip() for line in text.splitlines() if not _CONTEXT_LINE.match(line)]
    # a path or id from someone else's file may hold ESC: shown, never sent to the terminal
    return terminal(" ".join(kept) or text.strip())


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
    if isinstance(error, RecursionError):  # (a reader that missed its own depth bound)
        return f"the input is nested too deeply to read ({_first_line(error)}); {_UNCHANGED}"
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

    def interrupt() -> None:
        from evalwh.store.connection import request_interrupt

        request_interrupt()  # (waits for a commit under way: see Outcome)
        _thread.interrupt_main()

    def terminate(signum: int, frame: object) -> None:
        # SIGTERM (kill, a supervisor, a timeout) is taken as Ctrl-C is: the query stops, the
        # transaction rolls back, temporary copies of streams are removed on the way out. A
        # handler, not a blocked signal: a child process (Spark's JVM) inherits no mask, and
        # the work is a thread's, as the watcher's, so a commit under way is never deadlocked
        threading.Thread(target=interrupt, name="evalwh-sigterm", daemon=True).start()

    previous_term = signal.getsignal(signal.SIGTERM)
    taking_term = previous_term not in (signal.SIG_IGN, None)  # (None: a handler set outside Python)
    if taking_term:
        signal.signal(signal.SIGTERM, terminate)

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
        if taking_term:
            signal.signal(signal.SIGTERM, previous_term)


def handle_errors(func: F) -> F:
    """Turn every failure into a one-line message and exit code 1, 130 for Ctrl-C (``--debug`` re-raises)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            from evalwh.store.connection import Outcome  # (imports DuckDB: a while, the first time)
        except KeyboardInterrupt:
            typer.echo(INTERRUPTED, err=True)  # (nothing was done yet)
            sys.exit(130)
        Outcome.reset()
        try:
            for option in ("output", "figure"):
                if kwargs.get(option) is not None:
                    # before any work (a writer's commit included): no output may overwrite the
                    # warehouse, its WAL or any DuckDB file, and its folder must take a file
                    from evalwh.io.files import refuse_database, refuse_unwritable

                    refuse_database(kwargs[option], *([kwargs["db"]] if kwargs.get("db") is not None else []))
                    refuse_unwritable(kwargs[option])
            with _interruptible():
                return func(*args, **kwargs)
        except (typer.Exit, typer.Abort, typer.exceptions.TyperException, SystemExit):
            # usage errors (typer.BadParameter) and exits keep their own codes
            raise
        except KeyboardInterrupt:
            typer.echo(interrupted_message(), err=True)
            sys.exit(130)
        except BrokenPipeError:
            # the reader of standard output went away (evalwh runs | head -1): normal for a
            # filter, unless the command had committed: then one line says so, and the exit is 1
            _quiet_stdout()
            if Outcome.commits:
                with contextlib.suppress(OSError, ValueError):
                    typer.echo(f"Error: standard output was closed; {_COMMITTED_STDOUT}", err=True)
                sys.exit(1)
            sys.exit(0)
        except Exception as error:
            if DEBUG["on"]:
                raise
            if Outcome.interrupted or _interrupted(error):
                typer.echo(interrupted_message(), err=True)
                sys.exit(130)
            message = one_line(message_for(error))
            if Outcome.commits:
                # an output that failed after the command's commit (a full disk, /dev/full): the
                # line says what is true, the rows are stored
                message = message.replace(_UNCHANGED, _COMMITTED)
                if _COMMITTED not in message:
                    message += f"; {_COMMITTED}"
            typer.echo(f"Error: {message}", err=True)
            raise typer.Exit(1) from None

    wrapper.handles_errors = True  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


# -- usage errors: click's, one line ------------------------------------------------------------

# click's exceptions, from where typer takes them (its own copy of click, or click itself)
_CLICK = sys.modules[typer.BadParameter.__module__]
_QUOTED_CHOICES = re.compile(r"is not one of ((?:'[^']*'(?:, )?)+)")
_NOT_A = re.compile(r"is not a valid (?:int|integer)(?: range)?$")
_NOT_A_FLOAT = re.compile(r"is not a valid float(?: range)?$")
_PATH_KIND = re.compile(r"^(?:File|Directory|Path) ('.*') is a (file|directory)$")
_PATH_MISSING = re.compile(r"^(?:File|Directory|Path) ('.*') does not exist$")


def _hint(error: Any) -> str:
    """The option or argument a usage error concerns, as typed: ``--source``, ``FILES``."""
    hint = getattr(error, "param_hint", None)
    if hint is not None:
        return " / ".join(hint) if isinstance(hint, (list, tuple)) else str(hint)
    param = getattr(error, "param", None)
    if param is None:
        return ""
    if getattr(param, "param_type_name", "") == "option":
        return max(param.opts, key=len)  # (--output, not -o)
    return str(param.name or "").upper()


def usage_message(error: Any) -> str:
    """The one line (without ``Error: ``) for click's usage error ``error``: the option first.

    Examples:
        >>> usage_message(typer.BadParameter("'bogus' is not one of 'human', 'llm', 'inferred'.", param_hint="--source"))
        "--source: 'bogus' is not one of human, llm, inferred"
    """
    ctx = getattr(error, "ctx", None)
    command = ctx.command_path if ctx is not None else "evalwh"
    hint = _hint(error)
    if isinstance(error, _CLICK.MissingParameter):
        kind = getattr(error.param, "param_type_name", None) or error.param_type or "parameter"
        what = "option" if kind == "option" else "argument" if kind == "argument" else kind
        return f"{hint}: missing; {command} needs this {what} ({command} --help)"
    if isinstance(error, _CLICK.BadParameter):
        text = error.message.strip().rstrip(".")
        text = _QUOTED_CHOICES.sub(lambda m: "is not one of " + m.group(1).replace("'", ""), text)
        text = _NOT_A.sub("is not a whole number", text)
        text = _NOT_A_FLOAT.sub("is not a number", text)
        kind = _PATH_KIND.match(text)
        if kind:
            other = "directory" if kind.group(2) == "file" else "file"
            text = f"{kind.group(1)} is a {kind.group(2)}, not a {other}"
        text = _PATH_MISSING.sub(r"no such file or directory \1", text)
        if not hint or text.startswith(hint):
            return text
        return f"{hint}: {text}"
    if isinstance(error, _CLICK.NoSuchOption):
        close = f"; did you mean {' or '.join(sorted(error.possibilities))}?" if error.possibilities else ""
        return f"{error.option_name}: {command} has no such option{close} ({command} --help)"
    text = one_line(error.format_message()).rstrip(".")
    option = getattr(error, "option_name", None)
    if option and text.startswith(f"Option '{option}' "):
        return f"{option}: {text[len(option) + 10:]}"  # "Option '-m' requires an argument"
    text = text.replace(". Did you mean", "; did you mean")
    text = text[:1].lower() + text[1:] if text[:2].istitle() else text
    return f"{command}: {text}" if isinstance(error, _CLICK.UsageError) else text


def _one_line_usage(error: Any) -> None:
    """Print click's error ``error`` as one line and end with its exit code (2 for usage)."""
    if type(error).__name__ == "NoArgsIsHelpError":
        raise error  # (the command's help, as asked: typer prints it)
    typer.echo(f"Error: {one_line(usage_message(error))}", err=True)
    raise typer.Exit(error.exit_code)


class OneLineGroup(typer.core.TyperGroup):
    """The root command: click's usage errors as one line (exit 2), every float option finite.

    Click (inside typer) parses the command line before any command runs, so its errors do not
    pass through :func:`handle_errors`; typer would draw them as a framed box of several
    lines. Here they are caught where the root command parses its own options and where it
    hands over to a command (which parses the rest), and printed as :func:`usage_message`.
    Every float option of every command also refuses ``nan``, ``inf`` and ``-inf``
    (:func:`evalwh.cli._options.finite_floats`), whatever range it declares.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        from evalwh.cli._options import finite_floats

        finite_floats(self)

    def make_context(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().make_context(*args, **kwargs)
        except _CLICK.ClickException as error:
            _one_line_usage(error)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except _CLICK.ClickException as error:
            _one_line_usage(error)
