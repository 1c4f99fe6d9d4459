"""What the store hands out: DuckDB results as DataFrames, and the qrels set a job reads.

:func:`frame` is the one place a DuckDB result becomes a DataFrame (:meth:`Store.df
<evalwh.store.connection.Store.df>`, :meth:`~evalwh.store.connection.Store.query`);
:func:`default_qrels_set` is the one rule for the qrels set of a job given none
(:meth:`~evalwh.store.connection.Store.qrels_set`, methods §14.3).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from evalwh import sql
from evalwh.errors import NotFoundError

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

DEFAULT_QRELS = "default"


class _Reader(Protocol):
    """What :func:`default_qrels_set` needs of a Store (the Store imports this module)."""

    def run(self, file: sql.SqlFile | str, params: dict[str, Any] | None = None) -> duckdb.DuckDBPyConnection: ...

    def run_ids(self, collection: str) -> list[str]: ...


def frame(result: duckdb.DuckDBPyConnection | duckdb.DuckDBPyRelation) -> pd.DataFrame:
    """A DuckDB result as a DataFrame, every NULL of an object column as None.

    DuckDB hands a NULL list (``VARCHAR[]``) to pandas as ``pd.NA`` but a NULL string as
    None, and ``pd.NA`` is neither iterable nor false (``bool(pd.NA)`` raises), so code that
    reads a list column with ``x is None`` broke on it (issue 52, class 1: a collection's
    conventions with one NULL list). Every reader gets None here. Nullable numeric columns
    (``Int32``) keep ``pd.NA``: :func:`pandas.isna` is how they are read.

    Examples:
        >>> import duckdb
        >>> out = frame(duckdb.connect().execute("SELECT NULL::VARCHAR[] AS a, ['x'] AS b"))
        >>> out["a"].iloc[0] is None, list(out["b"].iloc[0])
        (True, ['x'])
    """
    out = result.df()
    for name in out.columns[out.dtypes == "object"]:
        column = out[name]
        missing = column.isna()
        if missing.any():
            out[name] = column.where(~missing, None)
    return out


def default_qrels_set(store: _Reader, collection: str) -> str:
    """The qrels set a job evaluates ``collection`` against when it is given none.

    The set the collection's conventions name (``evalwh conventions --qrels-id``), else the
    set named ``default``, else the collection's only ingested set (derived sets, a built
    pool's or a reduced one, do not count; ``queries/reports/default_qrels.sql``). A
    collection without sets gives ``default``, whose absence the job then reports; so does a
    collection of label sets without runs (a judging study), where the job's own message,
    that there are no runs, says more than a choice between its sets.

    Raises:
        NotFoundError: when the collection has runs and several ingested sets, none of them
            its default (the message names the sets and the two ways to choose).
    """
    rows = store.run(sql.query("evalwh.queries.reports", "default_qrels"), {"collection_id": collection}).fetchall()
    chosen = rows[0][2] if rows else None
    if chosen is not None:
        return str(chosen)
    names = [str(name) for name, _, _ in rows if name is not None]
    if not names or DEFAULT_QRELS in names:
        return DEFAULT_QRELS
    ingested = [str(name) for name, kind, _ in rows if name is not None and kind == "ingested"] or names
    if len(ingested) == 1:
        return ingested[0]
    if not store.run_ids(collection):
        return DEFAULT_QRELS
    raise NotFoundError(
        f"collection {collection!r} has {len(ingested)} qrels sets ({', '.join(ingested)}) and none is "
        f"its default; choose one with --qrels-id (qrels_id=), or store one with "
        f"evalwh conventions -c {collection} --qrels-id NAME"
    )
