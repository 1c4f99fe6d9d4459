"""What Spark read, checked and ranked, written back in evalwh's export layout; values as Parquet.

:func:`write_export` writes the relations :mod:`evalwh.spark.files` registered (``qrels``,
``runs``, ``run_results``, ``run_topics``) with the bookkeeping a warehouse ingest adds
(``collections``, ``qrels_sets``, ``topics``), and the excluded documents with their sources
and what they removed from each run when exclusions were loaded (``excluded_documents``,
``exclusion_sources``, ``run_exclusions``), as an evalwh export of format 2 (the layout of
:mod:`evalwh.store.transfer`: ``<table>/collection_id=<id>/*.parquet``, the collection in the
folder names only, and ``manifest.json`` with every table's columns and types and each
file's collection, rows and SHA-256). ``evalwh import DIR`` loads it into a warehouse without
parsing a run file again: the runs come ranked, the import gives them its own keys.

The executors write the Parquet files (so the directory must be on storage they and the driver
share); the driver then counts each file's rows from its footer, hashes it and writes the
manifest. Everything is written into a temporary sibling directory renamed into place at the
end, so a failed write leaves nothing behind.

:func:`write_values` writes per-topic values as Parquet partitioned by measure.

May import: :mod:`evalwh.store.transfer` (its constants and how an export is finished), :mod:`evalwh.io`, :mod:`evalwh.errors`,
:mod:`evalwh.sql`, :mod:`evalwh.spark`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import shutil
import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evalwh import sql
from evalwh._version import __version__
from evalwh.errors import EvalWhError
from evalwh.io.files import fsync_tree, partial_name, remove_leftovers
from evalwh.store.transfer import FORMAT, FORMAT_VERSION, PARTITION, publish_export

# Each table written, with its columns as the warehouse's export gives them (name, DuckDB
# type) and the Spark SQL that selects them (the collection is in the folder name only).
TABLES: dict[str, list[tuple[str, str, str]]] = {
    "collections": [
        ("collection_id", "VARCHAR", ""),
        ("description", "VARCHAR", "CAST(NULL AS STRING)"),
        ("created_at", "TIMESTAMP", "CAST(:now AS TIMESTAMP_NTZ)"),
    ],
    "qrels_sets": [
        ("collection_id", "VARCHAR", ""),
        ("qrels_id", "VARCHAR", "CAST(:qrels_id AS STRING)"),
        ("kind", "VARCHAR", "'ingested'"),
        ("source_file", "VARCHAR", "CAST(:qrels_source AS STRING)"),
        ("sha256", "VARCHAR", "CAST(:qrels_sha256 AS STRING)"),
        ("line_count", "BIGINT", "CAST(:qrels_lines AS BIGINT)"),
        ("parent_qrels_id", "VARCHAR", "CAST(NULL AS STRING)"),
        ("params", "VARCHAR", "CAST(NULL AS STRING)"),
        ("created_at", "TIMESTAMP", "CAST(:now AS TIMESTAMP_NTZ)"),
    ],
    "qrels": [
        ("collection_id", "VARCHAR", ""),
        ("qrels_id", "VARCHAR", "CAST(qrels_id AS STRING)"),
        ("query_id", "VARCHAR", "CAST(query_id AS STRING)"),
        ("iteration", "VARCHAR", "CAST(iteration AS STRING)"),
        ("doc_id", "VARCHAR", "CAST(doc_id AS STRING)"),
        ("relevance", "DOUBLE", "CAST(relevance AS DOUBLE)"),
    ],
    "topics": [("collection_id", "VARCHAR", ""), ("query_id", "VARCHAR", "query_id")],
    "runs": [
        ("collection_id", "VARCHAR", ""),
        ("run_id", "VARCHAR", "CAST(run_id AS STRING)"),
        ("tag", "VARCHAR", "CAST(tag AS STRING)"),
        ("source_file", "VARCHAR", "CAST(source_file AS STRING)"),
        ("sha256", "VARCHAR", "CAST(sha256 AS STRING)"),
        ("line_count", "BIGINT", "CAST(line_count AS BIGINT)"),
        ("ingested_at", "TIMESTAMP", "CAST(:now AS TIMESTAMP_NTZ)"),
        ("group_name", "VARCHAR", "CAST(NULL AS STRING)"),
        ("run_type", "VARCHAR", "CAST(NULL AS STRING)"),
        ("pooled", "BOOLEAN", "CAST(NULL AS BOOLEAN)"),
    ],
    "run_results": [
        ("collection_id", "VARCHAR", ""),
        ("run_id", "VARCHAR", "CAST(run_id AS STRING)"),
        ("query_id", "VARCHAR", "CAST(query_id AS STRING)"),
        ("doc_id", "VARCHAR", "CAST(doc_id AS STRING)"),
        ("score", "DOUBLE", "CAST(score AS DOUBLE)"),
        ("rank_given", "VARCHAR", "CAST(rank_given AS STRING)"),
        ("rank", "INTEGER", "CAST(rank AS INT)"),
    ],
    "run_topics": [
        ("collection_id", "VARCHAR", ""),
        ("run_id", "VARCHAR", "CAST(run_id AS STRING)"),
        ("query_id", "VARCHAR", "CAST(query_id AS STRING)"),
        ("num_ret", "INTEGER", "CAST(num_ret AS INT)"),
    ],
    # excluded documents (schema/024_exclusions.sql): written when exclusions were loaded
    "excluded_documents": [
        ("collection_id", "VARCHAR", ""),
        ("origin", "VARCHAR", "CAST(origin AS STRING)"),
        ("source", "VARCHAR", "CAST(source AS STRING)"),
        ("query_id", "VARCHAR", "CAST(query_id AS STRING)"),
        ("doc_id", "VARCHAR", "CAST(doc_id AS STRING)"),
    ],
    "exclusion_sources": [
        ("collection_id", "VARCHAR", ""),
        ("origin", "VARCHAR", "CAST(origin AS STRING)"),
        ("source", "VARCHAR", "CAST(source AS STRING)"),
        # a qrels set's -100 lines: the set's SHA-256, as the warehouse records it
        ("sha256", "VARCHAR", "CAST(CASE WHEN origin = 'qrels' THEN :qrels_sha256 ELSE sha256 END AS STRING)"),
        ("pairs", "BIGINT", "CAST(pairs AS BIGINT)"),
        ("created_at", "TIMESTAMP", "CAST(:now AS TIMESTAMP_NTZ)"),
    ],
    "run_exclusions": [
        ("collection_id", "VARCHAR", ""),
        ("run_id", "VARCHAR", "CAST(run_id AS STRING)"),
        ("query_id", "VARCHAR", "CAST(query_id AS STRING)"),
        ("doc_id", "VARCHAR", "CAST(doc_id AS STRING)"),
        ("score", "DOUBLE", "CAST(score AS DOUBLE)"),
        ("rank", "INTEGER", "CAST(rank AS INT)"),
        ("rank_given", "VARCHAR", "CAST(rank_given AS STRING)"),
    ],
}
# the FROM of each table's query: the relations evalwh.spark.files registered
_SOURCES = {
    "collections": "(SELECT 1)",
    "qrels_sets": "(SELECT 1)",
    "qrels": "qrels",
    "topics": "(SELECT DISTINCT query_id FROM qrels)",
    "runs": "runs",
    "run_results": "run_results",
    "run_topics": "run_topics",
    "excluded_documents": "spark_excluded_documents",
    "exclusion_sources": "spark_exclusion_sources",
    "run_exclusions": "run_exclusions",
}
# tables written only when their relation is registered (exclusions loaded, lines removed)
_OPTIONAL = frozenset({"excluded_documents", "exclusion_sources", "run_exclusions"})
# files per table: the small tables in one file each; the ranked lines as Spark partitions them
_ONE_FILE = frozenset(
    {"collections", "qrels_sets", "qrels", "topics", "runs", "run_topics", "excluded_documents", "exclusion_sources"}
)


def _local(directory: str | os.PathLike[str]) -> Path:
    text = os.fspath(directory)
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("", "file"):
        raise EvalWhError(
            f"{text}: the export is written to a directory the driver reads (a local or mounted "
            "path), since it hashes every file for the manifest; copy it to other storage after"
        )
    # absolute: Spark's writers take it as a file: URI
    return Path(urllib.parse.unquote(parts.path) if parts.scheme == "file" else text).resolve()


def _hadoop_path(path: Path) -> str:
    """A local directory as Hadoop takes it: ``file://`` and the path as it is.

    (Not ``Path.as_uri()``: Hadoop keeps a percent-encoded ``collection_id%3Dc`` as the name.)
    """
    return f"file://{path}"


def _fresh(target: Path) -> Path:
    """A partial sibling of ``target`` to write into, after checking ``target`` is free."""
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise EvalWhError(f"{target}: exists and is not an empty directory; write into a new or empty directory")
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_leftovers(target)
    partial = partial_name(target)
    shutil.rmtree(partial, ignore_errors=True)
    return partial


def _tidy(folder: Path) -> list[Path]:
    """The Parquet files Spark wrote under ``folder``; its markers and checksum files removed."""
    for path in list(folder.rglob("*")):
        if path.is_file() and (path.name.startswith(("_", ".")) or path.suffix == ".crc"):
            path.unlink()
    return sorted(p for p in folder.rglob("*.parquet"))


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def qrels_source(spark: Any, paths: Sequence[str | os.PathLike[str]]) -> tuple[str, str]:
    """The qrels' ``source_file`` and ``sha256`` as the warehouse records them.

    One file: its name as given and the SHA-256 of its decompressed content. Several files
    (one qrels set on Spark): the names joined by commas and the SHA-256 of their contents in
    the order given.
    """
    from evalwh.spark.files import list_files

    files = list_files(spark, paths, "qrels")
    texts = spark.read.text([f.uri for f in files], wholetext=True)
    by_uri: dict[str, bytes] = {}
    for row in texts.selectExpr("input_file_name() AS uri", "CAST(value AS BINARY) AS b").collect():
        by_uri[row["uri"].replace("file:///", "file:/")] = bytes(row["b"])
    digest = hashlib.sha256()
    for file in files:
        digest.update(by_uri.get(file.uri.replace("file:///", "file:/"), b""))
    return ", ".join(f.label for f in files), digest.hexdigest()


def write_export(
    spark: Any,
    directory: str | os.PathLike[str],
    *,
    collection: str,
    qrels_id: str = "default",
    qrels_source: tuple[str, str] = ("", ""),
) -> dict[str, Any]:
    """Write the registered qrels and ranked runs as an evalwh export (format 2) of ``collection``.

    Args:
        spark: The session on which :func:`evalwh.spark.files.load_qrels` and ``load_runs``
            registered ``qrels, runs, run_results, run_topics`` for ``collection``.
        directory: A new or empty directory the driver can read (executors write into it).
        collection: The collection the rows belong to (the name they were loaded under).
        qrels_id: The qrels set's name.
        qrels_source: ``(source_file, sha256)`` of the qrels (:func:`qrels_source`).

    Returns:
        The manifest, as written to ``directory/manifest.json``.
    """
    target = _local(directory)
    partial = _fresh(target)
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")
    # the set's lines as the warehouse counts them: with those labelled -100 (they left the set)
    fields = "spark_qrels_fields" if spark.catalog.tableExists("spark_qrels_fields") else "qrels"
    lines = spark.table(fields).count()
    args = {
        "now": now, "qrels_id": qrels_id, "qrels_source": qrels_source[0], "qrels_sha256": qrels_source[1],
        "qrels_lines": lines,
    }  # fmt: skip
    folder_name = f"{PARTITION}={urllib.parse.quote(collection, safe='')}"
    try:
        entries = {}
        with _parquet_settings(spark):
            for table, columns in TABLES.items():
                if table in _OPTIONAL and not spark.catalog.tableExists(_SOURCES[table]):
                    continue
                selected = ", ".join(f"{expr} AS {name}" for name, _, expr in columns if expr)
                query = f"SELECT {selected} FROM {_SOURCES[table]}"
                if table == "qrels_sets":
                    query += " AS q"  # one row
                frame = spark.sql(query, args={k: v for k, v in args.items() if f":{k}" in query})
                if table in _ONE_FILE:
                    frame = frame.coalesce(1)
                folder = partial / table / folder_name
                frame.write.parquet(_hadoop_path(folder))
                entries[table] = _entry(partial, table, columns, collection, _tidy(folder))
        manifest = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "evalwh_version": __version__,
            "duckdb_version": None,
            "written_by": "evalwh spark ingest",
            "created_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "source": "spark",
            "migrations": sorted(sql.load_package("evalwh.schema")),
            "collections": [collection],
            "tables": entries,
        }
        publish_export(partial, target, manifest)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return manifest


def _entry(
    root: Path, table: str, columns: list[tuple[str, str, str]], collection: str, paths: list[Path]
) -> dict[str, Any]:
    """A table's manifest entry: columns and types, each file's rows (from its footer) and hash."""
    import pyarrow.parquet as pq

    files = []
    for path in paths:
        rows = pq.ParquetFile(path).metadata.num_rows
        if not rows:  # (an empty partition's file: nothing to import)
            path.unlink()
            continue
        files.append(
            {
                "path": path.relative_to(root).as_posix(),
                PARTITION: collection,
                "rows": int(rows),
                "sha256": _sha256(path),
                "bytes": path.stat().st_size,
            }
        )
    return {
        "columns": [{"name": name, "type": kind} for name, kind, _ in columns],
        "partitioned_by": PARTITION,
        "rows": sum(f["rows"] for f in files),
        "files": files,
    }


class _parquet_settings:
    """Timestamps as Parquet's microseconds, no _SUCCESS marker, for one block."""

    _SETTINGS = {"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS"}

    def __init__(self, spark: Any) -> None:
        self.spark = spark
        self.before: dict[str, str | None] = {}

    def __enter__(self) -> None:
        for key, value in self._SETTINGS.items():
            self.before[key] = self.spark.conf.get(key, None)
            self.spark.conf.set(key, value)

    def __exit__(self, *exc: object) -> None:
        for key, value in self.before.items():
            if value is None:
                self.spark.conf.unset(key)
            else:
                self.spark.conf.set(key, value)


def write_values(frame: Any, directory: str | os.PathLike[str]) -> int:
    """Write a Spark DataFrame of per-topic values as Parquet partitioned by ``measure``.

    ``frame`` has ``run_id, query_id, measure, value``; ``directory`` must be new or empty
    (the files are written into a partial sibling and renamed into place). Returns the number
    of files written.
    """
    target = _local(directory)
    partial = _fresh(target)
    try:
        frame.repartition("measure").write.partitionBy("measure").parquet(_hadoop_path(partial))
        written = _tidy(partial)
        fsync_tree(partial)
        if target.exists():
            target.rmdir()
        partial.rename(target)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return len(written)
