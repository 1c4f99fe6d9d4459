"""Help screens that never shorten a value.

Rich lays out ``--help`` as a table and cuts a word longer than its column with an ellipsis,
so a narrow terminal showed ``[default: RBP_trunc(p=0.8)@1…]``: a default that is not the
default. Here each piece of an option's help folds onto the next line instead (Rich's
``overflow="fold"``), so every character of a default, a name or a path stays visible.
typer builds that piece in one private function; if a later typer renames it, help screens
keep typer's own layout rather than failing.
"""

from __future__ import annotations

from typing import Any


def fold_long_words() -> None:
    """Make typer's option help fold long words instead of cutting them (idempotent)."""
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
