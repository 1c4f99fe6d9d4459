"""The warehouse: one DuckDB file holding the runs, qrels and results of many collections."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sys
import threading
import weakref
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from evalwh import sql
from evalwh.errors import EvalWhError, NotFoundError, QueryError, SchemaError
from evalwh.errors import WarehouseLockedError

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_DB = "evalwh.duckdb"
DEFAULT_QRELS = "default"
MIGRATION_MEMORY = "1GiB"  # DuckDB's memory limit while steps are applied to a file (_migrate)
_INGEST = "evalwh.queries.ingest"
_REPORTS = "evalwh.queries.reports"

# Every connection: DuckDB never downloads or loads an extension on its own.
_CONNECT_CONFIG = {"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"}


# Every open warehouse, so that Ctrl-C can interrupt the query one of them runs (evalwh.cli._errors:
# a DuckDB query does not return to Python to notice a signal); evalwh.__main__ asks it too.
OPEN: weakref.WeakSet[Store] = weakref.WeakSet()


def interrupt_all() -> None:
    """Interrupt the query every open warehouse is running (from another thread)."""
    for warehouse in list(OPEN):
        with contextlib.suppress(Exception):
            warehouse.con.interrupt()


class Outcome:
    """What became of a command's transactions: the one point where an interrupt meets a commit.

    Ctrl-C (:func:`request_interrupt`, called by the CLI's watcher thread) and the commit of an
    outermost transaction (:meth:`Store.transaction`) take the same lock. An interrupt that
    comes first makes the commit roll back instead (and raise KeyboardInterrupt); one that
    comes after waits for the commit to finish, and :attr:`commits` says that it did. So the
    CLI can report what is true: nothing committed, or the changes committed before it.
    """

    lock = threading.Lock()
    interrupted = False
    commits = 0

    @classmethod
    def reset(cls) -> None:
        """Start a command: no interrupt, no commit yet."""
        with cls.lock:
            cls.interrupted = False
            cls.commits = 0


def _test_interrupt(point: str) -> None:
    """The tests' hook: ``EVALWH_TEST_INTERRUPT=before-commit`` (or ``after-commit``) sends
    this process SIGINT exactly there, once, and waits until the CLI's watcher has taken it,
    so that either outcome can be tried without racing a timer."""
    if os.environ.get("EVALWH_TEST_INTERRUPT") != point:
        return
    import signal
    import time

    os.environ.pop("EVALWH_TEST_INTERRUPT")
    os.kill(os.getpid(), signal.SIGINT)
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        return  # (started with SIGINT ignored: no watcher takes it, nothing to wait for)
    deadline = time.monotonic() + 60  # (a loaded test machine can starve the watcher a while)
    while not Outcome.interrupted and time.monotonic() < deadline:
        time.sleep(0.005)
    if not Outcome.interrupted:  # say so, rather than let the test see a command that just ended
        print(f"EVALWH_TEST_INTERRUPT={point}: SIGINT not taken within 60 s", file=sys.stderr)


def request_interrupt() -> None:
    """Ctrl-C: decide against every commit not yet made, and interrupt every running query."""
    with Outcome.lock:
        Outcome.interrupted = True
    interrupt_all()


def _first_line(error: BaseException) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def _lock_message(path: str, error: duckdb.Error) -> str:
    pid = re.search(r"PID (\d+)", str(error))
    holder = f" (process {pid.group(1)})" if pid else ""
    return (
        f"{path}: the warehouse is in use by another process{holder}; "
        "wait for it to finish, or use another --db file"
    )


# Each shipped SQL file's statements, parsed once per process (Store.run, _create_schema):
# DuckDB runs a parsed statement without parsing its text again, which halves what a short
# statement costs. Each is parsed again from its own text, so that an error's caret points
# into the statement (offsets into the whole file would misplace it).
_PARSED: dict[sql.SqlFile, tuple[tuple[duckdb.Statement, frozenset[str]], ...]] = {}


def _parsed(
    con: duckdb.DuckDBPyConnection, file: sql.SqlFile
) -> tuple[tuple[duckdb.Statement, frozenset[str]], ...]:
    """The statements of ``file``, each with the named parameters it takes (cached)."""
    statements = _PARSED.get(file)
    if statements is None:
        statements = tuple(
            (statement, frozenset(statement.named_parameters))
            for part in con.extract_statements(file.text)
            for statement in con.extract_statements(part.query)
        )
        _PARSED[file] = statements
    return statements


def _execute(con: duckdb.DuckDBPyConnection, file: sql.SqlFile) -> None:
    """Run every statement of a shipped file that takes no parameters (the schema's)."""
    for statement, _ in _parsed(con, file):
        con.execute(statement)


def _create_schema(
    con: duckdb.DuckDBPyConnection, files: dict[str, sql.SqlFile], *, described: bool = True
) -> None:
    """The whole schema into a new, empty database, inside the caller's transaction.

    From the baseline (``schema/baseline/warehouse.sql`` and its ``descriptions.sql``, the
    package ``evalwh.schema.baseline``): the schema as the steps leave it, in one script, with
    the steps recorded as applied. Running the steps one after another builds the same
    catalog (tests/test_schema.py compares them) for about twice the CPU, much of it on
    statements later steps alter, drop or replace. A step the baseline does not record yet is
    applied after it, as on an older warehouse. ``described=False`` leaves out the baseline's
    descriptions (COMMENT ON), for a throw-away warehouse.
    """
    baseline = sql.load_package("evalwh.schema.baseline")
    _execute(con, baseline["warehouse"])
    if described:
        _execute(con, baseline["descriptions"])
    recorded = {r[0] for r in con.execute("SELECT name FROM schema_migrations").fetchall()}
    later = [name for name in files if name not in recorded]
    for name in later:
        con.execute(files[name].text)
    if later:
        con.execute("INSERT INTO schema_migrations (name) SELECT unnest(?)", [later])


class _Empty:
    """This process's empty warehouse, as bytes: a new warehouse file is a copy of it.

    Running the schema's DDL (the baseline script of tables, views, macros and descriptions:
    :func:`_create_schema`) costs DuckDB about 0.05 CPU s per new database; writing half a
    MiB costs a millisecond. The first new file of a process is made the ordinary way (a
    command that makes one warehouse pays nothing more); from the second on, the schema is run
    once more into a private temporary file, whose bytes are kept in memory (the file is
    removed at once) and written to each new warehouse file. The bytes come from this
    process's DuckDB and this installation's schema files, so a copy
    is the database the DDL makes (tests/test_schema.py compares them table by table).
    """

    made = 0
    image: bytes | None = None
    failed = False  # the image could not be built here (no writable temporary folder): no copies
    lock = threading.Lock()

    @classmethod
    def bytes(cls) -> bytes | None:
        """The image, built on the second request; None on the first (make it the ordinary way)."""
        with cls.lock:
            cls.made += 1
            if cls.image is None and cls.made >= 2 and not cls.failed:
                try:
                    cls.image = cls._build()
                except (OSError, duckdb.Error):
                    cls.failed = True  # every new file the ordinary way, as before
            return cls.image

    @staticmethod
    def _build() -> bytes | None:
        import shutil
        import tempfile

        folder = tempfile.mkdtemp(prefix="evalwh-empty-")
        try:
            path = os.path.join(folder, "empty.duckdb")
            con = duckdb.connect(path, config=dict(_CONNECT_CONFIG))
            try:
                con.execute("BEGIN")
                _create_schema(con, sql.load_package("evalwh.schema"))
                con.execute("COMMIT")
                con.execute("CHECKPOINT")
            finally:
                con.close()
            if os.path.exists(path + ".wal"):  # (not all of it in the file itself: no image)
                return None
            with open(path, "rb") as handle:
                return handle.read()
        finally:
            shutil.rmtree(folder, ignore_errors=True)


def _lay_down(path: str) -> None:
    """Write a new warehouse file as a copy of the process's empty warehouse (:class:`_Empty`).

    Only where no file exists (created exclusively: a file another process makes in the
    meantime is never overwritten, and then DuckDB opens that one as usual); on the first new
    file of a process, or when the copy cannot be written, nothing is written here and DuckDB
    creates the file.
    """
    image = _Empty.bytes()
    if image is None:
        return
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError:
        return  # (exists now, or cannot be made: DuckDB's own open says what is wrong)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(image)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(path)
        raise


class Store:
    """An evalwh warehouse in a DuckDB file (or in memory with ``":memory:"``).

    Opening a warehouse for writing applies any schema migration it lacks (a reader refuses
    such a file instead); a DuckDB file that is not an evalwh warehouse is refused untouched.
    The connection is the warehouse's own; close it with :meth:`close` or use the warehouse as
    a context manager.
    When a ``with`` block fails on a warehouse file that this object created before anything
    was committed to it, the file (and its ``.wal``) is removed again: a failed first command
    leaves nothing behind, and work a block committed stays. Reading commands
    open it with :meth:`open_reader`.
    A new in-memory warehouse opened with ``described=False`` has no table, view or column
    descriptions (a quarter of what laying down the schema costs): a throw-away one that
    nobody lists, as the direct path's. A warehouse file always has them (``described=False``
    is refused there).

    Examples:
        >>> import pandas as pd
        >>> from evalwh import Warehouse
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
        described: bool = True,
    ):
        from evalwh.io.files import guard_database

        self.path = str(path)
        self.read_only = read_only or sandbox
        self.upgraded: list[str] = []
        self._lock = threading.RLock()
        in_memory = self.path == ":memory:"
        if not described and not in_memory:
            raise ValueError(f"{self.path}: described=False is for an in-memory warehouse only")
        self._described = described
        if self.read_only and not in_memory and not Path(self.path).is_file():
            raise NotFoundError(f"{self.path}: no such warehouse file")
        # created here: a block that fails before anything is committed removes it (see __exit__)
        self.created = not in_memory and not Path(self.path).exists()
        if not in_memory:
            guard_database(self.path)  # no output of this process may overwrite it or its WAL
        if self.created and not self.read_only:
            _lay_down(self.path)
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
    ) -> Store:
        """Open an existing warehouse for reading only: the one way every reading command opens it.

        A reader never writes: a warehouse an older evalwh wrote (lacking a schema step this
        version ships) is refused with one line saying to run ``evalwh upgrade``
        (:meth:`upgrade`), and a DuckDB file that is not an evalwh warehouse is refused as it is.
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

    closed = False
    """True once :meth:`close` ran: the jobs of a ``Warehouse`` then refuse in one line."""

    def close(self) -> None:
        """Close the connection."""
        self.con.close()
        self.closed = True
        OPEN.discard(self)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is not None and self.created and not self._holds_data():
            self._discard()
        else:
            self.close()
            if exc_type is not None and not self.read_only and self.path != ":memory:":
                give_back_space(self.path)

    def _holds_data(self) -> bool:
        """Whether any table but ``schema_migrations`` holds a row (something was committed).

        A block that fails on a file this object created removes the file only when nothing
        was committed to it: a failed first command leaves no file, but the work that a
        ``with Warehouse(...)`` block committed before an unrelated error stays.
        """
        with contextlib.suppress(duckdb.Error):
            self.con.rollback()  # (whatever the failure left open is not committed)
        try:
            tables = self.con.execute(
                "SELECT schema_name, table_name FROM duckdb_tables() "
                "WHERE database_name = current_database() AND table_name <> 'schema_migrations'"
            ).fetchall()
            for schema, table in tables:
                query = f"SELECT EXISTS (FROM {sql.identifier(schema)}.{sql.identifier(table)})"
                if self.con.execute(query).fetchone() == (True,):
                    return True
        except duckdb.Error:
            return True  # when in doubt, keep the file
        return False

    def _discard(self) -> None:
        """Close, and remove the warehouse file if this object created it (a failed first command)."""
        self.con.close()
        self.closed = True
        OPEN.discard(self)
        if self.created:
            for suffix in ("", ".wal"):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(self.path + suffix)

    def _migrate(self) -> None:
        """Apply the ``schema/NNN_*.sql`` files not yet recorded, in order, each once.

        A new, empty database is laid down from the baseline instead (:func:`_create_schema`),
        which records the steps it stands for.

        A reader applies none: it refuses a warehouse that lacks one (:meth:`upgrade` applies
        them). Neither a reader nor a writer touches a DuckDB file that holds tables but is not
        an evalwh warehouse.
        """
        files = sql.load_package("evalwh.schema")
        applied = self._applied(files)
        self._refuse_newer(files, applied or set())
        if self.read_only:
            missing = [name for name in files if name not in applied]
            if missing:
                raise SchemaError(
                    f"{self.path}: written by an older evalwh (it lacks schema step {missing[0]}"
                    f"{f' and {len(missing) - 1} more' if len(missing) > 1 else ''}); "
                    f"run `evalwh upgrade --db {self.path}` first"
                )
            return
        if applied is None:
            # A new, empty database: the baseline (every step's outcome) in one transaction,
            # all of it or none. A file that already holds some steps takes the missing ones
            # one transaction each, below.
            with _Transaction(self, counts=not self.created):
                _create_schema(self.con, files, described=self._described)
            self.upgraded.extend(files)
            return
        if self.created:  # laid down as a copy of the process's empty warehouse (_lay_down)
            with _Transaction(self, counts=False):
                self.con.execute("UPDATE schema_migrations SET applied_at = current_timestamp")
            self.upgraded.extend(files)
        missing = [name for name in files if name not in applied]
        if not missing:
            return
        # 026 moves every run line: under DuckDB's default limit the shared XL's upgrade took
        # 7.4 GiB, within MIGRATION_MEMORY it spills (a new connection's limit: RESET restores it)
        self.con.execute("SET memory_limit = $value", {"value": MIGRATION_MEMORY})
        try:
            for name in missing:  # (a file created here reports no change: see Outcome)
                with _Transaction(self, counts=not self.created):
                    self.con.execute(files[name].text)
                    self.con.execute("INSERT INTO schema_migrations (name) VALUES (?)", [name])
                self.upgraded.append(name)
        finally:
            with contextlib.suppress(duckdb.Error):  # (a failed step's error is the one to see)
                self.con.execute("RESET memory_limit")

    def _refuse_newer(self, files: dict[str, sql.SqlFile], applied: set[str]) -> None:
        """Refuse a warehouse a newer evalwh wrote: it records schema steps this one does not ship.

        Such a file may hold tables and columns this version does not know to keep (an
        ingest would leave them stale, a reader would compute without them), so every
        command, reader or writer, stops before it reads or writes anything.

        Raises:
            SchemaError: naming the unknown steps, the newest step this evalwh ships and its version.
        """
        from evalwh._version import __version__
        from evalwh.schema import RETIRED

        newer = sorted(applied - set(files) - RETIRED)
        if newer:
            shown = ", ".join(newer[:3]) + (f" and {len(newer) - 3} more" if len(newer) > 3 else "")
            raise SchemaError(
                f"{self.path}: written by a newer evalwh (it has schema step{'s' if len(newer) > 1 else ''} {shown};"
                f" evalwh {__version__} knows steps up to {max(files)}); left as it is: use the newer evalwh"
            )

    def _applied(self, files: dict[str, sql.SqlFile]) -> set[str] | None:
        """The schema steps recorded in the file (None: a new, empty database).

        Raises:
            SchemaError: when the database holds tables but is not an evalwh warehouse (no
                ``schema_migrations``, or one that records none of evalwh's steps).
        """
        tables = {
            r[0]
            for r in self.con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()"
            ).fetchall()
        }
        if not tables and not self.read_only:
            return None
        not_ours = SchemaError(f"{self.path}: not an evalwh warehouse (a DuckDB file of something else); left as it is")
        if "schema_migrations" not in tables:
            raise not_ours
        try:
            applied = {r[0] for r in self.con.execute("SELECT name FROM schema_migrations").fetchall()}
        except duckdb.Error:
            raise not_ours from None
        if not applied & set(files) or "collections" not in tables:
            raise not_ours
        return applied

    def upgrade(self) -> list[str]:
        """The schema steps this object applied when it opened the warehouse (``evalwh upgrade``).

        A writer applies every step the warehouse lacks when it opens it; readers refuse such
        a warehouse until a writer (the ``evalwh upgrade`` command: this) has run.
        """
        return list(self.upgraded)

    # -- plumbing --------------------------------------------------------------------------

    def transaction(self) -> _Transaction:
        """A context manager: one transaction, rolled back on any exception.

        Inside a transaction already (an outer ``transaction()``, or the caller's own ``BEGIN``),
        it adds nothing: the outer one commits or rolls back. The commit of an outermost one
        is the point where a Ctrl-C is decided (:class:`Outcome`).
        """
        return _Transaction(self)

    def in_transaction(self) -> bool:
        """Whether the connection is inside an explicit transaction, asked without aborting it.

        (A second ``BEGIN`` would fail and abort the open transaction.) Outside one, every
        statement is its own transaction with a new id; inside, the id stays.
        """
        probe = "SELECT current_transaction_id()"
        # (fetchall: a result read to its end, so that the connection takes other work at
        # once, e.g. registering a DataFrame inside a caller's transaction)
        first, second = (self.con.execute(probe).fetchall() for _ in range(2))
        return first == second

    def run(self, file: sql.SqlFile | str, params: dict[str, Any] | None = None) -> duckdb.DuckDBPyConnection:
        """Execute a shipped SQL file (or SQL text) with named parameters; wraps DuckDB errors.

        Nothing is checked: this is the package's own plumbing. For a user's SQL use
        :meth:`evalwh.warehouse.Warehouse.sql`, which refuses writes as ``evalwh sql`` does.
        """
        params = params or {}
        text, source = _text_and_source(file)
        try:
            if isinstance(file, str):  # (SQL text: parsed each time, as it may be anything)
                statements: Sequence[tuple[duckdb.Statement | str, Iterable[str]]] = [
                    (statement.query, statement.named_parameters)
                    for statement in self.con.extract_statements(text)
                ]
            else:
                statements = _parsed(self.con, file)
            result = self.con
            for statement, names in statements:
                # DuckDB binds named parameters per statement and rejects excess ones
                wanted = {k: params[k] for k in names if k in params}
                result = self.con.execute(statement, wanted)
            return result
        except duckdb.Error as error:
            raise QueryError(f"{source} failed with {params}: {error}") from error

    def arrow(self, file: sql.SqlFile | str, params: dict[str, Any] | None = None) -> Any:
        """Execute a single-statement SQL file (or SQL text) and return a pyarrow Table."""
        text, source = _text_and_source(file)
        try:
            relation = self.con.sql(text, params=params or {})
            fetch = getattr(relation, "to_arrow_table", None) or relation.arrow
            return fetch()
        except duckdb.Error as error:
            raise QueryError(f"{source} failed with {params or {}}: {error}") from error

    def df(self, file: sql.SqlFile | str, params: dict[str, Any] | None = None) -> pd.DataFrame:
        """Execute a shipped SQL file (or SQL text) and return its result as a DataFrame.

        Examples:
            >>> Store(":memory:").df("SELECT $x + 1 AS y", {"x": 41}).y.tolist()
            [42]
        """
        from evalwh.store.results import frame

        return frame(self.run(file, params))

    def query(self, statement: str, params: dict[str, Any] | None = None) -> pd.DataFrame:
        """Run an ad-hoc SQL statement and return a DataFrame (NULLs as ``results.frame`` says)."""
        from evalwh.store.results import frame

        try:
            return frame(self.con.execute(statement, params or {}))
        except duckdb.Error as error:
            raise QueryError(str(error)) from error

    def require_writer(self, job: str) -> None:
        """Raise unless this warehouse was opened for writing (``job`` names what was asked).

        Raises:
            EvalWhError: ``W: opened read-only; ...`` for a reader from :meth:`open_reader`.
        """
        if self.read_only:
            raise EvalWhError(
                f"{self.path}: opened read-only (Warehouse.open_reader), so it cannot {job}; "
                "open it with Warehouse(path) to write"
            )

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

    def default_collection(self, collection: str | None = None) -> str:
        """``collection`` when given, else the warehouse's only collection (the CLI's rule).

        Every job that takes a collection calls this, so ``collection=`` (``--collection``)
        may be left out when the warehouse holds one collection.

        Raises:
            NotFoundError: when no collection is given and the warehouse holds none, or
                several (the message lists them).
        """
        if collection is not None:
            return collection
        names = [r[0] for r in self.con.execute("SELECT collection_id FROM collections ORDER BY 1").fetchall()]
        if len(names) == 1:
            return str(names[0])
        if not names:
            raise NotFoundError(f"{self.path} holds no collection yet; give --collection NAME")
        raise NotFoundError(
            f"{self.path} holds {len(names)} collections ({', '.join(names)}); choose one with --collection"
        )

    def qrels_set(self, collection: str | None, qrels_id: str | None = None) -> str:
        """``qrels_id`` when given, else the collection's default qrels set (methods §14.3;
        :func:`evalwh.store.results.default_qrels_set`)."""
        from evalwh.store.results import default_qrels_set

        return qrels_id if qrels_id is not None else default_qrels_set(self, self.default_collection(collection))

    # -- reports ---------------------------------------------------------------------------

    def collections(self) -> pd.DataFrame:
        """One row per collection: topics, judged, relevant (of the set named in ``counted_set``), runs, qrels sets."""
        return self.df(sql.query(_REPORTS, "collections"))

    def runs(self, collection: str | None = None) -> pd.DataFrame:
        """One row per run of ``collection`` (default: the only one): topics, docs, depth, provenance."""
        collection = self.default_collection(collection)
        self.require_collection(collection)
        return self.df(sql.query(_REPORTS, "runs"), {"collection_id": collection})

    def run_ids(self, collection: str) -> list[str]:
        """The run ids of a collection, sorted."""
        rows = self.con.execute(
            "SELECT run_id FROM runs WHERE collection_id = ? ORDER BY run_id", [collection]
        ).fetchall()
        return [r[0] for r in rows]


class _Transaction:
    def __init__(self, store: Store, *, counts: bool = True) -> None:
        self.store = store
        self.owner = False
        # a commit that changes what a file holds (not a reader's, not in memory) is reported
        self.counts = counts and not store.read_only and store.path != ":memory:"

    def _files(self) -> tuple[tuple[int, int] | None, ...]:
        """Size and modification time of the warehouse and its WAL (None: not there)."""
        out = []
        for name in (str(self.store.path), f"{self.store.path}.wal"):
            try:
                info = os.stat(name)
                out.append((info.st_size, info.st_mtime_ns))
            except OSError:
                out.append(None)
        return tuple(out)

    def __enter__(self) -> None:
        if self.store.in_transaction():
            return  # the outer transaction decides
        self.store.con.begin()
        self.owner = True

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if not self.owner:
            return
        con = self.store.con
        if exc_type is not None:
            with contextlib.suppress(duckdb.Error):  # (a connection already rolled back)
                con.rollback()
            return
        _test_interrupt("before-commit")
        with Outcome.lock:
            if Outcome.interrupted:
                # Ctrl-C came before the commit: nothing is committed
                con.rollback()
                raise KeyboardInterrupt
            before = self._files() if self.counts else None
            try:
                con.commit()
            except BaseException:
                with contextlib.suppress(duckdb.Error):
                    con.rollback()
                raise
            # counted only when the commit wrote to the file (its WAL or a checkpoint): one
            # that changed temporary tables alone (a replay's scoring) leaves the file as it was
            if self.counts and self._files() != before:
                Outcome.commits += 1
        _test_interrupt("after-commit")


_FILE_HEADERS = 3 * 4096  # DuckDB's main header and its two database headers; blocks follow


def committed_size(path: str | os.PathLike[str]) -> int | None:
    """The bytes a closed DuckDB file's last checkpoint uses, from its database header.

    DuckDB keeps two database headers (at 4 KiB and 8 KiB) and writes the newer one at each
    checkpoint; its ``block_count`` blocks of ``block_alloc_size`` bytes after the 12 KiB of
    headers are all the checkpoint refers to. A transaction that fails writes blocks past
    them (the file grows) and into blocks the checkpoint lists as free; neither is part of the
    database. None when the file does not read as a DuckDB file of this layout.
    """
    try:
        with open(path, "rb") as handle:
            head = handle.read(_FILE_HEADERS)
            size = os.fstat(handle.fileno()).st_size
    except OSError:
        return None
    if len(head) < _FILE_HEADERS or head[8:12] != b"DUCK":
        return None
    import struct

    # each database header: checksum, iteration, meta block, free list, block count, block
    # size, vector size; a layout that does not read so (another storage format) is left alone
    headers = [struct.unpack_from("<QQqqQQQ", head, offset) for offset in (4096, 8192)]
    _, iteration, _, _, blocks, block_size, vector_size = max(headers, key=lambda h: h[1])
    plausible = 16384 <= block_size <= 1 << 30 and not block_size & (block_size - 1)
    if iteration == 0 or not plausible or vector_size != 2048:
        return None
    used = _FILE_HEADERS + blocks * block_size
    return used if used <= size else None


def give_back_space(path: str | os.PathLike[str]) -> None:
    """After a failed write to a closed warehouse: truncate it to its committed size, and remove
    an empty write-ahead log.

    A write that fails (a full disk, above all) leaves the blocks it wrote: the file stays as
    large as the disk let it grow, though nothing refers to them. When no write-ahead log holds
    committed changes (none, or an empty one: DuckDB cuts the log back when a commit fails), the
    last checkpoint is the whole database, so the file is cut to the size that checkpoint uses
    (:func:`committed_size`) and the empty log removed. Done under the file's lock, as DuckDB
    takes it, so no other process has the file open for writing meanwhile; when another holds
    it, nothing is done.
    """
    import fcntl

    wal = f"{path}.wal"
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return
    try:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return  # another process opened it meanwhile: its business now
        with contextlib.suppress(FileNotFoundError):
            if os.path.getsize(wal) != 0:
                return  # committed changes not yet checkpointed: the file's end may hold them
            os.remove(wal)
        used = committed_size(path)
        if used is not None and os.fstat(fd).st_size > used:
            os.ftruncate(fd, used)
            os.fsync(fd)
    except OSError:
        pass  # (the file stays as it is: no worse than before)
    finally:
        os.close(fd)  # (and the lock with it)


def _text_and_source(file: sql.SqlFile | str) -> tuple[str, str]:
    """The SQL text of a shipped file or of a plain string, and how an error names it."""
    if isinstance(file, str):
        return file, "SQL statement"
    return file.text, file.source


def sha256_text(text: str) -> str:
    """SHA-256 of a text, for derived objects (pools, reduced qrels)."""
    return hashlib.sha256(text.encode()).hexdigest()


def params_json(params: dict[str, Any]) -> str:
    """Canonical JSON for stored parameters."""
    return json.dumps(params, sort_keys=True, default=str)
