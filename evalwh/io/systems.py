"""Which run is which system in each collection: the mapping file of ``evalwh meta --systems``.

A meta-analysis pools the effect of one *system* over another across collections; a system's
run is often named differently in each (``bm25-covid``, ``bm25-robust04``). The mapping file
says which: one line per run, three fields separated by tabs or spaces,

    collection_id  run_id  system

blank lines and lines starting with ``#`` ignored. A run not listed keeps its run id as its
system name. Read whole with the bound of every small table (:data:`evalwh.io.formats.TABLE_BYTES`).
"""

from __future__ import annotations

from pathlib import Path

from evalwh.errors import IngestError
from evalwh.io import formats


def read_systems(path: str | Path) -> dict[tuple[str, str], str]:
    """``(collection_id, run_id) -> system`` from a mapping file.

    Raises:
        IngestError: ``FILE:LINE: problem`` for a line without three fields, a run listed
            twice, or two runs of one collection given the same system.

    Examples:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "systems.tsv"
        >>> _ = path.write_text("# collection run system\\ncovid bm25-c bm25\\nrobust bm25-r bm25\\n")
        >>> read_systems(path)
        {('covid', 'bm25-c'): 'bm25', ('robust', 'bm25-r'): 'bm25'}
    """
    path = Path(path)
    label = formats.label(path)
    data = formats.read_bounded(path, formats.TABLE_BYTES, "a system mapping file", decompress=False)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise IngestError(label, None, f"not UTF-8 text: {error.reason} at byte {error.start}") from None
    systems: dict[tuple[str, str], str] = {}
    taken: dict[tuple[str, str], tuple[str, int]] = {}
    lines: dict[tuple[str, str], int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        fields = stripped.split()
        if len(fields) != 3:
            raise IngestError(label, number, f"{len(fields)} fields; a line is: collection_id run_id system")
        for field in fields:
            if not field.isprintable():
                raise IngestError(label, number, f"{field!r} holds a control character")
        collection, run, system = fields
        key = (collection, run)
        if key in systems:
            raise IngestError(label, number, f"run {run!r} of {collection!r} is listed twice (first on line {lines[key]})")
        if (collection, system) in taken:
            other, first = taken[(collection, system)]
            raise IngestError(
                label, number, f"runs {other!r} (line {first}) and {run!r} of {collection!r} are both system {system!r}"
            )
        systems[key] = system
        lines[key] = number
        taken[(collection, system)] = (run, number)
    if not systems:
        raise IngestError(label, None, "no mapping lines (collection_id run_id system)")
    return systems
