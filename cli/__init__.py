"""The evalwh command line: a thin doorway onto the evalwh package.

Each command group lives in its own module; the root group (:mod:`evalwh.cli._lazy`) lists
them by name and imports a module when one of its commands is used, so that ``evalwh
--help`` and a mistyped command import none of them. The typer application itself,
``evalwh.cli.app``, is :mod:`evalwh.cli._app`, imported at its first use: importing this
package imports no typer, so that ``evalwh --help`` (:mod:`evalwh.cli._root_help`) does not.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    """``evalwh.cli.app``: the typer application, imported when first asked for."""
    if name == "app":
        from evalwh.cli._app import app

        globals()["app"] = app
        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
