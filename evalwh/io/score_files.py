"""Per-topic scores from other tools, for ``evalwh compare --scores``.

Two kinds of file:

* A long table with columns ``run_id, query_id, measure, value`` (extra columns ignored):
  CSV (``.csv``), TSV (``.tsv``, ``.tab``, ``.txt`` with a header) or Parquet (``.parquet``,
  ``.pq``), optionally gzip-compressed (``.gz``). This is what ``evalwh eval --per-query``,
  PyTerrier's ``perquery=True`` frames and ranx's per-query scores become with a rename.
* trec_eval ``-q`` output: ``measure <whitespace> query_id <whitespace> value`` per line.
  The run id is the ``runid`` line's value, else the file name; the ``all`` rows (means) and
  the non-numeric rows (``runid``, ``relstring``) are skipped.

Malformed input raises :class:`~evalwh.errors.IngestError` naming the file, the line and the
problem. Nothing is written anywhere.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from evalwh.errors import IngestError

COLUMNS = ["run_id", "query_id", "measure", "value"]
_PARQUET = (".parquet", ".pq")
# trec_eval -q rows whose value is not a per-topic number
_TREC_EVAL_TEXT = {"runid", "relstring"}


def read_scores(paths: Sequence[str | Path]) -> pd.DataFrame:
    """Read per-topic scores from long tables and trec_eval ``-q`` files, stacked.

    Args:
        paths: The files; each is read by its kind (see the module docstring).

    Returns:
        ``run_id, query_id, measure, value`` (strings and float64).

    Raises:
        IngestError: for a missing or malformed file.

    Examples:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "bm25.txt"
        >>> _ = path.write_text("runid all bm25\\nmap 1 0.5\\nmap 2 0.25\\nmap all 0.375\\n")
        >>> read_scores([path]).values.tolist()
        [['bm25', '1', 'map', 0.5], ['bm25', '2', 'map', 0.25]]
    """
    if not paths:
        raise IngestError("--scores", None, "no score files given")
    frames = [_read_one(Path(p)) for p in paths]
    out = pd.concat(frames, ignore_index=True)
    duplicated = out.duplicated(["run_id", "query_id", "measure"])
    if duplicated.any():
        row = out[duplicated].iloc[0]
        raise IngestError(
            ", ".join(str(p) for p in paths),
            None,
            f"more than one value for run {row['run_id']!r}, topic {row['query_id']!r}, "
            f"measure {row['measure']!r} (is a run in two files?)",
        )
    return out


def _read_one(path: Path) -> pd.DataFrame:
    if not path.is_file():
        raise IngestError(str(path), None, "no such file")
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in _PARQUET:
        try:
            frame = pd.read_parquet(path)
        except Exception as error:  # pyarrow raises several types for a broken file
            raise IngestError(str(path), None, f"not a readable Parquet file ({error})") from None
        return _long(frame, path, first_data_line=None)
    text = _text(path)
    first = next((line for line in text.splitlines() if line.strip()), "")
    header = [c.strip().lower() for c in first.replace("\t", ",").split(",")]
    if {"run_id", "query_id", "measure", "value"} <= set(header):
        sep = "\t" if "\t" in first else ","
        try:
            frame = pd.read_csv(io.StringIO(text), sep=sep, dtype=str, keep_default_na=False)
        except pd.errors.ParserError as error:
            raise IngestError(str(path), None, f"not a readable table ({error})") from None
        frame.columns = [c.strip().lower() for c in frame.columns]
        return _long(frame, path, first_data_line=2)
    return _trec_eval(text, path)


def _text(path: Path) -> str:
    try:
        raw = path.read_bytes()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        return raw.decode("utf-8")
    except (OSError, EOFError, gzip.BadGzipFile) as error:
        raise IngestError(str(path), None, f"cannot read the file ({error})") from None
    except UnicodeDecodeError as error:
        raise IngestError(str(path), None, f"not UTF-8 text ({error.reason} at byte {error.start})") from None


def _long(frame: pd.DataFrame, path: Path, first_data_line: int | None) -> pd.DataFrame:
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise IngestError(str(path), None, f"missing columns {missing}; expected {COLUMNS}")
    out = frame[COLUMNS].copy()
    for column in ("run_id", "query_id", "measure"):
        out[column] = out[column].astype(str).str.strip()
    values = pd.to_numeric(out["value"].astype(str).str.strip().replace("", "nan"), errors="coerce")
    bad = values.isna() & ~out["value"].astype(str).str.strip().str.lower().isin(["", "nan", "none", "null"])
    if bad.any():
        position = int(bad.to_numpy().nonzero()[0][0])
        line = None if first_data_line is None else first_data_line + position
        where = "" if line is not None else f"row {position + 1}: "
        raise IngestError(
            str(path), line, f"{where}value {out['value'].iloc[position]!r} is not a number"
        )
    out["value"] = values.astype("float64")
    return out


def _trec_eval(text: str, path: Path) -> pd.DataFrame:
    rows: list[tuple[str, str, str]] = []
    run_id: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 3:
            raise IngestError(
                str(path),
                number,
                f"expected 'measure query_id value' (trec_eval -q output) or a header with "
                f"{', '.join(COLUMNS)}; got {len(fields)} field(s)",
            )
        measure, query, value = fields
        if measure in _TREC_EVAL_TEXT:
            if measure == "runid":
                run_id = value
            continue
        if query == "all":
            continue
        try:
            float(value)
        except ValueError:
            raise IngestError(str(path), number, f"value {value!r} is not a number") from None
        rows.append((measure, query, value))
    if not rows:
        raise IngestError(str(path), None, "no per-topic scores (was trec_eval run with -q?)")
    name = run_id if run_id is not None else path.name.removesuffix(".gz")
    frame = pd.DataFrame(rows, columns=["measure", "query_id", "value"])
    frame.insert(0, "run_id", name)
    frame["value"] = frame["value"].astype("float64")
    return frame[COLUMNS]
