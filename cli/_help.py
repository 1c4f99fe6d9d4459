"""Help screens that never shorten a value.

Rich lays out ``--help`` as a table and cuts a word longer than its column with an ellipsis,
so a narrow terminal showed ``[default: RBP_trunc(p=0.8)@1…]``: a default that is not the
default. Here each piece of an option's help folds onto the next line instead (Rich's
``overflow="fold"``), so every character of a default, a name or a path stays visible.
typer builds that piece in one private function; if a later typer renames it, help screens
keep typer's own layout rather than failing.

Importing typer's Rich layer costs about a fifth of a second (Rich's markdown, syntax and
traceback modules), which every command would pay at start-up for a help screen it never
shows: the fold is put in place when typer first formats a help screen, not before.
"""

from __future__ import annotations

from typing import Any


def fold_long_words() -> None:
    """Make typer's option help fold long words, from the first help screen on (idempotent).

    If typer's Rich layer is already imported the fold is put in place now; otherwise typer's
    commands and groups put it in place when they first format help.
    """
    import sys

    if "typer.rich_utils" in sys.modules:
        _fold()
        return
    try:
        from typer import core
    except ImportError:
        return
    for cls in (core.TyperCommand, core.TyperGroup):
        format_help = cls.__dict__.get("format_help")
        if format_help is None or getattr(format_help, "_evalwh_folds", False):
            continue
        cls.format_help = _folding(format_help)  # type: ignore[method-assign]


def _folding(format_help: Any) -> Any:
    """``format_help`` that first makes typer's option help fold long words."""

    def formatted(self: Any, ctx: Any, formatter: Any) -> Any:
        _fold()
        return format_help(self, ctx, formatter)

    formatted._evalwh_folds = True  # type: ignore[attr-defined]
    return formatted


def _fold() -> None:
    """Put the fold in typer's Rich layer (importing it), once."""
    try:
        from rich.text import Text
        from typer import rich_utils
    except ImportError:  # typer without rich: plain click help, which wraps without cutting
        return
    original = getattr(rich_utils, "_get_parameter_help", None)
    if original is None or getattr(original, "_evalwh_folds", False):
        return

    def folded(*args: Any, **kwargs: Any) -> Any:
        columns = original(*args, **kwargs)
        for item in getattr(columns, "renderables", ()):
            if isinstance(item, Text):
                item.overflow = "fold"
        return columns

    folded._evalwh_folds = True  # type: ignore[attr-defined]
    rich_utils._get_parameter_help = folded
