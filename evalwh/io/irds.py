"""Qrels, topics and documents from ir_datasets by id: ``irds:msmarco-passage/trec-dl-2019``.

Wherever evalwh takes a qrels file it takes ``irds:DATASET_ID`` too (``evalwh ingest qrels``,
``eval --qrels``, ``compare --qrels``, ``report --qrels``, :func:`evalwh.evaluate`): the
ingest resolves the name here (:func:`qrels`) and stores the set with its provenance
(dataset id, ir_datasets version, the qrels file's SHA-256, the dataset's grade definitions;
schema/020_external_sources.sql). A dataset whose qrels are one TREC qrels file already in
ir_datasets' cache is read from that file by evalwh's own qrels reader, so the set is the
same, byte for byte and digest for digest, as ingesting the file by its path; other qrels
formats come through ir_datasets' own ``qrels_iter`` as a DataFrame.

:func:`topics` and :func:`docs` give a dataset's query texts and document texts by id, for
the pairs a pool hands to judges; :func:`text_map` gives them as the ``id -> text`` mapping a
text source of ``evalwh pool export`` is.

ir_datasets is an optional extra (``pip install 'evalwh[irds]'``); without it an ``irds:``
name is one line naming the extra. ir_datasets downloads what its cache lacks; for offline
use, put the files in its cache folder (``IR_DATASETS_HOME``) or register a dataset made of
local files (``ir_datasets.registry.register``), as the tests do.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalwh.errors import EvalWhError

if TYPE_CHECKING:
    from collections.abc import Iterable

    import pandas as pd

PREFIX = "irds:"
EXTRA = "pip install 'evalwh[irds]'"


@dataclass(frozen=True)
class IrdsQrels:
    """A qrels set resolved from an ``irds:`` name.

    Attributes:
        label: The name as given (``irds:msmarco-passage/trec-dl-2019``): messages and
            ``qrels_sets.source_file`` use it.
        source: The qrels file in ir_datasets' cache (TREC qrels), else a DataFrame
            (``query_id, iteration, doc_id, relevance``) from ir_datasets' ``qrels_iter``.
        dataset_id: The dataset id (the name without ``irds:``).
        version: ir_datasets' version.
        qrels_sha256: The SHA-256 of the qrels file ir_datasets read, when it read one file.
        qrels_defs: The dataset's grade definitions (grade -> meaning), as ir_datasets gives them.
    """

    label: str
    source: Path | pd.DataFrame
    dataset_id: str
    version: str
    qrels_sha256: str | None
    qrels_defs: dict[int, str]

    def defs_json(self) -> str:
        """The grade definitions as a JSON object (keys are the grades, as text)."""
        return json.dumps(
            {str(k): v for k, v in sorted(self.qrels_defs.items())}, ensure_ascii=False
        )


def is_irds(source: object) -> bool:
    """Whether ``source`` names an ir_datasets dataset (``irds:ID``) rather than a file."""
    return isinstance(source, (str, os.PathLike)) and os.fspath(source).startswith(PREFIX)


def dataset_id(source: str | os.PathLike[str]) -> str:
    """The dataset id of an ``irds:`` name (``irds:a/b`` -> ``a/b``); an empty id is an error."""
    name = os.fspath(source)[len(PREFIX) :]
    if not name.strip():
        raise EvalWhError(
            f"{os.fspath(source)}: an ir_datasets name needs a dataset id (irds:msmarco-passage/trec-dl-2019)"
        )
    return name


def _quiet(func: Any) -> Any:
    """Run ``func`` with ir_datasets' log lines ([INFO], [WARNING], even [ERROR]) held back: a
    failure is evalwh's one line, not that line after five to seven of the library's."""
    import functools

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        import logging

        previous = logging.root.manager.disable
        logging.disable(logging.ERROR)
        try:
            return func(*args, **kwargs)
        finally:
            logging.disable(previous)

    return wrapper


def _library() -> Any:
    try:
        import ir_datasets
    except ImportError:
        raise EvalWhError(
            f"irds: names need ir_datasets, an optional extra of evalwh: {EXTRA}"
        ) from None
    return ir_datasets


def _load(source: str | os.PathLike[str]) -> tuple[Any, Any, str]:
    """(ir_datasets, its dataset, the id) for an ``irds:`` name; an unknown id is one line."""
    ir_datasets = _library()
    name = dataset_id(source)
    try:
        return ir_datasets, ir_datasets.load(name), name
    except KeyError:
        raise EvalWhError(
            f"{PREFIX}{name}: ir_datasets has no dataset {name!r} (ir_datasets list names them)"
        ) from None


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@_quiet
def check(source: str | os.PathLike[str]) -> None:
    """Raise the one-line error :func:`qrels` would for an unknown dataset or one without
    qrels, without reading (or downloading) them."""
    _, dataset, name = _load(source)
    if not dataset.has_qrels():
        raise EvalWhError(f"{PREFIX}{name}: the dataset has no qrels")


@_quiet
def qrels(source: str | os.PathLike[str]) -> IrdsQrels:
    """Resolve ``irds:DATASET_ID`` to its qrels and their provenance.

    Args:
        source: ``irds:`` and an ir_datasets id, such as ``irds:msmarco-passage/trec-dl-2019``.

    Returns:
        The qrels (a file of ir_datasets' cache when the dataset's qrels are one TREC qrels
        file, else a DataFrame) with the dataset id, ir_datasets' version, the file's SHA-256
        and the grade definitions.

    Raises:
        EvalWhError: one line, when ir_datasets is not installed, the id is unknown, the
            dataset has no qrels, or ir_datasets cannot get them (offline, say).
    """
    ir_datasets, dataset, name = _load(source)
    label = f"{PREFIX}{name}"
    if not dataset.has_qrels():
        raise EvalWhError(f"{label}: the dataset has no qrels")
    handler = dataset.qrels_handler()
    try:
        defs = {int(k): str(v) for k, v in (dataset.qrels_defs() or {}).items()}
        path = _trec_file(ir_datasets, handler)
        if path is not None:
            return IrdsQrels(label, path, name, ir_datasets.__version__, _file_sha256(path), defs)
        frame = _qrels_frame(dataset.qrels_iter())
    except EvalWhError:
        raise
    except Exception as error:  # ir_datasets' download and format errors, as one line
        raise EvalWhError(
            f"{label}: ir_datasets could not give the qrels: {_one_line(error)}"
        ) from None
    try:  # qrels of several files, or another format: their files' hash if ir_datasets names one
        digest: str | None = _file_sha256(Path(handler.qrels_path()))
    except Exception:
        digest = None
    return IrdsQrels(label, frame, name, ir_datasets.__version__, digest, defs)


def _trec_file(ir_datasets: Any, handler: Any) -> Path | None:
    """The TREC qrels file (``qid iter docid grade``) behind ``handler``, fetched into the
    cache if need be; None when the qrels are not one such file."""
    trec = getattr(ir_datasets.formats, "TrecQrels", None)
    if trec is None or type(handler) is not trec or getattr(handler, "_format_3col", False):
        return None
    if isinstance(getattr(handler, "_qrels_dlc", None), list):
        return None
    try:
        path = Path(handler.qrels_path())
    except NotImplementedError:
        return None
    return path if path.is_file() else None


def _qrels_frame(records: Iterable[Any]) -> pd.DataFrame:
    """ir_datasets' qrels records as ``query_id, iteration, doc_id, relevance``."""
    import pandas as pd

    frame = pd.DataFrame(records)
    if frame.empty:
        return pd.DataFrame({"query_id": [], "iteration": [], "doc_id": [], "relevance": []})
    out = pd.DataFrame(
        {"query_id": frame["query_id"].astype(str), "doc_id": frame["doc_id"].astype(str)}
    )
    out.insert(1, "iteration", frame["iteration"].astype(str) if "iteration" in frame else "0")
    out["relevance"] = frame["relevance"]
    return out


@_quiet
def topics(source: str | os.PathLike[str], field: str | None = None) -> pd.DataFrame:
    """A dataset's topics: ``query_id, text``, one row per query, in ir_datasets' order.

    Args:
        source: ``irds:ID`` or the bare id.
        field: The query field that is the text (``text``, ``title``, ``description``...);
            default: the dataset's ``default_text()``, else ``text``, else ``title``.

    Raises:
        EvalWhError: one line, as :func:`qrels` (and for a dataset without queries or a field
            its queries lack).
    """
    import pandas as pd

    ir_datasets, dataset, name = _load(_named(source))
    label = f"{PREFIX}{name}"
    if not dataset.has_queries():
        raise EvalWhError(f"{label}: the dataset has no queries")
    cls = dataset.queries_cls()
    fields = getattr(cls, "_fields", ())
    if field is not None and field not in fields:
        raise EvalWhError(
            f"{label}: its queries have no field {field!r} (they have {', '.join(fields)})"
        )
    try:
        rows = [(q.query_id, _text(q, field, fields)) for q in dataset.queries_iter()]
    except Exception as error:
        raise EvalWhError(
            f"{label}: ir_datasets could not give the queries: {_one_line(error)}"
        ) from None
    return pd.DataFrame(rows, columns=["query_id", "text"])


@_quiet
def docs(
    source: str | os.PathLike[str], ids: Iterable[str], field: str | None = None
) -> pd.DataFrame:
    """Documents by id: ``doc_id, text``, one row per id found, in the order of ``ids``.

    Uses the dataset's document store (``docs_store().get_many``), which ir_datasets builds
    in its cache the first time; an id the collection lacks gives no row.

    Args:
        source: ``irds:ID`` or the bare id.
        ids: The document ids wanted.
        field: The document field that is the text; default ``default_text()``, else ``text``.

    Raises:
        EvalWhError: one line, as :func:`qrels` (and for a dataset without documents).
    """
    import pandas as pd

    ir_datasets, dataset, name = _load(_named(source))
    label = f"{PREFIX}{name}"
    if not dataset.has_docs():
        raise EvalWhError(f"{label}: the dataset has no documents")
    wanted = list(dict.fromkeys(str(i) for i in ids))
    fields = getattr(dataset.docs_cls(), "_fields", ())
    if field is not None and field not in fields:
        raise EvalWhError(
            f"{label}: its documents have no field {field!r} (they have {', '.join(fields)})"
        )
    try:
        found = dataset.docs_store().get_many(wanted)
    except Exception as error:
        raise EvalWhError(
            f"{label}: ir_datasets could not give the documents: {_one_line(error)}"
        ) from None
    rows = [(i, _text(found[i], field, fields)) for i in wanted if i in found]
    return pd.DataFrame(rows, columns=["doc_id", "text"])


@_quiet
def text_map(
    source: str | os.PathLike[str], kind: str, ids: Iterable[str] | None = None
) -> dict[str, str]:
    """Texts by id, the shape a text source of ``evalwh pool export`` has (``id -> text``).

    Args:
        source: ``irds:ID``.
        kind: ``topics`` (every query of the dataset) or ``documents`` (the ``ids`` asked for:
            a collection is far too large to map whole).
        ids: The document ids wanted (``documents`` only).

    Raises:
        EvalWhError: one line, as :func:`topics` and :func:`docs`; ``documents`` without ids.
    """
    if kind == "topics":
        frame = topics(source)
        return dict(zip(frame["query_id"], frame["text"], strict=True))
    if kind != "documents" or ids is None:
        raise EvalWhError(
            f"{os.fspath(source)}: texts of 'topics', or of 'documents' with their ids"
        )
    frame = docs(source, ids)
    return dict(zip(frame["doc_id"], frame["text"], strict=True))


def _named(source: str | os.PathLike[str]) -> str:
    text = os.fspath(source)
    return text if text.startswith(PREFIX) else PREFIX + text


def _text(record: Any, field: str | None, fields: tuple[str, ...]) -> str:
    """A query's or document's text: the field asked for, else ir_datasets' default_text()."""
    if field is not None:
        return str(getattr(record, field))
    if hasattr(record, "default_text"):
        return str(record.default_text())
    for name in ("text", "title", "body"):
        if name in fields:
            return str(getattr(record, name))
    return " ".join(
        str(v) for k, v in zip(fields, record, strict=False) if k not in ("query_id", "doc_id")
    )
