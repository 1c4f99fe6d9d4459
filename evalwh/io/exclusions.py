"""Exclusion files: one ``topic docid`` pair a line, the documents no run may count (methods §17).

BRIGHT ships such lists beside its qrels (the documents each query's answer was taken from);
evalwh stores them per collection (:mod:`evalwh.store.ingest.exclusions`). The grammar is
that of a qrels file (:mod:`evalwh.io.formats`) with two fields: lines end with ``\\n`` or
``\\r\\n``, a line whose first character is ``#`` is a comment, a blank line is skipped (both
counted for line numbers), fields are separated by runs of space, tab, vertical tab or form
feed, the text is UTF-8 without NUL bytes or other control characters. A line with other
than two fields, a pair listed twice, a line over :data:`evalwh.io.formats.MAX_LINE` bytes
and a file without a pair are refused, naming the file and the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from evalwh.errors import IngestError
from evalwh.io import formats

EXCLUSION_BYTES = 64 * formats.MiB  # the most an exclusion file may hold (decompressed)
_SEPARATORS = re.compile(r"[ \t\x0b\x0c]+")
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


@dataclass(frozen=True)
class Exclusions:
    """The pairs of an exclusion file, in file order, and its content's SHA-256."""

    query_id: list[str]
    doc_id: list[str]
    sha256: str

    def __len__(self) -> int:
        return len(self.query_id)


def read_exclusions(path: Path, *, name: str | None = None) -> Exclusions:
    """Read an exclusion file (plain or ``.gz``; ``-`` is standard input), strictly.

    Raises:
        IngestError: naming the file and, where there is one, the line and its problem.

    Examples:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "excluded.txt"
        >>> _ = path.write_text("# BRIGHT-style\\n1 d7\\n1 d9\\n\\n2 d7\\n")
        >>> found = read_exclusions(path)
        >>> list(zip(found.query_id, found.doc_id))
        [('1', 'd7'), ('1', 'd9'), ('2', 'd7')]
        >>> _ = path.write_text("1 d7\\n1 d7 x\\n")
        >>> read_exclusions(path)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        evalwh.errors.IngestError: ...excluded.txt:2: expected 2 fields (topic docid), found 3
    """
    import hashlib

    label = name or formats.label(path)
    data = formats.read_bounded(path, EXCLUSION_BYTES, "an exclusion file", name=label)
    return parse_exclusions(data, label, hashlib.sha256(data).hexdigest())


def parse_exclusions(data: bytes, label: str, sha256: str = "") -> Exclusions:
    """The pairs of an exclusion file's content (see the module's grammar)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise IngestError(label, line, "the line is not UTF-8 text") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    queries: list[str] = []
    docs: list[str] = []
    first: dict[tuple[str, str], int] = {}
    for number, line in enumerate(lines, start=1):
        if line.endswith("\r"):
            line = line[:-1]
        if len(line.encode("utf-8")) > formats.MAX_LINE:
            raise IngestError(label, number, formats.TOO_LONG)
        if line.startswith("#"):
            continue
        bad = _CONTROL.search(line)
        if bad is not None:
            raise IngestError(label, number, f"the line holds the control character {bad.group()!r}")
        fields = [f for f in _SEPARATORS.split(line) if f]
        if not fields:
            continue
        if len(fields) != 2:
            raise IngestError(label, number, f"expected 2 fields (topic docid), found {len(fields)}")
        pair = (fields[0], fields[1])
        if pair in first:
            raise IngestError(
                label, number, f"document {pair[1]!r} is excluded twice for topic {pair[0]!r} (first on line {first[pair]})"
            )
        first[pair] = number
        queries.append(pair[0])
        docs.append(pair[1])
    if not queries:
        raise IngestError(label, None, "the file holds no (topic, document) pair")
    return Exclusions(queries, docs, sha256)
