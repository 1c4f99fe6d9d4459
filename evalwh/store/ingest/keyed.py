"""The keyed store of a run ingest: the files the reader ranked, staged, stored by key.

Step 3 of a run ingest (:mod:`evalwh.store.ingest`): :class:`Stored` gives every line the key
of its document, every ranked list and cache build theirs, stages each file the
reader ranked (:class:`Prepared`; a large plain file a piece of whole topics at a time) and
stores what is staged a few million lines at a time, in the background while the next files
are read.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evalwh import sql
from evalwh.io import arrays, runreader
from evalwh.store.ingest.bookkeeping import insert_runs
from evalwh.store.ingest.cache import (
    JUDGED_PARTS,
    JudgedCache,
    _judged_parts,
    insert_staged,
    staged_relation,
)
from evalwh.store.ingest.files import GZIP_RATIO, RunFile, Spill
from evalwh.store.ingest.results import IngestResult

if TYPE_CHECKING:
    from evalwh.store.connection import Store

_INGEST = "evalwh.queries.ingest"
# A plain file of more than twice this is read a piece of whole topics at a time (as the
# direct path does, evalwh.measures.direct, with 12 MB), so that the reader's memory follows
# the piece: a piece of 8 MB holds about what one of L's files does (250,000 lines); pieces of
# 12 MB (370,000 lines) held XL's peak about 25 MiB higher.
PIECE_BYTES = 8 << 20
# Staged lines stored by one flush, in the background while the next files are read. A few
# million lines make statements large enough for DuckDB to write their row groups to the
# file as they fill (smaller ones stay in memory until the commit).
FLUSH_LINES = 4_000_000
# Staged in memory (STAGE_BYTES, below), what waits for a flush is memory: a flush every half
# million lines keeps TREC-8's ingest peak at 0.43-0.44 GiB instead of 0.67 with FLUSH_LINES,
# for the same time (0.25 million: 418 MiB, 15 % slower; Parquet staging: 0.36 GiB).
MEMORY_FLUSH_LINES = 500_000
# An ingest whose run files hold at most this much text stages what the reader ranked in
# memory, as Arrow tables (about one byte for a byte of text: TREC-8's 129 runs, 266 MB of
# text, stage 258 MB); a larger one stages it as Parquet files in the spill folder, so that
# memory holds only the files being read, whatever their number (the shared bench's L,
# about 1 GB of text, and XL). Writing the Parquet files and reading them back cost TREC-8's
# ingest about a sixth of its CPU.
STAGE_BYTES = 384 << 20
# ... and only when its files are small, at most this much text each on average: eight
# Parquet files a run file cost most where the files are many and small (TREC-8's 129
# average 2 MB: 3.2 s in memory, 3.9-4.2 s as Parquet, plain or gzipped alike); files of
# the shared bench's L (9.7 MB each) stage at least as fast as Parquet, and in less memory
# (27 of them: 3.5-3.8 s and 0.45 GiB, in memory 4.0-4.6 s and 0.56; 41 of them: 5.0-5.3 s
# and 0.55 GiB, in memory 5.5-6.1 s and 0.68).
STAGE_FILE_BYTES = 4 << 20
# The reader's dictionary of the collection's documents (schema/026_document_keys.sql: a
# document's name is stored once per collection, not once per topic that retrieved it) keeps
# at most this much of its tables in memory; past it, the buckets used longest ago wait in a
# temporary file. The shared bench's L and XL hold 528,153 and 528,155 documents, about 22 MB
# (their 6.9 M and 33.9 M (topic, document) pairs took 265 MiB and 1.3 GB when those were the
# keys, XL's mostly in the file). Stored documents are loaded LOAD_DOCUMENTS at a time.
DICTIONARY_BYTES = 320 << 20
LOAD_DOCUMENTS = 1 << 20


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
    files: dict[str, list[Any]]  # staged by kind, a part a piece: Parquet files or Arrow tables
    # the lists where float32 scores trade two rows, and the best rank where (0: none)
    float32: tuple[int, int] = (0, 0)


class Stored:
    """Stores the files the reader ranked under their keys, staged until one insert.

    The warehouse keeps run lines by key (schema/013_keyed_results.sql): each ranked list a
    new ``list_key``, each document of the collection its ``doc_key`` (schema/026), each cache
    build its ``build_key``. The documents already stored for the collection are loaded into
    the reader's dictionary (``_runlines.documents``), which gives every line its key and new
    documents the next ones. :meth:`prepare` (in a worker thread, one per file read at a time)
    stages a file's rows, new documents and judged rows, all numbers but the new documents'
    ids: in memory as Arrow tables when the ingest is small and so are its files
    (``in_memory``: at most STAGE_BYTES of text, STAGE_FILE_BYTES a file on average), else
    as Parquet files in the spill folder, so memory holds the files being read
    whatever their number. :meth:`flush` then stores everything with one INSERT per table,
    reading the tables or the files as one relation
    (:func:`~evalwh.store.ingest.cache.staged_relation`). (Rows appended by many statements
    of one transaction stay in DuckDB's memory until the commit, and so do the Arrow buffers
    of their strings; one statement over Parquet streams within DuckDB's memory limit.) The
    general path gives keys in SQL after the stored ones, so before it everything staged is
    flushed, and the dictionary loaded again after it.
    """

    def __init__(
        self,
        wh: Store,
        collection: str,
        module: Any,
        cache: JudgedCache,
        spill: Spill,
        *,
        in_memory: bool = False,
    ) -> None:
        self.wh = wh
        self.in_memory = in_memory  # staged as Arrow tables, not Parquet files
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
        self.staged: dict[str, list[Any]] = {
            kind: [] for kind in ("rows", "documents", *JUDGED_PARTS)
        }
        self.lists: list[Any] = []  # the staged files' run_topics rows (Arrow)
        self.builds: list[list[Any]] = []  # the staged judged_builds rows
        self.entries: list[list[Any]] = []  # the staged files' runs rows
        self.lines = 0  # run lines staged
        self.flusher = ThreadPoolExecutor(max_workers=1)
        self.flushing: Future[None] | None = None

    def load(self) -> None:
        """Load the dictionary and the next keys from the warehouse (before files are read).

        The stored documents come a batch at a time, and the dictionary keeps at most
        DICTIONARY_BYTES of its tables in memory (the others in an anonymous temporary file),
        so that memory does not grow with the collection's documents.
        """
        import tempfile

        ((next_key, next_list, next_build, self.spans_from),) = self.wh.con.execute(
            "SELECT (SELECT coalesce(max(doc_key), 0) + 1 FROM documents),"
            " (SELECT coalesce(max(list_key), 0) + 1 FROM run_topics),"
            " (SELECT coalesce(max(build_key), 0) + 1 FROM judged_builds),"
            " judged_spans_from()"  # the cache's stretches begin below it (schema/014)
        ).fetchall()
        stored = self.wh.con.sql(
            "SELECT doc_id, doc_key FROM documents WHERE collection_id = $collection",
            params={"collection": self.collection},
        ).to_arrow_reader(LOAD_DOCUMENTS)
        self.documents = None  # (the dictionary before, and its spill file, are freed first)
        with tempfile.TemporaryFile() as spill:  # the dictionary keeps its own descriptor
            self.documents = runreader.documents(
                self.module,
                stored,
                int(next_key),
                spill_fd=spill.fileno(),
                budget=DICTIONARY_BYTES,
            )
        self.next_list, self.next_build = int(next_list), int(next_build)

    def build(self) -> int:
        """A new build key (thread-safe)."""
        with self.lock:
            self.next_build += 1
            return self.next_build - 1

    def prepare(
        self, ranked: runreader.Ranked, build_key: int | None = None, staging: Staging | None = None
    ) -> Prepared:
        """Stage one ranked and keyed file, or piece of one (thread-safe).

        ``build_key``: its judged rows' build (a piece's is its file's), by default a new one.
        ``staging``: the Parquet files of the piece's file, which its tables join (the
        Prepared then names no files: :meth:`Staging.close` does).
        """
        import pyarrow as pa

        rows = ranked.rows  # keyed by the reader: query_id (the topic's index), doc_key, ...
        if ranked.judged is not None and build_key is None:
            build_key = self.build()
        with self.lock:
            first_list = self.next_list
            self.next_list += len(ranked.topics)

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
        if staging is not None:
            for kind, table in tables.items():
                staging.add(kind, table)
            files: dict[str, list[Any]] = {}
        elif self.in_memory:
            files = {kind: [table] for kind, table in tables.items()}
        else:
            files = {kind: [self._write(table)] for kind, table in tables.items()}
        return Prepared(
            ranked.sha256,
            ranked.lines,
            [(ranked.topics, first_list)],
            build_key,
            files,
            (ranked.float32_lists, ranked.float32_first),
        )

    def _write(self, table: Any) -> str:
        """Stage one table as a Parquet file in the spill folder; its name."""
        name = self.new_name()
        writer = _parquet_writer(name, _staged_schema(table))
        with writer:
            writer.write_table(table.cast(writer.schema))
        return name

    def new_name(self) -> str:
        """A new Parquet file's name in the spill folder (thread-safe)."""
        with self.lock:
            return str(self.spill.new(".parquet"))

    def prepare_pieces(self, file: RunFile, read: Callable[[bytes], runreader.Ranked | str]) -> Prepared | str | None:
        """A large plain file read, ranked, keyed and staged a piece of whole topics at a time.

        The reader's memory then follows the piece, not the file. ``read`` ranks one piece.
        Returns the reason if the reader leaves a piece (the file goes the general way). A
        file whose topics are not together (a topic in two pieces) has its lines sorted into
        pieces by topic first (:func:`evalwh.io.runreader.topic_pieces`); None if a topic is
        in two pieces even then (the file is read whole). What the pieces staged is dropped
        then, but for their new documents: a key, once given, is stored.
        """
        build_key = self.build() if self.cache.primary is not None else None
        delimiter = file.delimiter.encode()
        with open(file.readable, "rb", buffering=0) as handle:
            digest = hashlib.sha256()
            in_order = runreader.pieces(handle.fileno(), delimiter, PIECE_BYTES)
            prepared = self._prepare_from(in_order, digest, read, build_key)
            if prepared is not None:
                return prepared
            digest = hashlib.sha256()
            by_topic = runreader.topic_pieces(self.module, handle.fileno(), delimiter, PIECE_BYTES, digest)
            return self._prepare_from(by_topic, digest, read, build_key, hashed=True)

    def _prepare_from(
        self,
        texts: Iterator[bytes],
        digest: Any,
        read: Callable[[bytes], runreader.Ranked | str],
        build_key: int | None,
        *,
        hashed: bool = False,
    ) -> Prepared | str | None:
        """Stage the pieces ``texts`` gives (see :meth:`prepare_pieces`); ``hashed``: they update ``digest``."""
        seen: set[str] = set()
        done: list[Prepared] = []
        staging = None if self.in_memory else Staging(self)
        try:
            for piece in texts:
                if not hashed:
                    digest.update(piece)
                ranked = read(piece)
                del piece
                if isinstance(ranked, str):
                    self.discard(self._whole(done, staging, digest, build_key))
                    return ranked
                topics = ranked.topics["query_id"].to_pylist()
                if not seen.isdisjoint(topics):
                    # (the reader keyed this piece too: its new documents stay staged with the others')
                    done.append(self.prepare(ranked, build_key, staging))
                    self.discard(self._whole(done, staging, digest, build_key))
                    return None
                seen.update(topics)
                done.append(self.prepare(ranked, build_key, staging))
            if not done:
                return "no lines"
            return self._whole(done, staging, digest, build_key)
        finally:
            if staging is not None:
                staging.abandon()  # (after an error: its files are deleted with the spill folder)

    @staticmethod
    def _whole(
        done: list[Prepared], staging: Staging | None, digest: Any, build_key: int | None
    ) -> Prepared:
        """A file's staged pieces as one Prepared (its Parquet files closed)."""
        if staging is not None:
            files = staging.close()
        else:
            kinds = done[0].files if done else {}
            files = {kind: [n for p in done for n in p.files.get(kind, [])] for kind in kinds}
        firsts = [p.float32[1] for p in done if p.float32[1]]
        return Prepared(
            digest.hexdigest(),
            sum(p.lines for p in done),
            [segment for p in done for segment in p.lists],
            build_key,
            files,
            (sum(p.float32[0] for p in done), min(firsts, default=0)),  # (pieces: whole topics)
        )

    def add(self, file: RunFile, prepared: Prepared) -> IngestResult:
        """Record one prepared file, to be stored by :meth:`flush`."""
        import pyarrow as pa

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
        lists32, first32 = prepared.float32
        entry = [self.collection, file.run_id, file.first_tag, source, prepared.sha256]
        self.entries.append([*entry, prepared.lines, lists32, first32 or None])
        self.lines += prepared.lines
        if prepared.build_key is not None:
            self.builds.append([file.run_id, prepared.sha256, prepared.build_key])
        self.runs.append(file.run_id)
        return IngestResult("run", file.run_id, file.label, file.status, prepared.lines)

    def discard(self, prepared: Prepared | str | None | list[Prepared]) -> None:
        """Drop what was staged for a file (or pieces) that is read again or goes the general way.

        Its new documents stay staged: the dictionary gave their keys, which other files read
        at the same time may have used.
        """
        for item in prepared if isinstance(prepared, list) else [prepared]:
            if not isinstance(item, Prepared):
                continue
            for kind, parts in item.files.items():
                if kind == "documents":
                    with self.lock:
                        self.staged[kind].extend(parts)
                    continue
                _remove(parts)

    def flush(self, *, wait: bool = True) -> None:
        """Store everything staged (inside the caller's transaction).

        ``wait=False``: only when FLUSH_LINES lines are staged (MEMORY_FLUSH_LINES in memory),
        and in the background, while the files after them are read; the connection is the
        flusher's until :meth:`wait`.
        """
        if not wait and self.lines < (MEMORY_FLUSH_LINES if self.in_memory else FLUSH_LINES):
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
            tables = {
                "ingest_topics": pa.concat_tables(lists),
                # (registered, as its statement takes the collection: kept to the commit)
                "staged_documents": staged_relation(self.wh, staged["documents"]),
            }
            with registered(self.wh, tables):
                self.wh.run(sql.query(_INGEST, "insert_ranked"), key)
            insert_staged(self.wh, sql.query(_INGEST, "insert_rows"), "staged_rows", staged["rows"])
        if builds:
            self.cache.add(builds, [staged[part] for part in JUDGED_PARTS])
        for parts in staged.values():
            _remove(parts)


class Staging:
    """The Parquet files one file read in pieces is staged in: one a kind, a row group a piece.

    A file a piece and a kind cost the shared bench's XL 3,800 files (1.5 ms of CPU each to
    make, write and close); one a kind for the whole file, 160. A piece whose table needs
    another schema than the file's so far (a column with NULLs where the earlier pieces had
    none) starts another file of that kind.
    """

    def __init__(self, stored: Stored) -> None:
        self.stored = stored
        self.writers: dict[str, Any] = {}  # kind: the open writer
        self.files: dict[str, list[str]] = {}  # kind: its files, in order

    def add(self, kind: str, table: Any) -> None:
        """Append a piece's table of this kind."""
        writer = self.writers.get(kind)
        if writer is not None and not len(table):
            return  # (an empty piece has no NULLs: its schema would start a file for nothing)
        schema = _staged_schema(table)
        if writer is not None and not writer.schema.equals(schema):
            writer.close()
            writer = None
        if writer is None:
            name = self.stored.new_name()
            self.files.setdefault(kind, []).append(name)
            writer = self.writers[kind] = _parquet_writer(name, schema)
        if len(table):
            writer.write_table(table.cast(schema))

    def close(self) -> dict[str, list[str]]:
        """Close every file; the files of each kind."""
        writers, self.writers = self.writers, {}
        for writer in writers.values():
            writer.close()
        return self.files

    def abandon(self) -> None:
        """Close what is still open (after an error), leaving the files to the spill folder."""
        for writer in self.writers.values():
            with suppress(Exception):
                writer.close()
        self.writers = {}


def _staged_schema(table: Any) -> Any:
    """A staged table's schema as written: no definition levels where a column has no NULL
    (they cost as much as the numbers)."""
    import pyarrow as pa

    return pa.schema([f.with_nullable(table[f.name].null_count > 0) for f in table.schema])


def _parquet_writer(name: str, schema: Any) -> Any:
    """A Parquet file read back once: no dictionary, no compression, no statistics."""
    import pyarrow.parquet as pq

    return pq.ParquetWriter(
        name, schema, compression="none", use_dictionary=False, write_statistics=False
    )


@contextmanager
def registered(wh: Store, tables: dict[str, Any]) -> Iterator[None]:
    """Arrow tables (or DataFrames) visible to DuckDB under these names for the duration."""
    for name, table in tables.items():
        wh.con.register(name, table)
    try:
        yield
    finally:
        for name in tables:
            wh.con.unregister(name)


def _remove(parts: list[Any]) -> None:
    """Delete the staged Parquet files among ``parts`` (Arrow tables are just dropped)."""
    for part in parts:
        if isinstance(part, str):
            Path(part).unlink(missing_ok=True)
