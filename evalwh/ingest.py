"""Ingest of runs and qrels: DuckDB's reader in batches, set-based checks, one ranking.

A run ingest goes through these steps, all inside the caller's transaction:

1. sniff each file's first data line (its delimiter and tag, hence the run id);
2. skip files whose run is already stored with the same content, and refuse (or, with
   ``replace``, delete) runs stored with different content;
3. scan the files in two worker threads, a batch ahead of DuckDB (SHA-256, the whitespace a
   file holds, NUL bytes and stray ``\r``: :func:`evalwh.formats.scan`); a gzipped file is
   decompressed there once, into a temporary plain copy that DuckDB reads;
4. per batch of files sharing a delimiter: stage the lines with flags
   (``stage_run_lines.sql``), re-read with the any-whitespace split the files that need it
   (``restage_run_lines.sql``), count bad lines and duplicates (``run_checks.sql``), and
   only if a file is bad re-read it in Python to name its first bad line;
5. rank the staged lines in trec_eval's order and store them (``insert_run_results.sql``).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
import zlib
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from evalwh import formats, sql
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
    """Raise IngestError unless ``path`` is an existing file."""
    if not path.exists():
        raise IngestError(str(path), None, "no such file")
    if path.is_dir():
        raise IngestError(str(path), None, "is a directory, not a file")


def _unreadable(path: Path, error: BaseException) -> IngestError:
    return IngestError(str(path), None, f"cannot read the file: {error}")


@contextmanager
def bulk_session(wh: Warehouse) -> Iterator[None]:
    """Let DuckDB write staged and inserted rows in any order during a bulk ingest.

    Ranks are computed, never taken from the line order, so insertion order does not matter,
    and without it DuckDB materialises and sorts in parallel. Enter it outside the ingest's
    transaction: a failed statement aborts the transaction, and the setting can only be put
    back after the rollback (inside a caller's own transaction it stays off until then).
    """
    ((before,),) = wh.con.execute("SELECT current_setting('preserve_insertion_order')").fetchall()
    wh.con.execute("SET preserve_insertion_order = false")
    try:
        yield
    finally:
        # in an aborted transaction the setting cannot be put back; the rollback does that
        with suppress(duckdb.TransactionException):
            wh.con.execute("SET preserve_insertion_order = $value", {"value": bool(before)})


def _drop_staging(wh: Warehouse) -> None:
    wh.con.execute("DROP VIEW IF EXISTS staged_ranking")
    wh.con.execute("DROP TABLE IF EXISTS staged_lines")


# -- runs: bookkeeping ----------------------------------------------------------------------


@dataclass
class RunFile:
    """One run file on its way in: sniffed at once, scanned in a worker thread later."""

    path: Path
    run_id: str
    first_tag: str
    delimiter: str
    scan: Future[formats.Scan] | None = None
    copy: Path | None = None  # the decompressed copy the scan writes, for a .gz file
    status: str = "ingested"

    @property
    def label(self) -> str:
        return str(self.path)

    @property
    def text(self) -> Path:
        """The file DuckDB reads: the plain copy of a gzipped file once scanned, or the file."""
        return self.copy if self.copy is not None else self.path

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

    def __init__(self) -> None:
        self.pool = ThreadPoolExecutor(max_workers=2)
        self.spill = tempfile.TemporaryDirectory(prefix="evalwh-ingest-")
        self.count = 0

    def submit(self, files: list[RunFile], *, copy: bool) -> None:
        """Start scanning ``files`` (each once); gzipped ones get a plain copy if ``copy``."""
        for file in files:
            if file.scan is not None:
                continue
            if copy and file.path.suffix == ".gz":
                self.count += 1
                file.copy = Path(self.spill.name) / f"{self.count}.txt"
            file.scan = self.pool.submit(formats.scan, file.path, file.copy)

    def release(self, files: list[RunFile]) -> None:
        """Delete the plain copies of files DuckDB has read."""
        for file in files:
            if file.copy is not None:
                file.copy.unlink(missing_ok=True)

    def close(self) -> None:
        """Stop pending scans, wait for running ones, delete every copy."""
        self.pool.shutdown(wait=True, cancel_futures=True)
        self.spill.cleanup()


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
    for table in ("run_results", "run_topics", "runs"):
        # table names come from the fixed tuple above, values are parameters
        wh.con.execute(
            f"DELETE FROM {table} WHERE collection_id = ? AND run_id = ?", [collection, run_id]
        )


def _clash(label: str, run_id: str, collection: str) -> IngestError:
    return IngestError(
        label,
        None,
        f"run {run_id!r} already exists in collection {collection!r} with different "
        "content; use --replace to replace it",
    )


def _sniff(path: Path, run_id: str | None, ignore_extra_fields: bool) -> RunFile:
    """Read the first data line of a run file for its delimiter and tag."""
    try:
        first = formats.first_data_line(path)
    except READ_ERRORS as error:
        raise _unreadable(path, error) from None
    if first is None:
        raise IngestError(str(path), None, "the file holds no run lines")
    count = len(first.fields)
    if count < formats.RUN_FIELDS or (count > formats.RUN_FIELDS and not ignore_extra_fields):
        raise formats.locate_run_error(
            path, ignore_extra_fields=ignore_extra_fields, one_tag=run_id is None
        )
    tag = first.fields[formats.RUN_FIELDS - 1]
    return RunFile(path, run_id if run_id is not None else tag, tag, first.delimiter)


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
            ratio = GZIP_RATIO if file.path.suffix == ".gz" else 1
            size += file.path.stat().st_size * ratio
            if size >= _BATCH_BYTES:
                batches.append(batch)
                batch, size = [], 0
        if batch:
            batches.append(batch)
    return batches


# -- runs: files ----------------------------------------------------------------------------


def prepare_run_files(paths: list[Path], *, run_id: str | None, ignore_extra_fields: bool) -> list[RunFile]:
    """Check the file list and sniff each file's delimiter and tag (which names the run)."""
    if not paths:
        raise IngestError("runs", None, "no run files given")
    if run_id is not None and len(paths) != 1:
        raise IngestError(str(paths[0]), None, "--run-id names one run; give exactly one file")
    seen_paths: set[Path] = set()
    for path in paths:
        require_file(path)
        if path.resolve() in seen_paths:
            raise IngestError(str(path), None, "the file is given twice")
        seen_paths.add(path.resolve())

    files = [_sniff(path, run_id, ignore_extra_fields) for path in paths]
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
    from evalwh.warehouse import IngestResult

    files = prepare_run_files(paths, run_id=run_id, ignore_extra_fields=ignore_extra_fields)
    scanner = Scanner()
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

        batches = group_batches([f for f in files if f.label not in results])
        done = len(results)
        if progress:
            progress(done, len(files))
        for index, batch in enumerate(batches):
            for ahead in batches[index : index + 2]:
                scanner.submit(ahead, copy=True)
            for result in _ingest_batch(wh, batch, collection, run_id, ignore_extra_fields):
                results[result.source] = result
            scanner.release(batch)
            done += len(batch)
            if progress:
                progress(done, len(files))
        return [results[str(p)] for p in paths]
    finally:
        scanner.close()


def _staging_failed(
    batch: list[RunFile], error: Exception, ignore_extra_fields: bool, one_tag: bool
) -> IngestError:
    """DuckDB could not read a batch (bad UTF-8, a broken gzip stream): name the file and line."""
    for file in batch:
        file.scanned()  # a broken gzip stream is named here
        located = formats.locate_run_error(
            file.path, ignore_extra_fields=ignore_extra_fields, one_tag=one_tag
        )
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
        if scan.unreadable:
            raise formats.locate_run_error(
                file.path, ignore_extra_fields=ignore_extra_fields, one_tag=one_tag
            )
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
            raise formats.locate_run_error(
                file.path, ignore_extra_fields=ignore_extra_fields, one_tag=one_tag
            )
        tag = file.first_tag if other_tags == 0 else None
        source = os.path.basename(file.label)
        rows.append([collection, file.run_id, tag, source, file.scanned().sha256, line_count])
    insert_runs(wh, rows)
    wh.run(
        sql.query(_INGEST, "insert_run_results"),
        {"collection_id": collection, "run_ids": [f.run_id for f in batch]},
    )
    _drop_staging(wh)
    return [
        IngestResult("run", f.run_id, f.label, f.status, row[-1])
        for f, row in zip(batch, rows, strict=True)
    ]


# -- runs: DataFrames -----------------------------------------------------------------------


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
    if "rank" in frame.columns:
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
            if stored[rid][0] == digest:
                results.append(IngestResult("run", rid, "DataFrame", "unchanged", stored[rid][1]))
                continue
            if not replace:
                raise _clash("DataFrame", rid, collection)
            _delete_run(wh, collection, rid)
            status = "replaced"
        results.append(IngestResult("run", rid, "DataFrame", status, len(part)))
        accepted.append(rid)
        insert_runs(wh, [[collection, rid, rid, "DataFrame", digest, len(part)]])
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
        finally:
            wh.con.unregister("staged_frame")
        _drop_staging(wh)
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
    from evalwh.warehouse import IngestResult

    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        require_file(path)
        label = str(path)
        try:
            scan = formats.scan(path)
        except READ_ERRORS as error:
            raise _unreadable(path, error) from None
        if scan.unreadable:
            raise formats.locate_qrels_error(path)
        digest = scan.sha256
        stage: Any = path
    else:
        label = "DataFrame"
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
            located = formats.locate_qrels_error(stage)
            if located.line is not None:
                raise located from None
            raise IngestError(label, None, f"DuckDB could not read the file: {error}") from None
        ((line_count, bad_fields, bad_relevance, duplicates),) = wh.run(
            sql.query(_INGEST, "qrels_checks")
        ).fetchall()
        if line_count == 0 or bad_fields or bad_relevance or duplicates:
            raise formats.locate_qrels_error(stage)
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
