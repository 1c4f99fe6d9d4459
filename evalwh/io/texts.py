"""Texts of topics and documents, for judging tasks (``evalwh pool export``).

A text source maps ids to texts. :func:`text_source` takes what the user gave (today a file
path, or ``irds:DATASET_ID``) and returns the mapping; :func:`read_texts` reads a
file of either shape:

* TSV: one ``id<TAB>text`` per line (the text is the rest of the line, tabs and all);
* JSON lines (``.jsonl``, ``.json``, ``.ndjson``, or a first character ``{``): one object
  per line, the id in the first of ``query_id, qid, doc_id, docid, id, _id`` and the text in
  the first of ``text, query, title, contents, body, passage, segment``.

Blank lines are skipped. A line without an id or a text, an id given twice, or bad JSON is
refused with one line naming the file and the line. Pure parsing: no warehouse here.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from evalwh.errors import IngestError
from evalwh.io import formats

ID_FIELDS = ("query_id", "qid", "doc_id", "docid", "id", "_id")
TEXT_FIELDS = ("text", "query", "title", "contents", "body", "passage", "segment")
JSONL_SUFFIXES = (".jsonl", ".json", ".ndjson")


def text_source(
    spec: str | os.PathLike[str], kind: str = "topics", ids: Iterable[str] | None = None
) -> dict[str, str]:
    """The texts a user named: a TSV or JSON-lines file (see the module's docstring), or
    ``irds:DATASET_ID``, an ir_datasets dataset's topics or documents (:mod:`evalwh.io.irds`).

    Args:
        spec: A file path or ``irds:ID``.
        kind: ``topics`` or ``documents``: which texts of an ``irds:`` dataset (a file holds
            one kind).
        ids: The ids wanted; from ``irds:`` only these documents are looked up (a collection
            is far too large to map whole). A file is read whole.

    Raises:
        IngestError: for a missing file or a bad line.
        EvalWhError: for an ``irds:`` name ir_datasets cannot give (one line, naming the
            ``evalwh[irds]`` extra when ir_datasets is missing).
    """
    from evalwh.io import irds

    if irds.is_irds(spec):
        return irds.text_map(spec, kind, None if ids is None else list(dict.fromkeys(ids)))
    return read_texts(Path(spec))


def read_texts(path: Path) -> dict[str, str]:
    """Read ``id -> text`` from a TSV or JSON-lines file.

    Examples:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "topics.tsv"
        >>> _ = p.write_text("401\\tforeign minorities, Germany\\n402\\tbehavioral genetics\\n")
        >>> read_texts(p)["402"]
        'behavioral genetics'
    """
    label = str(path)
    formats.require_file(path)
    data = formats.read_bounded(path, formats.TEXTS_BYTES, "a topics or documents file", name=label)
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        raise IngestError(label, data[: error.start].count(b"\n") + 1, "the line is not UTF-8 text") from None
    jsonl = path.name.removesuffix(".gz").endswith(JSONL_SUFFIXES) or text.lstrip()[:1] == "{"
    out: dict[str, str] = {}
    first: dict[str, int] = {}
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        key, value = _json_line(line, label, number) if jsonl else _tsv_line(line, label, number)
        if key in first:
            raise IngestError(label, number, f"id {key!r} is given twice (first on line {first[key]})")
        first[key] = number
        out[key] = value
    if not out:
        raise IngestError(label, None, "the file holds no texts")
    return out


def _tsv_line(line: str, label: str, number: int) -> tuple[str, str]:
    key, tab, value = line.partition("\t")
    if not tab or not key.strip():
        raise IngestError(label, number, "expected 'id<TAB>text'")
    if not value.strip():
        raise IngestError(label, number, f"id {key.strip()!r} has no text")
    return key.strip(), value


def _json_line(line: str, label: str, number: int) -> tuple[str, str]:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise IngestError(label, number, f"not a JSON object ({error.msg} at column {error.colno})") from None
    except RecursionError:
        raise IngestError(label, number, "not a JSON object (nested too deeply)") from None
    if not isinstance(record, dict):
        raise IngestError(label, number, "not a JSON object")
    key = next((record[f] for f in ID_FIELDS if f in record and record[f] not in (None, "")), None)
    if key is None or isinstance(key, (dict, list, bool)):
        raise IngestError(label, number, f"no id (one of {', '.join(ID_FIELDS)})")
    value = next((record[f] for f in TEXT_FIELDS if isinstance(record.get(f), str) and record[f].strip()), None)
    if value is None:
        raise IngestError(label, number, f"id {str(key)!r} has no text (one of {', '.join(TEXT_FIELDS)})")
    return str(key), value
