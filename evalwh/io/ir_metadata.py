"""The ir_metadata block a run file may open with: read, checked, and written back.

ir_metadata (https://www.ir-metadata.org, schema 0.1) describes a run in YAML inside the run
file itself, every line a comment::

    # ir_metadata.start
    # tag: bm25-rm3
    # method:
    #   automatic: true
    #   score_function: BM25
    # ir_metadata.end
    401 Q0 FBIS3-10082 1 12.3 bm25-rm3

Its top-level keys are ``tag``, ``platform``, ``implementation``, ``method``, ``actor``,
``data`` and ``research goal``; evalwh keeps whatever the block holds. The block counts only
at the very top of the file: its first line is ``# ir_metadata.start`` (a UTF-8 byte-order
mark before it is allowed), every line up to ``# ir_metadata.end`` starts with ``#``, and
what follows ``# `` (or a bare ``#``, an empty line) is YAML, which must be a mapping. The
ingest stores it (:func:`read_block`); below the block the file is read exactly as without
it: its lines are comments to evalwh's readers as to trec_eval, so a run evaluates the same
with or without its block (:func:`skip_block` lets the C reader start after it).

A malformed block is one :class:`~evalwh.errors.IngestError` naming the file and line: a
start marker without its end (the file ends, or a line that does not start with ``#``
comes first), YAML that does not parse (the line is the file's) or that is not a mapping.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalwh.errors import IngestError
from evalwh.io import formats

START = b"# ir_metadata.start"
END = b"# ir_metadata.end"
KEYS = ("tag", "platform", "implementation", "method", "actor", "data", "research goal")
_BOM = b"\xef\xbb\xbf"
MAX_BLOCK = 1 << 20  # a block of more than 1 MiB is not metadata


@dataclass(frozen=True)
class Block:
    """An ir_metadata block read from the top of a run file.

    Attributes:
        metadata: The YAML as a mapping (JSON-compatible: dates become ISO text).
        lines: The lines the block takes, its two markers included.
        end: The byte offset just past the end marker's line break: where the run lines start.
    """

    metadata: dict[str, Any]
    lines: int
    end: int

    def to_json(self) -> str:
        """The metadata as JSON text, keys in the block's order."""
        return json.dumps(self.metadata, ensure_ascii=False)


def _marker(line: bytes, marker: bytes) -> bool:
    return line.rstrip(b" \t\r\n") == marker


def skip_block(data: bytes) -> int:
    """Where the run lines start: past the block if ``data`` opens with a whole one, else 0
    (the end marker's line must end with a line break).

    Only the frame is checked (markers, every line a comment), not the YAML: the ingest reads
    the YAML (:func:`read_block`) before the reader is handed the rest.
    """
    start = len(_BOM) if data.startswith(_BOM) else 0
    if not data.startswith(START, start):
        return 0
    limit = min(len(data), start + MAX_BLOCK)
    stop = data.find(b"\n", start, limit)
    if stop < 0 or not _marker(data[start:stop], START):
        return 0
    at = stop + 1
    while at < limit:
        stop = data.find(b"\n", at, limit)
        if stop < 0:
            return 0
        line = data[at:stop]
        if not line.startswith(b"#"):
            return 0
        at = stop + 1
        if _marker(line, END):
            return at
    return 0


def read_block(path: Path, label: str | None = None) -> Block | None:
    """The ir_metadata block at the top of a run file (plain or ``.gz``), or None.

    Args:
        path: The file (for standard input: its copy, read once already).
        label: The file's name in messages (default: the path).

    Raises:
        IngestError: ``FILE:LINE: problem`` for a malformed block.
    """
    name = label or str(path)
    with formats.open_binary(path) as handle:
        first = handle.readline(MAX_BLOCK)
        start = len(_BOM) if first.startswith(_BOM) else 0
        if not _marker(first[start:], START):
            return None
        body: list[str] = []
        size = len(first)
        number = 1
        while True:
            line = handle.readline(MAX_BLOCK)
            number += 1
            size += len(line)
            if not line or size > MAX_BLOCK:
                raise IngestError(
                    name, 1, "the ir_metadata block opened here has no '# ir_metadata.end' line"
                )
            if _marker(line, END):
                break
            if not line.startswith(b"#"):
                raise IngestError(
                    name, number, "the ir_metadata block opened on line 1 ends without '# ir_metadata.end' "
                    "(this line does not start with '#')",
                )  # fmt: skip
            try:
                text = line.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as error:
                raise IngestError(
                    name, number, f"the line is not valid UTF-8 (byte {error.start + 1})"
                ) from None
            body.append(text[2:] if text.startswith("# ") else text[1:])
    return Block(_parse(body, name), number, size)


def _parse(body: list[str], name: str) -> dict[str, Any]:
    """The block's YAML (its lines without ``# ``) as a JSON-compatible mapping."""
    import yaml

    text = "\n".join(body)
    try:
        # composed first (aliases are shared nodes there), measured, and only then built: a
        # block of nested aliases ("billion laughs") or brackets is refused before it expands
        _measure(yaml.compose(text, Loader=yaml.SafeLoader), name)
        value = yaml.safe_load(text)
    except RecursionError:
        raise IngestError(name, 2, f"ir_metadata block: YAML nested more than {MAX_DEPTH} levels deep") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = 2 + mark.line if mark is not None else 1  # the block's YAML starts on line 2
        problem = getattr(error, "problem", None) or str(error)
        raise IngestError(
            name, line, f"ir_metadata block: YAML: {' '.join(str(problem).split())}"
        ) from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise IngestError(
            name, 2, f"ir_metadata block: the YAML is a {type(value).__name__}, not a mapping"
        )
    return _plain(value)


MAX_DEPTH = 64
"""The deepest nesting of an ir_metadata block's YAML (schema 0.1 nests three levels)."""
MAX_NODES = 100_000
"""The most values an ir_metadata block may hold once its aliases are expanded."""


def _measure(root: Any, name: str) -> None:
    """Refuse a YAML node graph deeper than :data:`MAX_DEPTH`, larger than :data:`MAX_NODES`
    with its aliases expanded, or holding an alias to itself; in time linear in its nodes."""
    import yaml

    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: Any, depth: int) -> int:
        if depth > MAX_DEPTH:
            raise IngestError(name, 2, f"ir_metadata block: YAML nested more than {MAX_DEPTH} levels deep")
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_nodes:
            raise IngestError(name, 2, "ir_metadata block: YAML holds an alias that contains itself")
        open_nodes.add(key)
        if isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        else:
            children = []
        total = 1
        for child in children:
            total += size(child, depth + 1)
            if total > MAX_NODES:
                raise IngestError(
                    name, 2, f"ir_metadata block: YAML expands to more than {MAX_NODES:,} values (its aliases repeated)"
                )
        open_nodes.discard(key)
        sizes[key] = total
        return total

    if root is not None:
        size(root, 0)


def _plain(value: Any) -> Any:
    """YAML's values as JSON's: keys as text, dates as ISO text, sets as lists."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_plain(v) for v in value]
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value
