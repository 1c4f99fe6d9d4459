"""The evalwh error hierarchy: every error a user can cause is an EvalWhError."""

from __future__ import annotations


class EvalWhError(Exception):
    """Root of every error evalwh raises on purpose; the CLI prints it as ``Error: ...``."""


class SchemaError(EvalWhError):
    """The warehouse schema is missing, newer than this version, or inconsistent."""


class WarehouseLockedError(EvalWhError):
    """Another process holds the warehouse file open for writing."""


class IngestError(EvalWhError):
    """A run or qrels input is malformed; names the file, the line and the problem."""

    def __init__(self, path: str, line: int | None, problem: str) -> None:
        self.path = path
        self.line = line
        self.problem = problem
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {problem}")


class NotFoundError(EvalWhError):
    """A collection, run or qrels set that a command names does not exist."""


class UnknownMetricError(EvalWhError):
    """A metric name that the registry does not know."""


class MetricParamError(EvalWhError):
    """A metric parameter that is unknown or has an invalid value."""


class QueryError(EvalWhError):
    """A query failed; wraps the DuckDB error with the query's name and parameters."""


class InsufficientDataError(EvalWhError):
    """A statistic cannot be computed from the data given (too few topics or runs)."""
