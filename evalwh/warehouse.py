"""The warehouse: one DuckDB file holding the runs, qrels and results of many collections."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from evalwh import sql
from evalwh.errors import (
    EvalWhError,
    IngestError,
    NotFoundError,
    QueryError,
    SchemaError,
    WarehouseLockedError,
)

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_DB = "evalwh.duckdb"
DEFAULT_QRELS = "default"
_INGEST = "evalwh.queries.ingest"
_REPORTS = "evalwh.queries.reports"

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class IngestResult:
    """What one ingested source became: ``status`` is ingested, replaced or unchanged."""

    kind: str
    name: str
    source: str
    status: str
    lines: int

    def message(self) -> str:
        """A one-line human summary."""
        if self.status == "unchanged":
            return f"{self.kind} {self.name!r} from {self.source}: already ingested, unchanged"
        return f"{self.kind} {self.name!r} from {self.source}: {self.status} ({self.lines:,} lines)"


def _lock_message(path: str, error: duckdb.Error) -> str:
    pid = re.search(r"PID (\d+)", str(error))
    holder = f" (process {pid.group(1)})" if pid else ""
    return (
        f"{path}: the warehouse is in use by another process{holder}; "
        "wait for it to finish, or use another --db file"
    )


class Warehouse:
    """An evalwh warehouse in a DuckDB file (or in memory with ``":memory:"``).

    Opening a warehouse applies any schema migration it lacks. The connection is the
    warehouse's own; close it with :meth:`close` or use the warehouse as a context manager.

    Examples:
        >>> import pandas as pd
        >>> wh = Warehouse(":memory:")
        >>> qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1, 0]})
        >>> wh.ingest_qrels(qrels, collection="demo").status
        'ingested'
        >>> wh.collections()[["collection_id", "topics", "judged", "relevant"]].values.tolist()
        [['demo', 1, 2, 1]]
    """

    def __init__(self, path: str | os.PathLike[str] = DEFAULT_DB, *, read_only: bool = False):
        self.path = str(path)
        self.read_only = read_only
        if read_only and self.path != ":memory:" and not Path(self.path).exists():
            raise NotFoundError(f"{self.path}: no such warehouse file")
        try:
            self.con = duckdb.connect(self.path, read_only=read_only)
        except duckdb.IOException as error:
            if "lock" in str(error).lower():
                raise WarehouseLockedError(_lock_message(self.path, error)) from None
            raise EvalWhError(f"{self.path}: cannot open the warehouse: {error}") from None
        except duckdb.Error as error:
            raise EvalWhError(f"{self.path}: cannot open the warehouse: {error}") from None
        # evalwh shows its own progress; DuckDB's bar would write into pipes and tables
        self.con.execute("SET enable_progress_bar = false")
        self._migrate()

    # -- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection."""
        self.con.close()

    def __enter__(self) -> Warehouse:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _migrate(self) -> None:
        """Apply the ``schema/NNN_*.sql`` files not yet recorded, in order, each once."""
        files = sql.load_package("evalwh.schema")
        if self.read_only:
            try:
                applied = {r[0] for r in self.con.execute("SELECT name FROM schema_migrations").fetchall()}
            except duckdb.CatalogException:
                raise SchemaError(f"{self.path}: not an evalwh warehouse") from None
            if set(files) - applied:
                # An older warehouse: upgrade it once through a writable connection.
                self.con.close()
                Warehouse(self.path).close()
                self.con = duckdb.connect(self.path, read_only=True)
            return
        self.con.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)"
        )
        applied = {r[0] for r in self.con.execute("SELECT name FROM schema_migrations").fetchall()}
        for name, file in files.items():
            if name in applied:
                continue
            with self.transaction():
                self.con.execute(file.text)
                self.con.execute("INSERT INTO schema_migrations (name) VALUES (?)", [name])

    # -- plumbing --------------------------------------------------------------------------

    def transaction(self) -> _Transaction:
        """A context manager: one transaction, rolled back on any exception."""
        return _Transaction(self.con)

    def run(self, file: sql.SqlFile, params: dict[str, Any] | None = None) -> duckdb.DuckDBPyConnection:
        """Execute a shipped SQL file with named parameters; wraps DuckDB errors."""
        params = params or {}
        try:
            statements = self.con.extract_statements(file.text)
            result = self.con
            for statement in statements:
                # DuckDB binds named parameters per statement and rejects excess ones
                wanted = {k: params[k] for k in statement.named_parameters if k in params}
                result = self.con.execute(statement.query, wanted)
            return result
        except duckdb.Error as error:
            raise QueryError(f"{file.source} failed with {params}: {error}") from error

    def arrow(self, file: sql.SqlFile, params: dict[str, Any] | None = None) -> Any:
        """Execute a single-statement SQL file and return a pyarrow Table."""
        try:
            relation = self.con.sql(file.text, params=params or {})
            fetch = getattr(relation, "to_arrow_table", None) or relation.arrow
            return fetch()
        except duckdb.Error as error:
            raise QueryError(f"{file.source} failed with {params or {}}: {error}") from error

    def df(self, file: sql.SqlFile, params: dict[str, Any] | None = None) -> pd.DataFrame:
        """Execute a shipped SQL file and return its result as a DataFrame."""
        return self.run(file, params).df()

    def query(self, statement: str, params: dict[str, Any] | None = None) -> pd.DataFrame:
        """Run an ad-hoc SQL statement and return a DataFrame."""
        try:
            return self.con.execute(statement, params or {}).df()
        except duckdb.Error as error:
            raise QueryError(str(error)) from error

    def ensure_collection(self, collection: str) -> None:
        """Create the collection row if it does not exist yet."""
        exists = self.con.execute(
            "SELECT count(*) FROM collections WHERE collection_id = ?", [collection]
        ).fetchone()
        if not exists or exists[0] == 0:
            self.con.execute("INSERT INTO collections (collection_id) VALUES (?)", [collection])

    def require_collection(self, collection: str) -> None:
        """Raise NotFoundError (with the known names) unless ``collection`` exists."""
        names = [r[0] for r in self.con.execute("SELECT collection_id FROM collections").fetchall()]
        if collection not in names:
            known = ", ".join(sorted(names)) or "none yet; ingest qrels or runs first"
            raise NotFoundError(f"no collection {collection!r} in {self.path} (collections: {known})")

    # -- reports ---------------------------------------------------------------------------

    def collections(self) -> pd.DataFrame:
        """One row per collection: topics, judged, relevant, runs, qrels sets."""
        return self.df(sql.query(_REPORTS, "collections"))

    def runs(self, collection: str) -> pd.DataFrame:
        """One row per run of ``collection``: topics, docs, min/max depth, provenance."""
        self.require_collection(collection)
        return self.df(sql.query(_REPORTS, "runs"), {"collection_id": collection})

    def run_ids(self, collection: str) -> list[str]:
        """The run ids of a collection, sorted."""
        rows = self.con.execute(
            "SELECT run_id FROM runs WHERE collection_id = ? ORDER BY run_id", [collection]
        ).fetchall()
        return [r[0] for r in rows]

    # -- qrels -----------------------------------------------------------------------------

    def ingest_qrels(
        self,
        source: str | os.PathLike[str] | pd.DataFrame,
        *,
        collection: str,
        qrels_id: str = DEFAULT_QRELS,
        replace: bool = False,
    ) -> IngestResult:
        """Ingest TREC qrels (``qid iter docid rel``) from a file or a DataFrame.

        A DataFrame needs ``query_id, doc_id, relevance`` (``iteration`` optional). The
        whole ingest is one transaction: a rejected input leaves the warehouse unchanged.

        Args:
            source: A qrels file (plain or ``.gz``) or a DataFrame.
            collection: The collection the judgments belong to (created if new).
            qrels_id: Name of the qrels set within the collection.
            replace: Replace an existing qrels set of the same name with different content.

        Returns:
            What happened: ingested, replaced, or unchanged (same content already there).

        Raises:
            IngestError: naming file, line and problem, for malformed input.
        """
        from evalwh.ingest import bulk_session, ingest_qrels_source

        with bulk_session(self), self.transaction():
            return ingest_qrels_source(self, source, collection, qrels_id=qrels_id, replace=replace)

    # -- runs ------------------------------------------------------------------------------

    def ingest_runs(
        self,
        sources: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | pd.DataFrame,
        *,
        collection: str,
        run_id: str | None = None,
        replace: bool = False,
        ignore_extra_fields: bool = False,
        progress: Progress | None = None,
    ) -> list[IngestResult]:
        """Ingest TREC run files (``qid Q0 docid rank score tag``) or a DataFrame.

        Files are parsed by DuckDB's CSV reader in batches; ranks are materialised in
        trec_eval's order. The whole call is one transaction: if any file is rejected,
        nothing is ingested.

        Args:
            sources: Run files (plain or ``.gz``), or a DataFrame with
                ``query_id, doc_id, score`` and either ``run_id`` or the ``run_id`` argument.
            collection: The collection the runs belong to (created if new).
            run_id: Name the run, instead of the tag column (one file only).
            replace: Replace an existing run of the same id whose content differs.
            ignore_extra_fields: Accept run lines with more than six fields.
            progress: Called with (files done, files in all) as batches finish.

        Returns:
            One result per run.

        Raises:
            IngestError: naming file, line and problem, for malformed input or a clash.
        """
        from evalwh.ingest import bulk_session, ingest_run_files, ingest_run_frame

        with bulk_session(self), self.transaction():
            self.ensure_collection(collection)
            if not isinstance(sources, (str, os.PathLike, list, tuple)):
                return ingest_run_frame(self, sources, collection, run_id=run_id, replace=replace)
            paths = [Path(sources)] if isinstance(sources, (str, os.PathLike)) else [Path(s) for s in sources]
            return ingest_run_files(
                self,
                paths,
                collection,
                run_id=run_id,
                replace=replace,
                ignore_extra_fields=ignore_extra_fields,
                progress=progress,
            )

    def ingest_run_metadata(self, source: str | os.PathLike[str] | pd.DataFrame, *, collection: str) -> int:
        """Attach group, type and pooled flags to ingested runs from a TSV file or DataFrame.

        The table needs a run id column (``run_id`` or ``runtag``) and any of ``group``
        (or ``group_name``), ``type`` (or ``run_type``), ``pooled`` (or ``judged_pooled``,
        1/0 or true/false). Rows for runs that are not in the collection are ignored.

        Returns:
            The number of runs updated.
        """
        from evalwh.ingest import run_metadata_frame

        self.require_collection(collection)
        frame = run_metadata_frame(source)
        with self.transaction():
            self.con.register("staged_metadata", frame)
            try:
                updated = self.con.execute(
                    sql.query(_INGEST, "update_run_metadata").text, {"collection_id": collection}
                ).fetchone()
            finally:
                self.con.unregister("staged_metadata")
        return int(updated[0]) if updated else 0

    # -- evaluation ------------------------------------------------------------------------

    def evaluate(self, measures: Iterable[str], **options: Any) -> pd.DataFrame:
        """Evaluate runs of a collection; see :func:`evalwh.evaluation.evaluate`."""
        from evalwh.evaluation import evaluate

        return evaluate(self, list(measures), **options)


class _Transaction:
    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        self.depth_owner = False

    def __enter__(self) -> None:
        try:
            self.con.begin()
            self.depth_owner = True
        except duckdb.TransactionException:
            # already inside a transaction: the outer one decides
            self.depth_owner = False

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if not self.depth_owner:
            return
        if exc_type is None:
            self.con.commit()
        else:
            self.con.rollback()


def sha256_text(text: str) -> str:
    """SHA-256 of a text, for derived objects (pools, reduced qrels)."""
    return hashlib.sha256(text.encode()).hexdigest()


def params_json(params: dict[str, Any]) -> str:
    """Canonical JSON for stored parameters."""
    return json.dumps(params, sort_keys=True, default=str)
