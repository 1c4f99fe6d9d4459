"""Loading of the shipped ``.sql`` resources and their ``-- key: value`` headers.

Every query evalwh runs lives in a ``.sql`` file under ``schema/`` or ``queries/`` (shipped as
``evalwh.schema`` and ``evalwh.queries.*``). A file starts with consecutive ``-- key: value``
header lines, which DuckDB ignores, so each file also runs as-is in a DuckDB shell.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from importlib import resources

_HEADER = re.compile(r"^--\s*([a-z_]+)\s*:\s*(.*?)\s*$")
_PARAM = re.compile(r"(?<![\w$])\$([a-z_][a-z0-9_]*)")


@dataclass(frozen=True)
class SqlFile:
    """One shipped SQL file: its package, name (file stem), header and text."""

    package: str
    name: str
    header: dict[str, str] = field(hash=False)
    text: str = field(hash=False)

    @property
    def source(self) -> str:
        """Where the file lives, for error messages (``evalwh.queries.metrics/p.sql``)."""
        return f"{self.package}/{self.name}.sql"

    @property
    def placeholders(self) -> frozenset[str]:
        """The ``$name`` parameters the statement uses (comments excluded)."""
        body = "\n".join(line.split("--", 1)[0] for line in self.text.splitlines())
        return frozenset(_PARAM.findall(body))


def _parse_header(text: str) -> dict[str, str]:
    header: dict[str, str] = {}
    for line in text.splitlines():
        match = _HEADER.match(line)
        if not match:
            break
        header[match.group(1)] = match.group(2)
    return header


@functools.cache
def load_package(package: str) -> dict[str, SqlFile]:
    """Every ``.sql`` file of ``package`` by stem, in name order (cached)."""
    files: dict[str, SqlFile] = {}
    for entry in sorted(resources.files(package).iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".sql"):
            text = entry.read_text(encoding="utf-8")
            stem = entry.name[: -len(".sql")]
            files[stem] = SqlFile(package, stem, _parse_header(text), text)
    return files


def query(package: str, name: str) -> SqlFile:
    """One shipped SQL file, e.g. ``query("evalwh.queries.ingest", "qrels_check")``."""
    return load_package(package)[name]


def identifier(name: str) -> str:
    """Quote ``name`` as a DuckDB identifier (through sqlglot, never by string formatting)."""
    from sqlglot import exp

    return exp.to_identifier(name, quoted=True).sql(dialect="duckdb")
