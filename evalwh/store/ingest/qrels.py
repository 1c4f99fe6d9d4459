"""Qrels on their way in: a file split by DuckDB's CSV reader and checked in SQL, or a DataFrame.

A qrels set replaces one of the same name only with ``replace``; once stored, the evaluation
cache of the runs already stored is filled for it (:func:`evalwh.store.ingest.cache.refresh_cache`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalwh import sql
from evalwh.errors import IngestError, QueryError
from evalwh.io import formats
from evalwh.io.frames import standard_columns
from evalwh.store.ingest.cache import refresh_cache
from evalwh.store.ingest.files import READ_ERRORS, Spill
from evalwh.store.ingest.frames import _first_duplicate, _show, check_frame_ids, frame_sha256
from evalwh.store.ingest.results import IngestResult

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.store.connection import Store

_INGEST = "evalwh.queries.ingest"


def _stage_qrels(wh: Store, path: Path, delimiter: str | None) -> None:
    """Stage a qrels file: split by DuckDB's CSV reader where it reads it right, else by regex."""
    if delimiter is not None:
        wh.run(sql.query(_INGEST, "stage_qrels_fast"), {"files": [str(path)], "delim": delimiter})
        ((unsure,),) = wh.con.execute("SELECT bool_or(split_unsure) FROM staged_qrels").fetchall()
        if not unsure:
            return
    wh.run(sql.query(_INGEST, "stage_qrels"), {"files": [str(path)]})


def ingest_qrels_source(
    wh: Store,
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
            formats.require_file(path)
            readable = spill.copy(path) if formats.needs_copy(path) else path
            return _ingest_qrels(wh, readable, formats.label(path), collection, qrels_id, replace)
        finally:
            spill.close()
    return _ingest_qrels(wh, source, "DataFrame", collection, qrels_id, replace)


def _ingest_qrels(
    wh: Store,
    source: Path | pd.DataFrame,
    label: str,
    collection: str,
    qrels_id: str,
    replace: bool,
) -> IngestResult:
    """Ingest a qrels file (``source``, named ``label`` in messages) or DataFrame."""
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
