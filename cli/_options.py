"""Options shared by every command, as Annotated aliases."""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

F = TypeVar("F", bound=Callable[..., Any])


def _db_anywhere(ctx: typer.Context, param: typer.CallbackParam, value: Path) -> Path:
    """The command's ``--db``, else the one given before the command (``evalwh --db X cmd``).

    Order: ``cmd --db``, then ``evalwh --db``, then ``EVALWH_DB``, then ``evalwh.duckdb``.
    """
    root = ctx.find_root().params.get("db")
    if root is None or param.name is None:
        return value
    source = ctx.get_parameter_source(param.name)
    if source is not None and source.name == "COMMANDLINE":
        if Path(value) != Path(root):
            raise typer.BadParameter(f"given twice, as {root} and as {value}")
        return value
    return Path(root)


DbOption = Annotated[
    Path,
    typer.Option(
        "--db",
        envvar="EVALWH_DB",
        help="DuckDB warehouse file (env EVALWH_DB); may also come before the command.",
        dir_okay=False,
        callback=_db_anywhere,
    ),
]
CollectionOption = Annotated[
    str | None,
    typer.Option(
        "--collection",
        "-c",
        help="Collection name inside the warehouse (default: its only collection).",
        show_default=False,
    ),
]


def default_collection(func: F) -> F:
    """Fill in ``collection`` when it was not given: the warehouse's only collection.

    For commands with ``collection: CollectionOption = None`` and ``db: DbOption``; a
    warehouse holding no collection, or several, is an error that lists them.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("collection") is None:
            kwargs["collection"] = only_collection(Path(kwargs["db"]))
        return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def only_collection(db: Path) -> str:
    """The one collection of the warehouse ``db``; an error naming them unless there is one.

    The rule and its messages are :meth:`evalwh.store.connection.Store.default_collection`'s;
    only a missing file is this function's own case (a reader does not open it).
    """
    from evalwh.errors import NotFoundError
    from evalwh.warehouse import Warehouse

    if not db.exists():
        raise NotFoundError(f"{db}: no such warehouse file, so no collection to default to; give --collection NAME")
    with Warehouse.open_reader(db) as wh:
        return wh.default_collection()


class OutputFormat(str, enum.Enum):
    """How a command prints a table."""

    table = "table"
    csv = "csv"
    json = "json"
    parquet = "parquet"
    markdown = "markdown"
    latex = "latex"


FormatOption = Annotated[
    OutputFormat, typer.Option("--format", "-f", help="Output format (parquet needs --output).")
]
OutputOption = Annotated[
    Path | None,
    typer.Option("--output", "-o", help="Write to this file instead of standard output.", dir_okay=False),
]
DEFAULT_DB = Path("evalwh.duckdb")
FillOption = Annotated[
    list[str] | None,
    typer.Option(
        "--fill",
        help="A stored qrels set whose labels fill the (topic, document) pairs the evaluated set did "
        "not judge (grade >= 0); repeatable, the first given fills first. Results then name "
        "the sets used: qrels_id A+B.",
        show_default=False,
    ),
]
