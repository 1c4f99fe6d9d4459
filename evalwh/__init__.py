"""evalwh: an SQL-backed evaluation warehouse for IR test collections.

The front door. Everything a Python user needs is here, and every function returns pandas
DataFrames:

* :func:`evaluate` and :func:`compare`: run files (or DataFrames) and a qrels file in, scores
  or a significance table out, with no warehouse (as ``ranx.compare`` or ``pt.Experiment``),
  :func:`paper_table`: that table as LaTeX or Markdown, and :func:`ranks`: each run's rank
  interval and tier from per-topic scores (all four in :mod:`evalwh.api`);
* :class:`Warehouse`: one DuckDB file of many collections, with a method for every job of the
  CLI (ingest, evaluate, compare, matrix, pools, adjust, bounds, report, export, import, sql);
* :class:`EvalWhError` and its subclasses (:mod:`evalwh.errors`): every error a user can cause.

The names are imported lazily, so ``import evalwh`` (and the CLI's start-up) does not pay for
DuckDB, pandas or scipy until they are used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalwh._version import __version__

if TYPE_CHECKING:
    from evalwh import errors
    from evalwh.api import compare, evaluate, paper_table, ranks
    from evalwh.errors import EvalWhError, IngestError
    from evalwh.warehouse import Warehouse

__all__ = [
    "EvalWhError", "IngestError", "Warehouse", "__version__", "compare", "errors", "evaluate", "paper_table", "ranks",
]  # fmt: skip

_LAZY = {
    "Warehouse": "evalwh.warehouse",
    "evaluate": "evalwh.api",
    "compare": "evalwh.api",
    "paper_table": "evalwh.api",
    "ranks": "evalwh.api",
    "EvalWhError": "evalwh.errors",
    "IngestError": "evalwh.errors",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    if name == "errors":
        import importlib

        return importlib.import_module("evalwh.errors")
    raise AttributeError(f"module 'evalwh' has no attribute {name!r}")
