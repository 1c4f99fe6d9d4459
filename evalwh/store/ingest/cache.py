"""The evaluation cache an ingest fills: every judged row of a run, with its running counts.

Step 5 of a run ingest (:mod:`evalwh.store.ingest`). :class:`JudgedCache` stores the judged
rows the run-file reader found for the primary qrels set, cut by :func:`_judged_parts` into
:data:`JUDGED_PARTS` and stretches of grade 0, and joins the rest in SQL with
:func:`refresh_cache`, the evaluation's own steps. A qrels ingest refreshes the cache of the
runs already stored the same way.
"""

from __future__ import annotations

import tempfile
from typing import TYPE_CHECKING, Any

import duckdb
import numpy as np

from evalwh import sql
from evalwh.errors import QueryError
from evalwh.io import arrays, runreader

if TYPE_CHECKING:
    from evalwh.store.connection import Store

_INGEST = "evalwh.queries.ingest"


# The cache's rows in the order the evaluation reads them best (schema/010): relevant rows
# first, then the others by rank, in parts cut at the depths metrics usually ask for. Each
# part goes in with its own INSERT, so DuckDB's row groups hold rows of one part, and their
# min/max let a metric's "is_rel" or "rank <= k" skip the others: the order of a sort, at
# the cost of a pass.
RANK_CUTS = (10, 20, 100, 1000)
JUDGED_PARTS = tuple(f"judged{i}" for i in range(len(RANK_CUTS) + 2))
# The reader's judgments (a dictionary whose keys are grades, runreader.graded) keep at most
# this much of their topics' tables in memory, the others in an anonymous temporary file
# (XL's 2.45 M judgments take 175 MB whole, 71 bytes each; L's 0.49 M take 25 MB and fit).
JUDGMENT_BYTES = 32 << 20
LOAD_JUDGMENTS = 1 << 20  # judgments loaded from DuckDB at a time


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


class JudgedCache:
    """Fills the evaluation cache (judged_results, schema/008) of newly ingested runs.

    The evaluation reads a run's judged rows, with their running counts, from that cache
    for every ingested qrels set at the default threshold (evalwh.store.context.build_context);
    filled here, at ingest, the first evaluation reads it as the tenth does and writes
    nothing. The rows of one qrels set (``default`` if there is one) come from the reader,
    which looks every line up while it ranks; other sets, and runs the general path read,
    are joined in SQL (the evaluation's own cache refresh, queries/context/05_cache_refresh).
    """

    def __init__(self, wh: Store, collection: str | None) -> None:
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
        with tempfile.TemporaryFile() as spill:  # the judgments keep their own descriptor
            return runreader.graded(
                module,
                self.wh.con,
                self.collection,
                self.primary,
                spill_fd=spill.fileno(),
                budget=JUDGMENT_BYTES,
                batch=LOAD_JUDGMENTS,
            )

    def add(self, builds: list[list[Any]], parts: list[list[str]]) -> None:
        """Store the reader's judged rows of the primary set and their builds.

        ``builds``: ``run_id, sha256, build_key`` of each run the rows are of; ``parts``: what
        was staged of each part of JUDGED_PARTS (Parquet files or Arrow tables,
        :func:`staged_relation`), stored in that order.
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
        rows = sql.query(_INGEST, "insert_judged_rows")
        for staged in parts:
            insert_staged(self.wh, rows, "staged_judged", staged)
        self.built.update(run_ids)

    def finish(self, general: list[str], read: list[str] | None = None) -> None:
        """Join what the reader did not judge in SQL: other sets, the general path's runs."""
        read = read or []
        for qrels_id in self.sets:
            runs = [r for r in read if qrels_id != self.primary or r not in self.built] + general
            if runs:
                refresh_cache(self.wh, self.collection, qrels_id, runs)


def fingerprint(wh: Store, collection: str, qrels_id: str) -> str:
    """The content fingerprint of a qrels set that cache entries are built from."""
    key = {"collection_id": collection, "qrels_id": qrels_id}
    ((value,),) = wh.run(sql.query("evalwh.queries.context", "fingerprint"), key).fetchall()
    return str(value)


def refresh_cache(wh: Store, collection: str, qrels_id: str, runs: list[str] | None) -> None:
    """Build the cached judged rows of ``runs`` (None: every run) for one ingested qrels set.

    The evaluation's own steps (evalwh.store.context.context_steps) up to the cache refresh, so
    the rows are exactly those the first evaluation would have written.
    """
    from evalwh.store.context import Options, context_steps

    built_from = fingerprint(wh, collection, qrels_id)
    steps = context_steps(collection, runs, Options(qrels_id=qrels_id), fingerprint=built_from)
    for name, params in steps[: steps.index(("05_source_cache", {}))]:
        wh.run(sql.query("evalwh.queries.context", name), params)


def staged_relation(wh: Store, parts: list[Any]) -> Any:
    """Staged parts of one kind as one DuckDB relation: Arrow tables, or Parquet files (which
    one scan streams within DuckDB's memory limit)."""
    import pyarrow as pa

    if parts and not isinstance(parts[0], str):
        return wh.con.from_arrow(pa.concat_tables(parts))
    return wh.con.read_parquet(parts)


def insert_staged(wh: Store, file: sql.SqlFile, name: str, parts: list[Any]) -> None:
    """Run ``file``, one INSERT without parameters, over staged parts readable as ``name``.

    Through a query on the parts' relation (:func:`staged_relation`), which leaves nothing
    behind: a registered Arrow table would stay in memory until the commit, as the
    transaction keeps what it dropped, so a small ingest would hold every row it staged.
    """
    try:
        staged_relation(wh, parts).query(name, file.text)
    except duckdb.Error as error:
        # When the statement fails, query() drops the name it gave the relation, which fails
        # in turn in the aborted transaction; the statement's own error (a full disk, say)
        # is then the context of that one: report it.
        first: BaseException = error
        while isinstance(first.__context__, duckdb.Error):
            first = first.__context__
        raise QueryError(f"{file.source} failed: {first}") from first
