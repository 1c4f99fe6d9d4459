"""Run ingest: batches of files through DuckDB's reader, set-based checks, one ranking."""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from evalwh import formats, sql
from evalwh.errors import IngestError

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.warehouse import IngestResult, Progress, Warehouse

_INGEST = "evalwh.queries.ingest"
_BATCH_BYTES = 96 << 20


def check_frame_columns(frame: pd.DataFrame, required: list[str]) -> None:
    """Raise IngestError naming the missing columns of an input DataFrame."""
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise IngestError(
            "DataFrame", None, f"missing columns {missing}; expected {required}"
        )


def frame_sha256(frame: pd.DataFrame) -> str:
    """A content hash of a DataFrame that ignores row order."""
    import pandas as pd

    hashed = pd.util.hash_pandas_object(frame, index=False).sort_values()
    return hashlib.sha256(hashed.to_numpy().tobytes()).hexdigest()


def _batches(paths: list[Path]) -> list[list[Path]]:
    """Group files of the same delimiter into batches of about _BATCH_BYTES on disk."""
    by_delim: dict[str, list[Path]] = {}
    for path in paths:
        by_delim.setdefault(formats.sniff_delimiter(path), []).append(path)
    batches: list[list[Path]] = []
    for group in by_delim.values():
        batch: list[Path] = []
        size = 0
        for path in group:
            batch.append(path)
            size += path.stat().st_size
            if size >= _BATCH_BYTES:
                batches.append(batch)
                batch, size = [], 0
        if batch:
            batches.append(batch)
    return batches


def _existing(wh: Warehouse, collection: str) -> dict[str, tuple[str, str | None]]:
    rows = wh.con.execute(
        "SELECT run_id, sha256, tag FROM runs WHERE collection_id = ?", [collection]
    ).fetchall()
    return {run_id: (digest, tag) for run_id, digest, tag in rows}


def _claim(
    wh: Warehouse,
    collection: str,
    run_id: str,
    digest: str,
    label: str,
    replace: bool,
    existing: dict[str, tuple[str, str | None]],
    claimed: dict[str, str],
) -> str:
    """Decide ingested / replaced / unchanged for one run, or raise on a clash."""
    if run_id in claimed:
        raise IngestError(
            label, None, f"run {run_id!r} is also in {claimed[run_id]}; run ids must be unique"
        )
    claimed[run_id] = label
    if run_id not in existing:
        return "ingested"
    if existing[run_id][0] == digest:
        return "unchanged"
    if not replace:
        raise IngestError(
            label,
            None,
            f"run {run_id!r} already exists in collection {collection!r} with different "
            "content; use --replace to replace it",
        )
    for table in ("run_results", "run_topics", "runs"):
        wh.con.execute(
            f"DELETE FROM {table} WHERE collection_id = ? AND run_id = ?", [collection, run_id]
        )
    return "replaced"


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

    if not paths:
        raise IngestError("runs", None, "no run files given")
    if run_id is not None and len(paths) != 1:
        raise IngestError(str(paths[0]), None, "--run-id names one run; give exactly one file")
    seen_paths: set[Path] = set()
    for path in paths:
        if not path.exists():
            raise IngestError(str(path), None, "no such file")
        if path.is_dir():
            raise IngestError(str(path), None, "is a directory, not a file")
        if path.resolve() in seen_paths:
            raise IngestError(str(path), None, "the file is given twice")
        seen_paths.add(path.resolve())

    # Content hashes run in threads beside DuckDB (both release the GIL).
    with ThreadPoolExecutor(max_workers=2) as pool:
        digests = dict(zip(paths, pool.map(formats.content_sha256, paths)))

    existing = _existing(wh, collection)

    def unchanged(path: Path) -> str | None:
        """The stored run with this exact content under the same name, if any."""
        digest = digests[path]
        if run_id is not None:
            return run_id if existing.get(run_id, ("", None))[0] == digest else None
        return next((r for r, (d, tag) in existing.items() if d == digest and tag == r), None)

    results: list[IngestResult] = []
    claimed: dict[str, str] = {}
    todo: list[Path] = []
    for path in paths:
        match = unchanged(path)
        if match is None:
            todo.append(path)
        else:
            claimed[match] = str(path)
            results.append(IngestResult("run", match, str(path), "unchanged", 0))

    done = len(paths) - len(todo)
    if progress:
        progress(done, len(paths))
    for batch in _batches(todo):
        results.extend(
            _ingest_batch(wh, batch, collection, run_id, replace, ignore_extra_fields, digests, existing, claimed)
        )
        done += len(batch)
        if progress:
            progress(done, len(paths))
    order = {str(p): i for i, p in enumerate(paths)}
    return sorted(results, key=lambda r: order[r.source])


def _ingest_batch(
    wh: Warehouse,
    batch: list[Path],
    collection: str,
    run_id: str | None,
    replace: bool,
    ignore_extra_fields: bool,
    digests: dict[Path, str],
    existing: dict[str, tuple[str, str | None]],
    claimed: dict[str, str],
) -> list[IngestResult]:
    from evalwh.warehouse import IngestResult

    names = {str(p): p for p in batch}
    delim = formats.sniff_delimiter(batch[0])
    wh.run(sql.query(_INGEST, "stage_run_lines"), {"files": list(names), "delim": delim})
    messy = [
        r[0] for r in wh.con.execute("SELECT DISTINCT filename FROM staged_lines WHERE messy").fetchall()
    ]
    if messy:
        wh.con.execute("DELETE FROM staged_lines WHERE filename IN (SELECT unnest(?))", [messy])
        wh.run(sql.query(_INGEST, "stage_run_lines_regex"), {"files": messy})
    checks = {
        row[0]: row
        for row in wh.run(
            sql.query(_INGEST, "run_checks"), {"ignore_extra_fields": ignore_extra_fields}
        ).fetchall()
    }
    accepted: list[tuple[str, str]] = []
    results: list[IngestResult] = []
    for name, path in names.items():
        if name not in checks:
            raise IngestError(name, None, "the file holds no run lines")
        _, line_count, tag_count, tag, bad_fields, bad_score, duplicates = checks[name]
        if bad_fields or bad_score or duplicates or (tag_count > 1 and run_id is None):
            raise formats.locate_run_error(
                path, ignore_extra_fields=ignore_extra_fields, one_tag=run_id is None
            )
        rid = run_id if run_id is not None else tag
        status = _claim(wh, collection, rid, digests[path], name, replace, existing, claimed)
        if status == "unchanged":
            results.append(IngestResult("run", rid, name, status, line_count))
            continue
        accepted.append((name, rid))
        wh.con.execute(
            "INSERT INTO runs (collection_id, run_id, tag, source_file, sha256, line_count)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [collection, rid, tag if tag_count == 1 else None, os.path.basename(name), digests[path], line_count],
        )
        results.append(IngestResult("run", rid, name, status, line_count))
    if accepted:
        wh.con.execute("CREATE OR REPLACE TEMP TABLE staged_accepted (filename VARCHAR, run_id VARCHAR)")
        wh.con.executemany("INSERT INTO staged_accepted VALUES (?, ?)", accepted)
        wh.run(sql.query(_INGEST, "insert_run_results"), {"collection_id": collection})
    wh.con.execute("DROP TABLE IF EXISTS staged_lines")
    wh.con.execute("DROP TABLE IF EXISTS staged_results")
    return results


def ingest_run_frame(
    wh: Warehouse, frame: pd.DataFrame, collection: str, *, run_id: str | None, replace: bool
) -> list[IngestResult]:
    """Ingest runs from a DataFrame (``query_id, doc_id, score[, run_id]``)."""
    import numpy as np
    import pandas as pd

    from evalwh.warehouse import IngestResult

    check_frame_columns(frame, ["query_id", "doc_id", "score"])
    if "run_id" not in frame.columns and run_id is None:
        raise IngestError("DataFrame", None, "no run_id column; pass run_id= to name the run")
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
        raise IngestError("DataFrame", row + 1, f"score {frame['score'].iloc[row]!r} is not a finite number")
    staged["score"] = score
    staged["rank_given"] = (
        frame["rank"].astype(str) if "rank" in frame.columns else staged.groupby(["run_id", "query_id"]).cumcount().add(1).astype(str)
    )
    dup = staged.duplicated(["run_id", "query_id", "doc_id"])
    if dup.any():
        row = int(dup.to_numpy().nonzero()[0][0])
        raise IngestError(
            "DataFrame",
            row + 1,
            f"document {staged['doc_id'].iloc[row]!r} appears twice for topic "
            f"{staged['query_id'].iloc[row]!r} in run {staged['run_id'].iloc[row]!r}",
        )
    if staged.empty:
        raise IngestError("DataFrame", None, "the DataFrame holds no run rows")
    existing = _existing(wh, collection)
    claimed: dict[str, str] = {}
    results: list[IngestResult] = []
    accepted: list[str] = []
    for rid, part in staged.groupby("run_id", sort=True):
        rid = str(rid)
        digest = frame_sha256(part.drop(columns=["rank_given"]))
        status = _claim(wh, collection, rid, digest, "DataFrame", replace, existing, claimed)
        results.append(IngestResult("run", rid, "DataFrame", status, len(part)))
        if status != "unchanged":
            accepted.append(rid)
            wh.con.execute(
                "INSERT INTO runs (collection_id, run_id, tag, source_file, sha256, line_count)"
                " VALUES (?, ?, ?, 'DataFrame', ?, ?)",
                [collection, rid, rid, digest, len(part)],
            )
    if accepted:
        wh.con.register("staged_frame", staged[staged["run_id"].isin(accepted)])
        wh.con.execute(
            "CREATE OR REPLACE TEMP TABLE staged_lines AS SELECT run_id AS filename, query_id, "
            "doc_id, rank_given AS rank_text, CAST(score AS VARCHAR) AS score_text FROM staged_frame"
        )
        wh.con.unregister("staged_frame")
        wh.con.execute(
            "CREATE OR REPLACE TEMP TABLE staged_accepted AS "
            "SELECT DISTINCT filename, filename AS run_id FROM staged_lines"
        )
        wh.run(sql.query(_INGEST, "insert_run_results"), {"collection_id": collection})
        wh.con.execute("DROP TABLE IF EXISTS staged_lines")
        wh.con.execute("DROP TABLE IF EXISTS staged_results")
    return results


def run_metadata_frame(source: str | os.PathLike[str] | pd.DataFrame) -> pd.DataFrame:
    """Normalise a run-metadata table to ``run_id, group_name, run_type, pooled``."""
    import pandas as pd

    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.exists():
            raise IngestError(str(path), None, "no such file")
        frame = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
        label = str(path)
    else:
        frame, label = source.astype(str), "DataFrame"
    columns = {c.lower(): c for c in frame.columns}

    def pick(*names: str) -> str | None:
        return next((columns[n] for n in names if n in columns), None)

    id_col = pick("run_id", "runtag", "run")
    if id_col is None:
        raise IngestError(label, 1, f"no run id column (run_id or runtag) among {list(frame.columns)}")
    out = pd.DataFrame({"run_id": frame[id_col].astype(str)})
    group_col, type_col, pooled_col = pick("group", "group_name"), pick("type", "run_type"), pick("pooled", "judged_pooled")
    out["group_name"] = frame[group_col].astype(str) if group_col else None
    out["run_type"] = frame[type_col].astype(str) if type_col else None
    if pooled_col:
        text = frame[pooled_col].astype(str).str.strip().str.lower()
        truth = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}
        bad = ~text.isin(list(truth))
        if bad.any():
            row = int(bad.to_numpy().nonzero()[0][0])
            raise IngestError(label, row + 2, f"pooled flag {text.iloc[row]!r} is not 1/0 or true/false")
        out["pooled"] = text.map(truth).astype(bool)
    else:
        out["pooled"] = None
    return out
