"""Per-topic scores from other tools, for ``evalwh compare --scores``.

Every file may be gzip-compressed (``.gz``). Kinds, told apart by name and content:

* A long table with a header: columns ``run_id, query_id, measure, value`` (extra columns
  ignored; PyTerrier's ``name, qid`` and ``metric`` are read as ``run_id, query_id`` and
  ``measure``). CSV, TSV (a tab in the header) or Parquet (``.parquet``, ``.pq``). Without a
  ``run_id`` column the file holds one run: what ``ir_measures.iter_calc`` gives as a
  DataFrame (``query_id, measure, value``) written to CSV.
* trec_eval ``-q`` output: ``measure <whitespace> query_id <whitespace> value`` per line, one
  block per run (``evalwh trec_eval -q`` or ``trec_eval -q`` on several runs). A block ends
  with its summary lines (``all`` in place of the topic); a block is named by its ``runid``
  line. The ``all`` rows (means) and the other text rows (``relstring``) are skipped.
* ir_measures' per-query output (``ir_measures QRELS RUN MEASURES -q``):
  ``query_id <tab> measure <tab> value`` per line, one run per file; the ``all`` rows are
  skipped. Its ``-o jsonl`` output (one ``{"query_id", "measure", "value"}`` object a line)
  is read as JSON lines.
* JSON (``.json``, ``.jsonl``): records or JSON lines with the long table's columns;
  ``{measure: {query_id: value}}``, which is ranx's per-query scores of a run
  (``json.dump(run.scores, f)`` after ``ranx.evaluate``); or ``{run: {measure: {query_id:
  value}}}`` for several runs.

A run that its file does not name (a trec_eval block without a ``runid`` line, ir_measures'
output, ranx's scores, a table without ``run_id``) takes the next name of ``names`` (in the
order the files and blocks come), else the file's name (``bm25.txt``) when the file holds
one such run.

Rows whose topic is ``all`` are means, as in trec_eval's and ir_measures' output, and are
skipped. Malformed input raises :class:`~evalwh.errors.IngestError` naming the file, the line
(or the row or JSON key) and the problem: a value that is empty, not a number, or not finite
(``nan``, ``inf``) is an error, never a topic dropped. A UTF-8 byte order mark is ignored.
Nothing is written anywhere.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import math
import os
import stat
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from evalwh.errors import IngestError
from evalwh.io.formats import SCORES_BYTES, parse_number, read_bounded, size_text

COLUMNS = ["run_id", "query_id", "measure", "value"]
_PARQUET = (".parquet", ".pq")
_JSON = (".json", ".jsonl", ".ndjson")
# trec_eval -q rows whose value is not a per-topic number
_TREC_EVAL_TEXT = {"runid", "relstring"}
# other tools' column names for the long table's columns
_ALIASES = {"name": "run_id", "run": "run_id", "qid": "query_id", "q_id": "query_id", "metric": "measure"}
_UNNAMED = "\0unnamed"  # stands for a run its file does not name, until names are given out


def read_scores(paths: Sequence[str | Path], *, names: Sequence[str] | None = None) -> pd.DataFrame:
    """Read per-topic scores from the files, stacked (see the module docstring for the kinds).

    Args:
        paths: The files.
        names: Names of the runs the files do not name, in the order they come (``--names``).

    Returns:
        ``run_id, query_id, measure, value`` (strings and float64), runs in the order read.

    Raises:
        IngestError: for a missing, unreadable or malformed file, a value that is not a finite
            number, a run given twice, or names that do not match the unnamed runs.

    Examples:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "bm25.txt"
        >>> _ = path.write_text("map 1 0.5\\nmap 2 0.25\\nrunid all bm25\\nmap all 0.375\\n")
        >>> read_scores([path]).values.tolist()
        [['bm25', '1', 'map', 0.5], ['bm25', '2', 'map', 0.25]]
    """
    if not paths:
        raise IngestError("--scores", None, "no score files given")
    pending = list(names or [])
    frames = []
    for path in map(Path, paths):
        runs = _read_one(path)
        unnamed = [i for i, (name, _) in enumerate(runs) if name == _UNNAMED]
        for i in unnamed:
            if names:
                if not pending:
                    raise IngestError(str(path), None, f"more runs without a name than --names gives ({len(names)})")
                runs[i] = (pending.pop(0), runs[i][1])
            elif len(runs) == 1:
                runs[i] = (path.name.removesuffix(".gz"), runs[i][1])
            else:
                raise IngestError(
                    str(path), None, f"{len(runs)} runs without runid lines: name them in order with --names"
                )
        frames += [frame if name is None else frame.assign(run_id=name) for name, frame in runs]
    if pending:
        raise IngestError(
            ", ".join(map(str, paths)), None,
            f"--names gives {len(names or [])} names but only {len(names or []) - len(pending)} runs lack one",
        )  # fmt: skip
    out = pd.concat(frames, ignore_index=True)[COLUMNS]
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


# (run name, or _UNNAMED, or None where the rows have a run_id column; query_id/measure/value rows)
Runs = list[tuple[str | None, pd.DataFrame]]


def _read_one(path: Path) -> Runs:
    _check_file(path)
    suffixes = [s.lower() for s in path.suffixes if s.lower() != ".gz"]
    kind = suffixes[-1] if suffixes else ""
    if kind in _PARQUET:
        if path.stat().st_size > SCORES_BYTES:
            most = size_text(SCORES_BYTES)
            raise IngestError(str(path), None, f"holds more than {most}, the most a score file may hold")
        try:
            frame = pd.read_parquet(path)
        except Exception as error:  # pyarrow raises several types for a broken file
            raise IngestError(str(path), None, f"not a readable Parquet file ({error})") from None
        return _long(frame, path, lines=None)
    text = _text(path)
    if kind in _JSON or text.lstrip()[:1] in ("{", "["):
        return _json(text, path)
    first = next((line for line in text.splitlines() if line.strip()), "")
    header = [_column(c) for c in first.replace("\t", ",").split(",")]
    if {"query_id", "measure", "value"} <= set(header):
        return _table(text, first, path)
    return _three_fields(text, path)


def _check_file(path: Path) -> None:
    """A regular file, or one line saying what the path is instead."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise IngestError(str(path), None, "no such file") from None
    except OSError as error:
        raise IngestError(str(path), None, f"cannot read the file ({error.strerror})") from None
    if stat.S_ISDIR(mode):
        raise IngestError(str(path), None, "is a directory; give the score files in it")
    if not stat.S_ISREG(mode):
        raise IngestError(str(path), None, "not a regular file (a device, pipe or socket); give a score file")


def _text(path: Path) -> str:
    raw = read_bounded(path, SCORES_BYTES, "a score file", decompress=False)
    try:
        if raw[:2] == b"\x1f\x8b":
            # (bounded as the file is: a small file that inflates without end stops there)
            raw = gzip.GzipFile(fileobj=io.BytesIO(raw)).read(SCORES_BYTES + 1)
            if len(raw) > SCORES_BYTES:
                most = size_text(SCORES_BYTES)
                raise IngestError(str(path), None, f"holds more than {most} decompressed, the most a score file may hold")
        return raw.decode("utf-8").removeprefix("\ufeff")
    except (OSError, EOFError, gzip.BadGzipFile) as error:
        raise IngestError(str(path), None, f"cannot read the file ({error})") from None
    except UnicodeDecodeError as error:
        raise IngestError(str(path), None, f"not UTF-8 text ({error.reason} at byte {error.start})") from None


def _column(name: object) -> str:
    text = str(name).strip().lower().removeprefix("\ufeff")
    return _ALIASES.get(text, text)


def _value(text: object, path: Path, where: int | str | None) -> float:
    """A finite float, or an error naming the line (or row, or key)."""
    line = where if isinstance(where, int) else None
    prefix = f"{where}: " if isinstance(where, str) else ""
    if text is None or (isinstance(text, str) and not text.strip()):
        raise IngestError(str(path), line, f"{prefix}empty value (every topic needs a finite number)")
    if isinstance(text, str):
        parsed = parse_number(text)  # the grammar of every reader: no "1_0", "３" or "nan"
        if parsed is None:
            spelled = text.strip().lower().lstrip("+-")
            what = "a finite number" if spelled in ("nan", "inf", "infinity") else "a number"
            raise IngestError(str(path), line, f"{prefix}value {text!r} is not {what}")
        value = parsed
    else:
        try:
            value = float(text)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise IngestError(str(path), line, f"{prefix}value {text!r} is not a number") from None
    if not math.isfinite(value) or isinstance(text, bool):
        raise IngestError(str(path), line, f"{prefix}value {text!r} is not a finite number")
    return value


def _table(text: str, first: str, path: Path) -> Runs:
    """A CSV or TSV long table; every value is checked with its physical line number."""
    delimiter = "\t" if "\t" in first else ","
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    header: list[str] | None = None
    rows, lines = [], []
    try:
        for fields in reader:
            if not any(f.strip() for f in fields):
                continue
            if header is None:
                header = [_column(f) for f in fields]
                continue
            if len(fields) != len(header):
                raise IngestError(str(path), reader.line_num, f"{len(fields)} fields where the header has {len(header)}")
            rows.append(fields)
            lines.append(reader.line_num)
    except csv.Error as error:
        raise IngestError(str(path), reader.line_num, f"not a readable table ({error})") from None
    frame = pd.DataFrame(rows, columns=header)
    return _long(frame, path, lines=lines)


def _long(frame: pd.DataFrame, path: Path, lines: list[int] | None) -> Runs:
    frame = frame.rename(columns={c: _column(c) for c in frame.columns})
    frame = frame.loc[:, ~frame.columns.duplicated()]
    required = [c for c in COLUMNS if c != "run_id"]
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise IngestError(str(path), None, f"missing columns {missing}; expected {COLUMNS}")

    def where(i: int) -> int | str:
        return lines[i] if lines is not None else f"row {i + 1}"

    columns = ["run_id", *required] if "run_id" in frame.columns else required
    for column in columns[:-1]:  # the ids: present, not blank
        cells = frame[column].tolist()
        for i, cell in enumerate(cells):
            if cell is None or (isinstance(cell, float) and math.isnan(cell)) or not str(cell).strip():
                at = where(i)
                raise IngestError(
                    str(path), at if isinstance(at, int) else None,
                    f"{'' if isinstance(at, int) else at + ': '}empty {column}",
                )  # fmt: skip
    summary = frame["query_id"].astype(str).str.strip() == "all"  # ir_measures' means
    if summary.any():
        kept = (~summary).to_numpy()
        frame = frame[kept].reset_index(drop=True)
        lines = None if lines is None else [n for n, keep in zip(lines, kept, strict=True) if keep]
    values = [_value(v, path, where(i)) for i, v in enumerate(frame["value"].tolist())]
    out = pd.DataFrame({c: frame[c].astype(str).str.strip() for c in columns[:-1]})
    out["value"] = pd.Series(values, dtype="float64")
    if "run_id" not in out.columns:
        return [(_UNNAMED, out)]
    return [(None, out)]  # the rows name their runs


def _json(text: str, path: Path) -> Runs:
    try:
        return _json_records(text, path)
    except RecursionError:
        raise IngestError(str(path), None, "the JSON is nested too deeply") from None


def _json_records(text: str, path: Path) -> Runs:
    """JSON records or lines (the long table), or nested ``{measure: {query: value}}`` (ranx)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        records = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                records.append((number, json.loads(line)))
            except json.JSONDecodeError as error:
                raise IngestError(str(path), number, f"not JSON ({error.msg})") from None
        if not all(isinstance(r, dict) for _, r in records):
            raise IngestError(str(path), None, "JSON lines must be objects with query_id, measure, value")
        return _long(pd.DataFrame([r for _, r in records]), path, lines=[n for n, _ in records])
    if isinstance(data, dict) and not {"query_id", "qid", "q_id"} & set(data):
        return _nested(data, path)
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise IngestError(str(path), None, "expected JSON records with query_id, measure, value, or {measure: {query: value}}")
    return _long(pd.DataFrame(data), path, lines=None)


def _nested(data: dict[str, object], path: Path) -> Runs:
    """``{measure: {query: value}}`` (one run) or ``{run: {measure: {query: value}}}``."""
    def depth(node: object) -> int:
        return 1 + depth(next(iter(node.values()))) if isinstance(node, dict) and node else 0

    levels = depth(data)
    if levels == 2:
        named: list[tuple[str, object]] = [(_UNNAMED, data)]
    elif levels == 3:
        named = list(data.items())
    else:
        raise IngestError(str(path), None, "expected {measure: {query_id: value}} or {run: {measure: {query_id: value}}}")
    runs: Runs = []
    for run, measures in named:
        rows = []
        if not isinstance(measures, dict):
            raise IngestError(str(path), None, f"{run}: expected {{measure: {{query_id: value}}}}")
        for measure, topics in measures.items():
            if not isinstance(topics, dict):
                raise IngestError(str(path), None, f"{measure}: expected {{query_id: value}}")
            key = measure if run == _UNNAMED else f"{run}/{measure}"
            rows += [(str(q), str(measure), _value(v, path, f"{key}/{q}")) for q, v in topics.items()]
        runs.append((str(run), pd.DataFrame(rows, columns=["query_id", "measure", "value"])))
    return runs


def _three_fields(text: str, path: Path) -> Runs:
    """trec_eval ``-q`` (measure, query, value) or ir_measures ``-q`` (query, measure, value) lines."""
    lines = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 3:
            raise IngestError(
                str(path), number,
                f"expected 'measure query_id value' (trec_eval -q output), 'query_id measure value' "
                f"(ir_measures -q) or a header with {', '.join(COLUMNS)}; got {len(fields)} field(s)",
            )  # fmt: skip
        lines.append((number, fields))
    if _query_first(lines):
        return _ir_measures(lines, path)
    return _trec_eval(lines, path)


def _query_first(lines: list[tuple[int, list[str]]]) -> bool:
    """Whether lines are ir_measures' (query first): its summary rows start with ``all``,
    trec_eval's have ``all`` second; without either, the column with more values is the topics'."""
    if any(f[0] in _TREC_EVAL_TEXT or f[1] == "all" for _, f in lines):
        return False
    if any(f[0] == "all" for _, f in lines):
        return True
    return len({f[0] for _, f in lines}) > len({f[1] for _, f in lines})


def _ir_measures(lines: list[tuple[int, list[str]]], path: Path) -> Runs:
    rows = [(q, m, _value(v, path, n)) for n, (q, m, v) in lines if q != "all"]
    if not rows:
        raise IngestError(str(path), None, "no per-topic scores (was ir_measures run with -q?)")
    return [(_UNNAMED, pd.DataFrame(rows, columns=["query_id", "measure", "value"]))]


def _trec_eval(lines: list[tuple[int, list[str]]], path: Path) -> Runs:
    """Split trec_eval ``-q`` output into runs: a block ends with its ``all`` lines."""
    blocks: list[dict[str, object]] = []
    current: dict[str, object] = {"name": None, "rows": [], "seen": set(), "summary": False}

    def start() -> None:
        nonlocal current
        blocks.append(current)
        current = {"name": None, "rows": [], "seen": set(), "summary": False}

    for number, (measure, query, value) in lines:
        rows: list[tuple[str, str, float]] = current["rows"]  # type: ignore[assignment]
        seen: set[tuple[str, str]] = current["seen"]  # type: ignore[assignment]
        if measure == "runid":
            if current["name"] is not None and rows:
                start()
            current["name"] = value
            current["summary"] = bool(rows)  # a runid line before the topics opens its block
            continue
        if measure in _TREC_EVAL_TEXT or query == "all":
            if query == "all":  # a summary line (relstring has one per topic too)
                current["summary"] = bool(rows)
            continue
        if rows and (current["summary"] or (measure, query) in seen):
            start()
        current["rows"].append((query, measure, _value(value, path, number)))  # type: ignore[attr-defined]
        current["seen"].add((measure, query))  # type: ignore[attr-defined]
    blocks.append(current)
    runs = [
        (str(b["name"]) if b["name"] is not None else _UNNAMED, pd.DataFrame(b["rows"], columns=["query_id", "measure", "value"]))
        for b in blocks
        if b["rows"]
    ]
    if not runs:
        raise IngestError(str(path), None, "no per-topic scores (was trec_eval run with -q?)")
    return runs
