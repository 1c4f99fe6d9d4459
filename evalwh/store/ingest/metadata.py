"""Run metadata on its way in: group, type and pooled flags from a TSV file or a DataFrame.

:func:`run_metadata_frame` reads and checks the table, naming file and line of a bad row;
:func:`evalwh.store.ingest.ingest_run_metadata` attaches it to the stored runs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalwh.errors import IngestError
from evalwh.io import formats
from evalwh.store.ingest.frames import _show

if TYPE_CHECKING:
    import pandas as pd


def _read_metadata_table(path: Path) -> pd.DataFrame:
    """A TSV with a header, every row with as many fields as the header (else ``IngestError``)."""
    import pandas as pd

    data = formats.read_bounded(path, formats.TABLE_BYTES, "a run-metadata table", decompress=False, name=str(path))
    try:
        text = data.decode("utf-8-sig")  # (a UTF-8 byte-order mark is not part of the header)
    except UnicodeDecodeError as error:
        raise IngestError(str(path), None, f"not UTF-8 text: {error.reason} at byte {error.start}") from None
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise IngestError(str(path), 1, "no header line (run_id, group, type, pooled, tab-separated)")
    header = [name.strip() for name in lines[0].split("\t")]
    for index, name in enumerate(header):
        if name in header[:index]:
            raise IngestError(str(path), 1, f"column {name!r} appears twice in the header")
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


_NAMES = {
    "run_id": "run id", "runtag": "run id", "run": "run id", "group": "group", "group_name": "group",
    "type": "type", "run_type": "type", "pooled": "pooled", "judged_pooled": "pooled",
}  # fmt: skip


def _known_columns(frame: pd.DataFrame, label: str) -> dict[str, Any]:
    """The table's columns evalwh reads, by lower-case name.

    Other columns are ignored (TREC's ``runs.tsv`` has ``topic_fields_TDN`` and
    ``submission_priority``), but not one that looks like a misspelt name of evalwh's, nor a
    column given twice (also under two of its names).

    Raises:
        IngestError: on line 1 (the header), e.g. ``unknown column 'goup'; did you mean 'group'?``.
    """
    import difflib

    columns: dict[str, Any] = {}
    meaning: dict[str, str] = {}
    for column in frame.columns:
        name = str(column).strip().lower()
        if name not in _NAMES:
            close = difflib.get_close_matches(name, list(_NAMES), n=1, cutoff=0.7)
            if close:
                raise IngestError(
                    label, 1, f"unknown column {str(column)!r}; did you mean {close[0]!r}? "
                    "(run metadata reads run_id, group, type, pooled)"
                )
            continue
        if _NAMES[name] in meaning:
            raise IngestError(
                label, 1, f"columns {meaning[_NAMES[name]]!r} and {str(column)!r} both give the {_NAMES[name]}"
            )
        meaning[_NAMES[name]] = str(column)
        columns[name] = column
    return columns


def run_metadata_frame(source: str | os.PathLike[str] | pd.DataFrame) -> pd.DataFrame:
    """Normalise a run-metadata table to ``run_id, group_name, run_type, pooled, line``.

    Accepts a TSV file with a header, or a DataFrame. Column names are matched without
    case: ``run_id`` (or ``runtag``, ``run``), ``group`` (or ``group_name``), ``type`` (or
    ``run_type``), ``pooled`` (or ``judged_pooled``; 1/0, true/false or yes/no). A column the
    table lacks leaves the stored value alone; a row must fill every column the table has.
    Other columns are ignored, but one whose name looks like a misspelt one of these (``goup``),
    and a column given twice or under two of its names, are errors on the header's line. A
    UTF-8 byte-order mark before the header is ignored.
    ``line`` is the file's line (its header is line 1) or the DataFrame's row (from 1).

    Raises:
        IngestError: naming file and line for a row with too few or too many fields, an
            empty or missing value, a bad pooled flag, or a run listed twice with different
            values.
    """
    import pandas as pd

    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        formats.require_file(path)
        frame = _read_metadata_table(path)
        label, lines = str(path), list(frame.attrs["lines"])
    else:
        frame, label, lines = source, "DataFrame", list(range(1, len(source) + 1))
    columns = _known_columns(frame, label)

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
