"""evalwh's C run-file reader on Spark's executors: the fast path of :mod:`evalwh.spark.files`.

The C reader of ``evalwh ingest runs`` and ``evalwh eval --qrels`` (``evalwh/io/_runlines.c``,
``rank_file``) reads a run file's bytes, checks them, ranks every topic's lines as
``trec_ranked`` does and hands back only what the measures need: the judged lines with their
rank, grade and running counts (judged so far, relevant so far), and each topic's number of
lines. Here it runs on the executors, one task per group of files, through ``mapInArrow``
over Spark's ``binaryFile`` source: Spark never sees a line of text, sorts nothing and joins
nothing per line; the evaluation starts from the judged rows (a few percent of the lines).

The reader is an accelerator, not a second definition: it takes only the plainest form of a
file and hands every other file back with its reason, and those files (with any file an
executor could not read this way, e.g. where evalwh is not installed on it) go through
Spark SQL's reader (:mod:`evalwh.spark.files`), which accepts them or names their first bad
line with the warehouse's message. So the rules, the messages and the values are the same
whichever reader read a file.

The function shipped to the executors (:func:`mapper`) is a closure, pickled by value: an
executor without evalwh runs it too, and reports every file as not read (``reason``) rather
than failing the job; so does an executor whose environment sets ``EVALWH_NO_READER`` (as
the direct path's reader, :func:`evalwh.io.runreader.reader`). An executor whose Python
cannot run the function at all (no pyarrow there) fails the job, and
:func:`evalwh.spark.files.load_runs` then has Spark SQL read every file.

It is the default reader of ``evalwh spark eval`` on run files (``--reader evalwh``); on a
local master, whose executors are this machine and this interpreter, :func:`reader_here`
tells before the session starts whether it can be used.

The driver's side is here too: :func:`read_files` runs the job and :func:`register_rows`
registers what it read as the evaluation's views.

May import: :mod:`evalwh.io` (and pyarrow, numpy, pyspark inside functions).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

# one row per file (kind 0), per topic of a file (kind 1), per judged line (kind 2)
FILE, TOPIC, JUDGED = 0, 1, 2
SCHEMA = (
    "file_index INT, kind INT, reason STRING, tag STRING, sha256 STRING, line_count BIGINT, "
    "query_id STRING, num_ret INT, rank INT, gain INT, judged_so_far INT, relevant_so_far INT"
)
NOT_INSTALLED = "evalwh's run-file reader is not installed on this executor"
SWITCHED_OFF = "EVALWH_NO_READER is set on this executor"
WITHOUT_READER = (NOT_INSTALLED, SWITCHED_OFF)
"""The reasons that are the executor's, not the file's: it has no evalwh reader to read with."""
NO_READER = "EVALWH_NO_READER"
"""An environment variable that, set (to anything but the empty string), leaves the C reader
unused, here and on an executor whose environment has it (``spark.executorEnv.EVALWH_NO_READER``)."""


def reader_here() -> bool:
    """Whether this process can use evalwh's C reader: built, importable, not switched off.

    For a local master the executors' Python workers run this interpreter with this
    environment (:mod:`evalwh.spark.session`), so this says what they would find.
    """
    if os.environ.get(NO_READER):
        return False
    try:
        import evalwh.io._runlines  # noqa: F401
    except ImportError:
        return False
    return True


GRADES = "the qrels hold negative or fractional grades, which evalwh's reader does not take"
"""Why the reader reads no file for a qrels set (as :func:`judgments_table` decides)."""


@dataclass(frozen=True)
class Read:
    """What :func:`read_files` found: the files the reader took and why it left the others."""

    taken: dict[int, tuple[str, int]]
    """By file index: the run's tag and the file's line count (every such file is good)."""
    digests: dict[int, str]
    """By file index: the SHA-256 of the file's (decompressed) bytes."""
    missing: int = 0
    """How many files executors without the reader handed back."""
    why: str | None = None
    """Why the reader read no file at all (the qrels' grades, its job failing), else None."""
    left: tuple[int, str] | None = None
    """The first file it left for its form, and the reason (file index, reason)."""


def read_files(
    spark: Any,
    files: list[tuple[int, str, str]],
    ignore_extra_fields: bool,
    rel: int,
    float32_ties: bool,
    note: Callable[[str], None] | None = None,
) -> Read:
    """Read run files on the executors with :func:`mapper`, against the session's ``qrels`` view.

    ``files`` are (file index, URI, the URI as ``binaryFile`` names it, normalised) of the
    files to read (none of 0 bytes). The rows (kind 0 per file, 1 per topic, 2 per judged
    line) are materialised once as the view ``spark_reader``. A job that fails (the
    executors' Python cannot run :func:`mapper`: no pyarrow there, another Python than the
    driver's, a worker that died) reads nothing and says why, in one line
    (:func:`evalwh.spark.session.quiet_task_failures` keeps Spark's stack trace off).
    """
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException
    from pyspark.sql import functions as F

    from evalwh.io import formats
    from evalwh.spark.session import quiet_task_failures

    judgments = judgments_table(spark.table("qrels"))
    if judgments is None:
        return Read({}, {}, why=GRADES)
    if not files:
        return Read({}, {})
    shared = spark.sparkContext.broadcast(serialise(judgments))
    index = F.create_map(*[item for i, _, normal in files for item in (F.lit(normal), F.lit(i))])
    uri = F.regexp_replace(F.col("path"), "^file:///", "file:/")
    # one file a batch into the reader's function (a batch of many would hold them all at once)
    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    before = spark.conf.get(key, None)
    spark.conf.set(key, "1")
    try:
        with quiet_task_failures(spark):
            rows = (
                spark.read.format("binaryFile")
                .load([given for _, given, _ in files])
                .select(
                    F.element_at(index, uri).cast("int").alias("file_index"),
                    F.col("path").endswith(".gz").alias("gz"),
                    "content",
                )
                .mapInArrow(mapper(shared, rel, float32_ties, ignore_extra_fields, formats.MAX_LINE), SCHEMA)
                .localCheckpoint(eager=True)
            )
    except (Py4JJavaError, PySparkException) as error:
        # Spark SQL then reads every file, and fails in turn, with its own message, where a
        # file cannot be read at all
        return Read({}, {}, why=f"evalwh's reader failed on the executors ({_cause(error)})")
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)
    rows.createOrReplaceTempView("spark_reader")
    taken, digests, reasons = {}, {}, {}
    for r in spark.sql(f"SELECT file_index, reason, tag, sha256, line_count FROM spark_reader WHERE kind = {FILE}").collect():
        if r["reason"] is not None:
            reasons[r["file_index"]] = r["reason"]
            continue
        taken[r["file_index"]] = (r["tag"], int(r["line_count"]))
        digests[r["file_index"]] = r["sha256"]
    missing = sum(1 for reason in reasons.values() if reason in WITHOUT_READER)
    formed = sorted(i for i, reason in reasons.items() if reason not in WITHOUT_READER)
    if note:
        note(f"read {len(taken):,} run files with evalwh's reader on the executors")
    return Read(taken, digests, missing, None, (formed[0], reasons[formed[0]]) if formed else None)


def _cause(error: BaseException) -> str:
    """A failed Spark job's cause in one line: the Python exception a worker raised (the last
    ``...Error: ...`` line of its traceback), else the first line of the message."""
    import re

    text = str(getattr(error, "java_exception", None) or error)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    raised = [line for line in lines if re.match(r"^[\w.]+(Error|Exception|Exit|Interrupt)\b", line)]
    found = (raised[-1] if raised else lines[0]) if lines else type(error).__name__
    return found if len(found) <= 200 else found[:199] + "…"


def register_rows(spark: Any, collection: str, run_ids: list[str], rel: int, float32_ties: bool) -> None:
    """run_topics with the reader's topics added; spark_reader_judged: its judged rows by run."""
    from evalwh.spark import reader_rows

    spark.createDataFrame(
        [(i, r) for i, r in enumerate(run_ids)], "file_index INT, run_id STRING"
    ).hint("broadcast").createOrReplaceTempView("spark_reader_runs")  # (as files.BROADCAST: one row a run)
    spark.sql(
        "SELECT t.collection_id, t.run_id, t.query_id, t.num_ret FROM run_topics AS t "
        "UNION ALL SELECT CAST(:collection AS STRING) AS collection_id, i.run_id, r.query_id, r.num_ret "
        f"FROM spark_reader AS r JOIN spark_reader_runs AS i USING (file_index) WHERE r.kind = {TOPIC}",
        args={"collection": collection},
    ).createOrReplaceTempView("run_topics")
    spark.sql(
        "SELECT i.run_id, r.query_id, r.rank, r.gain, r.judged_so_far, r.relevant_so_far "
        f"FROM spark_reader AS r JOIN spark_reader_runs AS i USING (file_index) WHERE r.kind = {JUDGED}"
    ).createOrReplaceTempView("spark_reader_judged")
    reader_rows[id(spark)] = (rel, float32_ties)


def judgments_table(qrels: Any) -> pa.Table | None:
    """The judgments the reader looks lines up in (query_id, doc_id, grade), from the qrels view.

    None where the reader cannot serve this qrels set, as in ``evalwh eval --qrels``: a
    negative grade (pooled, not judged: infAP and trec_eval's relstring need the ranked
    lists) or a fractional grade (the reader takes integers) sends every file to Spark SQL.
    """
    import pyarrow as pa

    table = qrels.selectExpr("query_id", "doc_id", "relevance").toArrow()
    grades = table.column("relevance").to_numpy()
    if len(grades) and ((grades < 0).any() or (grades != grades.round()).any()):
        return None
    return pa.table(
        {
            "query_id": table.column("query_id").cast(pa.string()),
            "doc_id": table.column("doc_id").cast(pa.string()),
            "grade": pa.array(grades.astype("int32"), pa.int32()),
        }
    )


def serialise(table: pa.Table) -> bytes:
    """An Arrow table as IPC stream bytes (what the executors are sent, once, by broadcast)."""
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def mapper(
    judgments: Any, rel: int, float32: bool, extra_fields: bool, max_line: int
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function ``mapInArrow`` runs on the executors: files in, the reader's rows out.

    Args:
        judgments: A broadcast variable holding :func:`serialise`'s bytes of
            :func:`judgments_table`.
        rel: The relevance threshold of the running counts (relevant = grade >= rel).
        float32: Rank on scores rounded to float32 (trec_eval <= 9.0.8).
        extra_fields: Accept lines of more than six fields.
        max_line: The longest line read (evalwh.io.formats.MAX_LINE).

    The input batches hold ``file_index, gz, content`` (the file's bytes as stored); each file
    gives one row of kind 0 (its tag, SHA-256 and line count, or the reason the reader left
    it), and if read, a row of kind 1 per topic and of kind 2 per judged line (:data:`SCHEMA`).
    """

    def read(batches: Iterator[Any]) -> Iterator[Any]:
        import gzip
        import hashlib
        import importlib
        import os

        import numpy as np
        import pyarrow as pa

        without = None
        if os.environ.get(NO_READER):
            module, without = None, SWITCHED_OFF
        else:
            try:
                module = importlib.import_module("evalwh.io._runlines")
            except ImportError:  # evalwh (or its compiled reader) is not on this executor
                module, without = None, NOT_INSTALLED
        names = [field.split()[0] for field in SCHEMA.split(", ")]
        types = {"INT": pa.int32(), "STRING": pa.string(), "BIGINT": pa.int64()}
        schema = pa.schema([(f.split()[0], types[f.split()[1]]) for f in SCHEMA.split(", ")])
        capsule = None

        def file_row(index: int, reason: str | None, tag: str | None = None, sha: str | None = None, lines: int | None = None) -> Any:
            row = {n: [None] for n in names}
            row.update(file_index=[index], kind=[FILE], reason=[reason], tag=[tag], sha256=[sha], line_count=[lines])
            return pa.RecordBatch.from_pydict(row, schema=schema)

        for batch in batches:
            indexes = batch.column("file_index").to_pylist()
            gzipped = batch.column("gz").to_pylist()
            contents = batch.column("content")
            for at, index in enumerate(indexes):
                if module is None:
                    yield file_row(index, without)
                    continue
                if capsule is None:
                    table = pa.ipc.open_stream(judgments.value).read_all()
                    buffers: list[Any] = []
                    for name in ("query_id", "doc_id"):
                        ids = table.column(name).combine_chunks()
                        _, offsets, data = ids.buffers()
                        if offsets is None:
                            offsets = np.zeros(1, np.int32)
                        else:
                            offsets = offsets.slice(ids.offset * 4)
                        buffers += [offsets, data if data is not None else b""]
                    grades = table.column("grade").combine_chunks()
                    data = grades.buffers()[1]
                    buffers.append(data.slice(grades.offset * 4, len(grades) * 4) if data is not None else b"")
                    capsule = module.judgments(*buffers)
                content = contents[at].as_py()
                try:
                    text = gzip.decompress(content) if gzipped[at] else content
                except Exception as error:  # (OSError, EOFError, zlib.error): Spark SQL names it
                    yield file_row(index, f"unreadable: {error}")
                    continue
                del content
                end = text.find(b"\n")
                first = text[: end if end >= 0 else len(text)]
                delimiter = b"\t" if b"\t" in first else b" "
                fields = first.split(delimiter)
                if len(fields) < 6 or not first.isascii():
                    # (in the C reader's words: the reader's line, LoadedRuns.reader_line, names it)
                    kind = (
                        "a byte other than printable ASCII" if not first.isascii()
                        else "a comment" if first.lstrip().startswith(b"#")
                        else "a blank line" if not first.strip()
                        else "a line of other than six fields"
                    )
                    yield file_row(index, f"{kind} (first line)")
                    continue
                tag = fields[5].decode("ascii")
                result = module.rank_file(text, delimiter.decode(), tag, capsule, rel, float32, extra_fields, max_line)
                if isinstance(result, str):
                    yield file_row(index, result)
                    continue
                topic_offsets, topic_bytes, num_ret, _relevant, topic, rank, grade, so_far, relevant_so_far = result
                n_topics = len(topic_offsets) // 4 - 1
                topics = pa.Array.from_buffers(
                    pa.string(), n_topics, [None, pa.py_buffer(topic_offsets), pa.py_buffer(topic_bytes)]
                )
                counts = np.frombuffer(num_ret, np.int32)
                yield file_row(index, None, tag, hashlib.sha256(text).hexdigest(), int(counts.sum(dtype=np.int64)))
                del text

                def column(values: Any, name: str, n: int) -> Any:
                    if values is None:
                        return pa.nulls(n, schema.field(name).type)
                    return values

                def ints(buffer: bytes, n: int) -> Any:
                    return pa.Array.from_buffers(pa.int32(), n, [None, pa.py_buffer(buffer)])

                given = {
                    "file_index": pa.array(np.full(n_topics, index, np.int32)),
                    "kind": pa.array(np.full(n_topics, TOPIC, np.int32)),
                    "query_id": topics,
                    "num_ret": ints(num_ret, n_topics),
                }
                yield pa.RecordBatch.from_arrays([column(given.get(n), n, n_topics) for n in names], schema=schema)
                n = len(topic) // 4
                if n:
                    given = {
                        "file_index": pa.array(np.full(n, index, np.int32)),
                        "kind": pa.array(np.full(n, JUDGED, np.int32)),
                        "query_id": topics.take(ints(topic, n)),
                        "rank": ints(rank, n),
                        "gain": ints(grade, n),
                        "judged_so_far": ints(so_far, n),
                        "relevant_so_far": ints(relevant_so_far, n),
                    }
                    yield pa.RecordBatch.from_arrays([column(given.get(c), c, n) for c in names], schema=schema)

    return read
