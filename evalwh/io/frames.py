"""DataFrame column layouts: evalwh's own, ir_measures' and PyTerrier's, mapped to one.

Every entry point that takes a DataFrame (``Warehouse.ingest_qrels``, ``Warehouse.ingest_runs``,
:func:`evalwh.measures.direct.evaluate_files`) passes it through :func:`standard_columns` first, so a
frame is accepted or refused the same way everywhere. The mapping only renames columns; checks
on the values (ids, grades, scores) come after it, in :mod:`evalwh.store.ingest`.

==========  =======================  ==========================  ==================
evalwh      ir_measures              PyTerrier                   meaning
==========  =======================  ==========================  ==================
query_id    query_id                 qid                         topic id
doc_id      doc_id                   docno                       document id
relevance   relevance                label                       grade (qrels)
score       score                    score                       retrieval score (runs)
rank        (none)                   rank                        kept, never used for order
run_id      (none)                   (none; pass ``run_id=``)    run name (runs)
iteration   iteration                iteration                   qrels' second column
==========  =======================  ==========================  ==================

PyTerrier's ``docid`` (its index's internal number) is not a document id and is ignored.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from evalwh.errors import IngestError

if TYPE_CHECKING:
    import pandas as pd

Kind = Literal["qrels", "run"]

ALIASES: dict[str, tuple[str, ...]] = {
    "query_id": ("qid",),
    "doc_id": ("docno",),
    "relevance": ("label",),
}
"""Other names of a column, in the order they are tried; evalwh's own name always comes first."""

REQUIRED: dict[Kind, tuple[str, ...]] = {
    "qrels": ("query_id", "doc_id", "relevance"),
    "run": ("query_id", "doc_id", "score"),
}
OPTIONAL: dict[Kind, tuple[str, ...]] = {
    "qrels": ("iteration",),
    "run": ("run_id", "rank"),
}
LAYOUTS: dict[Kind, dict[str, tuple[str, ...]]] = {
    "qrels": {
        "evalwh and ir_measures": ("query_id", "doc_id", "relevance"),
        "PyTerrier": ("qid", "docno", "label"),
    },
    "run": {
        "evalwh and ir_measures": ("query_id", "doc_id", "score"),
        "PyTerrier": ("qid", "docno", "score"),
    },
}


def standard_columns(frame: pd.DataFrame, kind: Kind, *, label: str = "DataFrame") -> pd.DataFrame:
    """``frame`` with its columns named as evalwh names them (a renamed view, no data copied).

    Args:
        frame: A qrels or run DataFrame in any layout of :data:`LAYOUTS`.
        kind: ``"qrels"`` or ``"run"``.
        label: What the frame is called in an error message.

    Returns:
        The frame with ``query_id, doc_id, relevance`` (qrels) or ``query_id, doc_id, score``
        (runs), and the optional columns present; other columns are left as they are.

    Raises:
        IngestError: when a required column is missing, naming the columns found and the
            layouts accepted.

    Examples:
        >>> import pandas as pd
        >>> qrels = pd.DataFrame({"qid": ["1"], "docno": ["d1"], "label": [1]})
        >>> list(standard_columns(qrels, "qrels").columns)
        ['query_id', 'doc_id', 'relevance']
    """
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise IngestError(label, None, f"expected a pandas DataFrame, got {type(frame).__name__}")
    present = {str(c) for c in frame.columns}
    renames: dict[str, str] = {}
    missing: list[str] = []
    for column in REQUIRED[kind] + OPTIONAL[kind]:
        if column in present:
            continue
        alias = next((a for a in ALIASES.get(column, ()) if a in present), None)
        if alias is not None:
            renames[alias] = column
        elif column in REQUIRED[kind]:
            missing.append(column)
    if missing:
        accepted = "; ".join(f"{name}: {', '.join(columns)}" for name, columns in LAYOUTS[kind].items())
        found = ", ".join(map(str, frame.columns)) or "none"
        raise IngestError(
            label,
            None,
            f"a {kind} DataFrame needs {', '.join(REQUIRED[kind])} (or another layout: {accepted}); "
            f"found columns [{found}], missing {', '.join(missing)}",
        )
    return frame.rename(columns=renames) if renames else frame


TABLE_SUFFIXES = (".parquet",)
"""Files read as a DataFrame (any layout above) wherever a qrels or run file is taken."""


def is_table_file(source: object) -> bool:
    """Whether ``source`` is a path to a table file (Parquet) rather than a TREC text file."""
    return isinstance(source, (str, os.PathLike)) and str(source).lower().endswith(TABLE_SUFFIXES)


def read_table(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A Parquet file of qrels or run rows, as a DataFrame; an unreadable file is an IngestError."""
    import pandas as pd
    import pyarrow as pa

    from evalwh.io.formats import require_file

    require_file(Path(path))
    try:
        return pd.read_parquet(path)
    except (OSError, pa.ArrowException, ValueError) as error:
        raise IngestError(str(path), None, f"not a readable Parquet file ({error})") from None
