"""Qrels on their way in: a file split by DuckDB's CSV reader and checked in SQL, JSON-lines
judgment records (:mod:`evalwh.io.judgments`), or a DataFrame.

Each set carries its provenance (:class:`Provenance`: source, judge, model, prompt, round;
schema/015_judgment_provenance.sql): a prompt's text is stored once in ``judgment_prompts``
by its sha256, and what a judgment record holds besides its grade (a raw score, reasoning,
the prompt as sent) goes to ``judgment_details``. A qrels set replaces one of the same name
only with ``replace``; once stored, the evaluation cache of the runs already stored is filled
for it (:func:`evalwh.store.ingest.cache.refresh_cache`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalwh import sql
from evalwh.io.printable import CONTROL
from evalwh.errors import EvalWhError, IngestError, QueryError, ReplaceError
from evalwh.io import formats
from evalwh.io.frames import standard_columns
from evalwh.io.judgments import Judgments, is_jsonl, parse_judgments
import evalwh.store.ingest.exclusions as exclusions
from evalwh.store.ingest.cache import refresh_cache
from evalwh.store.ingest.files import READ_ERRORS, Spill
from evalwh.store.ingest.frames import _first_duplicate, _show, check_frame_ids, frame_sha256
from evalwh.store.ingest.results import IngestResult

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.store.connection import Store

_INGEST = "evalwh.queries.ingest"

SOURCES = ("human", "llm", "inferred")  # what an ingest may say; 'derived' is evalwh's own


@dataclass(frozen=True)
class Provenance:
    """Where a qrels set's labels came from (the columns of ``qrels_sets``, schema/015).

    Attributes:
        source: ``human`` (assessors), ``llm`` (an LLM judge) or ``inferred`` (a method that
            infers labels); evalwh marks the sets it makes itself ``derived``.
        judge: Who judged: an assessor group, a team, a tool.
        model: The model that produced the labels.
        prompt_sha256: The sha256 of the prompt's text, stored in ``judgment_prompts``.
        round: The round or iteration of judging.
    """

    source: str = "human"
    judge: str | None = None
    model: str | None = None
    prompt_sha256: str | None = None
    round: int | None = None

    def row(self) -> list[Any]:
        """The values of ``source, judge, model, prompt_sha256, round``."""
        return [self.source, self.judge, self.model, self.prompt_sha256, self.round]


def check_name(value: str, what: str) -> str:
    """Refuse a set name that no TREC file could hold: empty, or with whitespace.

    The rule of :func:`evalwh.store.ingest.frames.check_name`, worded for the names a qrels
    ingest derives from its files (``qrels id (the stem of x.txt) 'b c' holds ...``).

    Raises:
        EvalWhError: naming the value and the rule.
    """
    from evalwh.store.ingest.frames import NAME_BREAKS

    if not value:
        raise EvalWhError(f"{what} is empty")
    if NAME_BREAKS.search(value):
        raise EvalWhError(f"{what} {value!r} holds whitespace or a NUL byte, which no TREC file can hold")
    return value


def check_provenance(source: str, judge: str | None, model: str | None, round: int | None) -> None:
    """Refuse a source other than human, llm or inferred, an empty judge or model, a negative round."""
    if source not in SOURCES:
        raise EvalWhError(f"source {source!r} is not one of {', '.join(SOURCES)}")
    for value, what in ((judge, "judge"), (model, "model")):
        if value is not None and not value.strip():
            raise EvalWhError(f"{what} is empty")
        if value is not None and re.search(r"[\n\r\x00]", value):
            raise EvalWhError(f"{what} {value!r} holds a line break or a NUL byte")
        if value is not None and CONTROL.search(value):  # ESC: every terminal that prints it obeys
            raise EvalWhError(f"{what} {value!r} holds a control character")
    if round is not None and (isinstance(round, bool) or not isinstance(round, int) or round < 0):
        raise EvalWhError(f"round {round!r} is not a whole number >= 0")


def read_prompt(path: str | os.PathLike[str]) -> tuple[str, str, str]:
    """A prompt file's text, its sha256 (of the UTF-8 bytes) and how the file is named.

    Raises:
        IngestError: naming the file when it is missing, unreadable, not UTF-8 or empty.
    """
    given = Path(path)
    label = str(given)
    # (at most 1 MiB: /dev/zero or an endless stream given as the prompt ends there at once)
    data = formats.read_bounded(given, formats.PROMPT_BYTES, "a prompt file", name=label)
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        raise IngestError(label, None, "the prompt file is not UTF-8 text") from None
    if not text.strip():
        raise IngestError(label, None, "the prompt file is empty")
    return text, hashlib.sha256(text.encode("utf-8")).hexdigest(), label


def store_prompt(wh: Store, text: str, digest: str, source_file: str | None) -> None:
    """Store a prompt's text once: nothing happens when its sha256 is already there."""
    wh.con.execute(
        "INSERT INTO judgment_prompts (prompt_sha256, prompt, source_file) SELECT ?, ?, ?"
        " WHERE NOT EXISTS (SELECT 1 FROM judgment_prompts WHERE prompt_sha256 = ?)",
        [digest, text, source_file, digest],
    )


def _stage_qrels(wh: Store, path: Path, delimiter: str | None) -> None:
    """Stage a qrels file: split by DuckDB's CSV reader where it reads it right, else by regex."""
    if delimiter is not None:
        wh.run(sql.query(_INGEST, "stage_qrels_fast"), {"files": [str(path)], "delim": delimiter})
        ((unsure,),) = wh.con.execute("SELECT bool_or(split_unsure) FROM staged_qrels").fetchall()
        if not unsure:
            return
    wh.run(sql.query(_INGEST, "stage_qrels"), {"files": [str(path)]})


def ingest_qrels_source(
    wh: Store,
    source: str | os.PathLike[str] | pd.DataFrame,
    collection: str,
    *,
    qrels_id: str,
    replace: bool,
    provenance: Provenance | None = None,
    label: str | None = None,
    exclusion_labels: bool = True,
) -> IngestResult:
    """Ingest a qrels file (TREC or JSON lines) or DataFrame inside the caller's transaction.

    See :meth:`evalwh.warehouse.Warehouse.ingest_qrels`. ``label`` names the source in
    messages and ``qrels_sets.source_file`` (default: the file's name, or ``DataFrame``). With
    ``exclusion_labels`` (the default) lines labelled -100 are exclusions, not grades
    (:mod:`evalwh.store.ingest.exclusions`); without, they stay in the set as trec_eval
    reads them (a negative grade: pooled, not judged).
    """
    provenance = provenance or Provenance()
    if isinstance(source, (str, os.PathLike)):
        spill = Spill()
        try:
            path = Path(source)
            formats.require_file(path)
            readable = spill.copy(path) if formats.needs_copy(path) else path
            label = label or formats.label(path)
            if _is_jsonl(readable, path, label):
                return _ingest_judgments(wh, readable, label, collection, qrels_id, replace, provenance)
            if _is_probabilities(readable, label):
                return _ingest_probabilities(wh, readable, label, collection, qrels_id, replace, provenance)
            return _ingest_qrels(
                wh, readable, label, collection, qrels_id, replace, provenance,
                exclusion_labels=exclusion_labels,
            )  # fmt: skip
        finally:
            spill.close()
    return _ingest_qrels(
        wh, source, label or "DataFrame", collection, qrels_id, replace, provenance,
        exclusion_labels=exclusion_labels,
    )  # fmt: skip


def ingest_irds_qrels(
    wh: Store,
    source: str | os.PathLike[str],
    collection: str,
    *,
    qrels_id: str,
    replace: bool,
    provenance: Provenance | None = None,
) -> IngestResult:
    """Ingest an ir_datasets dataset's qrels (``irds:DATASET_ID``) with their provenance.

    The set is ingested as its file (or ir_datasets' records) would be, named
    ``irds:DATASET_ID`` in ``qrels_sets.source_file``; the dataset id, ir_datasets' version,
    the qrels file's SHA-256 and the grade definitions go to ``qrels_external``
    (schema/020_external_sources.sql).
    """
    from evalwh.io import irds

    resolved = irds.qrels(source)
    result = ingest_qrels_source(
        wh, resolved.source, collection, qrels_id=qrels_id, replace=replace, provenance=provenance,
        label=resolved.label,
    )  # fmt: skip
    wh.con.execute("DELETE FROM qrels_external WHERE collection_id = ? AND qrels_id = ?", [collection, qrels_id])
    wh.con.execute(
        "INSERT INTO qrels_external VALUES (?, ?, 'ir_datasets', ?, ?, ?, ?)",
        [collection, qrels_id, resolved.dataset_id, resolved.version, resolved.qrels_sha256, resolved.defs_json()],
    )
    return result


def _is_jsonl(readable: Path, given: Path, label: str) -> bool:
    """Whether a file holds JSON-lines judgment records (by its name or its first bytes)."""
    try:
        with formats.open_binary(readable) as handle:
            head = handle.read(1 << 16)
    except READ_ERRORS as error:
        raise IngestError(label, None, f"cannot read the file: {error}") from None
    return is_jsonl(given, head)


def _is_probabilities(readable: Path, label: str) -> bool:
    """Whether a file is an LLM's probability CSV (LARA's header, :mod:`evalwh.io.probabilities`)."""
    from evalwh.io.probabilities import is_probabilities

    try:
        with formats.open_binary(readable) as handle:
            return is_probabilities(handle.read(1 << 12))
    except READ_ERRORS as error:
        raise IngestError(label, None, f"cannot read the file: {error}") from None


def _ingest_probabilities(
    wh: Store, path: Path, label: str, collection: str, qrels_id: str, replace: bool, provenance: Provenance
) -> IngestResult:
    """Ingest an LLM's probability CSV: the annotations as grades, each pair's probabilities beside them."""
    import pandas as pd

    from evalwh.io.probabilities import parse_probabilities

    data = formats.read_bounded(path, formats.JUDGMENTS_BYTES, "a probability file", name=label)
    rows = parse_probabilities(data, label)
    frame = pd.DataFrame(
        {"query_id": rows.query_id, "iteration": "0", "doc_id": rows.doc_id, "relevance": rows.annotation}
    )
    result = _ingest_qrels(
        wh, frame, label, collection, qrels_id, replace, provenance, digest=hashlib.sha256(data).hexdigest()
    )
    if result.status != "unchanged":
        probabilities = pd.DataFrame(
            {"query_id": rows.query_id, "doc_id": rows.doc_id, "probs": rows.probs, "prob_relevant": rows.prob_relevant}
        )
        wh.con.register("staged_probabilities", probabilities)
        try:
            wh.con.execute(
                "INSERT INTO judgment_probabilities (collection_id, qrels_id, query_id, doc_id, probs, prob_relevant)"
                " SELECT ?, ?, query_id, doc_id, CAST(probs AS DOUBLE[]), prob_relevant FROM staged_probabilities",
                [collection, qrels_id],
            )
        finally:
            wh.con.unregister("staged_probabilities")
    return result


def _ingest_judgments(
    wh: Store,
    path: Path,
    label: str,
    collection: str,
    qrels_id: str,
    replace: bool,
    provenance: Provenance,
) -> IngestResult:
    """Ingest a JSON-lines file of judgment records (:mod:`evalwh.io.judgments`)."""
    import pandas as pd

    data = formats.read_bounded(path, formats.JUDGMENTS_BYTES, "a judgments file", name=label)
    judgments = parse_judgments(data, label)
    frame = pd.DataFrame(
        {
            "query_id": judgments.query_id,
            "iteration": "0",
            "doc_id": judgments.doc_id,
            "relevance": judgments.relevance,
        }
    )
    prompts = {p for p in judgments.prompt if p is not None}
    common = prompts.pop() if len(prompts) == 1 and None not in judgments.prompt else None
    common_sha256 = hashlib.sha256(common.encode("utf-8")).hexdigest() if common is not None else None
    if common is not None and provenance.prompt_sha256 is None:
        # every record carries the same prompt, and no other was given: it is the set's prompt
        store_prompt(wh, common, common_sha256, label)  # type: ignore[arg-type]
        provenance = dataclasses.replace(provenance, prompt_sha256=common_sha256)
    # each judgment keeps its own prompt unless it is the set's
    details = _details_frame(judgments, keep_prompts=common is None or common_sha256 != provenance.prompt_sha256)
    file_digest = hashlib.sha256(data).hexdigest()
    return _ingest_qrels(
        wh, frame, label, collection, qrels_id, replace, provenance, digest=file_digest, details=details
    )


def _details_frame(judgments: Judgments, *, keep_prompts: bool) -> pd.DataFrame | None:
    """What the records hold besides the grade, one row per record that holds any of it."""
    import pandas as pd

    frame = pd.DataFrame(
        {
            "query_id": judgments.query_id,
            "doc_id": judgments.doc_id,
            "score": pd.array(judgments.score, dtype="Float64"),
            "reasoning": pd.array(judgments.reasoning, dtype="string"),
            "prompt": pd.array(judgments.prompt if keep_prompts else [None] * len(judgments), dtype="string"),
        }
    )
    kept = frame[frame[["score", "reasoning", "prompt"]].notna().any(axis=1)]
    return kept if len(kept) else None


def _ingest_qrels(
    wh: Store,
    source: Path | pd.DataFrame,
    label: str,
    collection: str,
    qrels_id: str,
    replace: bool,
    provenance: Provenance,
    *,
    digest: str | None = None,
    details: pd.DataFrame | None = None,
    exclusion_labels: bool = True,
) -> IngestResult:
    """Ingest a qrels file (``source``, named ``label`` in messages) or DataFrame.

    ``digest`` names the content of a DataFrame read from a file (JSON lines), whose
    ``details`` (raw scores, reasoning, prompts) go to ``judgment_details``.
    """
    if isinstance(source, Path):
        path = source
        try:
            scan = formats.scan(path)  # (one streaming read: a 2 GB line is never held whole)
        except READ_ERRORS as error:
            raise IngestError(label, None, f"cannot read the file: {error}") from None
        if scan.unreadable or scan.long_line:
            raise formats.locate_qrels_error(path, label=label)
        if scan.control:  # an ESC, DEL or C1 somewhere: refused unless only comments hold it
            located = formats.locate_qrels_error(path, label=label)
            if located.line is not None:
                raise located
        digest = scan.sha256
        stage: Any = path
    else:
        stage = _qrels_frame(source)
        digest = digest or frame_sha256(stage)

    # fetchall, not fetchone: DuckDB refuses other work while a result is unfinished
    stored = wh.con.execute(
        "SELECT sha256, line_count, source, judge, model, prompt_sha256, round FROM qrels_sets"
        " WHERE collection_id = ? AND qrels_id = ?",
        [collection, qrels_id],
    ).fetchall()
    existing = stored[0] if stored else None
    # a set stored before -100 meant an excluded document holds such lines as grades: the same
    # file is then not "unchanged", it is read anew (with --replace, below)
    graded_labels = exclusion_labels and existing is not None and exclusions.labelled_grades(wh, collection, qrels_id)
    if existing is not None and [existing[0], *existing[2:]] == [digest, *provenance.row()] and not graded_labels:
        return IngestResult("qrels", qrels_id, label, "unchanged", int(existing[1]))

    if isinstance(stage, Path):
        try:
            _stage_qrels(wh, stage, scan.fast_delimiter)
        except QueryError as error:
            located = formats.locate_qrels_error(stage, label=label)
            if located.line is not None:
                raise located from None
            raise IngestError(label, None, f"DuckDB could not read the file: {error}") from None
        ((line_count, bad_fields, bad_relevance, duplicates),) = wh.run(
            sql.query(_INGEST, "qrels_checks")
        ).fetchall()
        if line_count == 0 or bad_fields or bad_relevance or duplicates:
            raise formats.locate_qrels_error(stage, label=label)
    else:
        wh.con.register("staged_qrels_frame", stage)
        try:
            wh.con.execute(
                "CREATE OR REPLACE TEMP TABLE staged_qrels AS SELECT query_id, iteration, doc_id,"
                " CAST(relevance AS VARCHAR) AS relevance_text, 4 AS field_count"
                " FROM staged_qrels_frame"
            )
        finally:
            wh.con.unregister("staged_qrels_frame")
        line_count = len(stage)

    # lines labelled -100 leave the set for the collection's exclusions (methods §17)
    excluded = exclusions.take_from_qrels(wh, collection, qrels_id) if exclusion_labels else 0
    if (
        existing is not None
        and list(existing[2:]) == provenance.row()
        and _same_judgments(wh, collection, qrels_id, details)
        and (not exclusion_labels or exclusions.same_as_stored(wh, collection, qrels_id))
    ):
        # the same judgments under another digest (a file re-spaced, or a set imported from an
        # export whose sha256 no file can be checked against): the set is as it was
        wh.con.execute("DROP TABLE IF EXISTS staged_qrels")
        wh.con.execute("DROP TABLE IF EXISTS staged_excluded")
        return IngestResult("qrels", qrels_id, label, "unchanged", int(existing[1]))
    status = "ingested"
    if existing is not None:
        if not replace and graded_labels and existing[0] == digest:
            raise ReplaceError(
                label,
                f"qrels {qrels_id!r} of collection {collection!r} holds its {graded_labels:,} lines labelled -100"
                " as grades (stored before they were read as excluded documents, methods §17)",
                "ingest qrels",
                "use --replace to move them to the collection's exclusions",
            )
        if not replace:
            what = "content" if existing[0] != digest else "provenance (source, judge, model, prompt, round)"
            raise ReplaceError(
                label,
                f"qrels {qrels_id!r} of collection {collection!r} already exists with "
                f"different {what}",
                "ingest qrels",
            )
        for table in ("qrels", "qrels_sets", "judgment_details", "judgment_probabilities", "qrels_external"):
            # table names come from the fixed tuple above, values are parameters
            wh.con.execute(
                f"DELETE FROM {table} WHERE collection_id = ? AND qrels_id = ?",
                [collection, qrels_id],
            )
        status = "replaced"
    wh.ensure_collection(collection)
    wh.run(sql.query(_INGEST, "insert_qrels"), {"collection_id": collection, "qrels_id": qrels_id})
    wh.con.execute(
        "INSERT INTO qrels_sets (collection_id, qrels_id, kind, source_file, sha256, line_count,"
        " source, judge, model, prompt_sha256, round) VALUES (?, ?, 'ingested', ?, ?, ?, ?, ?, ?, ?, ?)",
        [collection, qrels_id, label, digest, line_count, *provenance.row()],
    )
    wh.con.execute("DROP TABLE IF EXISTS staged_qrels")
    changed = False
    if exclusion_labels:
        changed = exclusions.store_from_qrels(wh, collection, qrels_id, digest)
    elif existing is not None:
        exclusions.drop_qrels_exclusions(wh, collection, qrels_id)
        changed = True
    if details is not None:
        wh.con.register("staged_details", details)
        try:
            wh.run(
                sql.query(_INGEST, "insert_judgment_details"),
                {"collection_id": collection, "qrels_id": qrels_id, "source_file": label},
            )
        finally:
            wh.con.unregister("staged_details")
    # the evaluation cache of the runs already stored, for these judgments (see JudgedCache)
    runs = wh.con.execute("SELECT count(*) FROM runs WHERE collection_id = ?", [collection])
    if runs.fetchall()[0][0]:
        if changed:  # the runs filtered again, their cache rebuilt for every set
            exclusions.apply(wh, collection)
        refresh_cache(wh, collection, qrels_id, None)
    note = (
        f"{excluded:,} lines labelled -100 are excluded documents, not grades: they left the"
        " set for the collection's exclusions (methods §17)"
        if excluded
        else None
    )
    return IngestResult("qrels", qrels_id, label, status, int(line_count), note)


def _same_judgments(wh: Store, collection: str, qrels_id: str, details: pd.DataFrame | None) -> bool:
    """Whether the staged qrels rows are the stored set's rows (as a multiset), neither with details."""
    if details is not None:
        return False
    ((stored_details,),) = wh.con.execute(
        "SELECT count(*) FROM judgment_details WHERE collection_id = ? AND qrels_id = ?", [collection, qrels_id]
    ).fetchall()
    if stored_details:
        return False
    ((differing,),) = wh.con.execute(
        "WITH stored AS (SELECT query_id, iteration, doc_id, relevance FROM qrels"
        " WHERE collection_id = $c AND qrels_id = $q),"
        " staged AS (SELECT query_id, iteration, doc_id, CAST(relevance_text AS DOUBLE) AS relevance FROM staged_qrels)"
        " SELECT count(*) FROM ((FROM stored EXCEPT ALL FROM staged) UNION ALL (FROM staged EXCEPT ALL FROM stored))",
        {"c": collection, "q": qrels_id},
    ).fetchall()
    return int(differing) == 0


def _qrels_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Validate a qrels DataFrame and normalise it to ``query_id, iteration, doc_id, relevance``.

    Rows are numbered from 1 in error messages (``DataFrame:3: ...``), in frame order.
    """
    import pandas as pd

    frame = standard_columns(frame, "qrels")
    if frame.empty:
        raise IngestError("DataFrame", None, "the DataFrame holds no qrels rows")
    check_frame_ids(frame, ["query_id", "iteration", "doc_id"])
    staged = pd.DataFrame(
        {
            "query_id": frame["query_id"].astype(str).to_numpy(),
            "iteration": frame["iteration"].astype(str).to_numpy() if "iteration" in frame else "0",
            "doc_id": frame["doc_id"].astype(str).to_numpy(),
        }
    )
    relevance = pd.to_numeric(frame["relevance"], errors="coerce").to_numpy(dtype="float64")
    bad = ~(abs(relevance) < 1e9)  # a grade is a finite number, fractional as given (schema/012)
    if bad.any():
        row = int(bad.nonzero()[0][0])
        raise IngestError(
            "DataFrame",
            row + 1,
            f"relevance {_show(frame['relevance'].iloc[row])} is not a number",
        )
    staged["relevance"] = relevance
    duplicate = _first_duplicate(staged, ["query_id", "doc_id"])
    if duplicate is not None:
        row, first = duplicate
        raise IngestError(
            "DataFrame",
            row + 1,
            f"document {staged['doc_id'].iloc[row]!r} is judged twice for topic "
            f"{staged['query_id'].iloc[row]!r} (first on row {first + 1})",
        )
    return staged
