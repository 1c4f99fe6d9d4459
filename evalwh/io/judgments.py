"""Judgment records in JSON lines, as LLM judges write them (UMBRELA and tools like it).

One JSON object per line holds one judgment of one (topic, document) pair. UMBRELA
(castorini/umbrela) writes ``judgment`` (the grade), and with ``--include-reasoning`` /
``--include-trace`` also ``reasoning``, ``prediction`` (the model's raw answer), ``prompt``
(the prompt as sent) and ``model``; it names the pair by the ids it was given (``qid`` of the
query, ``docid`` of the candidate). The fields read, first name found wins:

===============  =============================================  ======================================
what             field names                                    kept as
===============  =============================================  ======================================
topic id         ``qid``, ``query_id``; or ``query.qid`` when   text (a JSON integer as its digits)
                 ``query`` is an object
document id      ``docid``, ``doc_id``, ``pid``, ``passage_id``  text (a JSON integer as its digits)
grade            ``judgment``, ``relevance``                     a finite number, fractional as given
raw score        ``score``, ``confidence``                       a finite number, or absent
reasoning        ``reasoning``, else ``prediction``              text, or absent
prompt           ``prompt`` (``"[redacted]"`` counts as absent)  text, or absent
===============  =============================================  ======================================

A grade or raw score given as a JSON string holds text of a number as a TREC file's field
does (:mod:`evalwh.io.formats`): a grade as a qrels grade (``"2"``, ``"-1"``, ``"0.75"``), a
raw score as a run's score (``"9.998186e-02"``); ``"1_0"``, ``"0x10"``, ``"３"``, ``"٣"``,
``"nan"`` and ``"inf"`` are refused, although Python's ``float()`` reads some of them.
Other fields (``query`` and ``passage`` texts, ``model``, ``result_status``) are ignored.
Blank lines are skipped and counted for line numbers. Anything else is refused with one line
naming the file, the line and the problem: a line that is not a JSON object, a missing or empty
id, an id holding whitespace (no TREC file could hold it), a grade that is not a number, a
pair judged twice.

:func:`is_jsonl` tells a JSON-lines file from a TREC qrels file; :func:`parse_judgments`
reads one. Pure parsing: nothing here touches a warehouse.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalwh.errors import IngestError
from evalwh.io import formats
from evalwh.io.printable import CONTROL, terminal

QUERY_FIELDS = ("qid", "query_id")
DOC_FIELDS = ("docid", "doc_id", "pid", "passage_id")
GRADE_FIELDS = ("judgment", "relevance")
SCORE_FIELDS = ("score", "confidence")
REASONING_FIELDS = ("reasoning", "prediction")
REDACTED = "[redacted]"
JSONL_SUFFIXES = (".jsonl", ".json", ".ndjson")
_SPACE = re.compile(r"[ \t\n\r\x0b\x0c\x00]")
_ASCII_SPACE = " \t\n\r\x0b\x0c"


def is_jsonl(path: Path, data: bytes) -> bool:
    """Whether a judgments file is JSON lines rather than TREC qrels.

    By its name when it ends in ``.jsonl``, ``.json`` or ``.ndjson`` (before an optional
    ``.gz``), else by its content: the first character that is not whitespace (after a
    byte-order mark) is ``{``, which no qrels line starts with in practice.
    """
    name = path.name.removesuffix(".gz")
    if name.endswith(JSONL_SUFFIXES):
        return True
    return data.removeprefix(b"\xef\xbb\xbf").lstrip()[:1] == b"{"


@dataclass
class Judgments:
    """The judgments of one JSON-lines file, in file order, one entry per record.

    ``score``, ``reasoning`` and ``prompt`` hold ``None`` where a record did not carry them;
    ``line`` is each record's line number (from 1).
    """

    query_id: list[str] = field(default_factory=list)
    doc_id: list[str] = field(default_factory=list)
    relevance: list[float] = field(default_factory=list)
    score: list[float | None] = field(default_factory=list)
    reasoning: list[str | None] = field(default_factory=list)
    prompt: list[str | None] = field(default_factory=list)
    line: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.query_id)

    def has_details(self) -> bool:
        """Whether any record carried a raw score, reasoning or a prompt."""
        return any(v is not None for v in (*self.score, *self.reasoning, *self.prompt))


def parse_judgments(data: bytes, label: str) -> Judgments:
    """Read JSON-lines judgment records (see the module's table of fields).

    Args:
        data: The file's content, decompressed.
        label: How the file is named in messages.

    Returns:
        The judgments, one per non-blank line.

    Raises:
        IngestError: ``FILE:LINE: problem`` for the first line that is not a judgment record,
            or ``FILE: problem`` when the file holds none.
    """
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise IngestError(label, line, "the line is not UTF-8 text") from None
    out = Judgments()
    seen: dict[tuple[str, str], int] = {}
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        record = _record(raw, label, number)
        query_id = _id(record, QUERY_FIELDS, "topic id", label, number, nested=("query", "qid"))
        doc_id = _id(record, DOC_FIELDS, "document id", label, number)
        first = seen.setdefault((query_id, doc_id), number)
        if first != number:
            raise IngestError(
                label, number, f"document {doc_id!r} is judged twice for topic {query_id!r} (first on line {first})"
            )
        grade = _number(record, GRADE_FIELDS, label, number, required=True)
        out.query_id.append(query_id)
        out.doc_id.append(doc_id)
        out.relevance.append(grade)  # type: ignore[arg-type]  # required: never None
        out.score.append(_number(record, SCORE_FIELDS, label, number, required=False))
        out.reasoning.append(_text(record, REASONING_FIELDS, label, number))
        prompt = _text(record, ("prompt",), label, number)
        out.prompt.append(None if prompt == REDACTED else prompt)
        out.line.append(number)
    if not out.query_id:
        raise IngestError(label, None, "the file holds no judgment records")
    return out


def _record(raw: str, label: str, number: int) -> Mapping[str, Any]:
    """The JSON object of one line."""
    try:
        record = json.loads(raw)
    except json.JSONDecodeError as error:
        if not raw.lstrip().startswith("{"):
            raise IngestError(label, number, "not a judgment record: not a JSON object") from None
        problem = f"the JSON object is broken ({error.msg} at column {error.colno})"
        raise IngestError(label, number, f"not a judgment record: {problem}") from None
    except RecursionError:
        raise IngestError(label, number, "not a judgment record: the JSON is nested too deeply") from None
    if not isinstance(record, dict):
        raise IngestError(label, number, f"not a judgment record: a JSON {_kind(record)}, not an object")
    return record


def _first(record: Mapping[str, Any], names: tuple[str, ...]) -> tuple[str, Any] | None:
    """The first of ``names`` the record has (with a non-null value), and its value."""
    for name in names:
        value = record.get(name)
        if value is not None:
            return name, value
    return None


def _id(
    record: Mapping[str, Any],
    names: tuple[str, ...],
    what: str,
    label: str,
    number: int,
    nested: tuple[str, str] | None = None,
) -> str:
    """A topic or document id, as text; refused when missing, empty or holding whitespace."""
    found = _first(record, names)
    if found is None and nested is not None:
        outer = record.get(nested[0])
        if isinstance(outer, dict) and outer.get(nested[1]) is not None:
            found = f"{nested[0]}.{nested[1]}", outer[nested[1]]
    if found is None:
        fields = ", ".join(names) + (f" or {nested[0]}.{nested[1]}" if nested else "")
        raise IngestError(label, number, f"not a judgment record: no {what} ({fields})")
    name, value = found
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise IngestError(label, number, f"{what} {name!r} is a JSON {_kind(value)}, not a string or integer")
    text = str(value)
    if not text:
        raise IngestError(label, number, f"{what} {name!r} is empty")
    if _SPACE.search(text):
        raise IngestError(label, number, f"{what} {text!r} holds whitespace or a NUL byte, which no TREC file can hold")
    if CONTROL.search(text):  # an ESC would reach every terminal that prints the id
        raise IngestError(label, number, f"{what} {terminal(repr(text))} holds a control character, which an id may not hold")
    return text


def _number(
    record: Mapping[str, Any], names: tuple[str, ...], label: str, number: int, *, required: bool
) -> float | None:
    """A grade or score: a finite JSON number (or a string holding one), as given."""
    found = _first(record, names)
    if found is None:
        if required:
            raise IngestError(label, number, f"not a judgment record: no grade ({', '.join(names)})")
        return None
    name, value = found
    parsed: float | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        parsed = float(value)
    elif isinstance(value, str):
        # text of a number has the grammar of a TREC file's field (ASCII digits, no "1_0",
        # no "３" or "٣" that Python's float() reads): a grade as a qrels grade, a score as a
        # run's score
        text = value.strip(_ASCII_SPACE)
        if (formats.is_relevance(text) if required else formats.is_score(text)):
            parsed = float(text)
    if parsed is None or not math.isfinite(parsed) or (required and abs(parsed) >= 1e9):
        raise IngestError(label, number, f"{name} {json.dumps(value, ensure_ascii=False)} is not a finite number")
    return parsed


def _text(record: Mapping[str, Any], names: tuple[str, ...], label: str, number: int) -> str | None:
    """An optional text field (reasoning, prompt); refused when it is not a string."""
    found = _first(record, names)
    if found is None:
        return None
    name, value = found
    if not isinstance(value, str):
        raise IngestError(label, number, f"{name} is a JSON {_kind(value)}, not a string")
    return value


def _kind(value: Any) -> str:
    """A JSON value's type, as JSON names it."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if value is None:
        return "null"
    return "object"
