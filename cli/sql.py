"""evalwh sql | schema | export | import: ad-hoc SQL, the documented relations, Parquet transfer."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from evalwh.cli import schema as schema_cmd
from evalwh.cli import transfer as transfer_cmd
from evalwh.cli._errors import handle_errors
from evalwh.cli._options import DEFAULT_DB, DbOption, FormatOption, OutputFormat, OutputOption
from evalwh.cli._render import render


def _sql_file(query: str) -> Path | None:
    """The file ``query`` names (``*.sql``), or None when it is the SQL itself or ``-``."""
    if query != "-" and "\n" not in query and len(query) < 4096 and query.endswith(".sql"):
        return Path(query)
    return None


def _read_sql(query: str) -> str:
    """The SQL itself, a file's contents, or standard input for ``-``."""
    from evalwh.errors import QueryError
    from evalwh.io.formats import TABLE_BYTES, read_bounded

    path = Path("-") if query == "-" else _sql_file(query)
    if path is None:
        return query
    if query != "-" and not path.is_file():
        _not_a_file(path)
    # at most 16 MiB: an oversize file, or /dev/zero or an endless stream on standard input,
    # ends there at once
    data = read_bounded(path, TABLE_BYTES, "an SQL file", decompress=False)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise QueryError(f"{path}: not a UTF-8 text file, so not SQL") from None


def _not_a_file(path: Path) -> None:
    """Raise one line saying what ``path`` is, when it is not a regular file: absent, a folder, a device."""
    import os
    import stat

    from evalwh.errors import NotFoundError, QueryError

    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise NotFoundError(f"{path}: no such SQL file") from None
    except OSError as error:
        raise QueryError(f"{path}: cannot read the SQL file ({error.strerror})") from None
    kinds = [(stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
             (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket")]  # fmt: skip
    kind = next((name for test, name in kinds if test(mode)), "not a file")
    raise QueryError(f"{path}: not a regular file ({kind}), so not a SQL file; give a .sql file or the SQL itself")


def _not_echoed(path: Path, error: Exception) -> Exception:
    """A syntax error in a file, without the file's text: it may not be SQL at all (a secret)."""
    import re

    from evalwh.errors import QueryError

    where = re.search(r"line (\d+), column (\d+)", str(error))
    at = f" at line {where.group(1)}, column {where.group(2)}" if where else ""
    return QueryError(f"{path}: syntax error{at}; the file is not SQL evalwh can parse (its text is not shown)")


@handle_errors
def sql(
    query: Annotated[
        str | None,
        typer.Argument(
            help="SQL text, a .sql file, or - to read standard input.", show_default=False
        ),
    ] = None,
    param: Annotated[
        list[str] | None,
        typer.Option(
            "--param",
            "-p",
            help='A $name parameter as name=value (JSON values: 10, 0.8, true, "401"); repeatable.',
        ),
    ] = None,
    write: Annotated[
        bool,
        typer.Option(
            "--write", help="Allow statements that change data (opens the warehouse for writing)."
        ),
    ] = False,
    dialect: Annotated[
        str,
        typer.Option(
            "--dialect",
            help="Print the SQL written for this engine (spark, postgres, ...) instead of running it.",
        ),
    ] = "duckdb",
    show_metric: Annotated[
        str | None,
        typer.Option(
            "--show-metric",
            help="Print a measure's full SQL (context and metric query), e.g. 'nDCG@10'.",
        ),
    ] = None,
    collection: Annotated[
        str | None,
        typer.Option(
            "--collection", "-c", help="With --show-metric: bind the collection (else a parameter)."
        ),
    ] = None,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Run SQL against the warehouse, read-only unless --write; or print it for another engine.

    Example: evalwh sql "SELECT run_id, count(*) AS topics FROM run_topics GROUP BY run_id" --db trec.duckdb
    """
    from evalwh.store import adhoc
    from evalwh.errors import QueryError

    if show_metric is not None:
        from evalwh import spark

        typer.echo(spark.show_metric(show_metric, collection=collection, dialect=dialect))
        return
    if query is None:
        raise QueryError("no SQL given; pass a statement, a .sql file, or - for standard input")
    text = _read_sql(query)
    if dialect != "duckdb":
        typer.echo(adhoc.transpile(text, dialect))
        return
    from evalwh.warehouse import Warehouse

    params = dict(adhoc.parse_param(p) for p in param or [])
    with Warehouse(db, hardened=True) if write else Warehouse.open_reader(db, sandbox=True) as wh:
        try:
            frame = wh.sql(text, params, write=write)
        except QueryError as error:
            path = _sql_file(query)
            if path is not None and ("syntax error" in str(error) or "Parser Error" in str(error)):
                raise _not_echoed(path, error) from None
            raise
        note = adhoc.empty_note(wh.con, text) if frame.empty and not write else None
    render(frame, fmt, output)
    if note:
        typer.echo(f"note: {note}", err=True)


def register(app: typer.Typer) -> None:
    """Add ``sql``, ``schema``, ``export`` and ``import`` to the root app."""
    # SQL may begin with a comment ("-- ..."), which click would otherwise take for an option
    app.command("sql", context_settings={"ignore_unknown_options": True})(sql)
    schema_cmd.register(app)
    transfer_cmd.register(app)
