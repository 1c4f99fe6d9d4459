"""TREC run and qrels files: what a valid line is, content scans, and naming the first bad line.

The bulk parsing of run files is done by the run-file reader (C, :mod:`evalwh.io.runreader`),
and of qrels files and the run files it leaves by DuckDB's CSV reader
(``queries/ingest/*.sql``). This module holds what must look at the bytes of a file in Python:

* :func:`scan` reads a file once (in a worker thread, beside DuckDB) for its SHA-256 and for
  the few properties that decide how DuckDB may read it (which whitespace it holds, NUL bytes,
  carriage returns that do not end a line);
* :func:`copy_stream` copies standard input or a pipe once, and :func:`first_long_line`
  finds a line over :data:`MAX_LINE`;
* :func:`first_data_line` sniffs the delimiter and the tag of a run from its first data line;
* :func:`locate_run_error` and :func:`locate_qrels_error` re-read a file that the set-based
  checks rejected and name its first bad line (the error path only).

The line grammar, shared by the SQL and by this module (``tests/test_ingest.py`` checks that
they agree on random input):

* lines end with ``\\n`` or ``\\r\\n``; a ``\\r`` anywhere else is an error (DuckDB's reader
  would take it for a line break, trec_eval for a blank);
* a line whose first character is ``#`` is a comment; a line of whitespace only is blank;
  both are skipped but counted for line numbers;
* fields are separated by runs of ASCII whitespace (space, tab, vertical tab, form feed), as
  C's ``isspace`` that trec_eval uses; other characters, ``#`` included, are data;
* the text is UTF-8 (a leading byte-order mark is ignored) without NUL bytes;
* a field holds no control character (no ESC, DEL, C1 or direction override:
  :data:`evalwh.io.printable.FILE_CONTROL`), so no topic or document id holds one; a comment may;
* a score is a finite decimal number (``12``, ``-3.5``, ``9.998186e-02``); a relevance grade
  is a decimal number (``2``, ``-1``, ``0.75``) of at most nine integer digits with an optional sign;
* a line holds at most :data:`MAX_LINE` bytes (1 MiB) besides its line break. A longer line
  is refused by every reader alike (``/dev/zero`` given as a file ends there at once, and a
  3 MB document id gets the same verdict from ``ingest`` and ``eval --qrels``).

A file name ``-`` means standard input. Standard input, pipes (``<(cat run)``,
``/dev/stdin``) and other files that are not regular files are read exactly once, into a
temporary copy (:func:`copy_stream`) that every later step reads.
"""

from __future__ import annotations

import gzip
import hashlib
import math
import os
import re
import shutil
import stat
import sys
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, cast

from evalwh.errors import IngestError

RUN_FIELDS = 6
QRELS_FIELDS = 4
_BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 20
# Field separators inside a line: C isspace() minus the line breaks.
_SEPARATORS = re.compile(rb"[ \t\x0b\x0c\r]+")
SCORE = re.compile(r"[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?")
"""A score's form (the SQL of queries/ingest/stage_run_lines.sql uses the same pattern):
``12``, ``-3.5``, ``.5``, ``9.998186e-02``; not ``1_000``, ``0x10``, ``1,5``, ``nan`` or ``inf``."""
_GRADE = re.compile(r"[+-]?([0-9]{1,9}(\.[0-9]*)?|\.[0-9]+)")
MAX_LINE = 1 << 20  # the longest line read, in bytes without its line break (as _runlines.c)
STDIN = "-"
TOO_LONG = f"the line is longer than {MAX_LINE:,} bytes, the longest line evalwh reads"


def is_stdin(path: Path) -> bool:
    """Whether ``path`` names standard input (``-``)."""
    return str(path) == STDIN


def label(path: Path) -> str:
    """How a file is named in messages: ``<stdin>`` for ``-``, else the path as given."""
    return "<stdin>" if is_stdin(path) else str(path)


def require_file(path: Path) -> None:
    """Raise IngestError unless ``path`` is an existing file (or ``-``, standard input)."""
    if is_stdin(path):
        return
    if not path.exists():
        raise IngestError(str(path), None, "no such file")
    if path.is_dir():
        raise IngestError(str(path), None, "is a directory, not a file")


def require_regular(path: Path, why: str) -> None:
    """Raise IngestError unless ``path`` is a regular file (links followed): not a device,
    pipe or socket, which a reader that seeks (Parquet) would wait on or read without end.
    """
    require_file(path)
    if is_stdin(path) or not stat.S_ISREG(os.stat(path).st_mode):
        raise IngestError(label(path), None, f"is not a regular file (a device, pipe or socket); {why}")


def needs_copy(path: Path) -> bool:
    """Whether ``path`` can be read only once (standard input, a pipe, a device)."""
    if is_stdin(path):
        return True
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False  # the caller names a missing file


def copy_stream(path: Path, target: Path) -> None:
    """Copy standard input or a pipe once into ``target``, refusing a line over MAX_LINE.

    Memory stays bounded whatever the stream holds: ``/dev/zero`` ends with the too-long
    line error after about 1 MiB. (A stream named ``*.gz`` is copied as it is.)

    Raises:
        IngestError: naming the stream and the line that is too long.
    """
    name = label(path)
    line = 1
    since_newline = 0
    copied = 0
    source = sys.stdin.buffer if is_stdin(path) else open(path, "rb")  # noqa: SIM115
    try:
        with open(target, "wb") as out:
            while chunk := source.read(_CHUNK):
                copied += len(chunk)
                if copied > STREAM_BYTES or (copied % (64 * _CHUNK) < len(chunk) and _disk_nearly_full(target)):
                    # an endless stream (a FIFO fed by `yes`) stops here, not at a full disk
                    raise IngestError(
                        name, None, f"the stream holds more than {size_text(min(copied, STREAM_BYTES))}, the most "
                        f"evalwh copies from standard input or a pipe (or the temporary folder {target.parent.parent} "
                        f"would be left with less than {size_text(STREAM_RESERVE)}); give a file",
                    )  # fmt: skip
                out.write(chunk)
                last = chunk.rfind(b"\n")
                if last < 0:
                    since_newline += len(chunk)
                else:
                    line += chunk.count(b"\n")
                    since_newline = len(chunk) - last - 1
                if since_newline > MAX_LINE + 1:  # (+1: a \r before the \n)
                    raise IngestError(name, line, TOO_LONG)
    finally:
        if source is not sys.stdin.buffer:
            source.close()


STREAM_BYTES = 64 << 30
"""The most evalwh copies from standard input or a pipe (which it can read only once)."""
STREAM_RESERVE = 1 << 30
"""The free space a stream's copy leaves in the temporary folder: it stops before less is left."""


def _disk_nearly_full(target: Path) -> bool:
    try:
        return shutil.disk_usage(target.parent).free < STREAM_RESERVE
    except OSError:
        return False


def first_long_line(data: bytes) -> int:
    """The number of the first line longer than MAX_LINE bytes (0: none), by the C reader."""
    try:
        from evalwh.io import _runlines
    except ImportError:
        for number, body in enumerate(data.split(b"\n"), start=1):
            if len(body.removesuffix(b"\r")) > MAX_LINE:
                return number
        return 0
    return int(_runlines.first_long_line(data, MAX_LINE))


def control_bytes(data: bytes) -> bool:
    """Whether ``data`` holds a character of :data:`evalwh.io.printable.FILE_CONTROL` (as UTF-8),
    by the C reader (one pass without the GIL)."""
    try:
        from evalwh.io import _runlines
    except ImportError:
        from evalwh.io.printable import FILE_CONTROL

        return FILE_CONTROL.search(data.decode("utf-8", "replace")) is not None
    return bool(_runlines.control_bytes(data))


def open_binary(path: Path) -> IO[bytes]:
    """Open ``path`` for reading bytes, decompressing ``.gz`` transparently."""
    if path.suffix == ".gz":
        return cast(IO[bytes], gzip.open(path, "rb"))
    return open(path, "rb")


GZIP_RATIO = 100
"""The most a ``.gz`` input may inflate, as a multiple of its size (text of runs and qrels
inflates 4-10 times); beyond :data:`GZIP_FLOOR` of content, a gzip bomb (19 MB inflating to
4 GB) is refused before it fills memory or the disk."""
GZIP_FLOOR = 256 << 20


class InflatesTooMuch(OSError):
    """A ``.gz`` file that inflates more than :data:`GZIP_RATIO` times its size (an OSError, so
    every reader names it as it names an unreadable file)."""


def gzip_bound(path: Path) -> int:
    """The most decompressed bytes ``path`` (a ``.gz`` file) may give."""
    try:
        size = os.stat(path).st_size
    except OSError:
        size = 0
    return max(GZIP_FLOOR, GZIP_RATIO * size)


def _inflates_too_much(path: Path, limit: int) -> InflatesTooMuch:
    return InflatesTooMuch(
        f"it inflates to more than {size_text(limit)}, over {GZIP_RATIO} times its size: not a gzipped text file evalwh reads"
    )


def read_bytes(path: Path) -> bytes:
    """The whole content of ``path``, decompressed if it is ``.gz`` (within :func:`gzip_bound`).

    Inflates with ISA-L (python-isal, a dependency where it has wheels), which is two to three
    times faster than zlib, else with zlib; both release the GIL, so files decompress in
    parallel threads. Raises what reading a file raises (OSError, EOFError, zlib.error), and
    :class:`InflatesTooMuch` for a gzip bomb, stopped one byte past the bound.
    """
    if path.suffix != ".gz":
        return path.read_bytes()
    limit = gzip_bound(path)
    try:
        from isal import igzip, isal_zlib
    except ImportError:
        with gzip.open(path, "rb") as handle:
            data = handle.read(limit + 1)
    else:
        try:
            with igzip.open(path, "rb") as handle:
                data = handle.read(limit + 1)
        except isal_zlib.error as error:
            raise zlib.error(str(error)) from error
    if len(data) > limit:
        raise _inflates_too_much(path, limit)
    return data


MiB = 1 << 20
PROMPT_BYTES = 1 * MiB
"""The largest judging prompt (``ingest qrels --prompt``) evalwh reads."""
TABLE_BYTES = 16 * MiB
"""The largest small table or text evalwh reads whole: run metadata, an SQL file (or SQL on
standard input), a list of topics or of runs, an export's ``manifest.json``."""
SCORES_BYTES = 256 * MiB
"""The largest score file (``compare --scores``) evalwh reads, decompressed."""
TEXTS_BYTES = 1024 * MiB
"""The largest topics or documents file (``pool export --topics/--documents``) evalwh reads,
decompressed."""
JUDGMENTS_BYTES = 512 * MiB
"""The largest JSON-lines judgments file evalwh reads, decompressed (about 100,000 records
that each carry a 5 KB prompt)."""


def size_text(limit: int) -> str:
    """A byte count for messages: ``1 MiB``, ``512 KiB``, ``100 bytes``."""
    for unit, size in (("GiB", 1 << 30), ("MiB", MiB), ("KiB", 1 << 10)):
        if limit >= size and limit % size == 0:
            return f"{limit // size:,} {unit}"
    return f"{limit:,} bytes"


def read_bounded(path: Path, limit: int, what: str, *, decompress: bool = True, name: str | None = None) -> bytes:
    """The whole content of an input that has a size bound, refused at once when it is larger.

    The one reader of every whole-file input besides run and qrels files (a prompt, run
    metadata, an SQL file, score files, JSON-lines judgments, an export's manifest). It never
    holds more than ``limit + 1`` bytes: a regular file larger than ``limit`` is refused by
    its size, before it is read; standard input (``-``), a pipe or a device is read up to one
    byte past the bound, so ``/dev/zero`` or an endless stream (``<(yes)``) ends with the
    error after ``limit`` bytes; a ``.gz`` file's bound is on its decompressed content (a
    small file that inflates without end is refused the same way).

    Args:
        path: The file, or ``-`` for standard input.
        limit: The most bytes the content may hold.
        what: What the file is, for the message (``the prompt file``).
        decompress: Read a ``.gz`` file's decompressed content.
        name: How the file is named in messages (default: as :func:`label` names ``path``).

    Raises:
        IngestError: ``FILE: no such file``, ``FILE: is a directory, not a file``, ``FILE:
            cannot read ...``, or ``FILE: holds more than 1 MiB, the most the prompt file may
            hold``.

    Examples:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "p.txt"
        >>> _ = path.write_text("judge this")
        >>> read_bounded(path, 100, "the prompt file")
        b'judge this'
        >>> read_bounded(path, 4, "the prompt file")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        evalwh.errors.IngestError: ...p.txt: holds more than 4 bytes, the most the prompt file may hold
    """
    require_file(path)
    name = name or label(path)
    too_big = IngestError(name, None, f"holds more than {size_text(limit)}, the most {what} may hold")
    gzipped = decompress and path.suffix == ".gz"
    try:
        if is_stdin(path):
            data = sys.stdin.buffer.read(limit + 1)
        else:
            with open(path, "rb") as raw:
                regular = stat.S_ISREG(os.fstat(raw.fileno()).st_mode)
                if regular and not gzipped and os.fstat(raw.fileno()).st_size > limit:
                    raise too_big
                handle: IO[bytes] = cast(IO[bytes], gzip.GzipFile(fileobj=raw)) if gzipped else raw
                data = handle.read(limit + 1)
    except (EOFError, zlib.error, gzip.BadGzipFile) as error:
        raise IngestError(name, None, f"cannot read {what}: {error}") from None
    except OSError as error:
        raise IngestError(name, None, f"cannot read {what}: {error.strerror or error}") from None
    if len(data) > limit:
        raise too_big
    return data


@dataclass(frozen=True)
class Scan:
    """What one full read of a file found out (see :func:`scan`).

    Attributes:
        sha256: SHA-256 of the content, decompressed, so a gzipped copy hashes like the
            original.
        fast_delimiter: The one whitespace character that separates fields (``"\\t"`` or
            ``" "``) when the file holds no other, so DuckDB's CSV reader can split it;
            ``None`` when only the any-whitespace split reads it right.
        unreadable: The file holds NUL bytes or a ``\\r`` that does not end a line, and is
            rejected; :func:`locate_run_error` names the line.
        long_line: A line is longer than :data:`MAX_LINE` (found as the file streams by, so a
            2 GB line is never held whole).
    """

    sha256: str
    fast_delimiter: str | None
    unreadable: bool
    long_line: bool = False
    control: bool = False
    """A control character (:data:`evalwh.io.printable.FILE_CONTROL`) somewhere, perhaps in a
    comment: the caller asks :func:`locate_run_error` (or the qrels one) whether a line that
    is not a comment holds it, and refuses the file if so."""


def scan(path: Path, copy_to: Path | None = None) -> Scan:
    """Hash the decompressed content of ``path`` and find which whitespace it holds.

    Runs at memory speed (``bytes.find`` and the C hash), and both ``zlib`` and ``hashlib``
    release the GIL, so several scans run in threads beside DuckDB.

    Args:
        path: The file, plain or gzipped.
        copy_to: Also write the decompressed content there, so that DuckDB reads plain text
            instead of decompressing the file a second time.
    """
    digest = hashlib.sha256()
    seen = {b"\t": False, b" ": False, b"\x0b": False, b"\x0c": False, b"\x00": False}
    lone_cr = False
    previous_ended_cr = False
    since_newline = 0
    long_line = False
    control = False
    tail = b""  # the last two bytes of the chunk before (a character split across chunks)
    limit = gzip_bound(path) if path.suffix == ".gz" else None
    read = 0
    with open_binary(path) as handle, _sink(copy_to) as copy:
        while chunk := handle.read(_CHUNK):
            read += len(chunk)
            if limit is not None and read > limit:
                raise _inflates_too_much(path, limit)
            if not long_line:  # (a line running on from the chunk before, or one within the chunk)
                first, last = chunk.find(b"\n"), chunk.rfind(b"\n")
                if first < 0:
                    since_newline += len(chunk)
                else:
                    long_line = since_newline + first > MAX_LINE + 1 or bool(first_long_line(chunk[first + 1 : last + 1]))
                    since_newline = len(chunk) - last - 1
                long_line = long_line or since_newline > MAX_LINE + 1
            digest.update(chunk)
            if copy is not None:
                copy.write(chunk)
            for char, found in seen.items():
                if not found and char in chunk:
                    seen[char] = True
            if not lone_cr and (previous_ended_cr or b"\r" in chunk):
                # every \r must be followed by \n; one split across chunks is carried over
                if previous_ended_cr and not chunk.startswith(b"\n"):
                    lone_cr = True
                body = chunk[:-1] if chunk.endswith(b"\r") else chunk
                if body.count(b"\r") != body.count(b"\r\n"):
                    lone_cr = True
            previous_ended_cr = chunk.endswith(b"\r")
            if not control:
                control = control_bytes(chunk) or control_bytes(tail + chunk[:2])
                tail = chunk[-2:]
    # a \r as the very last byte ends the last line (a CRLF file without its final \n)
    fast: str | None = None
    if not (seen[b"\x0b"] or seen[b"\x0c"]):
        if seen[b"\t"] and not seen[b" "]:
            fast = "\t"
        elif seen[b" "] and not seen[b"\t"]:
            fast = " "
    return Scan(digest.hexdigest(), fast, lone_cr or seen[b"\x00"], long_line, control)


@contextmanager
def _sink(path: Path | None) -> Iterator[IO[bytes] | None]:
    if path is None:
        yield None
        return
    with open(path, "wb") as handle:
        yield handle


def split_fields(line: bytes) -> list[bytes]:
    """Split the body of a line (no line break) into fields on runs of whitespace."""
    return [field for field in _SEPARATORS.split(line) if field]


def _numbered_lines(path: Path) -> Iterator[tuple[int, bytes | None, str | None]]:
    """Every line as (number, body, problem); the body is None for comments and blank lines.

    ``problem`` names what makes the line unreadable (a NUL byte, a stray carriage return,
    invalid UTF-8); such lines have no body.
    """
    with open_binary(path) as handle:
        number = 0
        # at most MAX_LINE + 2 bytes a line (its body and \r\n): a longer one ends the file
        while raw := handle.readline(MAX_LINE + 3):
            number += 1
            body = raw[:-1] if raw.endswith(b"\n") else raw
            if body.endswith(b"\r"):
                body = body[:-1]
            if len(body) > MAX_LINE:
                yield number, None, TOO_LONG
                return
            if number == 1 and body.startswith(_BOM):
                body = body[len(_BOM) :]
            if b"\x00" in body:
                yield (
                    number,
                    None,
                    "the line holds a NUL byte; is this a binary or compressed file?",
                )
                continue
            if b"\r" in body:
                yield (
                    number,
                    None,
                    ("carriage return (\\r) inside the line; lines must end with \\n or \\r\\n"),
                )
                continue
            try:
                body.decode("utf-8")
            except UnicodeDecodeError as error:
                yield number, None, f"the line is not valid UTF-8 (byte {error.start + 1})"
                continue
            if body.startswith(b"#") or not body.strip(b" \t\x0b\x0c"):
                yield number, None, None
                continue
            yield number, body, None


@dataclass(frozen=True)
class FirstLine:
    """The first data line of a file: its number, fields and the delimiter it suggests."""

    number: int
    fields: list[str]
    delimiter: str


def first_data_line(path: Path) -> FirstLine | None:
    """The first line that is neither comment nor blank, or None if the file has none.

    Used to sniff a run's delimiter (a tab if the line holds one, else a space) and its tag
    before DuckDB reads it. A line that cannot be read comes back without fields, so that
    the caller reports it through the error locator.
    """
    for number, body, problem in _numbered_lines(path):
        if problem is not None:
            return FirstLine(number, [], " ")
        if body is not None:
            fields = [f.decode("utf-8") for f in split_fields(body)]
            return FirstLine(number, fields, "\t" if b"\t" in body else " ")
    return None


def is_score(text: str) -> bool:
    """True if ``text`` is a finite decimal number (what the ingest SQL accepts as a score)."""
    if SCORE.fullmatch(text) is None:
        return False
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def parse_number(text: str, *, grade: bool = False) -> float | None:
    """``text`` as a number in the grammar of every reader, or None when it is not one.

    The grammar is a run's score (:data:`SCORE`) or, with ``grade``, a qrels grade (at most
    nine integer digits), around ASCII whitespace: ASCII digits only, so not Python's
    ``float()`` grammar, which reads ``1_0`` as 10, ``３`` and ``٣`` as 3, and ``nan``/``inf``.
    Every reader of numbers in text (qrels, runs, JSON lines, LARA probabilities, per-topic
    score files, budgets) goes through it.

    Examples:
        >>> parse_number(" 0.25 "), parse_number("1_0"), parse_number("\uff13"), parse_number("nan")
        (0.25, None, None, None)
        >>> parse_number("1e3"), parse_number("1e3", grade=True)
        (1000.0, None)
    """
    body = text.strip(" \t\n\r\x0b\x0c")
    if not (is_relevance(body) if grade else is_score(body)):
        return None
    return float(body)


def is_relevance(text: str) -> bool:
    """True if ``text`` is a relevance grade: a decimal number, at most nine integer digits, optional sign."""
    return _GRADE.fullmatch(text) is not None


def _control_problem(fields: list[str], names: tuple[str, ...]) -> str | None:
    """Why a line whose fields hold a control character (:data:`evalwh.io.printable.FILE_CONTROL`)
    is refused: an id holding an ESC reaches every terminal that prints it."""
    from evalwh.io.printable import FILE_CONTROL, terminal

    for index, value in enumerate(fields):
        if FILE_CONTROL.search(value):
            what = names[index] if index < len(names) else f"field {index + 1}"
            return f"{what} {terminal(repr(value))} holds a control character, which an id may not hold"
    return None


_RUN_NAMES = ("topic id", "field 2", "document id", "rank", "score", "tag")
_QRELS_NAMES = ("topic id", "field 2", "document id", "relevance")


def control_line_problem(
    body: bytes, expected: int, extra: bool = False, first: bool = False
) -> str:
    """What evalwh ingest says of a run (``expected`` 6) or qrels (4) line holding a control
    character (Spark's reader, ``queries/spark/text_lines.sql``, finds the line): the field count
    first (more fields only with ``extra``); on a run file's ``first`` data line its tag, which
    names the run (``evalwh.store.ingest.files``); then the first field holding one."""
    from evalwh.io.printable import CONTROL

    fields = [f.decode("utf-8") for f in split_fields(body)]
    problem = _field_count_problem(len(fields), expected, extra)
    if problem is None and first and CONTROL.search(tag := fields[RUN_FIELDS - 1]):
        problem = f"the run tag {tag!r} holds a control character, which a run id may not hold"
    names = _RUN_NAMES if expected == RUN_FIELDS else _QRELS_NAMES
    return problem or _control_problem(fields, names) or "the line holds a control character"


def _field_count_problem(count: int, expected: int, extra_allowed: bool = False) -> str | None:
    if count < expected or (count > expected and not extra_allowed):
        return f"expected {expected} fields, found {count}"
    return None


def locate_run_error(
    path: Path, *, ignore_extra_fields: bool, one_tag: bool, label: str | None = None
) -> IngestError:
    """Find the first bad line of a run file that the set-based checks rejected.

    Args:
        path: The run file.
        ignore_extra_fields: Accept lines with more than six fields (trec_eval's "reserved
            for future expansion").
        one_tag: Require one tag for the whole file (no ``--run-id`` given).
        label: The name to show for the file (defaults to ``path``).

    Returns:
        The error to raise, naming the file, the line and the problem.
    """
    name = label or str(path)
    seen: dict[tuple[str, str], int] = {}
    first_tag: tuple[str, int] | None = None
    count = 0
    for number, body, problem in _numbered_lines(path):
        if problem is not None:
            return IngestError(name, number, problem)
        if body is None:
            continue
        count += 1
        fields = [f.decode("utf-8") for f in split_fields(body)]
        problem = _field_count_problem(len(fields), RUN_FIELDS, ignore_extra_fields) or _control_problem(
            fields, _RUN_NAMES
        )
        if problem:
            return IngestError(name, number, problem)
        query_id, _, doc_id, _, score, tag = fields[:RUN_FIELDS]
        if not is_score(score):
            return IngestError(name, number, f"score {score!r} is not a finite number")
        if first_tag is None:
            first_tag = (tag, number)
        elif one_tag and tag != first_tag[0]:
            return IngestError(
                name,
                number,
                f"tag {tag!r} differs from {first_tag[0]!r} on line {first_tag[1]}; "
                "a file holds one run (or give --run-id)",
            )
        key = (query_id, doc_id)
        if key in seen:
            return IngestError(
                name,
                number,
                f"document {doc_id!r} appears twice for topic {query_id!r} "
                f"(first on line {seen[key]})",
            )
        seen[key] = number
    if count == 0:
        return IngestError(name, None, "the file holds no run lines")
    return IngestError(name, None, "the file was rejected but no bad line was found")


def locate_qrels_error(path: Path, *, label: str | None = None) -> IngestError:
    """Find the first bad line of a qrels file that the set-based checks rejected."""
    name = label or str(path)
    seen: dict[tuple[str, str], int] = {}
    count = 0
    for number, body, problem in _numbered_lines(path):
        if problem is not None:
            return IngestError(name, number, problem)
        if body is None:
            continue
        count += 1
        fields = [f.decode("utf-8") for f in split_fields(body)]
        problem = _field_count_problem(len(fields), QRELS_FIELDS) or _control_problem(fields, _QRELS_NAMES)
        if problem:
            return IngestError(name, number, problem)
        query_id, _, doc_id, relevance = fields
        if not is_relevance(relevance):
            return IngestError(name, number, f"relevance {relevance!r} is not a number")
        key = (query_id, doc_id)
        if key in seen:
            return IngestError(
                name,
                number,
                f"document {doc_id!r} is judged twice for topic {query_id!r} "
                f"(first on line {seen[key]})",
            )
        seen[key] = number
    if count == 0:
        return IngestError(name, None, "the file holds no qrels lines")
    return IngestError(name, None, "the file was rejected but no bad line was found")
