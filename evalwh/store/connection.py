"""The warehouse: one DuckDB file holding the runs, qrels and results of many collections."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import weakref
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

# Every connection: DuckDB never downloads or loads an extension on its own.
_CONNECT_CONFIG = {"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"}


# Every open warehouse, so that Ctrl-C can interrupt the query one of them is running
# (see evalwh.cli._errors); a DuckDB query does not return to Python to notice a signal.
# (evalwh.__main__ also asks it whether every warehouse is closed before a quick exit.)
OPEN: weakref.WeakSet[Warehouse] = weakref.WeakSet()


def interrupt_all() -> None:
    """Interrupt the query every open warehouse is running (from another thread)."""
    for warehouse in list(OPEN):
        with contextlib.suppress(Exception):
            warehouse.con.interrupt()


def _first_line(error: BaseException) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


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
    When a ``with`` block fails on a warehouse file that this object created, the file (and its
    ``.wal``) is removed again: a failed first command leaves nothing behind. Reading commands
    open it with :meth:`open_reader`.

    Examples:
        >>> import pandas as pd
        >>> wh = Warehouse(":memory:")
        >>> qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1, 0]})
        >>> wh.ingest_qrels(qrels, collection="demo").status
        'ingested'
        >>> wh.collections()[["collection_id", "topics", "judged", "relevant"]].values.tolist()
        [['demo', 1, 2, 1]]
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = DEFAULT_DB,
        *,
        read_only: bool = False,
        sandbox: bool = False,
        hardened: bool = False,
        allowed_directories: Sequence[str | os.PathLike[str]] = (),
    ):
        self.path = str(path)
        self.read_only = read_only or sandbox
        in_memory = self.path == ":memory:"
        if self.read_only and not in_memory and not Path(self.path).is_file():
            raise NotFoundError(f"{self.path}: no such warehouse file")
        # created here: a command that fails removes the file again (see __exit__)
        self.created = not in_memory and not Path(self.path).exists()
        try:
            self.con = duckdb.connect(self.path, read_only=self.read_only, config=dict(_CONNECT_CONFIG))
        except duckdb.IOException as error:
            if "lock" in str(error).lower():
                raise WarehouseLockedError(_lock_message(self.path, error)) from None
            raise EvalWhError(f"{self.path}: cannot open the warehouse: {_first_line(error)}") from None
        except duckdb.Error as error:
            raise EvalWhError(f"{self.path}: cannot open the warehouse: {_first_line(error)}") from None
        # evalwh shows its own progress; DuckDB's bar would write into pipes and tables
        self.con.execute("SET enable_progress_bar = false")
        OPEN.add(self)
        try:
            self._migrate()
        except BaseException:
            self._discard()
            raise
        if hardened or sandbox:
            self._harden(sandbox=sandbox, allowed_directories=allowed_directories)

    @classmethod
    def open_reader(
        cls,
        path: str | os.PathLike[str] = DEFAULT_DB,
        *,
        sandbox: bool = False,
        allowed_directories: Sequence[str | os.PathLike[str]] = (),
    ) -> Warehouse:
        """Open an existing warehouse for reading only: the one way every reading command opens it.

        The connection is read-only (any number of readers at once, also on a read-only file
        system), reaches no file but the warehouse's own (and ``allowed_directories``, e.g.
        an export's target), installs and loads no extension, and its settings are locked.
        With ``sandbox`` (ad-hoc SQL) DuckDB's local file system is switched off altogether,
        so no statement, however spelled, can read or write any file.

        Raises:
            NotFoundError: when ``path`` does not exist (no file is created).
        """
        return cls(path, read_only=True, hardened=True, sandbox=sandbox, allowed_directories=allowed_directories)

    def _harden(self, *, sandbox: bool, allowed_directories: Sequence[str | os.PathLike[str]]) -> None:
        """Lock the connection down: see :meth:`open_reader` (``hardened=True`` does it for a writer)."""
        if allowed_directories:
            folders = [os.path.join(os.path.abspath(d), "") for d in allowed_directories]
            self.con.execute("SET allowed_directories = $d", {"d": folders})
        self.con.execute("SET enable_external_access = false")
        if sandbox:
            # DuckDB always allows its own database and WAL paths when external access is off,
            # so that COPY ... TO 'W.duckdb.wal' would still write: no local file system at all.
            self.con.execute("SET disabled_filesystems = 'LocalFileSystem'")
        self.con.execute("SET lock_configuration = true")

    # -- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection."""
        self.con.close()
        OPEN.discard(self)

    def __enter__(self) -> Warehouse:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is not None and self.created:
            self._discard()
        else:
            self.close()

    def _discard(self) -> None:
        """Close, and remove the warehouse file if this object created it (a failed first command)."""
        self.con.close()
        OPEN.discard(self)
        if self.created:
            for suffix in ("", ".wal"):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(self.path + suffix)

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
                self.con = duckdb.connect(self.path, read_only=True, config=dict(_CONNECT_CONFIG))
                self.con.execute("SET enable_progress_bar = false")
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

        A DataFrame (or a ``.parquet`` file) needs ``query_id, doc_id, relevance``
        (``iteration`` optional), or another layout of :mod:`evalwh.frames` (PyTerrier's
        ``qid, docno, label``). The whole ingest is one transaction: a rejected input leaves the
        warehouse unchanged.

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
        from evalwh.frames import is_table_file, read_table
        from evalwh.ingest import bulk_session, ingest_qrels_source

        if is_table_file(source):
            source = read_table(source)  # type: ignore[arg-type]
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
            sources: Run files (plain or ``.gz``; ``.parquet`` files are read as DataFrames),
                or a DataFrame with ``query_id, doc_id, score`` (or another layout of
                :mod:`evalwh.frames`) and either ``run_id`` or the ``run_id`` argument.
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
        from evalwh.frames import is_table_file, read_table, standard_columns
        from evalwh.ingest import bulk_session, ingest_run_files, ingest_run_frame

        with bulk_session(self), self.transaction():
            self.ensure_collection(collection)
            if not isinstance(sources, (str, os.PathLike, list, tuple)):
                return ingest_run_frame(self, sources, collection, run_id=run_id, replace=replace)
            paths = [Path(sources)] if isinstance(sources, (str, os.PathLike)) else [Path(s) for s in sources]
            tables = [p for p in paths if is_table_file(p)]
            if tables:
                # Parquet files: DataFrames in any layout evalwh.frames accepts, one run per
                # run_id value (or named by run_id=, else by the file's stem)
                results = []
                for path in tables:
                    frame = standard_columns(read_table(path), "run", label=str(path))
                    name = run_id or (None if "run_id" in frame.columns else path.stem)
                    results += ingest_run_frame(self, frame, collection, run_id=name, replace=replace)
                paths = [p for p in paths if not is_table_file(p)]
                if not paths:
                    return results
                return results + ingest_run_files(
                    self, paths, collection, run_id=run_id, replace=replace,
                    ignore_extra_fields=ignore_extra_fields, progress=progress,
                )  # fmt: skip
            return ingest_run_files(
                self,
                paths,
                collection,
                run_id=run_id,
                replace=replace,
                ignore_extra_fields=ignore_extra_fields,
                progress=progress,
            )

    def ingest_run_metadata(
        self,
        source: str | os.PathLike[str] | pd.DataFrame,
        *,
        collection: str,
        allow_unknown_runs: bool = False,
    ) -> int:
        """Attach group, type and pooled flags to ingested runs from a TSV file or DataFrame.

        The table needs a run id column (``run_id`` or ``runtag``) and any of ``group``
        (or ``group_name``), ``type`` (or ``run_type``), ``pooled`` (or ``judged_pooled``,
        1/0 or true/false). Every row fills every column; a run listed twice has the same
        values both times.

        Args:
            source: A tab-separated file with a header, or a DataFrame.
            collection: The collection whose runs get the metadata.
            allow_unknown_runs: Skip rows for runs the collection does not have (else an error).

        Returns:
            The number of runs updated.

        Raises:
            IngestError: naming file and line (or DataFrame row, from 1) and the problem.
        """
        from evalwh.ingest import run_metadata_frame

        self.require_collection(collection)
        frame = run_metadata_frame(source)
        known = set(self.run_ids(collection))
        unknown = ~frame["run_id"].isin(known)
        if unknown.any() and not allow_unknown_runs:
            row = frame[unknown].iloc[0]
            label = str(source) if isinstance(source, (str, os.PathLike)) else "DataFrame"
            raise IngestError(
                label,
                int(row["line"]),
                f"run {row['run_id']!r} is not in collection {collection!r} "
                "(ingest it first, or allow unknown runs to skip such rows)",
            )
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

    def evaluate(self, measures: Iterable[str], *, wide: bool = False, **options: Any) -> pd.DataFrame:
        """Evaluate runs of a collection; see :func:`evalwh.evaluation.evaluate`.

        With ``wide=True`` the result has one row per run (per run and topic with
        ``per_query=True``) and one column per measure, in the order asked for
        (:func:`evalwh.evaluation.wide_form`).
        """
        from evalwh.evaluation import evaluate, wide_form

        frame = evaluate(self, list(measures), **options)
        return wide_form(frame) if wide else frame


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
