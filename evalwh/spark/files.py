"""TREC run and qrels files read, checked and ranked by Spark, with the warehouse's rules and SQL.

The whole ingest of :mod:`evalwh.store.ingest` as Spark jobs, for collections that outgrow one
machine; nothing is written anywhere. The files are listed through Hadoop's file system (local
paths, ``hdfs://``, ``s3a://``, globs), read by Spark's text reader (``.gz`` decompressed by
Hadoop's codec) one row per file, so that a line's number is its position in its file, and:

* ``queries/spark/text_lines.sql`` numbers the lines and marks the unreadable ones (NUL, a
  stray ``\\r``, invalid UTF-8), comments and blank lines, as :mod:`evalwh.io.formats` does;
* ``queries/spark/run_fields.sql`` and ``stage_run_lines.sql`` split the fields and build the
  warehouse's ``staged_lines`` (same columns and check flags);
* the warehouse's own ``queries/ingest/run_checks.sql`` decides which files are bad, and
  ``queries/spark/locate_run_error.sql`` names the first bad line of the first of them, with
  the message :func:`evalwh.io.formats.locate_run_error` gives for the same file;
* the warehouse's ``queries/ingest/insert_run_results.sql``, with the ``trec_ranked`` macro of
  the schema (``001_core.sql``, redefined by ``022_float32_ranking.sql``) expanded, ranks the
  lines (score descending, doc_id descending byte-wise) into ``run_results`` and
  ``run_topics``.

Run files are read that way when asked (``reader="spark"``), when evalwh's C reader on the
executors (:mod:`evalwh.spark.executors`, ``reader="evalwh"``, the default of ``evalwh spark
eval``) cannot be used, and for each file it leaves (:data:`READERS`, :func:`load_runs`).

Qrels go through ``text_lines.sql`` and ``queries/spark/qrels_fields.sql``. The results are
registered as the temporary views the evaluation context reads (``runs, run_results,
run_topics, qrels``), so :func:`evalwh.spark.evaluate` runs on them unchanged.

Limits: one file is one row of Spark, so a file must fit a task's memory (and Java's 2 GB
array limit) decompressed; the listing uses the classic session's JVM (not Spark Connect).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from evalwh import sql
from evalwh.errors import IngestError

if TYPE_CHECKING:
    import pandas as pd

_SPARK = "evalwh.queries.spark"
_INGEST = "evalwh.queries.ingest"
# insert_run_results.sql stages what the warehouse then stores by key (store_ranked.sql); on
# Spark the staged relations are the warehouse's run_results and run_topics themselves.
_AS_WAREHOUSE = {"staged_results": "run_results", "staged_topics": "run_topics"}
_GLOB = frozenset("*?[{")
RUN_FIELDS = 6
# The runs view (one row per run) carries a broadcast hint, kept in the view's plan: the
# evaluation context semi-joins every ranked line with it (the collection's runs, the runs to
# evaluate), and Spark, not knowing the size of a relation made on the driver, would
# otherwise shuffle and sort all ranked lines by run name for each of those joins.
BROADCAST = "broadcast"
BROADCAST_QRELS = 5_000_000  # judgments up to which the qrels are broadcast (about 0.5 GB at most)
Progress = Callable[[str], None]
"""A callback that is given one line of text (``read 129 run files``) as a stage ends."""


@dataclass(frozen=True)
class SparkFile:
    """One listed file: the name to show in messages, the URI Spark reads it by, its size."""

    label: str
    uri: str
    size: int = -1


def _spark_sql(name: str) -> str:
    """A Spark SQL file of ``queries/spark`` as one statement (no trailing semicolon)."""
    return sql.query(_SPARK, name).text.strip().rstrip(";")


def _normal_uri(uri: str) -> str:
    """``file:///x`` and ``file:/x`` (Hadoop writes both) as one form, for joining."""
    if uri.startswith("file:///"):
        return "file:/" + uri[len("file:///") :]
    return uri


def list_files(spark: Any, patterns: Sequence[str | os.PathLike[str]], what: str) -> list[SparkFile]:
    """Expand paths and globs through Hadoop's file system, with the ingest's file-list errors.

    A path without glob characters keeps its own spelling in messages (as the warehouse
    names files); a file found by a glob is shown by its local path, or its URI elsewhere.
    """
    if not patterns:
        raise IngestError(what, None, f"no {'run' if what == 'runs' else what} files given")
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    files: list[SparkFile] = []
    seen: set[str] = set()
    for pattern in patterns:
        text = os.fspath(pattern)
        path = jvm.org.apache.hadoop.fs.Path(text)
        statuses = path.getFileSystem(conf).globStatus(path)
        glob = any(char in text for char in _GLOB)
        if not statuses:
            raise IngestError(text, None, "no such file")
        for status in sorted(statuses, key=lambda s: s.getPath().toString()):
            uri = status.getPath().toUri().toString()
            label = text if not glob else _label(uri)
            if status.isDirectory():
                raise IngestError(label, None, "is a directory, not a file")
            if _special_local(uri):
                # Hadoop lists a device or a pipe as a file of 0 bytes, which would be read as empty
                raise IngestError(label, None, "is not a regular file (a device, pipe or socket); Spark reads regular files")
            if uri in seen:
                raise IngestError(label, None, "the file is given twice")
            seen.add(uri)
            files.append(SparkFile(label, uri, int(status.getLen())))
    return files


def _special_local(uri: str) -> bool:
    """Whether a local ``file:`` URI names a device, a pipe or a socket (not a regular file)."""
    import stat

    if urlsplit(uri).scheme != "file":
        return False
    try:
        return not stat.S_ISREG(os.stat(_label(uri)).st_mode)
    except OSError:
        return False  # (Hadoop listed it; a file gone since is Spark's error to name)


def _label(uri: str) -> str:
    parts = urlsplit(uri)
    return unquote(parts.path) if parts.scheme == "file" else uri


def _register_texts(spark: Any, files: list[SparkFile], only: Sequence[int] | None = None) -> None:
    """spark_texts: one row per file (file_index, value: its whole text), empty files included.

    Each text's file index is looked up by its URI in a literal map (no join, so the texts are
    never shuffled). Spark's reader skips files of zero bytes; those get an empty text from
    the driver's listing. With ``only``, just those files (by index) are read.
    """
    from pyspark.sql import functions as F

    chosen = [(i, f) for i, f in enumerate(files) if only is None or i in set(only)]
    empty = [i for i, f in chosen if f.size == 0]
    read = [(i, f) for i, f in chosen if f.size != 0]
    frames = []
    if read:
        index = F.create_map(*[item for i, f in read for item in (F.lit(_normal_uri(f.uri)), F.lit(i))])
        uri = F.regexp_replace(F.input_file_name(), "^file:///", "file:/")
        frames.append(
            spark.read.text([f.uri for _, f in read], wholetext=True).select(
                F.element_at(index, uri).cast("int").alias("file_index"), "value"
            )
        )
    if empty or not frames:
        frames.append(spark.createDataFrame([(i, "") for i in empty], "file_index INT, value STRING"))
    texts = frames[0] if len(frames) == 1 else frames[0].unionByName(frames[1])
    texts.createOrReplaceTempView("spark_texts")


def _lines(spark: Any, files: list[SparkFile], only: Sequence[int] | None = None) -> None:
    _register_texts(spark, files, only)
    spark.sql(_spark_sql("text_lines")).createOrReplaceTempView("spark_lines")


def _fields(spark: Any, files: list[SparkFile], only: Sequence[int] | None = None) -> None:
    """spark_lines and spark_run_fields (lazy views) over the files (all, or ``only`` those)."""
    _lines(spark, files, only)
    spark.sql(_spark_sql("run_fields")).createOrReplaceTempView("spark_run_fields")


@dataclass(frozen=True)
class LoadedRuns:
    """What :func:`load_runs` registered: the runs in file order, with their line counts."""

    run_ids: list[str]
    files: list[SparkFile]
    line_counts: list[int]
    by_reader: int = 0
    """How many files evalwh's reader read on the executors (``reader="evalwh"``)."""
    without_reader: int = 0
    """How many files went to Spark SQL because an executor had no evalwh reader."""
    excluded: dict[str, int] = field(default_factory=dict)
    """Lines the excluded documents took from each run (methods §17), runs that lost any."""
    reader: str = "spark"
    """The reader asked for (:data:`READERS`)."""
    spark_sql_reason: str | None = None
    """Why Spark SQL read every file although evalwh's reader was asked for (None: it was used)."""
    first_left: tuple[str, str] | None = None
    """The first file evalwh's reader left for its form, and its reason (Spark SQL read it)."""

    @property
    def reader_line(self) -> str:
        """One line saying who read the run files, and why Spark SQL read any that evalwh's
        reader was asked to (``evalwh spark eval`` prints it on standard error)."""
        total = len(self.files)
        every = "the run file" if total == 1 else f"the {total:,} run files"
        if self.reader == "spark":
            return f"Spark SQL read {every} (--reader spark)"
        if self.spark_sql_reason is not None:
            return f"Spark SQL read {every}: {self.spark_sql_reason}"
        line = f"evalwh's reader read {self.by_reader:,} of {total:,} run files on the executors"
        if self.without_reader:
            line += (
                f"; {self.without_reader:,} went to Spark SQL because their executor has no evalwh reader "
                "(not installed there, or EVALWH_NO_READER set; docs/spark.md: --archives)"
            )
        formed = total - self.by_reader - self.without_reader
        if formed and self.first_left is not None:
            label, reason = self.first_left
            others = f"the {formed:,} others" if self.without_reader else "the others"
            line += f"; Spark SQL read {others} (not in the reader's plain form; the first, {label}: {reason})"
        return line


@dataclass(frozen=True)
class _FileCheck:
    """run_file_checks.sql's row for one file."""

    first_tag: str
    first_ok: bool
    line_count: int
    bad_fields: int
    bad_scores: int
    other_tags: bool
    duplicate_docs: int

    @property
    def rejected(self) -> bool:
        return bool(self.bad_fields or self.bad_scores or self.other_tags or self.duplicate_docs)


def _stage_runs(
    spark: Any,
    files: list[SparkFile],
    ignore_extra_fields: bool,
    note: Progress | None = None,
    only: Sequence[int] | None = None,
) -> dict[int, _FileCheck]:
    """Read the files once into staged_lines (materialised), check them in one query.

    The one read splits every line (run_fields.sql) and keeps what the checks and the ranking
    need (stage_run_lines.sql), in memory (spilling to disk); the checks
    (run_file_checks.sql), the ranking (insert_run_results.sql) and the lists' sizes read it
    instead of the files. With ``only``, just those files (by index; none: an empty
    staged_lines, nothing read).
    """
    _fields(spark, files, only)
    staged = spark.sql(_spark_sql("stage_run_lines"), args={"ignore_extra_fields": ignore_extra_fields})
    if only is not None and not only:
        staged.createOrReplaceTempView("staged_lines")
        return {}
    staged = staged.localCheckpoint(eager=True)
    staged.createOrReplaceTempView("staged_lines")
    if note:
        note(f"read {len(files) if only is None else len(only):,} run files with Spark SQL")
    checks = {
        r["file_index"]: _FileCheck(
            r["first_tag"], r["first_ok"], int(r["line_count"]), int(r["bad_fields"]),
            int(r["bad_scores"]), r["other_tags"], int(r["duplicate_docs"]),
        )
        for r in spark.sql(_spark_sql("run_file_checks")).collect()
    }
    if note:
        note(f"checked {sum(c.line_count for c in checks.values()):,} run lines")
    return checks


def check_run_files(
    spark: Any, paths: Sequence[str | os.PathLike[str]], *, ignore_extra_fields: bool = False
) -> dict[str, IngestError]:
    """Each run file checked on its own, in one pass: the error of every bad file, by name.

    What :func:`load_runs` would say about each file if it were given alone (run names are
    not compared across files). Empty for good files.
    """
    files = list_files(spark, paths, "runs")
    checks = _stage_runs(spark, files, ignore_extra_fields)
    errors = {
        files[i].label: IngestError(files[i].label, None, "the file holds no run lines")
        for i in range(len(files))
        if i not in checks
    }
    rejected = [i for i, c in sorted(checks.items()) if c.rejected]
    located = _locate_run_errors(spark, files, rejected, ignore_extra_fields=ignore_extra_fields)
    errors.update({files[i].label: error for i, error in located.items()})
    return errors


READERS = ("evalwh", "spark")
"""The run-file readers: evalwh's C reader on the executors (:mod:`evalwh.spark.executors`),
with Spark SQL's for the files it leaves and wherever it cannot be used (``evalwh spark
eval``'s default), and Spark SQL's alone (needs nothing on the executors)."""
# Why Spark SQL reads every run file although evalwh's reader was asked for (LoadedRuns.reader_line)
# (and executors.GRADES, executors' job failing: evalwh.spark.executors.read_files)
EXCLUDING = "excluded documents leave the runs before ranking, which evalwh's reader cannot do (methods §17)"
NOT_HERE = "evalwh's C reader is not available here (not built, or EVALWH_NO_READER set)"


def load_runs(
    spark: Any,
    paths: Sequence[str | os.PathLike[str]],
    *,
    collection: str = "spark",
    ignore_extra_fields: bool = False,
    progress: Progress | None = None,
    reader: str = "spark",
    rel: int = 1,
    float32_ties: bool = False,
    identical_ids: bool = False,
) -> LoadedRuns:
    """Read, check and rank TREC run files on Spark; register ``runs, run_results, run_topics``.

    One run per file, named by the tag of its first line, as ``evalwh ingest runs`` does.
    A bad file raises :class:`~evalwh.errors.IngestError` with the warehouse's message
    (``file:line: problem``) and nothing is registered. ``progress`` is called with a line
    of text as each stage ends. The ranking itself is lazy: it runs when the evaluation
    context (or a write-back) first reads ``run_results``.

    ``reader="evalwh"``: the executors read the files with evalwh's C reader
    (:mod:`evalwh.spark.executors`; evalwh installed on them, docs/spark.md), which gives
    only the judged lines with their running counts (relevant: grade >= ``rel``; ranked on
    float32 scores with ``float32_ties``) and each topic's line count, against the qrels
    registered before (:func:`load_qrels`); the files it leaves, Spark SQL reads, with the
    same rules and messages. Such runs have no ``run_results`` rows (the evaluation reads
    their judged rows): for a write-back (:mod:`evalwh.spark.writeback`), read with Spark SQL
    (``reader="spark"``, the default here). Spark SQL reads every file instead when the reader
    cannot be used: excluded documents (below), qrels with negative or fractional grades, a
    local master where this process cannot import it (:func:`evalwh.spark.executors.reader_here`),
    or its job failing on the executors (their Python without pyarrow, say); and each file an
    executor without it hands back. :attr:`LoadedRuns.reader_line` says which, in one line.

    Excluded documents (methods §17): the pairs :func:`load_qrels` and :func:`load_exclusions`
    registered (``spark_excluded``), and with ``identical_ids`` every document whose id is its
    topic's id, leave the checked lines before they are ranked, so the ranks close up as
    the warehouse's do; every file is then read by Spark SQL.
    """
    from evalwh.spark import exclusions, executors, ingest_selects, reader_rows
    from evalwh.spark.session import is_local

    if reader not in READERS:
        raise IngestError("runs", None, f"reader {reader!r}: expected one of {', '.join(READERS)}")
    files = list_files(spark, paths, "runs")
    if progress:
        progress(f"listed {len(files):,} run files")
    reader_rows.pop(id(spark), None)
    if spark.catalog.tableExists("run_exclusions"):
        spark.catalog.dropTempView("run_exclusions")
    if identical_ids:
        exclusions.add_sources(spark, [("rule", exclusions.IDENTICAL_IDS, None, 0)])
    elif spark.catalog.tableExists("spark_exclusion_sources"):
        spark.table("spark_exclusion_sources").where("origin <> 'rule'").localCheckpoint(eager=True) \
            .createOrReplaceTempView("spark_exclusion_sources")  # fmt: skip
    excluding = identical_ids or spark.catalog.tableExists("spark_excluded")
    why: str | None = None  # why Spark SQL reads every file, evalwh's reader asked for
    if reader == "evalwh" and excluding:
        why = EXCLUDING  # (the C reader ranks what it reads: exclusions go before ranking)
    elif reader == "evalwh" and is_local(spark.sparkContext.master) and not executors.reader_here():
        why = NOT_HERE  # (a local master's executors are this interpreter: no job to find it out)
    taken: dict[int, _FileCheck] = {}
    digests: dict[int, str] = {}
    missing, left = 0, None
    if reader == "evalwh" and why is None:
        if not spark.catalog.tableExists("qrels"):
            raise IngestError("runs", None, "evalwh's reader looks the lines up in the judgments: load the qrels first")
        read = executors.read_files(
            spark, [(i, f.uri, _normal_uri(f.uri)) for i, f in enumerate(files) if f.size != 0],
            ignore_extra_fields, rel, float32_ties, progress,
        )  # fmt: skip
        taken = {i: _FileCheck(tag, True, lines, 0, 0, False, 0) for i, (tag, lines) in read.taken.items()}
        digests, missing, why, left = read.digests, read.missing, read.why, read.left
    if why is not None and progress:
        progress(f"Spark SQL reads every run file: {why}")
    rest = [i for i in range(len(files)) if i not in taken]
    checks = _stage_runs(spark, files, ignore_extra_fields, progress, only=rest if taken else None)
    checks.update(taken)

    def locate(index: int) -> IngestError:
        return _locate_run_errors(spark, files, [index], ignore_extra_fields=ignore_extra_fields)[index]

    # the warehouse's order: each file's first line (no lines, a bad first line), then run
    # names, then every line
    for index, file in enumerate(files):
        if index not in checks:
            raise IngestError(file.label, None, "the file holds no run lines")
        if not checks[index].first_ok:
            raise locate(index)
    owners: dict[str, str] = {}
    for index, file in enumerate(files):
        tag = checks[index].first_tag
        if tag in owners:
            raise IngestError(
                file.label,
                None,
                f"run {tag!r} is also in {owners[tag]}; run ids must be unique "
                "(the tag of the first line names the run)",
            )
        owners[tag] = file.label
    rejected = [i for i in range(len(files)) if checks[i].rejected]
    if rejected:
        raise locate(min(rejected))

    run_ids = [checks[i].first_tag for i in range(len(files))]
    # each file's SHA-256 (of its decompressed content, as the warehouse's): the files are
    # read once more, without splitting, on the executors (the C reader hashed its own)
    if rest:
        digests.update(
            (r["file_index"], r["sha256"])
            for r in spark.sql(
                "SELECT file_index, sha2(CAST(value AS BINARY), 256) AS sha256 FROM spark_texts"
            ).collect()
        )
    line_counts = [checks[i].line_count for i in range(len(files))]
    spark.createDataFrame(
        [
            (collection, run_ids[i], run_ids[i], os.path.basename(f.label), digests[i], line_counts[i])
            for i, f in enumerate(files)
        ],
        "collection_id STRING, run_id STRING, tag STRING, source_file STRING, sha256 STRING, "
        "line_count BIGINT",
    ).hint(BROADCAST).createOrReplaceTempView("runs")
    excluded, emptied = exclusions.exclude(spark, collection, run_ids, identical_ids) if excluding else ({}, None)
    if excluded and progress:
        progress(f"excluded documents removed {sum(excluded.values()):,} lines from {len(excluded):,} runs")
    statements = ingest_selects(
        sql.query(_INGEST, "insert_run_results"),
        {"collection_id": collection, "run_ids": run_ids},
    )
    for relation, query in statements:
        spark.sql(query).createOrReplaceTempView(_AS_WAREHOUSE.get(relation, relation))
    if emptied is not None:
        # a list the exclusions emptied keeps its row, num_ret 0, as in the warehouse
        # (apply_exclusions.sql; 08_pairs.sql reads it as a topic the run did not return)
        spark.table("run_topics").unionByName(emptied).createOrReplaceTempView("run_topics")
    if taken:
        executors.register_rows(spark, collection, run_ids, rel, float32_ties)
    return LoadedRuns(
        run_ids, files, line_counts, len(taken), missing, excluded, reader, why,
        None if left is None else (files[left[0]].label, left[1]),
    )  # fmt: skip


def load_exclusions(spark: Any, paths: Sequence[str | os.PathLike[str]]) -> int:
    """Read exclusion files and add their pairs to ``spark_excluded`` (:mod:`evalwh.spark.exclusions`)."""
    from evalwh.spark import exclusions

    return exclusions.load_exclusions(spark, paths)


def _utf8_byte(body: bytes) -> int:
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as error:
        return error.start + 1
    return 0


def _body_bytes(spark: Any, index: int, line: int) -> bytes:
    row = spark.sql(
        "SELECT CAST(body AS BINARY) AS b FROM spark_lines WHERE file_index = :i AND line_number = :n",
        args={"i": index, "n": line},
    ).collect()
    return bytes(row[0]["b"])


_UNREADABLE = {
    "nul": "the line holds a NUL byte; is this a binary or compressed file?",
    "cr": "carriage return (\\r) inside the line; lines must end with \\n or \\r\\n",
}


def _unreadable(spark: Any, kind: str, index: int, line: int, fields: int = RUN_FIELDS, extra: bool = False, first: bool = False) -> str:  # noqa: E501
    if kind == "utf8":
        # the one message that needs the bytes: where in the line the UTF-8 breaks
        return f"the line is not valid UTF-8 (byte {_utf8_byte(_body_bytes(spark, index, line))})"
    if kind == "control":  # (named as evalwh ingest names it)
        from evalwh.io.formats import control_line_problem

        return control_line_problem(_body_bytes(spark, index, line), fields, extra, first)
    return _UNREADABLE[kind]


def _locate_run_errors(
    spark: Any,
    files: list[SparkFile],
    indexes: list[int],
    *,
    ignore_extra_fields: bool,
    one_tag: bool = True,
) -> dict[int, IngestError]:
    """The warehouse's message for the first bad line of each rejected run file."""
    if not indexes:
        return {}
    _fields(spark, files, only=indexes)  # (the staged lines keep no line texts)
    spark.createDataFrame([(i,) for i in indexes], "file_index INT").createOrReplaceTempView(
        "spark_rejected"
    )
    rows = spark.sql(
        _spark_sql("locate_run_error"),
        args={"ignore_extra_fields": ignore_extra_fields, "one_tag": one_tag},
    ).collect()
    found = {row["file_index"]: row["first_bad"] for row in rows}
    out = {}
    for index in indexes:
        label = files[index].label
        r = found.get(index)
        if r is None:
            out[index] = IngestError(label, None, "the file was rejected but no bad line was found")
            continue
        line, kind = r["line_number"], r["kind"]
        if kind in _UNREADABLE or kind in ("utf8", "control"):
            first = one_tag and line == r["first_tag_line"]  # (its tag names the run)
            problem = _unreadable(spark, kind, index, line, RUN_FIELDS, ignore_extra_fields, first)
        elif kind == "fields":
            problem = f"expected {RUN_FIELDS} fields, found {r['field_count']}"
        elif kind == "score":
            problem = f"score {r['score_text']!r} is not a finite number"
        elif kind == "tag":
            problem = (
                f"tag {r['tag']!r} differs from {r['first_tag']!r} on line {r['first_tag_line']}; "
                "a file holds one run (or give --run-id)"
            )
        else:
            problem = (
                f"document {r['doc_id']!r} appears twice for topic {r['query_id']!r} "
                f"(first on line {r['first_line_of_doc']})"
            )
        out[index] = IngestError(label, line, problem)
    return out


def load_qrels(
    spark: Any,
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    collection: str = "spark",
    qrels_id: str = "default",
    exclusion_labels: bool = True,
) -> int:
    """Read and check qrels file(s) on Spark as one qrels set; register the view ``qrels``.

    Grades are finite numbers, stored as DOUBLE. A bad file raises
    :class:`~evalwh.errors.IngestError` with the warehouse's message and nothing is
    registered. Returns the number of judgments. With ``exclusion_labels`` (the default)
    lines labelled -100 are excluded documents, not grades (methods §17): they leave the
    qrels for the view ``spark_excluded``, which :func:`load_runs` removes from the runs.
    """
    from evalwh.spark import exclusions

    for view in exclusions.VIEWS:
        if spark.catalog.tableExists(view):
            spark.catalog.dropTempView(view)  # (a new evaluation's exclusions)
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files = list_files(spark, paths, "qrels")
    _lines(spark, files)
    fields = spark.sql(_spark_sql("qrels_fields")).localCheckpoint(eager=True)
    fields.createOrReplaceTempView("spark_qrels_fields")
    counts = {
        r["file_index"]: r["n"]
        for r in spark.sql(
            "SELECT file_index, count(*) AS n FROM spark_qrels_fields GROUP BY file_index"
        ).collect()
    }
    for index, file in enumerate(files):
        if index not in counts:
            raise IngestError(file.label, None, "the file holds no qrels lines")
    bad = spark.sql(
        "SELECT * FROM spark_qrels_fields WHERE kind IS NOT NULL "
        "ORDER BY file_index, line_number LIMIT 1"
    ).collect()
    if bad:
        r = bad[0]
        label, line, kind = files[r["file_index"]].label, r["line_number"], r["kind"]
        if kind in ("nul", "cr", "utf8", "control"):
            raise IngestError(label, line, _unreadable(spark, kind, r["file_index"], line, 4))
        if kind == "fields":
            raise IngestError(label, line, f"expected 4 fields, found {r['field_count']}")
        if kind == "grade":
            raise IngestError(label, line, f"relevance {r['relevance_text']!r} is not a number")
        raise IngestError(
            label,
            line,
            f"document {r['doc_id']!r} is judged twice for topic {r['query_id']!r} "
            f"(first on line {r['first_line_of_doc']})",
        )
    judgments = int(sum(counts.values()))
    if exclusion_labels:
        labelled = spark.sql(
            "SELECT DISTINCT query_id, doc_id FROM spark_qrels_fields WHERE relevance = -100.0D"
        ).localCheckpoint(eager=True)
        pairs = labelled.count()
        if pairs:
            labelled.createOrReplaceTempView("spark_excluded")
            judgments -= spark.sql("SELECT count(*) AS n FROM spark_qrels_fields WHERE relevance = -100.0D").first()["n"]
            # their provenance, as the warehouse keeps it (the set's sha256: the write-back's)
            spark.sql(
                "SELECT 'qrels' AS origin, CAST(:source AS STRING) AS source, query_id, doc_id FROM spark_excluded",
                args={"source": qrels_id},
            ).createOrReplaceTempView("spark_excluded_documents")
            exclusions.add_sources(spark, [("qrels", qrels_id, None, pairs)])
    qrels = spark.sql(
        "SELECT CAST(:collection AS STRING) AS collection_id, CAST(:qrels_id AS STRING) AS qrels_id, "
        "query_id, iteration, doc_id, relevance FROM spark_qrels_fields"
        + (" WHERE relevance <> -100.0D" if exclusion_labels else ""),
        args={"collection": collection, "qrels_id": qrels_id},
    )
    # the judgments' join with the ranked lines (04_judged_rows.sql) broadcasts them, so that
    # the lines are not shuffled and sorted again for it (Spark, not knowing the size of a
    # materialised relation, may otherwise broadcast the lines or sort both sides)
    (qrels.hint(BROADCAST) if judgments <= BROADCAST_QRELS else qrels).createOrReplaceTempView("qrels")
    return judgments


def evaluate_files(
    spark: Any,
    qrels: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    runs: Sequence[str | os.PathLike[str]],
    measures: Sequence[str],
    *,
    collection: str = "spark",
    ignore_extra_fields: bool = False,
    progress: Progress | None = None,
    reader: str = "evalwh",
    exclusions: Sequence[str | os.PathLike[str]] = (),
    identical_ids: bool = False,
    exclusion_labels: bool = True,
    **options: Any,
) -> pd.DataFrame:
    """Evaluate run files against qrels file(s) entirely on Spark; per-topic values.

    Reads and checks the files (:func:`load_qrels`, :func:`load_runs` with ``reader``:
    ``"evalwh"``, evalwh's C reader on the executors where it can be used, Spark SQL's
    elsewhere, or ``"spark"``, Spark SQL's alone), then runs the evaluation
    context and the metric SQL (:func:`evalwh.spark.evaluate`; ``options`` are its options:
    ``depths, rel, unjudged, depth_cap, float32_ties, averaging, typed_names``).
    ``progress`` is told each stage as it ends. Excluded documents (methods §17): qrels
    lines labelled -100 (unless ``exclusion_labels`` is false), the pairs of the
    ``exclusions`` files and, with ``identical_ids``, documents whose id is their topic's
    leave the runs before ranking, as in the warehouse.

    Returns:
        ``run_id, query_id, measure, value``, as ``Warehouse.evaluate(per_query=True)``.
    """
    from evalwh.spark import evaluate

    judgments = load_qrels(spark, qrels, collection=collection, exclusion_labels=exclusion_labels)
    if progress:
        progress(f"read {judgments:,} judgments")
    if exclusions:
        load_exclusions(spark, exclusions)
    load_runs(
        spark, runs, collection=collection, ignore_extra_fields=ignore_extra_fields, progress=progress,
        reader=reader, rel=options.get("rel", 1), float32_ties=options.get("float32_ties", False),
        identical_ids=identical_ids,
    )  # fmt: skip
    frame = evaluate(spark, measures, collection=collection, **options)
    if progress:
        progress(f"ranked, judged and scored: {len(frame):,} values")
    return frame


RUN_TABLE_COLUMNS = ["run_id", "query_id", "doc_id", "score"]


def load_run_tables(
    spark: Any, paths: Sequence[str | os.PathLike[str]], *, collection: str = "spark"
) -> list[str]:
    """Runs from Parquet files in the warehouse's column layout; register the views as :func:`load_runs`.

    The columns are ``run_id, query_id, doc_id, score`` (``rank`` optional, kept as the rank
    given), as ``Warehouse.ingest_runs`` takes a DataFrame; a run may span files and a file
    may hold many runs. The checks are the DataFrame ingest's (finite scores, no document
    twice for a topic in a run), rows numbered from 1 in their file. Returns the run ids.
    """
    from pyspark.sql import functions as F

    from evalwh.spark import ingest_selects

    from evalwh.spark import reader_rows

    files = list_files(spark, paths, "runs")
    reader_rows.pop(id(spark), None)
    index = spark.createDataFrame(
        [(i, _normal_uri(f.uri)) for i, f in enumerate(files)], "file_index INT, uri STRING"
    )
    table = spark.read.parquet(*[f.uri for f in files])
    missing = [c for c in RUN_TABLE_COLUMNS if c not in table.columns]
    if missing:
        raise IngestError(files[0].label, None, f"missing columns {missing}; expected {RUN_TABLE_COLUMNS}")
    rank = F.col("rank").cast("string") if "rank" in table.columns else F.lit(None).cast("string")
    rows = table.select(
        F.regexp_replace(F.col("_metadata.file_path"), "^file:///", "file:/").alias("uri"),
        (F.col("_metadata.row_index") + 1).alias("row_number"),
        F.col("run_id").cast("string").alias("run_id"),
        F.col("query_id").cast("string").alias("query_id"),
        F.col("doc_id").cast("string").alias("doc_id"),
        F.col("score").cast("double").alias("score"),
        rank.alias("rank"),
    ).join(F.broadcast(index), "uri").drop("uri")
    rows.createOrReplaceTempView("spark_run_table")
    checked = spark.sql(_spark_sql("run_table_rows")).localCheckpoint(eager=True)
    checked.createOrReplaceTempView("spark_run_table_rows")
    bad = spark.sql(
        "SELECT * FROM spark_run_table_rows WHERE kind IS NOT NULL ORDER BY file_index, row_number LIMIT 1"
    ).collect()
    if bad:
        r = bad[0]
        label, row = files[r["file_index"]].label, r["row_number"]
        if r["kind"] == "key":
            raise IngestError(label, row, "run_id, query_id and doc_id must not be empty (NULL)")
        if r["kind"] == "score":
            # a missing score shows as pandas reads it (NaN), as the DataFrame ingest says
            score = r["score"] if r["score"] is not None else float("nan")
            raise IngestError(label, row, f"score {score} is not a finite number")
        first = r["first_of_doc"]
        where = f"row {first['row_number']}" if first["file_index"] == r["file_index"] else (
            f"{files[first['file_index']].label}:{first['row_number']}"
        )
        raise IngestError(
            label,
            row,
            f"document {r['doc_id']!r} appears twice for topic {r['query_id']!r} in run "
            f"{r['run_id']!r} (first on {where})",
        )
    stats = spark.sql(
        "SELECT run_id, count(*) AS n, "
        # an order-free content digest (the rows of a run in any order hash alike)
        "sha2(concat_ws(':', count(*), bit_xor(xxhash64(query_id, doc_id, score))), 256) AS digest "
        "FROM spark_run_table_rows GROUP BY run_id ORDER BY run_id"
    ).collect()
    if not stats:
        raise IngestError(files[0].label, None, "the file holds no run rows")
    run_ids = [r["run_id"] for r in stats]
    spark.createDataFrame(
        [(collection, r["run_id"], r["run_id"], "Parquet", r["digest"], r["n"]) for r in stats],
        "collection_id STRING, run_id STRING, tag STRING, source_file STRING, sha256 STRING, "
        "line_count BIGINT",
    ).hint(BROADCAST).createOrReplaceTempView("runs")
    spark.createDataFrame([(i, r) for i, r in enumerate(run_ids)], "file_index INT, run_id STRING").createOrReplaceTempView(
        "spark_run_index"
    )
    # the warehouse's staged_lines, as ingest_run_frame stages a DataFrame: the rank given is
    # the rank column, else the row's position within its run and topic
    spark.sql(
        "SELECT i.file_index, t.query_id, t.doc_id, "
        "coalesce(t.rank, CAST(row_number() OVER (PARTITION BY t.run_id, t.query_id "
        "ORDER BY t.file_index, t.row_number) AS STRING)) AS rank_given, t.score, "
        "true AS fields_ok, true AS score_ok, true AS tag_ok "
        "FROM spark_run_table_rows AS t JOIN spark_run_index AS i USING (run_id)"
    ).createOrReplaceTempView("staged_lines")
    for relation, query in ingest_selects(
        sql.query(_INGEST, "insert_run_results"), {"collection_id": collection, "run_ids": run_ids}
    ):
        spark.sql(query).createOrReplaceTempView(_AS_WAREHOUSE.get(relation, relation))
    return run_ids
