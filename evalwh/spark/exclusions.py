"""Excluded documents on Spark (methods §17): loaded with their sources, removed before ranking.

The views, as the warehouse's tables of schema/024_exclusions.sql: ``spark_excluded`` (the
distinct pairs the runs lose), ``spark_excluded_documents`` (origin, source, query_id,
doc_id), ``spark_exclusion_sources`` (origin, source, sha256, pairs) and, once runs lost
lines, ``run_exclusions`` (each removed line with its rank in the whole list).
:func:`evalwh.spark.files.load_qrels` starts them afresh and adds a qrels set's -100 lines,
:func:`load_exclusions` adds exclusion files, :func:`evalwh.spark.files.load_runs` the rule
identical_ids and calls :func:`exclude`; :mod:`evalwh.spark.writeback` writes them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from evalwh import sql
from evalwh.errors import IngestError

_INGEST = "evalwh.queries.ingest"
# The excluded documents' views: the distinct pairs the runs lose (spark_excluded), the pairs
# with their source (spark_excluded_documents: origin, source, query_id, doc_id) and the
# sources (spark_exclusion_sources: origin, source, sha256, pairs), as the warehouse's
# excluded_documents and exclusion_sources (schema/024_exclusions.sql).
IDENTICAL_IDS = "identical_ids"  # the rule's name as a source (the warehouse's)
VIEWS = ("spark_excluded", "spark_excluded_documents", "spark_exclusion_sources")
_SOURCE_SCHEMA = "origin STRING, source STRING, sha256 STRING, pairs BIGINT"


def exclude(spark: Any, collection: str, run_ids: list[str], identical_ids: bool) -> tuple[dict[str, int], Any]:
    """Remove the excluded documents from the checked lines (``staged_lines``) before ranking.

    Registers ``run_exclusions`` (lazy): the lines removed, each with its score, its rank in
    the run as given (trec_eval's order of the whole list) and its rank column, as the
    warehouse's run_exclusions (schema/024_exclusions.sql). Returns the lines removed per
    run (runs that lost any) and the lists emptied, as run_topics rows with num_ret 0 (None
    when none was).
    """
    from pyspark.sql import functions as F

    from evalwh.spark import ingest_selects

    staged = spark.table("staged_lines")
    kept = staged
    if spark.catalog.tableExists("spark_excluded"):
        kept = kept.join(F.broadcast(spark.table("spark_excluded")), on=["query_id", "doc_id"], how="left_anti")
    if identical_ids:
        kept = kept.where(F.col("query_id") != F.col("doc_id"))
    kept = kept.localCheckpoint(eager=True)
    before = {r["file_index"]: r["n"] for r in staged.groupBy("file_index").agg(F.count("*").alias("n")).collect()}
    after = {r["file_index"]: r["n"] for r in kept.groupBy("file_index").agg(F.count("*").alias("n")).collect()}
    lost = {run_ids[i]: n - after.get(i, 0) for i, n in before.items()}
    lost = {run: n for run, n in sorted(lost.items()) if n}
    emptied = None
    if lost:
        # the lists that lose lines, ranked whole as the warehouse ranked them at ingest
        removed = staged.join(kept.select("file_index", "line_number"), ["file_index", "line_number"], "left_anti")
        lists = removed.select("file_index", "query_id").distinct().localCheckpoint(eager=True)
        staged.join(lists, ["file_index", "query_id"], "left_semi").createOrReplaceTempView("staged_lines")
        ranked = None
        for relation, query in ingest_selects(
            sql.query(_INGEST, "insert_run_results"), {"collection_id": collection, "run_ids": run_ids}
        ):
            frame = spark.sql(query)
            frame.createOrReplaceTempView(relation)
            if relation == "staged_results":
                ranked = frame
        assert ranked is not None
        names = F.element_at(F.array(*[F.lit(r) for r in run_ids]), F.col("file_index") + 1)
        gone = removed.select(names.alias("run_id"), "query_id", "doc_id")
        ranked.join(gone, ["run_id", "query_id", "doc_id"], "left_semi").select(
            F.col("collection_id").cast("string"), "run_id", "query_id", "doc_id",
            F.col("score").cast("double"), F.col("rank").cast("int"), F.col("rank_given").cast("string"),
        ).createOrReplaceTempView("run_exclusions")  # fmt: skip
        empty = lists.join(kept.select("file_index", "query_id").distinct(), ["file_index", "query_id"], "left_anti")
        if empty.count():
            emptied = empty.select(
                F.lit(collection).alias("collection_id"), names.alias("run_id"), "query_id",
                F.lit(0).cast("int").alias("num_ret"),
            ).localCheckpoint(eager=True)  # fmt: skip
    kept.createOrReplaceTempView("staged_lines")
    return lost, emptied


def add_sources(spark: Any, rows: list[tuple[str, str, str | None, int]]) -> None:
    """Add sources of exclusions to ``spark_exclusion_sources`` (a source of the same origin
    and name replaces the one before, as with the identical-id rule loaded twice)."""
    frame = spark.createDataFrame(rows, _SOURCE_SCHEMA)
    if spark.catalog.tableExists("spark_exclusion_sources"):
        old = spark.table("spark_exclusion_sources").join(frame.select("origin", "source"), ["origin", "source"], "left_anti")
        frame = old.unionByName(frame)
    frame.localCheckpoint(eager=True).createOrReplaceTempView("spark_exclusion_sources")


def exclusion_sources(spark: Any) -> list[tuple[str, str, str | None, int]]:
    """The sources of exclusions loaded: ``(origin, source, sha256, pairs)``, by origin and name."""
    if not spark.catalog.tableExists("spark_exclusion_sources"):
        return []
    rows = spark.table("spark_exclusion_sources").collect()
    return sorted((r["origin"], r["source"], r["sha256"], int(r["pairs"])) for r in rows)


def load_exclusions(spark: Any, paths: Sequence[str | os.PathLike[str]]) -> int:
    """Read exclusion files (``topic docid`` a line; local files) and add their pairs to ``spark_excluded``.

    The files are small and read here, as ``evalwh exclusions add`` reads them
    (:mod:`evalwh.io.exclusions`, with its messages); each is a source named by its path as
    given, as that command names it. Returns the pairs added.
    """
    from pathlib import Path

    from evalwh.io import formats
    from evalwh.io.exclusions import read_exclusions

    pairs: set[tuple[str, str]] = set()
    listed: list[tuple[str, str, str, str]] = []
    sources: list[tuple[str, str, str | None, int]] = []
    for path in paths:
        label = formats.label(Path(path))
        if any(source == label for _, source, _, _ in sources):
            raise IngestError(label, None, "the exclusion file is given twice")
        found = read_exclusions(Path(path))
        pairs.update(zip(found.query_id, found.doc_id, strict=True))
        listed += [("file", label, q, d) for q, d in zip(found.query_id, found.doc_id, strict=True)]
        sources.append(("file", label, found.sha256, len(found)))
    frame = spark.createDataFrame(sorted(pairs), "query_id STRING, doc_id STRING")
    if spark.catalog.tableExists("spark_excluded"):
        frame = frame.union(spark.table("spark_excluded")).distinct()
    frame.localCheckpoint(eager=True).createOrReplaceTempView("spark_excluded")
    documents = spark.createDataFrame(listed, "origin STRING, source STRING, query_id STRING, doc_id STRING")
    if spark.catalog.tableExists("spark_excluded_documents"):
        documents = spark.table("spark_excluded_documents").unionByName(documents)
    documents.localCheckpoint(eager=True).createOrReplaceTempView("spark_excluded_documents")
    add_sources(spark, sources)
    return len(pairs)
