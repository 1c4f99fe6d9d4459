"""Ingest of runs and qrels: one reader, streamed file by file, the evaluation cache filled.

A run ingest goes through these steps, all inside the caller's transaction:

1. sniff each file's first data line (its delimiter and tag, hence the run id); standard
   input and pipes are first copied once to a temporary file (:class:`Spill`);
2. skip files whose run is already stored with the same content, and refuse (or, with
   ``replace``, delete) runs stored with different content;
3. read the files in worker threads, two at a time while they are small, with the run-file
   reader (:mod:`evalwh.runreader`, C): it checks and ranks every line, gives each line the
   key of its (topic, document) pair, and with judgments in the collection finds the judged
   rows with their running counts (the evaluation cache); each file's rows, all numbers,
   are staged as Parquet and stored by key (``run_rows``, schema/013_keyed_results.sql) a
   few million lines at a time, in the background while the next files are read
   (:class:`Stored`): no second parse, no sort in SQL;
4. a file the reader leaves (a comment, mixed whitespace, a bad line, ...) goes the general
   way: DuckDB's CSV reader stages its lines with flags (``stage_run_lines.sql``,
   ``restage_run_lines.sql``), ``run_checks.sql`` counts bad lines and duplicates (a bad
   file is re-read in Python to name its first bad line), ``insert_run_results.sql`` ranks
   it with ``trec_ranked`` and ``store_ranked.sql`` stores it by key;
5. fill the evaluation cache (``judged_results``) of the new runs for every ingested qrels
   set, so that the first evaluation reads it as the tenth does, and writes nothing.

Memory holds the files being read and the collection's (topic, document) pairs, whatever
the number of files.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import tempfile
import threading
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import numpy as np

from evalwh import arrays, formats, runreader, sql
from evalwh.errors import IngestError, QueryError
from evalwh.frames import standard_columns

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.warehouse import IngestResult, Progress, Warehouse

_INGEST = "evalwh.queries.ingest"
# About 64 MiB of text (1.5 M lines) per batch: enough files for DuckDB to read in parallel,
# and sorts and hash tables small enough to stay in cache. Measured on 2 cores: 25 M lines in
# about 23 s with 32-64 MiB batches against 34 s with 1 GiB ones; TREC-8 is indifferent.
_BATCH_BYTES = 64 << 20
GZIP_RATIO = 4  # a gzipped run file holds about four times its size in text
READ_ERRORS = (OSError, EOFError, zlib.error, gzip.BadGzipFile)
READ_AHEAD = 2  # run files read, ranked and staged at a time (in worker threads), ...
READ_BYTES = 256 << 20  # ... while they hold at most this much text (memory: ~6 bytes a byte)
# A plain file of more than twice this is read a piece of whole topics at a time (as the
# direct path does, evalwh.direct), so that the reader's memory follows the piece.
PIECE_BYTES = 12 << 20
# Staged lines stored by one flush, in the background while the next files are read. A few
# million lines make statements large enough for DuckDB to write their row groups to the
# file as they fill (smaller ones stay in memory until the commit).
FLUSH_LINES = 4_000_000
INGEST_MEMORY = "256MiB"  # DuckDB's memory limit while ingesting into a file (bulk_session)


def check_frame_ids(frame: pd.DataFrame, columns: list[str], label: str = "DataFrame") -> None:
    """Refuse id cells that no TREC file could hold, naming the first offending row.

    Runs on the normalised frame (evalwh's column names), whatever the caller's layout was.
    Rows are numbered from 1, in frame order (``DataFrame:3: ...`` is the third row). A cell is
    refused when it is missing (None, NaN, NA), empty, or holds ASCII whitespace (space, tab,
    line break, vertical tab, form feed) or a NUL byte: a run or qrels file splits its fields
    on those, as trec_eval does, so no file could hold such an id.

    Raises:
        IngestError: ``DataFrame:ROW: problem`` for the first bad row (columns in order).
    """
    import numpy as np

    first: tuple[int, str] | None = None
    for column in columns:
        if column not in frame.columns:
            continue
        values = frame[column]
        missing = values.isna().to_numpy()
        text = values.astype(str)
        empty = (text.str.len() == 0).to_numpy() & ~missing
        spaced = text.str.contains(r"[ \t\n\r\x0b\x0c\x00]", regex=True).to_numpy(dtype=bool) & ~missing
        for mask, problem in (
            (missing, "is missing (None, NaN or NA)"),
            (empty, "is empty"),
            (spaced, "{shown} holds whitespace or a NUL byte, which no TREC file can hold"),
        ):
            hits = np.flatnonzero(mask)
            if len(hits) and (first is None or hits[0] < first[0]):
                row = int(hits[0])
                value = values.iloc[row]
                first = (row, f"{column} " + problem.format(value=value, shown=_show(value)))
    if first is not None:
        raise IngestError(label, first[0] + 1, first[1])


def frame_sha256(frame: pd.DataFrame) -> str:
    """A content hash of a DataFrame that ignores row order."""
    import pandas as pd

    hashed = pd.util.hash_pandas_object(frame, index=False).sort_values()
    return hashlib.sha256(hashed.to_numpy().tobytes()).hexdigest()


def _show(value: object) -> str:
    """A DataFrame cell for an error message: strings quoted, numbers as printed."""
    return repr(value) if isinstance(value, str) else str(value)


def _first_duplicate(frame: pd.DataFrame, keys: list[str]) -> tuple[int, int] | None:
    """Positions of the first row repeating an earlier row's keys, and of that earlier row."""
    repeated = frame.duplicated(keys).to_numpy().nonzero()[0]
    if len(repeated) == 0:
        return None
    row = int(repeated[0])
    same = (frame[keys] == frame[keys].iloc[row]).all(axis=1).to_numpy().nonzero()[0]
    return row, int(same[0])


def require_file(path: Path) -> None:
    """Raise IngestError unless ``path`` is an existing file (or ``-``, standard input)."""
    if formats.is_stdin(path):
        return
    if not path.exists():
        raise IngestError(str(path), None, "no such file")
    if path.is_dir():
        raise IngestError(str(path), None, "is a directory, not a file")


def _unreadable(path: Path, error: BaseException) -> IngestError:
    return IngestError(str(path), None, f"cannot read the file: {error}")


@contextmanager
def bulk_session(wh: Warehouse) -> Iterator[None]:
    """Settings of a bulk ingest: rows in any order, DuckDB's memory bounded.

    Ranks are computed, never taken from the line order, so insertion order does not matter,
    and without it DuckDB materialises and sorts in parallel. A warehouse file's DuckDB
    keeps at most INGEST_MEMORY while ingesting: the rows of the open transaction are
    written to the file as they come, and the staged cache rows and their sort spill to
    DuckDB's temporary directory beyond it, so the peak does not grow with the input.
    Enter it outside the ingest's transaction: a failed statement aborts the transaction,
    and the settings can only be put back after the rollback (inside a caller's own
    transaction they stay until then).
    """
    ((order, limit),) = wh.con.execute(
        "SELECT current_setting('preserve_insertion_order'), current_setting('memory_limit')"
    ).fetchall()
    wh.con.execute("SET preserve_insertion_order = false")
    if wh.path != ":memory:":
        wh.con.execute(f"SET memory_limit = '{INGEST_MEMORY}'")
    try:
        yield
    finally:
        # in an aborted transaction the settings cannot be put back; the rollback does that
        with suppress(duckdb.TransactionException):
            wh.con.execute("SET preserve_insertion_order = $value", {"value": bool(order)})
            wh.con.execute(f"SET memory_limit = '{limit}'")


# What a bulk ingest's process keeps of the memory it frees (keep_freed_memory): glibc's
# mallopt M_TRIM_THRESHOLD and M_MMAP_THRESHOLD (at most 32 MiB), and DuckDB's block allocator.
KEEP_FREED = 256 << 20
KEEP_MMAP_BELOW = 32 << 20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h


def keep_freed_memory(wh: Warehouse) -> None:
    """Let this process reuse the memory a bulk ingest frees instead of handing it back.

    Reading a run file allocates and frees tens of megabytes (its lines, ranks, judged rows,
    DuckDB's blocks for the rows stored). By default glibc gives such blocks back to the
    system when they are freed, and the next file's first touch of every page costs a page
    fault: on L (25 M lines) 1.2 M faults and about 4 s of system time. Kept, the next file
    reuses them: 0.7 M faults, about 1 CPU s less (bench/scale.py measures the whole). The
    settings hold for the rest of the process (DuckDB's block memory, KEEP_FREED, is never
    returned), so the CLI, whose process ends with the command, asks for them; a library
    call does not change its caller's allocator. Elsewhere than glibc only DuckDB's is set.
    """
    import ctypes
    import platform

    if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc":
        with suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None)
            libc.mallopt(_M_MMAP_THRESHOLD, KEEP_MMAP_BELOW)
            libc.mallopt(_M_TRIM_THRESHOLD, KEEP_FREED)
    if wh.path != ":memory:":
        wh.con.execute("SET block_allocator_memory = $size", {"size": f"{KEEP_FREED >> 20}MiB"})


class Spill:
    """Temporary files of one ingest, under ``$TMPDIR/evalwh-ingest-PID-*``.

    Made only when needed (standard input, a pipe, a gzipped file the general path reads),
    deleted at the end. A killed ingest cannot delete its own, so the next one removes those
    of processes that no longer run.
    """

    PREFIX = "evalwh-ingest-"

    def __init__(self) -> None:
        self.folder: Path | None = None
        self.count = 0

    def new(self, suffix: str = ".txt") -> Path:
        """A new file name in the folder (made at the first call)."""
        if self.folder is None:
            remove_leftovers()
            self.folder = Path(tempfile.mkdtemp(prefix=f"{self.PREFIX}{os.getpid()}-"))
        self.count += 1
        return self.folder / f"{self.count}{suffix}"

    def copy(self, path: Path) -> Path:
        """Standard input or a pipe copied once to a file here (see formats.copy_stream)."""
        target = self.new()
        try:
            formats.copy_stream(path, target)
        except OSError as error:
            raise _unreadable(path, error) from None
        return target

    def close(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


def remove_leftovers() -> None:
    """Delete the temporary folders of ingests whose process is gone (killed ones)."""
    for folder in Path(tempfile.gettempdir()).glob(f"{Spill.PREFIX}*"):
        pid = folder.name[len(Spill.PREFIX) :].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            pass  # alive, or not ours to judge


def _drop_staging(wh: Warehouse) -> None:
    wh.con.execute("DROP VIEW IF EXISTS staged_ranking")
    wh.con.execute("DROP TABLE IF EXISTS staged_lines")


# -- runs: bookkeeping ----------------------------------------------------------------------


@dataclass
class RunFile:
    """One run file on its way in: sniffed at once, scanned in a worker thread later."""

    path: Path  # as given
    run_id: str
    first_tag: str
    delimiter: str
    source: Path | None = None  # what is read: the path, or the copy of standard input or a pipe
    scan: Future[formats.Scan] | None = None
    copy: Path | None = None  # the decompressed copy the scan writes, for a .gz file
    status: str = "ingested"

    @property
    def label(self) -> str:
        return formats.label(self.path)

    @property
    def readable(self) -> Path:
        """The file to read: the path, or the copy of standard input or a pipe."""
        return self.source if self.source is not None else self.path

    @property
    def text(self) -> Path:
        """The file DuckDB reads: the plain copy of a gzipped file once scanned, or the file."""
        return self.copy if self.copy is not None else self.readable

    def bad_line(self, *, ignore_extra_fields: bool, one_tag: bool) -> IngestError:
        """The error naming this file's first bad line (formats.locate_run_error)."""
        return formats.locate_run_error(
            self.text, ignore_extra_fields=ignore_extra_fields, one_tag=one_tag, label=self.label
        )

    def scanned(self) -> formats.Scan:
        """The scan of the file, waiting for its thread; read errors become IngestError."""
        assert self.scan is not None, "scan the file before asking for it"
        try:
            return self.scan.result()
        except READ_ERRORS as error:
            raise _unreadable(self.path, error) from None


class Scanner:
    """Scans run files in two worker threads, a batch ahead of DuckDB.

    A gzipped file is decompressed once, by its scan, into a temporary plain copy that DuckDB
    then reads: decompressing twice (for the hash, then in DuckDB) cost a tenth of a TREC-8
    ingest. Scanning only one batch ahead bounds the temporary space to about two batches.
    """

    def __init__(self, spill: Spill) -> None:
        self.pool = ThreadPoolExecutor(max_workers=2)
        self.spill = spill

    def submit(self, files: list[RunFile], *, copy: bool) -> None:
        """Start scanning ``files`` (each once); gzipped ones get a plain copy if ``copy``."""
        for file in files:
            if file.scan is not None:
                continue
            if copy and file.readable.suffix == ".gz":
                file.copy = self.spill.new()
            file.scan = self.pool.submit(formats.scan, file.readable, file.copy)

    def release(self, files: list[RunFile]) -> None:
        """Delete the plain copies of files DuckDB has read."""
        for file in files:
            if file.copy is not None:
                file.copy.unlink(missing_ok=True)

    def close(self) -> None:
        """Stop pending scans, wait for running ones (the spill deletes the copies)."""
        self.pool.shutdown(wait=True, cancel_futures=True)


def _stored_runs(wh: Warehouse, collection: str) -> dict[str, tuple[str, int]]:
    """sha256 and line count of each stored run of the collection."""
    rows = wh.con.execute(
        "SELECT run_id, sha256, line_count FROM runs WHERE collection_id = ?", [collection]
    ).fetchall()
    return {run_id: (digest, lines) for run_id, digest, lines in rows}


def insert_runs(wh: Warehouse, rows: list[list[Any]]) -> None:
    """Add runs rows: (collection_id, run_id, tag, source_file, sha256, line_count) each.

    One statement over the columns as lists (executemany costs a round trip per row).
    """
    if rows:
        names = ("c", "r", "t", "s", "h", "n")
        columns = zip(names, zip(*rows, strict=True), strict=True)
        wh.con.execute(
            "INSERT INTO runs (collection_id, run_id, tag, source_file, sha256, line_count)"
            " SELECT unnest($c), unnest($r), unnest($t), unnest($s), unnest($h), unnest($n)",
            {name: list(values) for name, values in columns},
        )


def _delete_run(wh: Warehouse, collection: str, run_id: str) -> None:
    """Delete a stored run: its rows and cache by key, then its lists, builds and entry.

    Its (topic, document) pairs are noted: :func:`_drop_unused_pairs` drops, once the
    command's deletions are done, those no other run's line refers to.
    """
    key = {"collection_id": collection, "run_id": run_id}
    wh.run(sql.query(_INGEST, "delete_run"), key)


def _drop_unused_pairs(wh: Warehouse) -> None:
    """Drop the pairs of the runs deleted by this command that no line refers to any more.

    Before any new key is given (the reader's dictionary is loaded after it).
    """
    wh.run(sql.query(_INGEST, "drop_unused_pairs"))


def _clash(label: str, run_id: str, collection: str) -> IngestError:
    return IngestError(
        label,
        None,
        f"run {run_id!r} already exists in collection {collection!r} with different "
        "content; use --replace to replace it",
    )


def _sniff(path: Path, run_id: str | None, ignore_extra_fields: bool, spill: Spill) -> RunFile:
    """Read the first data line of a run file for its delimiter and tag.

    Standard input and pipes are copied to a file first (they can be read only once).
    """
    source = spill.copy(path) if formats.needs_copy(path) else None
    name = formats.label(path)
    try:
        first = formats.first_data_line(source or path)
    except READ_ERRORS as error:
        raise _unreadable(path, error) from None
    if first is None:
        raise IngestError(name, None, "the file holds no run lines")
    count = len(first.fields)
    if count < formats.RUN_FIELDS or (count > formats.RUN_FIELDS and not ignore_extra_fields):
        raise formats.locate_run_error(
            source or path,
            ignore_extra_fields=ignore_extra_fields,
            one_tag=run_id is None,
            label=name,
        )
    tag = first.fields[formats.RUN_FIELDS - 1]
    return RunFile(path, run_id if run_id is not None else tag, tag, first.delimiter, source)


def group_batches(files: list[RunFile]) -> list[list[RunFile]]:
    """Group files of the same sniffed delimiter into batches of about _BATCH_BYTES of text."""
    by_delimiter: dict[str, list[RunFile]] = {}
    for file in files:
        by_delimiter.setdefault(file.delimiter, []).append(file)
    batches: list[list[RunFile]] = []
    for group in by_delimiter.values():
        batch: list[RunFile] = []
        size = 0
        for file in group:
            batch.append(file)
            ratio = GZIP_RATIO if file.readable.suffix == ".gz" else 1
            size += file.readable.stat().st_size * ratio
            if size >= _BATCH_BYTES:
                batches.append(batch)
                batch, size = [], 0
        if batch:
            batches.append(batch)
    return batches


# -- runs: files ----------------------------------------------------------------------------


def prepare_run_files(
    paths: list[Path], *, run_id: str | None, ignore_extra_fields: bool, spill: Spill
) -> list[RunFile]:
    """Check the file list and sniff each file's delimiter and tag (which names the run)."""
    if not paths:
        raise IngestError("runs", None, "no run files given")
    if run_id is not None and len(paths) != 1:
        raise IngestError(
            formats.label(paths[0]), None, "--run-id names one run; give exactly one file"
        )
    seen_paths: set[Path] = set()
    for path in paths:
        require_file(path)
        if path.resolve() in seen_paths:
            raise IngestError(formats.label(path), None, "the file is given twice")
        seen_paths.add(path.resolve())

    files = [_sniff(path, run_id, ignore_extra_fields, spill) for path in paths]
    owners: dict[str, str] = {}
    for file in files:
        if file.run_id in owners:
            raise IngestError(
                file.label,
                None,
                f"run {file.run_id!r} is also in {owners[file.run_id]}; run ids must be unique "
                "(the tag of the first line names the run)",
            )
        owners[file.run_id] = file.label
    return files


def ingest_run_files(
    wh: Warehouse,
    paths: list[Path],
    collection: str,
    *,
    run_id: str | None,
    replace: bool,
    ignore_extra_fields: bool,
    progress: Progress | None,
) -> list[IngestResult]:
    """Ingest run files inside the caller's transaction (see Warehouse.ingest_runs)."""
    spill = Spill()
    try:
        files = prepare_run_files(
            paths, run_id=run_id, ignore_extra_fields=ignore_extra_fields, spill=spill
        )
        return ingest_prepared(
            wh,
            files,
            collection,
            spill,
            run_id=run_id,
            replace=replace,
            ignore_extra_fields=ignore_extra_fields,
            progress=progress,
        )
    finally:
        spill.close()


def ingest_prepared(
    wh: Warehouse,
    files: list[RunFile],
    collection: str,
    spill: Spill,
    *,
    run_id: str | None,
    replace: bool,
    ignore_extra_fields: bool,
    progress: Progress | None,
    fill_cache: bool = True,
) -> list[IngestResult]:
    """Ingest prepared run files (:func:`prepare_run_files`) inside the caller's transaction.

    ``fill_cache=False`` leaves the evaluation cache alone (the direct evaluation's
    in-memory warehouse joins directly).
    """
    from evalwh.warehouse import IngestResult

    scanner = Scanner(spill)
    pool = ThreadPoolExecutor(max_workers=READ_AHEAD)
    stored_here: Stored | None = None
    try:
        # Runs already stored are decided first, on their content hash: unchanged, or
        # (with replace) deleted now and ingested again below.
        stored = _stored_runs(wh, collection)
        known = [f for f in files if f.run_id in stored]
        scanner.submit(known, copy=False)
        results: dict[str, IngestResult] = {}
        for file in known:
            digest, lines = stored[file.run_id]
            if file.scanned().sha256 == digest:
                results[file.label] = IngestResult(
                    "run", file.run_id, file.label, "unchanged", lines
                )
                continue
            if not replace:
                raise _clash(file.label, file.run_id, collection)
            _delete_run(wh, collection, file.run_id)
            file.status = "replaced"
        if any(f.status == "replaced" for f in known):
            _drop_unused_pairs(wh)

        # the order in which the general path used to meet the files (by delimiter), so
        # that of several bad files the same one is named
        pending = [f for f in files if f.label not in results]
        todo = [f for batch in group_batches(pending) for f in batch]
        cache = JudgedCache(wh, collection if fill_cache else None)
        module = runreader.reader()
        judged_by = cache.judgments(module) if module is not None else None
        stored_here = Stored(wh, collection, module, cache, spill)

        def read(file: RunFile) -> Prepared | str:
            """Read, rank, key and stage one file (in a worker); the reason if the reader leaves it."""
            if module is None:
                return "no reader"

            def rank(data: bytes, digest: bool = True) -> runreader.Ranked | str:
                return runreader.read_run(
                    module,
                    data,
                    delimiter=file.delimiter,
                    tag=file.first_tag,
                    judged_by=judged_by,
                    ignore_extra_fields=ignore_extra_fields,
                    digest=digest,
                    documents=stored_here.documents,
                )

            try:
                if _in_pieces(file):
                    pieces = stored_here.prepare_pieces(file, lambda piece: rank(piece, False))
                    if pieces is not None:
                        return pieces
                data = formats.read_bytes(file.readable)
            except READ_ERRORS:
                return "unreadable"  # the general path names the error
            ranked = rank(data)
            del data
            return ranked if isinstance(ranked, str) else stored_here.prepare(ranked)

        done = len(results)
        if progress:
            progress(done, len(files))
        if module is not None and todo:
            stored_here.load()
        ahead: deque[Future[Prepared | str]] = deque()

        def read_ahead(start: int) -> None:
            # a second file only while the two hold at most READ_BYTES of text between them
            while len(ahead) < READ_AHEAD and start + len(ahead) < len(todo):
                window = todo[start : start + len(ahead) + 1]
                if ahead and sum(_held_bytes(f) for f in window) > READ_BYTES:
                    break
                ahead.append(pool.submit(read, todo[start + len(ahead)]))

        general: list[str] = []
        for index, file in enumerate(todo):
            read_ahead(index)
            prepared = ahead.popleft().result()
            read_ahead(index + 1)
            if isinstance(prepared, Prepared):
                results[file.label] = stored_here.add(file, prepared)
                stored_here.flush(wait=False)
            else:
                # The general path gives keys in SQL after the stored ones: what is staged is
                # stored first, and files read ahead with the old keys are read again after.
                for future in ahead:
                    stored_here.discard(future.result())
                ahead.clear()
                stored_here.flush()
                scanner.submit([file], copy=True)
                (result,) = _ingest_batch(wh, [file], collection, run_id, ignore_extra_fields)
                scanner.release([file])
                if module is not None:
                    stored_here.load()
                results[file.label] = result
                general.append(file.run_id)
            done += 1
            if progress:
                progress(done, len(files))
        stored_here.flush()
        cache.finish(general, stored_here.runs)
        return [results[f.label] for f in files]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        if stored_here is not None:
            stored_here.close()
        scanner.close()


# The cache's rows in the order the evaluation reads them best (schema/010): relevant rows
# first, then the others by rank, in parts cut at the depths metrics usually ask for. Each
# part goes in with its own INSERT, so DuckDB's row groups hold rows of one part, and their
# min/max let a metric's "is_rel" or "rank <= k" skip the others: the order of a sort, at
# the cost of a pass.
RANK_CUTS = (10, 20, 100, 1000)
JUDGED_PARTS = tuple(f"judged{i}" for i in range(len(RANK_CUTS) + 2))


def _judged_parts(judged: Any, relevant: int, spans_from: int) -> dict[str, Any]:
    """A file's judged rows (relevant ones first) as the cache's rows, cut into JUDGED_PARTS.

    Documents judged with grade 0 at consecutive ranks below ``spans_from`` share one row,
    the first, with their number as ``span`` (schema/014_judged_spans.sql): a row continues
    the stretch above it when both have grade 0, are of the same list, and lie at
    consecutive ranks below ``spans_from`` with no judged document between them
    (judged_so_far one apart). Every other row stands alone. The rows that are not relevant
    then go to their part by rank: one stable sort by part (each part keeps the rows'
    (list, rank) order) and a slice a part.
    """
    others = judged.slice(relevant)
    rank = arrays.numbers(others["rank"])
    so_far = arrays.numbers(others["judged_so_far"])
    listed = arrays.numbers(others["list_key"])
    zero = arrays.numbers(others["gain"]) == 0
    follows = np.zeros(len(others), dtype=bool)
    follows[1:] = (
        zero[1:]
        & zero[:-1]
        & (rank[:-1] > spans_from)
        & (rank[1:] == rank[:-1] + 1)
        & (so_far[1:] == so_far[:-1] + 1)
        & (listed[1:] == listed[:-1])
    )
    starts = np.flatnonzero(~follows)
    spans = np.diff(np.append(starts, len(others))).astype(np.int32)
    part = np.searchsorted(np.asarray(RANK_CUTS), rank[starts], side="left")
    ends = np.cumsum(np.bincount(part, minlength=len(JUDGED_PARTS) - 1))
    order = np.argsort(part, kind="stable")
    others = others.take(arrays.int32s(starts[order])).append_column("span", arrays.int32s(spans[order]))
    out = {
        JUDGED_PARTS[0]: judged.slice(0, relevant).append_column(
            "span", arrays.int32s(np.ones(relevant, np.int32))
        )
    }
    for index, name in enumerate(JUDGED_PARTS[1:]):
        start = int(ends[index - 1]) if index else 0
        out[name] = others.slice(start, int(ends[index]) - start)
    return out


def _text_bytes(file: RunFile) -> int:
    """About how much text a run file holds (a gzipped one GZIP_RATIO times its size)."""
    try:
        size = file.readable.stat().st_size
    except OSError:
        return 0
    return size * GZIP_RATIO if file.readable.name.endswith(".gz") else size


def _in_pieces(file: RunFile) -> bool:
    """Whether a file is read in pieces (plain, and more than two pieces' worth)."""
    return not file.readable.name.endswith(".gz") and _text_bytes(file) > 2 * PIECE_BYTES


def _held_bytes(file: RunFile) -> int:
    """How much of a file's text its reading holds at a time."""
    return PIECE_BYTES if _in_pieces(file) else _text_bytes(file)


@dataclass
class Prepared:
    """One run file the reader ranked, keyed and staged (:meth:`Stored.prepare`)."""

    sha256: str
    lines: int
    lists: list[tuple[Any, int]]  # per piece: its topics (query_id, num_ret), their first key
    build_key: int | None  # its judged rows' build, None without judgments
    files: dict[str, list[str]]  # its staged Parquet files by kind (a file a piece)


class Stored:
    """Stores the files the reader ranked under their keys, staged on disk until one insert.

    The warehouse keeps run lines by key (schema/013_keyed_results.sql): each ranked list a
    new ``list_key``, each (topic, document) pair its ``doc_key``, each cache build its
    ``build_key``. The pairs already stored for the collection are loaded into the reader's
    dictionary (``_runlines.documents``), which gives every line its key and new pairs the
    next ones. :meth:`prepare` (in a worker thread, one per file read at a time) writes a
    file's rows, new pairs and judged rows, all numbers but the new pairs' ids, as Parquet
    files into the spill folder, so memory holds the files being read whatever their
    number; :meth:`flush` then stores everything with one INSERT per table. (Rows appended
    by many statements of one transaction stay in DuckDB's memory until the commit, and so
    do the Arrow buffers of their strings; one statement over Parquet streams within
    DuckDB's memory limit.) The general path gives keys in SQL after the stored ones, so
    before it everything staged is flushed, and the dictionary loaded again after it.
    """

    def __init__(
        self, wh: Warehouse, collection: str, module: Any, cache: JudgedCache, spill: Spill
    ) -> None:
        self.wh = wh
        self.collection = collection
        self.module = module
        self.cache = cache
        self.spill = spill
        self.lock = threading.Lock()  # the key counters and the spill folder's names
        self.documents: Any = None  # the dictionary capsule (load)
        self.next_list = 0
        self.next_build = 0
        self.spans_from = 0  # the cache's stretches of grade 0 begin below this rank (load)
        self.runs: list[str] = []  # every run stored so far
        self.staged: dict[str, list[str]] = {
            kind: [] for kind in ("rows", "documents", *JUDGED_PARTS)
        }
        self.lists: list[Any] = []  # the staged files' run_topics rows (Arrow)
        self.builds: list[list[Any]] = []  # the staged judged_builds rows
        self.entries: list[list[Any]] = []  # the staged files' runs rows
        self.lines = 0  # run lines staged
        self.flusher = ThreadPoolExecutor(max_workers=1)
        self.flushing: Future[None] | None = None

    def load(self) -> None:
        """Load the dictionary and the next keys from the warehouse (before files are read)."""
        ((next_key, next_list, next_build, self.spans_from),) = self.wh.con.execute(
            "SELECT (SELECT coalesce(max(doc_key), 0) + 1 FROM documents),"
            " (SELECT coalesce(max(list_key), 0) + 1 FROM run_topics),"
            " (SELECT coalesce(max(build_key), 0) + 1 FROM judged_builds),"
            " judged_spans_from()"  # the cache's stretches begin below it (schema/014)
        ).fetchall()
        pairs = self.wh.con.sql(
            "SELECT query_id, doc_id, doc_key FROM documents WHERE collection_id = $collection",
            params={"collection": self.collection},
        ).to_arrow_table()
        self.documents = runreader.documents(self.module, pairs, int(next_key))
        self.next_list, self.next_build = int(next_list), int(next_build)

    def build(self) -> int:
        """A new build key (thread-safe)."""
        with self.lock:
            self.next_build += 1
            return self.next_build - 1

    def prepare(self, ranked: runreader.Ranked, build_key: int | None = None) -> Prepared:
        """Stage one ranked and keyed file, or piece of one (thread-safe).

        ``build_key``: its judged rows' build (a piece's is its file's), by default a new one.
        """
        import pyarrow as pa
        import pyarrow.parquet as pq

        rows = ranked.rows  # keyed by the reader: query_id (the topic's index), doc_key, ...
        if ranked.judged is not None and build_key is None:
            build_key = self.build()
        with self.lock:
            first_list = self.next_list
            self.next_list += len(ranked.topics)
            kinds = ("rows", "documents", *(JUDGED_PARTS if ranked.judged is not None else ()))
            names = {kind: str(self.spill.new(".parquet")) for kind in kinds}

        def list_keys(topic: pa.Array) -> pa.Array:
            return arrays.int32s(arrays.numbers(topic) + np.int32(first_list))

        tables = {
            "rows": rows.set_column(
                0, "list_key", list_keys(rows["query_id"].combine_chunks().indices)
            ),
            "documents": ranked.added,
        }
        if ranked.judged is not None:
            judged = runreader.judged_by_topic(ranked.judged)
            judged = judged.set_column(judged.num_columns - 1, "list_key", list_keys(judged["topic"]))
            judged = judged.append_column(
                "build_key", arrays.int32s(np.full(len(judged), build_key, np.int32))
            )
            tables.update(_judged_parts(judged, ranked.relevant, self.spans_from))
        for kind, table in tables.items():
            # read back once: no dictionary, no compression, no statistics, and no definition
            # levels where a column has no NULL (they cost as much as the numbers)
            schema = pa.schema([f.with_nullable(table[f.name].null_count > 0) for f in table.schema])
            pq.write_table(
                table.cast(schema),
                names[kind],
                compression="none",
                use_dictionary=False,
                write_statistics=False,
            )
        files = {kind: [name] for kind, name in names.items()}
        return Prepared(ranked.sha256, ranked.lines, [(ranked.topics, first_list)], build_key, files)

    def prepare_pieces(self, file: RunFile, read: Callable[[bytes], runreader.Ranked | str]) -> Prepared | str | None:
        """A large plain file read, ranked, keyed and staged a piece of whole topics at a time.

        The reader's memory then follows the piece, not the file. ``read`` ranks one piece.
        Returns the reason if the reader leaves a piece (the file goes the general way), and
        None if a topic is in two pieces (the file is read whole). What the pieces staged is
        dropped then, but for their new (topic, document) pairs: a key, once given, is stored.
        """
        digest = hashlib.sha256()
        seen: set[str] = set()
        done: list[Prepared] = []
        build_key = self.build() if self.cache.primary is not None else None
        with open(file.readable, "rb", buffering=0) as handle:
            for piece in runreader.pieces(handle.fileno(), file.delimiter.encode(), PIECE_BYTES):
                digest.update(piece)
                ranked = read(piece)
                del piece
                if isinstance(ranked, str):
                    self.discard(done)
                    return ranked
                topics = ranked.topics["query_id"].to_pylist()
                if not seen.isdisjoint(topics):
                    # (the reader keyed this piece too: its new pairs stay staged with the others')
                    self.discard([*done, self.prepare(ranked, build_key)])
                    return None
                seen.update(topics)
                done.append(self.prepare(ranked, build_key))
        if not done:
            return "no lines"
        files = {kind: [n for p in done for n in p.files.get(kind, [])] for kind in done[0].files}
        return Prepared(
            digest.hexdigest(),
            sum(p.lines for p in done),
            [segment for p in done for segment in p.lists],
            build_key,
            files,
        )

    def add(self, file: RunFile, prepared: Prepared) -> IngestResult:
        """Record one prepared file, to be stored by :meth:`flush`."""
        import pyarrow as pa

        from evalwh.warehouse import IngestResult

        with self.lock:
            for kind, names in prepared.files.items():
                self.staged[kind].extend(names)
        for topics, first_list in prepared.lists:
            n = len(topics)
            self.lists.append(
                pa.table(
                    {
                        "run_id": arrays.repeated(file.run_id, n),
                        "query_id": topics["query_id"],
                        "num_ret": topics["num_ret"],
                        "list_key": arrays.int32s(np.arange(first_list, first_list + n)),
                    }
                )
            )
        source = os.path.basename(file.label)
        self.entries.append(
            [self.collection, file.run_id, file.first_tag, source, prepared.sha256, prepared.lines]
        )
        self.lines += prepared.lines
        if prepared.build_key is not None:
            self.builds.append([file.run_id, prepared.sha256, prepared.build_key])
        self.runs.append(file.run_id)
        return IngestResult("run", file.run_id, file.label, file.status, prepared.lines)

    def discard(self, prepared: Prepared | str | None | list[Prepared]) -> None:
        """Drop what was staged for a file (or pieces) that is read again or goes the general way.

        Its new (topic, document) pairs stay staged: the dictionary gave their keys, which
        other files read at the same time may have used.
        """
        for item in prepared if isinstance(prepared, list) else [prepared]:
            if not isinstance(item, Prepared):
                continue
            for kind, names in item.files.items():
                if kind == "documents":
                    with self.lock:
                        self.staged[kind].extend(names)
                    continue
                for name in names:
                    Path(name).unlink(missing_ok=True)

    def flush(self, *, wait: bool = True) -> None:
        """Store everything staged (inside the caller's transaction).

        ``wait=False``: only when FLUSH_LINES lines are staged, and in the background, while
        the files after them are read; the connection is the flusher's until :meth:`wait`.
        """
        if not wait and self.lines < FLUSH_LINES:
            return
        self.wait()
        with self.lock:
            staged = {kind: list(files) for kind, files in self.staged.items()}
            for files in self.staged.values():
                files.clear()
        batch = (staged, list(self.lists), list(self.builds), list(self.entries))
        self.lists.clear()
        self.builds.clear()
        self.entries.clear()
        self.lines = 0
        if wait:
            self._store(*batch)
        else:
            self.flushing = self.flusher.submit(self._store, *batch)

    def wait(self) -> None:
        """Wait for the flush in the background, if any (its error is raised here)."""
        if self.flushing is not None:
            flushing, self.flushing = self.flushing, None
            flushing.result()

    def close(self) -> None:
        """Wait for the background flush whatever happened (before a rollback) and stop it."""
        with suppress(Exception):
            self.wait()
        self.flusher.shutdown(wait=True)

    def _store(
        self,
        staged: dict[str, list[str]],
        lists: list[Any],
        builds: list[list[Any]],
        entries: list[list[Any]],
    ) -> None:
        import pyarrow as pa

        insert_runs(self.wh, entries)
        if lists:
            key = {"collection_id": self.collection}
            with registered(self.wh, {"ingest_topics": pa.concat_tables(lists)}):
                self.wh.run(
                    sql.query(_INGEST, "insert_ranked"),
                    {**key, "rows": staged["rows"], "documents": staged["documents"]},
                )
        if builds:
            self.cache.add(builds, [staged[part] for part in JUDGED_PARTS])
        for files in staged.values():
            for name in files:
                Path(name).unlink(missing_ok=True)


@contextmanager
def registered(wh: Warehouse, tables: dict[str, Any]) -> Iterator[None]:
    """Arrow tables (or DataFrames) visible to DuckDB under these names for the duration."""
    for name, table in tables.items():
        wh.con.register(name, table)
    try:
        yield
    finally:
        for name in tables:
            wh.con.unregister(name)


class JudgedCache:
    """Fills the evaluation cache (judged_results, schema/008) of newly ingested runs.

    The evaluation reads a run's judged rows, with their running counts, from that cache
    for every ingested qrels set at the default threshold (evalwh.evaluation.build_context);
    filled here, at ingest, the first evaluation reads it as the tenth does and writes
    nothing. The rows of one qrels set (``default`` if there is one) come from the reader,
    which looks every line up while it ranks; other sets, and runs the general path read,
    are joined in SQL (the evaluation's own cache refresh, queries/context/05_cache_refresh).
    """

    def __init__(self, wh: Warehouse, collection: str | None) -> None:
        """The cache of ``collection``'s ingested qrels sets (None: fill nothing)."""
        self.wh = wh
        self.collection = collection or ""
        rows = wh.con.execute(
            "SELECT qrels_id FROM qrels_sets WHERE collection_id = ? AND kind = 'ingested'"
            " ORDER BY qrels_id <> 'default', qrels_id",
            [collection],
        ).fetchall() if collection is not None else []
        self.sets = [r[0] for r in rows]
        self.primary: str | None = None
        self.fingerprint: str | None = None  # the primary set's, once needed
        self.built: set[str] = set()  # runs whose judged rows the reader stored

    def judgments(self, module: Any) -> Any:
        """The primary qrels set's judgments for the reader, or None without qrels."""
        if not self.sets:
            return None
        # the reader carries integer grades: fractional ones (if qrels ever hold them) are
        # left to the SQL join, which keeps the grade as stored
        fractional = self.wh.con.execute(
            "SELECT count(*) FROM qrels WHERE collection_id = ? AND qrels_id = ?"
            " AND relevance <> round(relevance)",
            [self.collection, self.sets[0]],
        ).fetchall()[0][0]
        if fractional:
            return None
        self.primary = self.sets[0]
        return runreader.judgments(module, self.wh, self.collection, self.primary)

    def add(self, builds: list[list[Any]], parts: list[list[str]]) -> None:
        """Store the reader's judged rows of the primary set (Parquet) and their builds.

        ``builds``: ``run_id, sha256, build_key`` of each run the rows are of; ``parts``: the
        staged files of each part of JUDGED_PARTS, stored in that order.
        """
        assert self.primary is not None
        if self.fingerprint is None:
            self.fingerprint = fingerprint(self.wh, self.collection, self.primary)
        run_ids, sha256s, build_keys = (list(column) for column in zip(*builds, strict=True))
        self.wh.run(
            sql.query(_INGEST, "insert_judged"),
            {
                "collection_id": self.collection,
                "qrels_id": self.primary,
                "fingerprint": self.fingerprint,
                "run_ids": run_ids,
                "sha256s": sha256s,
                "build_keys": build_keys,
            },
        )
        for files in parts:
            self.wh.run(sql.query(_INGEST, "insert_judged_rows"), {"files": files})
        self.built.update(run_ids)

    def finish(self, general: list[str], read: list[str] | None = None) -> None:
        """Join what the reader did not judge in SQL: other sets, the general path's runs."""
        read = read or []
        for qrels_id in self.sets:
            runs = [r for r in read if qrels_id != self.primary or r not in self.built] + general
            if runs:
                refresh_cache(self.wh, self.collection, qrels_id, runs)


def fingerprint(wh: Warehouse, collection: str, qrels_id: str) -> str:
    """The content fingerprint of a qrels set that cache entries are built from."""
    key = {"collection_id": collection, "qrels_id": qrels_id}
    ((value,),) = wh.run(sql.query("evalwh.queries.context", "fingerprint"), key).fetchall()
    return str(value)


def refresh_cache(wh: Warehouse, collection: str, qrels_id: str, runs: list[str] | None) -> None:
    """Build the cached judged rows of ``runs`` (None: every run) for one ingested qrels set.

    The evaluation's own steps (evalwh.evaluation.context_steps) up to the cache refresh, so
    the rows are exactly those the first evaluation would have written.
    """
    from evalwh.evaluation import Options, context_steps

    built_from = fingerprint(wh, collection, qrels_id)
    steps = context_steps(collection, runs, Options(qrels_id=qrels_id), fingerprint=built_from)
    for name, params in steps[: steps.index(("05_source_cache", {}))]:
        wh.run(sql.query("evalwh.queries.context", name), params)


def _staging_failed(
    batch: list[RunFile], error: Exception, ignore_extra_fields: bool, one_tag: bool
) -> IngestError:
    """DuckDB could not read a batch (bad UTF-8, a broken gzip stream): name the file and line."""
    for file in batch:
        file.scanned()  # a broken gzip stream is named here
        located = file.bad_line(ignore_extra_fields=ignore_extra_fields, one_tag=one_tag)
        if located.line is not None:
            return located
    names = ", ".join(f.label for f in batch)
    return IngestError(names, None, f"DuckDB could not read the file(s): {error}")


def _run_checks(wh: Warehouse) -> dict[int, tuple[Any, ...]]:
    """run_checks.sql by file index: line count, bad fields, bad scores, other tags, duplicates."""
    return {row[0]: row for row in wh.run(sql.query(_INGEST, "run_checks")).fetchall()}


def _ingest_batch(
    wh: Warehouse,
    batch: list[RunFile],
    collection: str,
    run_id: str | None,
    ignore_extra_fields: bool,
) -> list[IngestResult]:
    """Stage, check, rank and store one batch of run files (all share a delimiter)."""
    from evalwh.warehouse import IngestResult

    one_tag = run_id is None
    delimiter = batch[0].delimiter
    # The scans decide how DuckDB reads each file: unreadable files (NUL bytes, stray \r) are
    # rejected before it does, and files holding other whitespace than the delimiter go
    # through the any-whitespace split (as do files whose lines the fast reader cannot split,
    # which the checks find).
    general: set[int] = set()
    for index, file in enumerate(batch):
        scan = file.scanned()
        if scan.unreadable or formats.first_long_line(file.text.read_bytes()):
            raise file.bad_line(ignore_extra_fields=ignore_extra_fields, one_tag=one_tag)
        if scan.fast_delimiter != delimiter:
            general.add(index)
    try:
        wh.run(
            sql.query(_INGEST, "stage_run_lines"),
            {
                "files": [str(f.text) for f in batch],
                "delim": delimiter,
                "tags": [f.first_tag for f in batch],
                "ignore_extra_fields": ignore_extra_fields,
            },
        )
    except QueryError as error:
        raise _staging_failed(batch, error, ignore_extra_fields, one_tag) from None
    restaged: set[int] = set()
    while True:
        if general - restaged:
            chosen = sorted(general - restaged)
            wh.run(
                sql.query(_INGEST, "restage_run_lines"),
                {
                    "files": [str(batch[i].text) for i in chosen],
                    "file_ids": chosen,
                    "tags": [batch[i].first_tag for i in chosen],
                    "ignore_extra_fields": ignore_extra_fields,
                },
            )
            restaged.update(chosen)
        checks = _run_checks(wh)
        # bad field counts in a file read by the fast reader: read it again the general way
        unsplit = {index for index, row in checks.items() if row[2]} - restaged
        if not unsplit:
            break
        general |= unsplit

    rows: list[list[Any]] = []
    for index, file in enumerate(batch):
        if index not in checks:
            raise IngestError(file.label, None, "the file holds no run lines")
        _, line_count, bad_fields, bad_scores, other_tags, duplicates = checks[index]
        if bad_fields or bad_scores or duplicates or (other_tags and one_tag):
            raise file.bad_line(ignore_extra_fields=ignore_extra_fields, one_tag=one_tag)
        tag = file.first_tag if other_tags == 0 else None
        source = os.path.basename(file.label)
        rows.append([collection, file.run_id, tag, source, file.scanned().sha256, line_count])
    insert_runs(wh, rows)
    wh.run(
        sql.query(_INGEST, "insert_run_results"),
        {"collection_id": collection, "run_ids": [f.run_id for f in batch]},
    )
    wh.run(sql.query(_INGEST, "store_ranked"), {})
    _drop_staging(wh)
    return [
        IngestResult("run", f.run_id, f.label, f.status, row[-1])
        for f, row in zip(batch, rows, strict=True)
    ]


# -- runs: DataFrames -----------------------------------------------------------------------


def _same_ranks_given(wh: Warehouse, collection: str, run_id: str, part: pd.DataFrame) -> bool:
    """Whether the stored run gives back a frame's rank column as it is now.

    A frame's digest is its (topic, document, score) content (frame_sha256 of all but
    rank_given, whatever the rows' order), so a frame whose rank column alone changed is
    checked here, or it would be taken for unchanged and keep the ranks stored before. (A
    frame without a rank column is numbered in its own order, which is not content.)
    """
    with registered(wh, {"frame_ranks": part[["query_id", "doc_id", "rank_given"]]}):
        key = {"collection_id": collection, "run_id": run_id}
        ((changed,),) = wh.run(sql.query(_INGEST, "changed_ranks_given"), key).fetchall()
    return changed == 0


def ingest_run_frame(
    wh: Warehouse, frame: pd.DataFrame, collection: str, *, run_id: str | None, replace: bool
) -> list[IngestResult]:
    """Ingest runs from a DataFrame (``query_id, doc_id, score[, run_id][, rank]``).

    Rows are numbered from 1 in error messages (``DataFrame:3: ...``), in frame order.
    """
    import numpy as np
    import pandas as pd

    from evalwh.warehouse import IngestResult

    frame = standard_columns(frame, "run")
    if "run_id" not in frame.columns and run_id is None:
        raise IngestError("DataFrame", None, "no run_id column; pass run_id= to name the run")
    if frame.empty:
        raise IngestError("DataFrame", None, "the DataFrame holds no run rows")
    check_frame_ids(frame, ["run_id", "query_id", "doc_id"] if run_id is None else ["query_id", "doc_id"])
    if run_id is not None:
        check_frame_ids(pd.DataFrame({"run_id": [run_id]}), ["run_id"], label="run_id argument")
    staged = pd.DataFrame(
        {
            "run_id": frame["run_id"].astype(str) if run_id is None else run_id,
            "query_id": frame["query_id"].astype(str),
            "doc_id": frame["doc_id"].astype(str),
        }
    )
    score = pd.to_numeric(frame["score"], errors="coerce").astype("float64")
    bad = ~np.isfinite(score.to_numpy())
    if bad.any():
        row = int(bad.nonzero()[0][0])
        raise IngestError(
            "DataFrame", row + 1, f"score {_show(frame['score'].iloc[row])} is not a finite number"
        )
    staged["score"] = score.to_numpy()
    ranks_numbered = "rank" not in frame.columns  # (by frame order: a reordered frame is unchanged)
    if not ranks_numbered:
        staged["rank_given"] = frame["rank"].astype(str).to_numpy()
    else:
        staged["rank_given"] = staged.groupby(["run_id", "query_id"]).cumcount().add(1).astype(str)
    duplicate = _first_duplicate(staged, ["run_id", "query_id", "doc_id"])
    if duplicate is not None:
        row, first = duplicate
        raise IngestError(
            "DataFrame",
            row + 1,
            f"document {staged['doc_id'].iloc[row]!r} appears twice for topic "
            f"{staged['query_id'].iloc[row]!r} in run {staged['run_id'].iloc[row]!r} "
            f"(first on row {first + 1})",
        )

    stored = _stored_runs(wh, collection)
    results: list[IngestResult] = []
    accepted: list[str] = []
    for rid, part in staged.groupby("run_id", sort=True):
        rid = str(rid)
        digest = frame_sha256(part.drop(columns=["rank_given"]))
        status = "ingested"
        if rid in stored:
            if stored[rid][0] == digest and (ranks_numbered or _same_ranks_given(wh, collection, rid, part)):
                results.append(IngestResult("run", rid, "DataFrame", "unchanged", stored[rid][1]))
                continue
            if not replace:
                raise _clash("DataFrame", rid, collection)
            _delete_run(wh, collection, rid)
            status = "replaced"
        results.append(IngestResult("run", rid, "DataFrame", status, len(part)))
        accepted.append(rid)
        insert_runs(wh, [[collection, rid, rid, "DataFrame", digest, len(part)]])
    if any(r.status == "replaced" for r in results):
        _drop_unused_pairs(wh)
    if accepted:
        chosen = staged[staged["run_id"].isin(accepted)].copy()
        chosen["file_index"] = chosen["run_id"].map({r: i for i, r in enumerate(accepted)})
        wh.con.register("staged_frame", chosen)
        try:
            wh.con.execute(
                "CREATE OR REPLACE TEMP TABLE staged_lines AS"
                " SELECT CAST(file_index AS INTEGER) AS file_index, query_id, doc_id,"
                " rank_given, score, true AS fields_ok, true AS score_ok, true AS tag_ok"
                " FROM staged_frame"
            )
            wh.run(
                sql.query(_INGEST, "insert_run_results"),
                {"collection_id": collection, "run_ids": accepted},
            )
            wh.run(sql.query(_INGEST, "store_ranked"), {})
        finally:
            wh.con.unregister("staged_frame")
        _drop_staging(wh)
        JudgedCache(wh, collection).finish(accepted)  # the evaluation cache, joined in SQL
    return results


# -- qrels ----------------------------------------------------------------------------------


def _stage_qrels(wh: Warehouse, path: Path, delimiter: str | None) -> None:
    """Stage a qrels file: split by DuckDB's CSV reader where it reads it right, else by regex."""
    if delimiter is not None:
        wh.run(sql.query(_INGEST, "stage_qrels_fast"), {"files": [str(path)], "delim": delimiter})
        ((unsure,),) = wh.con.execute("SELECT bool_or(split_unsure) FROM staged_qrels").fetchall()
        if not unsure:
            return
    wh.run(sql.query(_INGEST, "stage_qrels"), {"files": [str(path)]})


def ingest_qrels_source(
    wh: Warehouse,
    source: str | os.PathLike[str] | pd.DataFrame,
    collection: str,
    *,
    qrels_id: str,
    replace: bool,
) -> IngestResult:
    """Ingest a qrels file or DataFrame inside the caller's transaction.

    See :meth:`evalwh.warehouse.Warehouse.ingest_qrels`.
    """
    if isinstance(source, (str, os.PathLike)):
        spill = Spill()
        try:
            path = Path(source)
            require_file(path)
            readable = spill.copy(path) if formats.needs_copy(path) else path
            return _ingest_qrels(wh, readable, formats.label(path), collection, qrels_id, replace)
        finally:
            spill.close()
    return _ingest_qrels(wh, source, "DataFrame", collection, qrels_id, replace)


def _ingest_qrels(
    wh: Warehouse,
    source: Path | pd.DataFrame,
    label: str,
    collection: str,
    qrels_id: str,
    replace: bool,
) -> IngestResult:
    """Ingest a qrels file (``source``, named ``label`` in messages) or DataFrame."""
    from evalwh.warehouse import IngestResult

    if isinstance(source, Path):
        path = source
        try:
            scan = formats.scan(path)
            too_long = formats.first_long_line(formats.read_bytes(path))
        except READ_ERRORS as error:
            raise IngestError(label, None, f"cannot read the file: {error}") from None
        if scan.unreadable or too_long:
            raise formats.locate_qrels_error(path, label=label)
        digest = scan.sha256
        stage: Any = path
    else:
        stage = _qrels_frame(source)
        digest = frame_sha256(stage)

    # fetchall, not fetchone: DuckDB refuses other work while a result is unfinished
    stored = wh.con.execute(
        "SELECT sha256, line_count FROM qrels_sets WHERE collection_id = ? AND qrels_id = ?",
        [collection, qrels_id],
    ).fetchall()
    existing = stored[0] if stored else None
    if existing is not None and existing[0] == digest:
        return IngestResult("qrels", qrels_id, label, "unchanged", int(existing[1]))

    if isinstance(stage, Path):
        try:
            _stage_qrels(wh, stage, scan.fast_delimiter)
        except QueryError as error:
            located = formats.locate_qrels_error(stage, label=label)
            if located.line is not None:
                raise located from None
            raise IngestError(label, None, f"DuckDB could not read the file: {error}") from None
        ((line_count, bad_fields, bad_relevance, duplicates),) = wh.run(
            sql.query(_INGEST, "qrels_checks")
        ).fetchall()
        if line_count == 0 or bad_fields or bad_relevance or duplicates:
            raise formats.locate_qrels_error(stage, label=label)
    else:
        wh.con.register("staged_qrels_frame", stage)
        try:
            wh.con.execute(
                "CREATE OR REPLACE TEMP TABLE staged_qrels AS SELECT query_id, iteration, doc_id,"
                " CAST(relevance AS VARCHAR) AS relevance_text, 4 AS field_count"
                " FROM staged_qrels_frame"
            )
        finally:
            wh.con.unregister("staged_qrels_frame")
        line_count = len(stage)

    status = "ingested"
    if existing is not None:
        if not replace:
            raise IngestError(
                label,
                None,
                f"qrels {qrels_id!r} of collection {collection!r} already exists with "
                "different content; use --replace to replace it",
            )
        for table in ("qrels", "qrels_sets"):
            # table names come from the fixed tuple above, values are parameters
            wh.con.execute(
                f"DELETE FROM {table} WHERE collection_id = ? AND qrels_id = ?",
                [collection, qrels_id],
            )
        status = "replaced"
    wh.ensure_collection(collection)
    wh.run(sql.query(_INGEST, "insert_qrels"), {"collection_id": collection, "qrels_id": qrels_id})
    wh.con.execute(
        "INSERT INTO qrels_sets (collection_id, qrels_id, kind, source_file, sha256, line_count)"
        " VALUES (?, ?, 'ingested', ?, ?, ?)",
        [collection, qrels_id, label, digest, line_count],
    )
    wh.con.execute("DROP TABLE IF EXISTS staged_qrels")
    # the evaluation cache of the runs already stored, for these judgments (see JudgedCache)
    runs = wh.con.execute("SELECT count(*) FROM runs WHERE collection_id = ?", [collection])
    if runs.fetchall()[0][0]:
        refresh_cache(wh, collection, qrels_id, None)
    return IngestResult("qrels", qrels_id, label, status, int(line_count))


def _qrels_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Validate a qrels DataFrame and normalise it to ``query_id, iteration, doc_id, relevance``.

    Rows are numbered from 1 in error messages (``DataFrame:3: ...``), in frame order.
    """
    import pandas as pd

    frame = standard_columns(frame, "qrels")
    if frame.empty:
        raise IngestError("DataFrame", None, "the DataFrame holds no qrels rows")
    check_frame_ids(frame, ["query_id", "iteration", "doc_id"])
    staged = pd.DataFrame(
        {
            "query_id": frame["query_id"].astype(str).to_numpy(),
            "iteration": frame["iteration"].astype(str).to_numpy() if "iteration" in frame else "0",
            "doc_id": frame["doc_id"].astype(str).to_numpy(),
        }
    )
    relevance = pd.to_numeric(frame["relevance"], errors="coerce").to_numpy(dtype="float64")
    bad = ~(abs(relevance) < 1e9)  # a grade is a finite number, fractional as given (schema/012)
    if bad.any():
        row = int(bad.nonzero()[0][0])
        raise IngestError(
            "DataFrame",
            row + 1,
            f"relevance {_show(frame['relevance'].iloc[row])} is not a number",
        )
    staged["relevance"] = relevance
    duplicate = _first_duplicate(staged, ["query_id", "doc_id"])
    if duplicate is not None:
        row, first = duplicate
        raise IngestError(
            "DataFrame",
            row + 1,
            f"document {staged['doc_id'].iloc[row]!r} is judged twice for topic "
            f"{staged['query_id'].iloc[row]!r} (first on row {first + 1})",
        )
    return staged


# -- run metadata ---------------------------------------------------------------------------


def _read_metadata_table(path: Path) -> pd.DataFrame:
    """A TSV with a header, every row with as many fields as the header (else ``IngestError``)."""
    import pandas as pd

    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise IngestError(str(path), None, f"not UTF-8 text: {error.reason} at byte {error.start}") from None
    except OSError as error:
        raise _unreadable(path, error) from None
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise IngestError(str(path), 1, "no header line (run_id, group, type, pooled, tab-separated)")
    header = [name.strip() for name in lines[0].split("\t")]
    rows, numbers = [], []
    for number, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        fields = [field.strip() for field in line.split("\t")]
        if len(fields) != len(header):
            raise IngestError(
                str(path), number, f"{len(fields)} of {len(header)} tab-separated fields (header: {', '.join(header)})"
            )
        rows.append(fields)
        numbers.append(number)
    frame = pd.DataFrame(rows, columns=header, dtype=object) if rows else pd.DataFrame(columns=header)
    frame.attrs["lines"] = numbers
    return frame


def run_metadata_frame(source: str | os.PathLike[str] | pd.DataFrame) -> pd.DataFrame:
    """Normalise a run-metadata table to ``run_id, group_name, run_type, pooled, line``.

    Accepts a TSV file with a header, or a DataFrame. Column names are matched without
    case: ``run_id`` (or ``runtag``, ``run``), ``group`` (or ``group_name``), ``type`` (or
    ``run_type``), ``pooled`` (or ``judged_pooled``; 1/0, true/false or yes/no). A column the
    table lacks leaves the stored value alone; a row must fill every column the table has.
    ``line`` is the file's line (its header is line 1) or the DataFrame's row (from 1).

    Raises:
        IngestError: naming file and line for a row with too few or too many fields, an
            empty or missing value, a bad pooled flag, or a run listed twice with different
            values.
    """
    import pandas as pd

    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        require_file(path)
        frame = _read_metadata_table(path)
        label, lines = str(path), list(frame.attrs["lines"])
    else:
        frame, label, lines = source, "DataFrame", list(range(1, len(source) + 1))
    columns = {str(c).lower(): c for c in frame.columns}

    def pick(*names: str) -> Any:
        return next((columns[n] for n in names if n in columns), None)

    id_col = pick("run_id", "runtag", "run")
    if id_col is None:
        raise IngestError(
            label, 1, f"no run id column (run_id or runtag) among {list(frame.columns)}"
        )
    group_col, type_col = pick("group", "group_name"), pick("type", "run_type")
    pooled_col = pick("pooled", "judged_pooled")
    used = [c for c in (id_col, group_col, type_col, pooled_col) if c is not None]
    for row in range(len(frame)):
        for column in used:
            value = frame[column].iloc[row]
            if value is None or (isinstance(value, float) and value != value) or str(value).strip() == "":
                raise IngestError(label, lines[row], f"no value for {column} (every row fills every column)")
    out = pd.DataFrame({"run_id": frame[id_col].astype(str).str.strip().to_numpy()})
    out["group_name"] = frame[group_col].astype(str).str.strip().to_numpy() if group_col is not None else None
    out["run_type"] = frame[type_col].astype(str).str.strip().to_numpy() if type_col is not None else None
    if pooled_col is not None:
        text = frame[pooled_col].astype(str).str.strip().str.lower()
        truth = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}
        bad = ~text.isin(list(truth))
        if bad.any():
            row = int(bad.to_numpy().nonzero()[0][0])
            raise IngestError(
                label,
                lines[row],
                f"pooled flag {_show(frame[pooled_col].iloc[row])} is not 1/0 or true/false",
            )
        out["pooled"] = text.map(truth).astype(bool).to_numpy()
    else:
        out["pooled"] = None
    out["line"] = lines
    values = ["group_name", "run_type", "pooled"]
    seen: dict[str, int] = {}
    for row, run in enumerate(out["run_id"]):
        if run in seen:
            earlier = seen[run]
            if out[values].iloc[row].tolist() != out[values].iloc[earlier].tolist():
                raise IngestError(
                    label,
                    lines[row],
                    f"run {run!r} is listed again with different values (first on line {lines[earlier]})",
                )
        else:
            seen[run] = row
    return out.drop_duplicates("run_id").reset_index(drop=True)
