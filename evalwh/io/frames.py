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

Types are checked too (:func:`typed_columns`): an id column holds strings or integers; a float
column whose values are all whole numbers (pandas makes an integer column float as soon as one
value is missing) is read exactly as those integers (``401.0`` is topic ``401``); any other
id (a fraction, a boolean, a date, a list) is refused. A score or grade column holds numbers
(or text of numbers); a boolean, a date or another object is refused.
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
    return typed_columns(frame.rename(columns=renames) if renames else frame, kind, label=label)


IDS = ("run_id", "query_id", "doc_id", "iteration")
NUMBERS: dict[Kind, str] = {"qrels": "relevance", "run": "score"}
_EXACT = 2**53  # a float holds every integer below this exactly
_ID_KINDS = ("string", "integer", "mixed-integer", "empty")
_NUMBER_KINDS = ("integer", "floating", "mixed-integer-float", "decimal", "string", "empty")


def _plain(value: object) -> object:
    """A numpy scalar as the Python value it holds (for messages: ``True``, not ``np.True_``)."""
    item = getattr(value, "item", None)
    return item() if callable(item) and type(value).__module__ == "numpy" else value


def _first_wrong(values: pd.Series, allowed: tuple[type, ...]) -> int | None:
    """Position of the first non-missing value whose type is not ``allowed`` (booleans never are).

    Called only once a column is known to hold one (the error's path), to name its row.
    """
    import pandas as pd

    for position, value in enumerate(values.array):
        if value is None or (not isinstance(value, (list, tuple, dict, set)) and pd.isna(value) is True):
            continue
        if isinstance(value, bool) or not isinstance(value, allowed):
            return position
    return None


def typed_columns(frame: pd.DataFrame, kind: Kind, *, label: str = "DataFrame") -> pd.DataFrame:
    """``frame`` with its id and number columns checked (and whole-number float ids made integers).

    Raises:
        IngestError: ``DataFrame:ROW: problem`` (rows from 1, in frame order) for an id that is
            not a string or an integer, or a score or grade that is not a number.

    Examples:
        >>> import pandas as pd
        >>> frame = pd.DataFrame({"query_id": [401.0, None], "doc_id": ["a", "b"], "score": [1.0, 2.0]})
        >>> typed_columns(frame, "run")["query_id"].tolist()
        ['401', None]
    """
    import decimal

    import numpy as np
    import pandas as pd

    converted: dict[str, pd.Series] = {}
    for column in [c for c in IDS if c in frame.columns]:
        values = frame[column]
        if isinstance(values, pd.DataFrame):
            raise IngestError(label, None, f"column {column!r} appears twice")
        dtype = values.dtype
        if dtype.kind in "iu" or isinstance(dtype, pd.StringDtype):
            continue
        if dtype.kind == "f":
            numbers = values.to_numpy(dtype="float64")
            given = ~np.isnan(numbers)
            whole = given & (np.floor(numbers) == numbers) & (np.abs(numbers) < _EXACT)
            if (given & ~whole).any():
                row = int(np.flatnonzero(given & ~whole)[0])
                raise IngestError(label, row + 1, f"{column} {float(numbers[row])!r} is not a whole number, so not an id")
            text = pd.Series(numbers, index=values.index).where(given, 0).astype("int64").astype(str)
            converted[column] = text.astype(object).where(given, None)
            continue
        if dtype.kind == "O" or isinstance(dtype, pd.CategoricalDtype):
            found = pd.api.types.infer_dtype(values, skipna=True)
            if found in _ID_KINDS:
                continue
            row = _first_wrong(values, (str, int, np.integer))
            if row is None:
                continue
        else:
            row = 0
        value = _plain(values.iloc[row])
        raise IngestError(
            label, row + 1, f"{column} {value!r} is a {type(value).__name__}, not a string or an integer"
        )
    number = NUMBERS[kind]
    if number in frame.columns:
        values = frame[number]
        dtype = values.dtype
        numbers_as_objects = dtype.kind == "O" and pd.api.types.infer_dtype(values, skipna=True) in _NUMBER_KINDS
        if dtype.kind not in "iuf" and not numbers_as_objects:
            row = _first_wrong(values, (int, float, str, decimal.Decimal, np.number)) if dtype.kind == "O" else 0
            if row is not None:  # (else text and numbers: the finiteness check names a bad one)
                value = _plain(values.iloc[row])
                raise IngestError(label, row + 1, f"{number} {value!r} is a {type(value).__name__}, not a number")
    if not converted:
        return frame
    return frame.assign(**converted)


TABLE_SUFFIXES = (".parquet",)
"""Files read as a DataFrame (any layout above) wherever a qrels or run file is taken."""


def is_table_file(source: object) -> bool:
    """Whether ``source`` is a path to a table file (Parquet) rather than a TREC text file."""
    return isinstance(source, (str, os.PathLike)) and str(source).lower().endswith(TABLE_SUFFIXES)


def read_table(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A Parquet file of qrels or run rows, as a DataFrame; an unreadable file is an IngestError."""
    import pandas as pd
    import pyarrow as pa

    from evalwh.io.formats import require_regular

    # (pyarrow seeks in a Parquet file: a pipe or a device would never end)
    require_regular(Path(path), "a Parquet file is read from a regular file")
    try:
        return pd.read_parquet(path)
    except (OSError, pa.ArrowException, ValueError) as error:
        raise IngestError(str(path), None, f"not a readable Parquet file ({error})") from None
