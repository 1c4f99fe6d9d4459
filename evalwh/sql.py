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
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

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


def _read_folder(folder: Traversable, source: str) -> dict[str, SqlFile]:
    files: dict[str, SqlFile] = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".sql"):
            text = entry.read_text(encoding="utf-8")
            stem = entry.name[: -len(".sql")]
            files[stem] = SqlFile(source, stem, _parse_header(text), text)
    return files


@functools.cache
def load_package(package: str) -> dict[str, SqlFile]:
    """Every ``.sql`` file of ``package`` by stem, in name order (cached)."""
    return _read_folder(resources.files(package), package)


@functools.cache
def load_folder(package: str, folder: str) -> dict[str, SqlFile] | None:
    """Every ``.sql`` file of a folder inside ``package`` by stem, in name order (cached).

    For SQL that is shipped with a package but is not one of its files, such as the new
    warehouse of ``schema/baseline/`` (a file of ``evalwh.schema`` would be a schema step).
    None when the folder is not there (an installation that does not ship it).
    """
    entry = resources.files(package).joinpath(folder)
    if not entry.is_dir():
        return None
    return _read_folder(entry, f"{package}/{folder}")


def query(package: str, name: str) -> SqlFile:
    """One shipped SQL file, e.g. ``query("evalwh.queries.ingest", "qrels_check")``."""
    return load_package(package)[name]


def identifier(name: str) -> str:
    """Quote ``name`` as a DuckDB identifier (through sqlglot, never by string formatting)."""
    from sqlglot import exp

    return exp.to_identifier(name, quoted=True).sql(dialect="duckdb")
