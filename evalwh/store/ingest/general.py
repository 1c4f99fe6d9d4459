"""The general way in, for a run file the reader leaves: DuckDB's CSV reader, checks in SQL.

Step 4 of a run ingest (:mod:`evalwh.store.ingest`): a file the reader leaves (a comment,
mixed whitespace, a bad line, ...) is staged with flags by DuckDB's CSV reader
(``stage_run_lines.sql``, ``restage_run_lines.sql``), ``run_checks.sql`` counts bad lines and
duplicates (a bad file is re-read in Python to name its first bad line),
``insert_run_results.sql`` ranks it with ``trec_ranked`` and ``store_ranked.sql`` stores it by
key. A run DataFrame is stored by the same statements (:mod:`evalwh.store.ingest.frames`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from evalwh import sql
from evalwh.errors import IngestError, QueryError
from evalwh.io import formats
from evalwh.store.ingest.bookkeeping import insert_runs
from evalwh.store.ingest.files import RunFile
from evalwh.store.ingest.results import IngestResult

if TYPE_CHECKING:
    from evalwh.store.connection import Store

_INGEST = "evalwh.queries.ingest"


def _drop_staging(wh: Store) -> None:
    wh.con.execute("DROP VIEW IF EXISTS staged_ranking")
    wh.con.execute("DROP TABLE IF EXISTS staged_lines")


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


def _run_checks(wh: Store) -> dict[int, tuple[Any, ...]]:
    """run_checks.sql by file index: line count, bad fields, bad scores, other tags, duplicates."""
    return {row[0]: row for row in wh.run(sql.query(_INGEST, "run_checks")).fetchall()}


def _ingest_batch(
    wh: Store,
    batch: list[RunFile],
    collection: str,
    run_id: str | None,
    ignore_extra_fields: bool,
) -> list[IngestResult]:
    """Stage, check, rank and store one batch of run files (all share a delimiter)."""
    one_tag = run_id is None
    delimiter = batch[0].delimiter
    # The scans decide how DuckDB reads each file: unreadable files (NUL bytes, stray \r) are
    # rejected before it does, and files holding other whitespace than the delimiter go
    # through the any-whitespace split (as do files whose lines the fast reader cannot split,
    # which the checks find).
    general: set[int] = set()
    for index, file in enumerate(batch):
        scan = file.scanned()
        if scan.unreadable or scan.long_line:  # (found as the scan streamed the file)
            raise file.bad_line(ignore_extra_fields=ignore_extra_fields, one_tag=one_tag)
        if scan.control:  # an ESC, DEL or C1 somewhere: refused unless only comments hold it
            error = file.bad_line(ignore_extra_fields=ignore_extra_fields, one_tag=one_tag)
            if error.line is not None:
                raise error
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
