"""evalwh: an SQL-backed evaluation warehouse for IR test collections.

The public API is re-exported lazily so that ``import evalwh`` (and the CLI's start-up)
does not pay for DuckDB, pandas or scipy until they are used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from evalwh.errors import EvalWhError, IngestError
    from evalwh.warehouse import Warehouse

__all__ = ["EvalWhError", "IngestError", "Warehouse", "__version__"]

_LAZY = {
    "Warehouse": "evalwh.warehouse",
    "EvalWhError": "evalwh.errors",
    "IngestError": "evalwh.errors",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'evalwh' has no attribute {name!r}")
