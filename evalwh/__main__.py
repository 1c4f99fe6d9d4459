"""The ``evalwh`` command (``python -m evalwh`` too): the CLI, with Ctrl-C during start-up handled.

The console script points here rather than at the typer app, so that an interrupt while the
CLI's modules are still importing ends like any other: one line on stderr and exit 130 (the
commands themselves handle it in ``evalwh.cli._errors``), and so that a finished command
ends its process at once (:func:`_leave`).
"""

from __future__ import annotations

# Ctrl-C from here on is one line and exit 130, before anything else is imported. Only modules
# Python has loaded already (the C module _signal, os, sys; `signal` would add enum wrappers).
import _signal
import os
import sys

# the functions that take a KeyboardInterrupt themselves, and their files
_HANDLED = frozenset({"handle_errors.<locals>.wrapper", "wrapper", "_trec_eval", "_eval_qrels"})
_HANDLED_IN = (os.path.join("cli", "_errors.py"), os.path.join("evalwh", "__main__.py"))


def _interrupted(signum: int, frame: object) -> None:
    """SIGINT outside a command's own handling: one line on stderr and exit 130 at once.

    Inside :func:`evalwh.cli._errors.handle_errors` (its watcher thread calls this handler through
    ``_thread.interrupt_main``) and the quick paths of :func:`main`, it is Python's own
    KeyboardInterrupt: they roll back, remove temporary files and say what was committed.
    Elsewhere (modules importing, typer parsing the command line and importing the command's
    module, handle_errors importing DuckDB, the process's last moments) nothing is under way
    (a finished command has closed its warehouse and outputs), and an exception would do harm:
    typer ends a KeyboardInterrupt with exit 130 in silence, an import prints a traceback, a
    native module's initialisation aborts the process, and one raised in an import lock's
    callback is ignored, so the command goes on. So the line is written (saying whether the
    command had committed) and the process ends without unwinding.
    """
    here = frame
    while here is not None:
        code = here.f_code  # type: ignore[attr-defined]
        name = getattr(code, "co_qualname", code.co_name)
        if name in _HANDLED and code.co_filename.endswith(_HANDLED_IN):
            # (handle_errors takes it once it has imported what decides its message)
            loaded = sys.modules.get("evalwh.store.connection")
            if "wrapper" not in name or hasattr(loaded, "Outcome"):
                raise KeyboardInterrupt
            break
        here = here.f_back  # type: ignore[attr-defined]
    connection = sys.modules.get("evalwh.store.connection")
    if getattr(getattr(connection, "Outcome", None), "commits", 0):
        line = "Interrupted after the command had committed its changes: the warehouse holds them."
    else:
        line = "Interrupted; nothing was changed."
    for stream, text in ((sys.stdout, ""), (sys.stderr, line + "\n")):
        try:  # (what a finished command printed, then the line)
            stream.write(text)
            stream.flush()
        except (AttributeError, OSError, ValueError):  # (closed: the exit code says it)
            pass
    os._exit(130)


# the console script or python -m evalwh, never a process importing evalwh.__main__ for its use
_CLI = (
    __name__ == "__main__"
    or os.path.basename(sys.argv[0]).removesuffix(".exe").removesuffix("-script.py") == "evalwh"
)
if _CLI and _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
    _signal.signal(_signal.SIGINT, _interrupted)
for _fd, _mode in ((0, os.O_RDONLY), (1, os.O_WRONLY), (2, os.O_WRONLY)) if _CLI else ():
    try:
        os.fstat(_fd)
    except OSError:  # closed (`evalwh ... >&-`): held by /dev/null, else the first file opened
        # (the warehouse) would be fd 1 or 2, and any printf to it, a child's too, would write there
        os.set_inheritable(os.open(os.devnull, _mode), True)

import atexit  # noqa: E402
import contextlib  # noqa: E402
import threading  # noqa: E402


class _ClosedOutput:
    """Standard output when the shell closed it (``evalwh eval >&-``): writing is one clear error."""

    def write(self, text: str) -> int:
        import errno

        raise OSError(errno.EBADF, "standard output is closed; give --output FILE or redirect it")

    def flush(self) -> None:
        """Nothing was written, nothing to flush."""

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        import io

        raise io.UnsupportedOperation("standard output is closed")


def main() -> None:
    """Import the CLI, run it, and end the process with its exit code."""
    import gc

    # Start-up makes many objects and frees few (modules, classes; the quick paths' parsed
    # files), so Python's cycle collector, run every 700 new objects, found nothing to free
    # and took 8-9 % of `evalwh --help` and `evalwh trec_eval`: it is off until the CLI runs
    # the command. (The quick paths run without it: they make no reference cycles.)
    collecting = gc.isenabled()
    gc.disable()
    try:
        if sys.stdout is None:
            sys.stdout = _ClosedOutput()  # type: ignore[assignment]
        quick = not isinstance(sys.stdout, _ClosedOutput)  # (else the CLI says it is closed)
        if quick and sys.argv[1:2] == ["trec_eval"]:
            _trec_eval(sys.argv[2:])
        if (
            quick
            and sys.argv[1:2] == ["eval"]
            and any(a == "--qrels" or a.startswith("--qrels=") for a in sys.argv)
        ):
            _eval_qrels(sys.argv[2:])
        if quick and sys.argv[1:] in ([], ["--help"]) and not _completing():
            _root_help(status=0 if sys.argv[1:] else 2)
        try:
            from evalwh.cli import app
        except KeyboardInterrupt:
            sys.stderr.write("Interrupted; nothing was changed.\n")
            raise SystemExit(130) from None
    finally:
        if collecting:
            gc.enable()
    try:
        app()
    except SystemExit as done:
        _leave(done.code)
        raise
    _leave(0)


def _trec_eval(argv: list[str]) -> None:
    """``evalwh trec_eval ...`` without the CLI, where :mod:`evalwh.measures.quick` takes the input.

    A shell loop calls trec_eval once per run file: this path imports the C reader, numpy and
    trec_eval's own modules, not typer, pandas or DuckDB. It ends the process when it printed
    the evaluation, or one of trec_eval's own messages (its usage, ``-h``, a bad measure). It
    returns, having written nothing, where the quick path declines an input: ``main`` then runs
    the command through the CLI (:mod:`evalwh.cli.trec_eval`), whose direct path reads
    anything the ingest reads and names what it refuses, and prints every other error.
    """
    try:
        from evalwh.measures import trec_eval as te

        try:
            status = te.run_quick(argv, sys.stdout.write)
        except BrokenPipeError:
            _reader_gone()
        except te.TrecEvalExit as error:
            sys.stdout.flush()
            if error.message:
                sys.stderr.write(error.message + "\n")  # (as the CLI's typer.echo(err=True))
            status = error.status
    except KeyboardInterrupt:
        sys.stderr.write("Interrupted; nothing was changed.\n")
        raise SystemExit(130) from None
    if status is None:
        return
    _leave(status)
    raise SystemExit(status)


def _eval_qrels(argv: list[str]) -> None:
    """``evalwh eval --qrels ...`` without the CLI where :mod:`evalwh.measures.quick_eval` takes
    it (see there); it returns, having written nothing, where it does not."""
    try:
        from evalwh.measures import quick_eval

        status = quick_eval.run(argv, sys.stdout.write, note=_float32_note)
    except BrokenPipeError:
        _reader_gone()
    except KeyboardInterrupt:
        sys.stderr.write("Interrupted; nothing was changed.\n")
        raise SystemExit(130) from None
    if status is None:
        return
    _leave(status)
    raise SystemExit(status)


def _root_help(status: int) -> None:
    """``evalwh --help`` (exit 0) and ``evalwh`` alone (exit 2, as typer's ``no_args_is_help``):
    the root help screen in plain text, without typer, click or Rich (:mod:`evalwh.cli._root_help`).

    Every other help screen and every usage error is typer's, through the CLI.
    """
    try:
        from evalwh.cli import _root_help as screen

        stdout = sys.stdout
        width, bold = screen.terminal_width(), screen.wants_colour(stdout)
        stdout.write(screen.render(screen.program_name(), width, bold))
        stdout.flush()
    except BrokenPipeError:
        # (the reader went away, | head: what it did not read is not an error; as _leave ends it)
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        os._exit(status)
    except KeyboardInterrupt:
        sys.stderr.write("Interrupted; nothing was changed.\n")
        raise SystemExit(130) from None
    _leave(status)
    raise SystemExit(status)


def _completing() -> bool:
    """Whether a shell asks for completions (click's ``_PROG_COMPLETE`` variable): typer's part."""
    return any(name.startswith("_") and name.endswith("_COMPLETE") for name in os.environ)


def _float32_note(changed: list[tuple[str, int]]) -> None:
    """``evalwh eval --qrels``'s note: the runs whose printed values float32 order changes."""
    from evalwh.present.report.ties import printed_ties_note

    sys.stderr.write(f"note: {printed_ties_note(changed, len(changed), warehouse=False)}\n")


def _reader_gone() -> None:
    """The reader of standard output went away (``| head``): what it did not read is not an
    error of the command (as :func:`_leave` ends it)."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    os._exit(0)


def _leave(code: object) -> None:
    """End the process now if nothing is left to finish, without tearing Python down.

    Once a command has returned, the interpreter's own shutdown (freeing every object of
    pandas, pyarrow, DuckDB ...) took 0.13 to 0.18 s of each command on the benchmark machine,
    a seventh of a warm ``evalwh eval``. This flushes standard output and error, runs the exit
    handlers (temporary folders, logging) and exits with the command's code. It returns, to
    let Python end as usual, when something may still need that: a warehouse not closed
    (DuckDB writes its checkpoint when the connection closes), a thread other than the main
    one and daemons, Spark, or output that cannot be flushed (a closed pipe).
    """
    if not isinstance(code, int) and code is not None:
        return  # (a message as the exit code: Python prints it)
    warehouse = sys.modules.get("evalwh.store.connection")
    if warehouse is not None and len(warehouse.OPEN) > 0:
        return
    if any(t is not threading.main_thread() and not t.daemon for t in threading.enumerate()):
        return
    if "pyspark" in sys.modules:
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        # the reader went away (| head): what it did not read is not an error of the command
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        os._exit(code or 0)
    except (OSError, ValueError, AttributeError):
        return
    atexit._run_exitfuncs()
    with contextlib.suppress(OSError, ValueError):  # (what an exit handler wrote, if it can)
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code or 0)


if __name__ == "__main__":
    main()
