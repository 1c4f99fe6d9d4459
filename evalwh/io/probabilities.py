"""An LLM judge's relevance probabilities, in the CSV LARA reads.

LARA (Takehi, Voorhees, Sakai and Soboroff, SIGIR 2025) takes one row per judged (topic,
document) pair: ``topic_id,doc_id,annotation,prob_yes,prob_no`` for a binary judge, or
``topic_id,doc_id,annotation,prob_0,...,prob_k`` for grades 0..k. The header is required and
names the columns in that order (``query_id`` or ``qid`` may stand for ``topic_id``).

* ``annotation`` is the judge's label (a number as a qrels grade is written; it becomes the grade
  in qrels). Every number has the grammar of the other readers: ASCII digits, no ``1_0``, ``nan``
  or ``inf``, not full-width or Arabic-Indic digits (:func:`evalwh.io.formats.parse_number`).
* The probabilities are finite numbers in [0, 1] whose sum is in (0, 1 + 1e-6]: a judge
  that read them off its top tokens may leave some mass elsewhere. ``prob_relevant``, the
  probability of a grade >= 1, is ``prob_yes / (prob_yes + prob_no)``, or
  ``(prob_1 + ... + prob_k) / (prob_0 + ... + prob_k)``: the mass renormalised to the labels.
* ``probs`` keeps them as given, by grade: ``[prob_no, prob_yes]`` or ``[prob_0, ..., prob_k]``.

A blank line is skipped (and counted). Anything else is refused with one line naming the
file, the line and the problem: a row with the wrong number of fields, an empty id or one
holding whitespace, a label or probability that is not a number, a probability outside
[0, 1], probabilities summing to 0 or above 1, a pair given twice. :func:`is_probabilities`
tells such a file from a TREC qrels or JSON-lines file by its header.
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass, field

from evalwh.errors import IngestError
from evalwh.io.formats import parse_number

TOPIC_FIELDS = ("topic_id", "query_id", "qid")
SUM_TOLERANCE = 1e-6
_SPACE = re.compile(r"[ \t\n\r\x0b\x0c\x00]")


def is_probabilities(data: bytes) -> bool:
    """Whether a file's first bytes are a LARA probability CSV header, or one that starts as it does.

    A header ``topic_id,doc_id,annotation`` without the probability columns counts, so that its
    reader names what is missing (rather than a qrels reader miscounting its fields).

    Examples:
        >>> is_probabilities(b"topic_id,doc_id,annotation,prob_yes,prob_no\\n"), is_probabilities(b"401 0 d 1\\n")
        (True, False)
        >>> is_probabilities(b"topic_id,doc_id,annotation\\n")
        True
    """
    first = data.removeprefix(b"\xef\xbb\xbf").lstrip().split(b"\n", 1)[0].strip().decode("utf-8", "replace")
    names = [n.strip() for n in first.split(",")]
    if len(names) < 3 or names[0] not in TOPIC_FIELDS or names[1] != "doc_id":
        return False
    return names[2] == "annotation" or (len(names) >= 4 and names[3].startswith("prob_"))


@dataclass
class Probabilities:
    """The rows of one probability file, in file order (``line``: each row's line number)."""

    query_id: list[str] = field(default_factory=list)
    doc_id: list[str] = field(default_factory=list)
    annotation: list[float] = field(default_factory=list)
    probs: list[list[float]] = field(default_factory=list)
    prob_relevant: list[float] = field(default_factory=list)
    line: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.query_id)


def _layout(names: list[str], label: str, line: int) -> list[int]:
    """The positions of the probability columns, by grade (no, yes / 0..k); or an error."""
    if len(names) < 3 or names[0] not in TOPIC_FIELDS or names[1:3] != ["doc_id", "annotation"]:
        raise IngestError(label, line, "expected the header topic_id,doc_id,annotation,prob_yes,prob_no (or prob_0,...,prob_k)")
    rest = names[3:]
    if not any(rest):
        raise IngestError(
            label, line, f"the LARA header {','.join(names[:3])} lacks the probability columns prob_yes,prob_no "
            "(or prob_0,...,prob_k) after annotation",
        )  # fmt: skip
    if rest == ["prob_yes", "prob_no"]:
        return [4, 3]  # by grade: no (0), then yes (1)
    if rest == [f"prob_{g}" for g in range(len(rest))] and len(rest) >= 2:
        return list(range(3, 3 + len(rest)))
    raise IngestError(label, line, f"probability columns {','.join(rest)}: expected prob_yes,prob_no or prob_0,...,prob_k (k >= 1)")


def _number(text: str, what: str, label: str, line: int, *, grade: bool = False) -> float:
    """A field as a number in the grammar of every reader (:func:`evalwh.io.formats.parse_number`):
    ASCII digits, no ``1_0``, ``nan`` or ``inf``; an annotation as a qrels grade."""
    value = parse_number(text, grade=grade)
    if value is None:
        raise IngestError(label, line, f"{what} {text.strip()!r} is not a number (ASCII digits, as in a qrels file)")
    return value


def parse_probabilities(data: bytes, label: str) -> Probabilities:
    """Read a LARA probability CSV (see the module's docstring).

    Raises:
        IngestError: ``FILE:LINE: problem`` for the first bad line, ``FILE: problem`` when the
            file holds no rows.

    Examples:
        >>> p = parse_probabilities(b"topic_id,doc_id,annotation,prob_yes,prob_no\\n1,d1,1,0.6,0.2\\n", "x.csv")
        >>> p.probs, p.prob_relevant
        ([[0.2, 0.6]], [0.7499999999999999])
    """
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        raise IngestError(label, data[: error.start].count(b"\n") + 1, "the line is not UTF-8 text") from None
    lines = text.split("\n")
    out = Probabilities()
    columns: list[int] | None = None
    width = 0
    seen: dict[tuple[str, str], int] = {}
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            cells = next(csv.reader(io.StringIO(raw.rstrip("\r")), strict=True))
        except csv.Error as error:
            raise IngestError(label, number, f"not a CSV row ({error})") from None
        if columns is None:
            columns = _layout([c.strip() for c in cells], label, number)
            width = len(cells)
            continue
        if len(cells) != width:
            raise IngestError(label, number, f"expected {width} comma-separated fields, found {len(cells)}")
        query_id, doc_id = cells[0].strip(), cells[1].strip()
        for value, what in ((query_id, "topic id"), (doc_id, "document id")):
            if not value:
                raise IngestError(label, number, f"the {what} is empty")
            if _SPACE.search(value):
                raise IngestError(label, number, f"the {what} {value!r} holds whitespace")
        first = seen.setdefault((query_id, doc_id), number)
        if first != number:
            raise IngestError(label, number, f"document {doc_id!r} is given twice for topic {query_id!r} (first on line {first})")
        annotation = _number(cells[2], "annotation", label, number, grade=True)
        probs = [_number(cells[i], "probability", label, number) for i in columns]
        bad = next((p for p in probs if not 0.0 <= p <= 1.0), None)
        if bad is not None:
            raise IngestError(label, number, f"probability {bad!r} is outside [0, 1]")
        total = math.fsum(probs)
        if not 0.0 < total <= 1.0 + SUM_TOLERANCE:
            raise IngestError(label, number, f"the probabilities sum to {total!r}; expected a sum in (0, 1]")
        out.query_id.append(query_id)
        out.doc_id.append(doc_id)
        out.annotation.append(annotation)
        out.probs.append(probs)
        out.prob_relevant.append(math.fsum(probs[1:]) / total)
        out.line.append(number)
    if columns is None:
        raise IngestError(label, None, "the file is empty; expected the header topic_id,doc_id,annotation,prob_yes,prob_no")
    if not out.query_id:
        raise IngestError(label, None, "the file holds a header but no rows")
    return out
