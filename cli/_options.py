"""Options shared by every command, as Annotated aliases."""

from __future__ import annotations

import enum
import functools
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

F = TypeVar("F", bound=Callable[..., Any])

# click's parameter types, from where typer takes them (its own copy of click, or click itself)
_TYPES = sys.modules[typer.BadParameter.__module__.rpartition(".")[0] + ".types"]


def _finite(self: Any, value: Any, param: Any, ctx: Any, convert: Callable[..., float]) -> float:
    number = convert(self, value, param, ctx)
    if not math.isfinite(number):
        self.fail(f"{value!r} is not a finite number", param, ctx)
    return number


class FiniteFloat(_TYPES.FloatParamType):  # type: ignore[misc,name-defined]
    """A float option that refuses ``nan``, ``inf`` and ``-inf`` (click's float takes them)."""

    def convert(self, value: Any, param: Any, ctx: Any) -> float:
        return _finite(self, value, param, ctx, _TYPES.FloatParamType.convert)


class FiniteFloatRange(_TYPES.FloatRange):  # type: ignore[misc,name-defined]
    """A float option within a range, finite (click's range lets ``nan`` through: it compares false)."""

    def convert(self, value: Any, param: Any, ctx: Any) -> float:
        return _finite(self, value, param, ctx, _TYPES.FloatRange.convert)


def number(
    min: float | None = None, max: float | None = None, *, min_open: bool = False, max_open: bool = False
) -> Any:
    """The click type of a float option with a domain: ``typer.Option(click_type=number(0, 1, min_open=True))``.

    Finite always; ``min``/``max`` bound it, excluded with ``min_open``/``max_open`` (a
    probability strictly between 0 and 1 is ``number(0, 1, min_open=True, max_open=True)``).
    """
    return FiniteFloatRange(min, max, min_open=min_open, max_open=max_open)


def finite_floats(command: Any) -> None:
    """Make every float option of ``command`` and of its subcommands refuse ``nan`` and infinities.

    Called once on the root command (:class:`evalwh.cli._errors.OneLineGroup`), so that no
    float option, present or future, takes a value outside the real numbers.
    """
    for param in command.params:
        kind = param.type
        if isinstance(kind, (FiniteFloat, FiniteFloatRange)) or not isinstance(kind, _TYPES.FloatParamType):
            continue
        if isinstance(kind, _TYPES.FloatRange):
            param.type = FiniteFloatRange(
                kind.min, kind.max, min_open=kind.min_open, max_open=kind.max_open, clamp=kind.clamp
            )
        else:
            param.type = FiniteFloat()
    for sub in getattr(command, "commands", {}).values():
        finite_floats(sub)


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


def typed_options(ctx: typer.Context, names: Sequence[str]) -> list[str]:
    """Which of the parameters ``names`` the user gave (command line or environment), not defaults.

    By the source's name: typer may bring its own copy of click's ``ParameterSource``.
    """
    return [name for name in names
            if getattr(ctx.get_parameter_source(name), "name", None) in ("COMMANDLINE", "ENVIRONMENT")]  # fmt: skip


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
