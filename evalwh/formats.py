"""TREC run and qrels files: sniffing, hashing, and naming the first bad line.

Parsing itself is done by DuckDB's CSV reader (``queries/ingest/*.sql``); this module only
does what must look at a file line by line, and only on the error path: when the set-based
checks say a file is bad, :func:`locate_run_error` / :func:`locate_qrels_error` re-read it
to report ``file:line: problem``.
"""

from __future__ import annotations

import gzip
import hashlib
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from evalwh.errors import IngestError

RUN_FIELDS = 6
QRELS_FIELDS = 4
_INTEGER = re.compile(r"[+-]?[0-9]{1,9}")


def open_binary(path: Path) -> IO[bytes]:
    """Open ``path`` for reading bytes, decompressing ``.gz`` transparently."""
    if path.suffix == ".gz":
        return gzip.open(path, "rb")
    return open(path, "rb")


def content_sha256(path: Path) -> str:
    """SHA-256 of the (decompressed) content, so a gzipped copy hashes like the original."""
    digest = hashlib.sha256()
    with open_binary(path) as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """Numbered lines with comments (``#`` as first character) and blank lines dropped."""
    with open_binary(path) as handle:
        for number, raw in enumerate(handle, start=1):
            line = raw.decode("utf-8", errors="replace")
            if line.startswith("#") or not line.strip():
                continue
            yield number, line


def sniff_delimiter(path: Path) -> str:
    """The delimiter of the first data line: a tab if it has one, else a space."""
    for _, line in _lines(path):
        return "\t" if "\t" in line else " "
    return " "


def _is_finite_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def locate_run_error(path: Path, *, ignore_extra_fields: bool, one_tag: bool) -> IngestError:
    """Find the first bad line of a run file that the set-based checks rejected.

    Args:
        path: The run file.
        ignore_extra_fields: Accept lines with more than six fields (trec_eval's "reserved
            for future expansion").
        one_tag: Require one tag for the whole file (no ``--run-id`` given).

    Returns:
        The error to raise, naming the file, line and problem.
    """
    seen: dict[tuple[str, str], int] = {}
    first_tag: tuple[str, int] | None = None
    count = 0
    for number, line in _lines(path):
        count += 1
        fields = line.split()
        if len(fields) < RUN_FIELDS or (len(fields) > RUN_FIELDS and not ignore_extra_fields):
            return IngestError(
                str(path), number, f"expected {RUN_FIELDS} fields, found {len(fields)}"
            )
        query_id, _, doc_id, _, score, tag = fields[:RUN_FIELDS]
        if not _is_finite_number(score):
            return IngestError(str(path), number, f"score {score!r} is not a finite number")
        if first_tag is None:
            first_tag = (tag, number)
        elif one_tag and tag != first_tag[0]:
            return IngestError(
                str(path),
                number,
                f"tag {tag!r} differs from {first_tag[0]!r} on line {first_tag[1]}; "
                "a file holds one run (or give --run-id)",
            )
        key = (query_id, doc_id)
        if key in seen:
            return IngestError(
                str(path),
                number,
                f"document {doc_id!r} appears twice for topic {query_id!r} "
                f"(first on line {seen[key]})",
            )
        seen[key] = number
    if count == 0:
        return IngestError(str(path), None, "the file holds no run lines")
    return IngestError(str(path), None, "the file was rejected but no bad line was found")


def locate_qrels_error(path: Path) -> IngestError:
    """Find the first bad line of a qrels file that the set-based checks rejected."""
    seen: dict[tuple[str, str], int] = {}
    count = 0
    for number, line in _lines(path):
        count += 1
        fields = line.split()
        if len(fields) != QRELS_FIELDS:
            return IngestError(
                str(path), number, f"expected {QRELS_FIELDS} fields, found {len(fields)}"
            )
        query_id, _, doc_id, relevance = fields
        if not _INTEGER.fullmatch(relevance):
            return IngestError(str(path), number, f"relevance {relevance!r} is not an integer")
        key = (query_id, doc_id)
        if key in seen:
            return IngestError(
                str(path),
                number,
                f"document {doc_id!r} is judged twice for topic {query_id!r} "
                f"(first on line {seen[key]})",
            )
        seen[key] = number
    if count == 0:
        return IngestError(str(path), None, "the file holds no qrels lines")
    return IngestError(str(path), None, "the file was rejected but no bad line was found")
