"""The one run-file reader of both paths: ``evalwh ingest runs`` and ``evalwh eval --qrels``.

Each run file is parsed, checked and ranked once, by ``evalwh/io/_runlines.c`` (C, one file a
call, without the GIL). The ingest takes every line ranked (:func:`read_run`: the rows that
``run_rows`` stores, already in trec_eval's order, so DuckDB neither parses nor sorts
them), each keyed by its document (in the dictionary of :func:`documents`: a collection's
document names are stored once, schema/026_document_keys.sql; keyed once the file is accepted) and, when the collection has judgments, the judged rows with their
running counts that the evaluation cache (``judged_results``) holds; the direct evaluation takes only the
judged rows (``rank_file``, :mod:`evalwh.measures.direct`). Both share the C code that splits,
checks and ranks, so both give a file the same verdict and the same ranks.

The reader takes only the plainest form of a run file (ASCII, one delimiter, one tag,
plain scores, see ``_runlines.c``); it hands every other file back with a reason, and the
ingest's general path (DuckDB's CSV reader and the ``trec_ranked`` macro) reads it, accepts
it or names its first bad line. Where the C module was not built, every file takes that path.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from evalwh.io import arrays, formats

if TYPE_CHECKING:
    import pyarrow as pa

    import duckdb


def reader() -> Any:
    """evalwh.io._runlines, the compiled run-file reader, or None where it was not built."""
    if os.environ.get("EVALWH_NO_READER"):
        return None
    try:
        from evalwh.io import _runlines
    except ImportError:
        return None
    return _runlines


def judgments_from_arrow(module: Any, table: pa.Table) -> Any:
    """``module.judgments`` of a table of query_id, doc_id and grade, from its Arrow buffers.

    No Python string is made: the C side reads the offsets and bytes of the two id columns.
    """
    import pyarrow as pa

    # (Array.cast imports pyarrow.compute, a fifth of a second: only when the type differs)
    def column(name: str, kind: pa.DataType) -> pa.Array:
        array = table[name].combine_chunks()
        return array if array.type == kind else array.cast(kind)

    buffers: list[Any] = []
    for name in ("query_id", "doc_id"):
        ids = column(name, pa.string())
        _, offsets, data = ids.buffers()
        if offsets is None:  # no judgments
            offsets = np.zeros(1, np.int32)
        else:  # a slice's offsets begin further in (and index data as they are)
            offsets = offsets.slice(ids.offset * 4)
        buffers += [offsets, data if data is not None else b""]
    grades = column("grade", pa.int32())  # no NULL (qrels.relevance)
    data = grades.buffers()[1]
    buffers.append(data.slice(grades.offset * 4, len(grades) * 4) if data is not None else b"")
    return module.judgments(*buffers)


def judgments(module: Any, con: duckdb.DuckDBPyConnection, collection: str, qrels_id: str) -> Any:
    """The stored judgments of a qrels set with a grade >= 0 (negative: unjudged), in C."""
    table = con.sql(
        "SELECT query_id, doc_id, CAST(relevance AS INTEGER) AS grade FROM qrels"
        " WHERE collection_id = $collection AND qrels_id = $qrels_id AND relevance >= 0",
        params={"collection": collection, "qrels_id": qrels_id},
    ).to_arrow_table()
    return judgments_from_arrow(module, table)


def graded(
    module: Any,
    con: duckdb.DuckDBPyConnection,
    collection: str,
    qrels_id: str,
    *,
    spill_fd: int = -1,
    budget: int = 0,
    batch: int = 1 << 20,
) -> Any:
    """The stored judgments of a qrels set with a grade >= 0, as a dictionary whose keys are grades.

    :func:`judgments`'s lookups for :func:`read_run`, held as :func:`documents` holds a
    collection's documents, but by (topic, document) pair: loaded ``batch`` judgments at a time (no table of them all, and
    no second copy while built) and, with a spill file, at most ``budget`` bytes of topics'
    tables in memory, the others in the file. They come in the order DuckDB scans them (a
    qrels file's order, mostly topic by topic); a topic met again in a later batch is read
    back and grows. (Sorting them by topic first would cost DuckDB memory it keeps.)
    """
    stored = con.sql(
        "SELECT query_id, doc_id, CAST(relevance AS BIGINT) AS doc_key FROM qrels"
        " WHERE collection_id = $collection AND qrels_id = $qrels_id AND relevance >= 0",
        params={"collection": collection, "qrels_id": qrels_id},
    ).to_arrow_reader(batch)
    return pairs(module, stored, spill_fd=spill_fd, budget=budget)


@dataclass
class Ranked:
    """One run file read by :func:`read_run`: every line ranked, and the judged ones.

    Attributes:
        sha256: Of the file's (decompressed) content.
        lines: The number of run lines.
        rows: ``query_id, doc_id, score, rank_given, rank, given_rank`` of every line, in
            (topic, rank) order; query_id as a dictionary over the file's topics; the file's
            rank field where it is not the rank's own decimal (else both NULL), as ``run_rows``
            stores it: ``given_rank`` (int32) where it is another integer's own decimal, else
            the text in ``rank_given``.
            Read with a dictionary (``documents``), ``doc_key`` (int64) in place of doc_id.
        topics: ``query_id, num_ret`` per topic.
        judged: ``query_id, rank, gain, judged_so_far, relevant_so_far`` of the judged
            lines (relevant ones first, each part by rank), or None without judgments.
        relevant: How many of the judged lines, the first ones, are relevant (grade >= 1).
        added: Read with a dictionary, the documents the file added to it: ``doc_id,
            doc_key``; else None.
        float32_lists: The topics where two adjacent rows trade places when scores are
            rounded to float32 (trec_eval <= 9.0.8), as ``float32_order.sql`` finds them.
        float32_first: The best rank where that happens (0: nowhere).
    """

    sha256: str
    lines: int
    rows: pa.Table
    topics: pa.Table
    judged: pa.Table | None
    relevant: int = 0
    added: pa.Table | None = None
    float32_lists: int = 0
    float32_first: int = 0


def read_run(
    module: Any,
    data: bytes,
    *,
    delimiter: str,
    tag: str,
    judged_by: Any,
    ignore_extra_fields: bool,
    digest: bool = True,
    documents: Any = None,
    skip: int = 0,
) -> Ranked | str:
    """Read, check and rank one run file's text; the reason when the reader leaves it.

    Args:
        module: :func:`reader`.
        data: The whole (decompressed) text.
        delimiter, tag: The file's sniffed delimiter and first tag.
        judged_by: A judgments capsule (:func:`judgments` or :func:`graded`) for the judged
            rows, or None.
        ignore_extra_fields: Accept lines of more than six fields.
        digest: Compute the text's SHA-256 (not for a piece of a file: the caller hashes it).
        documents: A dictionary of documents (:func:`documents`): every line gets its
            document's key, new documents the next ones, once the file is accepted.
        skip: Bytes at the top the reader leaves (an ir_metadata block); the digest is of all.
    """
    import pyarrow as pa

    result = module.read_run(
        data[skip:] if skip else data, delimiter, tag, judged_by, 1, False, ignore_extra_fields,
        formats.MAX_LINE, documents,
    )
    if isinstance(result, str):
        return result
    (
        judged_part,
        doc_offsets,
        doc_bytes,
        given_offsets,
        given_bytes,
        score,
        topic,
        rank,
        given_valid,
        keys,
        added_rows,
        float32_lists,
        float32_first,
        given_rank,
        given_rank_valid,
    ) = result
    topic_offsets, topic_bytes, num_ret, relevant, *judged_columns = judged_part
    n_topics = len(topic_offsets) // 4 - 1
    n = len(score) // 8
    names = pa.Array.from_buffers(
        pa.string(), n_topics, [None, pa.py_buffer(topic_offsets), pa.py_buffer(topic_bytes)]
    )

    def strings(offsets: bytes, text: bytes) -> pa.Array:
        buffers = [None, pa.py_buffer(offsets), pa.py_buffer(text)]
        return pa.Array.from_buffers(pa.string(), len(offsets) // 4 - 1, buffers)

    def ints(buffer: bytes) -> pa.Array:
        return pa.Array.from_buffers(pa.int32(), len(buffer) // 4, [None, pa.py_buffer(buffer)])

    topic_index = ints(topic)
    added = None
    if keys is None:
        documents_column, document_name = strings(doc_offsets, doc_bytes), "doc_id"
    else:
        documents_column = pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(keys)])
        document_name = "doc_key"
        rows_added = ints(added_rows)
        added = pa.Table.from_arrays(
            [strings(doc_offsets, doc_bytes), documents_column.take(rows_added)],
            names=["doc_id", "doc_key"],
        )
    rows = pa.Table.from_arrays(
        [
            pa.DictionaryArray.from_arrays(topic_index, names),
            documents_column,
            pa.Array.from_buffers(pa.float64(), n, [None, pa.py_buffer(score)]),
            pa.Array.from_buffers(
                pa.string(),
                n,
                [pa.py_buffer(given_valid), pa.py_buffer(given_offsets), pa.py_buffer(given_bytes)],
            ),
            ints(rank),
            pa.Array.from_buffers(pa.int32(), n, [pa.py_buffer(given_rank_valid), pa.py_buffer(given_rank)]),
        ],
        names=["query_id", document_name, "score", "rank_given", "rank", "given_rank"],
    )
    topics = pa.Table.from_arrays([names, ints(num_ret)], names=["query_id", "num_ret"])
    judged = None
    if judged_by is not None:
        at, judged_rank, grade, so_far, relevant_so_far = (ints(c) for c in judged_columns)
        topic_ids = pa.DictionaryArray.from_arrays(at, names)
        judged = pa.Table.from_arrays(
            [topic_ids, judged_rank, grade, so_far, relevant_so_far],
            names=["query_id", "rank", "gain", "judged_so_far", "relevant_so_far"],
        )
    sha256 = hashlib.sha256(data).hexdigest() if digest else ""
    return Ranked(
        sha256, n, rows, topics, judged, int(relevant), added, float32_lists, float32_first
    )


def documents(
    module: Any,
    batches: Iterable[pa.Table | pa.RecordBatch],
    next_key: int,
    *,
    spill_fd: int = -1,
    budget: int = 0,
) -> Any:
    """The reader's dictionary of a collection's documents: ``doc_id, doc_key`` stored.

    ``batches``: the stored documents, a batch at a time, in any order. ``next_key``: the
    first key a new document gets (keys are unique across the warehouse). ``spill_fd``: a
    file the dictionary may write its tables to while they hold more than ``budget`` bytes
    (it keeps a duplicate of the descriptor), so that memory holds ``budget`` whatever the
    collection's number of documents.
    """
    capsule = module.documents(next_key, spill_fd, budget, True)
    for stored in batches:
        if stored.num_rows == 0:
            continue
        keys = np.ascontiguousarray(arrays.numbers(stored["doc_key"]), dtype=np.int64)
        module.documents_add_ids(capsule, *_string_buffers(stored["doc_id"]), keys)
    return capsule


def pairs(
    module: Any,
    batches: Iterable[pa.Table | pa.RecordBatch],
    *,
    spill_fd: int = -1,
    budget: int = 0,
) -> Any:
    """A dictionary of (topic, document) pairs: ``query_id, doc_id, doc_key`` stored.

    :func:`graded`'s, whose keys are grades. ``batches``, ``spill_fd`` and ``budget`` as for
    :func:`documents`; a topic's tables are built once when its pairs come together.
    """
    capsule = module.documents(0, spill_fd, budget)
    for batch in batches:
        if batch.num_rows == 0:
            continue
        topics, documents_ = batch["query_id"], batch["doc_id"]
        keys = np.ascontiguousarray(arrays.numbers(batch["doc_key"]), dtype=np.int64)
        module.documents_add(capsule, *_string_buffers(topics), *_string_buffers(documents_), keys)
    return capsule


def _string_buffers(ids: Any) -> list[Any]:
    """A column of ids as an Arrow string array's offsets and bytes (int32 offsets)."""
    import pyarrow as pa

    ids = ids.combine_chunks() if isinstance(ids, pa.ChunkedArray) else ids  # (not empty here)
    if ids.type != pa.string():
        ids = ids.cast(pa.string())
    _, offsets, data = ids.buffers()
    return [offsets.slice(ids.offset * 4), data if data is not None else b""]


def judged_by_topic(judged: pa.Table) -> pa.Table:
    """The judged rows with their topic as its index in the file (the list is first_list + topic)."""
    topic = judged["query_id"].combine_chunks().indices
    return judged.drop_columns(["query_id"]).append_column("topic", topic)


def pieces(fd: int, delimiter: bytes, size: int) -> Iterator[bytes]:
    """A plain run file's text in pieces of about ``size`` bytes, each ending where a topic does.

    A piece ends before the first of the lines of its last topic that follow each other at
    its end (or at the end of the file), so that a topic whose lines follow each other is in
    one piece; the caller checks that no topic is in two.
    """
    start, total = 0, os.fstat(fd).st_size
    while start < total:
        end = min(start + size, total)
        while end < total:
            cut = _topic_start(fd, start, end, delimiter)
            if cut > start:
                end = cut
                break
            end = min(end + size, total)  # one topic fills the piece: take more
        piece = os.pread(fd, end - start, start)
        if not piece:
            return  # (the file shrank)
        yield piece
        start += len(piece)


def topic_pieces(module: Any, fd: int, delimiter: bytes, size: int, digest: Any = None) -> Iterator[bytes]:
    """A plain run file's text in pieces of about ``size`` bytes of whole topics, in any line order.

    For a file whose topics are not together (:func:`pieces` put one in two pieces): one pass
    sorts its lines by a hash of their topic into ``file size / size`` anonymous temporary
    files (``module.split_topics``, C; the files have no name, so nothing is left behind),
    each then a piece. A line keeps its bytes and a topic its lines' order; a last line
    without a line break gets one. ``digest``: a hashlib object updated with the file's
    text as it is. Memory follows ``size``, not the file.
    """
    import tempfile

    count = max(1, -(-os.fstat(fd).st_size // size))
    parts = [tempfile.TemporaryFile() for _ in range(count)]  # noqa: SIM115 (closed below)
    try:
        for piece in pieces(fd, delimiter, size):
            if digest is not None:
                digest.update(piece)
            for part, lines in zip(parts, module.split_topics(piece, count), strict=True):
                part.write(lines)
            del piece
        for part in parts:
            part.seek(0)
            text = part.read()
            part.close()
            if text:
                yield text
    finally:
        for part in parts:
            part.close()


def _topic_start(fd: int, start: int, end: int, delimiter: bytes) -> int:
    """Where the last topic's lines before ``end`` begin (``start`` if at ``start``)."""
    window = 1 << 16
    while True:
        low = max(start, end - window)
        text = os.pread(fd, end - low, low)
        line_end = text.rfind(b"\n")  # lines before it are whole; the line after it is not
        if line_end < 0:
            if low == start:
                return start
            window *= 4
            continue
        at = text.rfind(b"\n", 0, line_end) + 1  # the last whole line
        topic = _topic_of(text, at, line_end, delimiter)
        while at > 0:
            before = text.rfind(b"\n", 0, at - 1) + 1
            if before == 0 and low > start:
                break  # (that line may begin before the window)
            if _topic_of(text, before, at - 1, delimiter) != topic:
                return low + at
            at = before
        if low == start:
            return start
        window *= 4


def _topic_of(text: bytes, start: int, end: int, delimiter: bytes) -> bytes:
    """The first field of the line ``text[start:end]``."""
    split = text.find(delimiter, start, end)
    return text[start : split if split >= 0 else end]
