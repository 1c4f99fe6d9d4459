"""DataFrames on their way in: ids checked, content hashed, runs from a DataFrame ingested.

:func:`check_frame_ids`, :func:`frame_sha256` and the helpers of their messages serve run and
qrels DataFrames (and run metadata); :func:`ingest_run_frame` checks a run DataFrame and
stores it by the general path's statements (:mod:`evalwh.store.ingest.general`).
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING

from evalwh import sql
from evalwh.errors import IngestError
from evalwh.io.frames import standard_columns
from evalwh.io.printable import CONTROL
from evalwh.store.ingest.bookkeeping import (
    _clash,
    _delete_run,
    _drop_unused_pairs,
    _stored_runs,
    insert_runs,
    store_float32_order,
)
from evalwh.store.ingest.cache import JudgedCache
from evalwh.store.ingest.exclusions import apply as apply_exclusions
from evalwh.store.ingest.general import _drop_staging
from evalwh.store.ingest.keyed import registered
from evalwh.store.ingest.results import IngestResult

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.store.connection import Store

_INGEST = "evalwh.queries.ingest"


def check_frame_ids(frame: pd.DataFrame, columns: list[str], label: str = "DataFrame") -> None:
    """Refuse id cells that no TREC file could hold, naming the first offending row.

    Runs on the normalised frame (evalwh's column names), whatever the caller's layout was.
    Rows are numbered from 1, in frame order (``DataFrame:3: ...`` is the third row). A cell is
    refused when it is missing (None, NaN, NA), empty, or holds ASCII whitespace (space, tab,
    line break, vertical tab, form feed) or a NUL byte: a run or qrels file splits its fields
    on those, as trec_eval does, so no file could hold such an id; or a control character
    (ESC, DEL, C1, direction overrides: :data:`evalwh.io.printable.CONTROL`), which a
    terminal would obey.

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
        control = text.str.contains(CONTROL.pattern, regex=True).to_numpy(dtype=bool) & ~missing & ~spaced
        for mask, problem in (
            (missing, "is missing (None, NaN or NA)"),
            (empty, "is empty"),
            (spaced, "{shown} holds whitespace or a NUL byte, which no TREC file can hold"),
            (control, "{shown} holds a control character, which an id may not hold"),
        ):
            hits = np.flatnonzero(mask)
            if len(hits) and (first is None or hits[0] < first[0]):
                row = int(hits[0])
                value = values.iloc[row]
                first = (row, f"{column} " + problem.format(value=value, shown=_show(value)))
    if first is not None:
        raise IngestError(label, first[0] + 1, first[1])


NAME_BREAKS = re.compile(r"[ \t\n\r\x0b\x0c\x00]")
"""What no id may hold: ASCII whitespace (TREC files split their fields on it) or a NUL byte."""


def check_name(value: object, what: str) -> None:
    """Refuse a name given as an argument or option (a run id, a qrels id, a collection) that no file could hold.

    The same rule as for ids in files and DataFrames (:func:`check_frame_ids`): not empty, no
    ASCII whitespace, no NUL byte, no control character (ESC, DEL, C1, direction overrides:
    :data:`evalwh.io.printable.CONTROL`).

    Raises:
        IngestError: ``run id argument: 'a b' holds whitespace or a NUL byte, ...``.
    """
    label = f"{what} argument"
    if not isinstance(value, str):
        raise IngestError(label, None, f"{value!r} is not a string")
    if value == "":
        raise IngestError(label, None, f"the {what} is empty")
    if NAME_BREAKS.search(value):
        raise IngestError(label, None, f"{value!r} holds whitespace or a NUL byte, which no TREC file can hold")
    if CONTROL.search(value):
        # an ESC would reach every terminal that prints the id (evalwh.io.printable)
        raise IngestError(label, None, f"{value!r} holds a control character, which an id may not hold")


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


def _same_ranks_given(wh: Store, collection: str, run_id: str, part: pd.DataFrame) -> bool:
    """Whether the stored run gives back a frame's rank column as it is now.

    A frame's digest is its (topic, document, score) content (frame_sha256 of all but
    rank_given, whatever the rows' order), so a frame whose rank column alone changed is
    checked here, or it would be taken for unchanged and keep the ranks stored before. (A
    frame without a rank column is numbered in its own order, which is not content.)
    """
    with registered(wh, {"frame_ranks": part[["query_id", "doc_id", "rank_given"]]}):
        key = {"collection_id": collection, "run_id": run_id}
        ((changed,),) = wh.run(sql.query(_INGEST, "changed_ranks_given"), key).fetchall()
    return changed == 0


def ingest_run_frame(
    wh: Store, frame: pd.DataFrame, collection: str, *, run_id: str | None, replace: bool
) -> list[IngestResult]:
    """Ingest runs from a DataFrame (``query_id, doc_id, score[, run_id][, rank]``).

    Rows are numbered from 1 in error messages (``DataFrame:3: ...``), in frame order.
    """
    import numpy as np
    import pandas as pd

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
    ranks_numbered = "rank" not in frame.columns  # (by frame order: a reordered frame is unchanged)
    if not ranks_numbered:
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
            if stored[rid][0] == digest and (ranks_numbered or _same_ranks_given(wh, collection, rid, part)):
                results.append(IngestResult("run", rid, "DataFrame", "unchanged", stored[rid][1]))
                continue
            if not replace:
                raise _clash("DataFrame", rid, collection)
            _delete_run(wh, collection, rid)
            status = "replaced"
        results.append(IngestResult("run", rid, "DataFrame", status, len(part)))
        accepted.append(rid)
        insert_runs(wh, [[collection, rid, rid, "DataFrame", digest, len(part)]])
    if any(r.status == "replaced" for r in results):
        _drop_unused_pairs(wh)
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
            wh.run(sql.query(_INGEST, "store_ranked"), {})
        finally:
            wh.con.unregister("staged_frame")
        _drop_staging(wh)
        store_float32_order(wh, collection, accepted)
        apply_exclusions(wh, collection, accepted, refresh=False)  # methods §17
        JudgedCache(wh, collection).finish(accepted)  # the evaluation cache, joined in SQL
    return results
