"""Ingest of runs, qrels and run metadata, streamed file by file, the evaluation cache filled.

The three ingests of the warehouse (evalwh.Warehouse.ingest_qrels, ...) are here:
:func:`ingest_qrels`, :func:`ingest_runs` and :func:`ingest_run_metadata`; what they report,
:class:`IngestResult` and :data:`Progress`, is in :mod:`.results`. A run ingest goes through
these steps, all inside the caller's transaction:

1. sniff each file's first data line (its delimiter and tag, hence the run id); standard
   input and pipes are first copied once to a temporary file (:mod:`.files`: :class:`Spill`,
   :func:`prepare_run_files`);
2. skip files whose run is already stored with the same content, and refuse (or, with
   ``replace``, delete) runs stored with different content (:mod:`.runs`, on the runs table
   as :mod:`.bookkeeping` keeps it);
3. read the files in worker threads, two at a time while they are small, with the run-file
   reader (:mod:`evalwh.io.runreader`, C): it checks and ranks every line, gives each line the
   key of its (topic, document) pair, and with judgments in the collection finds the judged
   rows with their running counts (the evaluation cache); each file's rows, all numbers,
   are staged as Parquet and stored by key (``run_rows``, schema/013_keyed_results.sql) a
   few million lines at a time, in the background while the next files are read
   (:mod:`.keyed`: ``Stored``): no second parse, no sort in SQL;
4. a file the reader leaves (a comment, mixed whitespace, a bad line, ...) goes the general
   way (:mod:`.general`): DuckDB's CSV reader stages its lines with flags
   (``stage_run_lines.sql``, ``restage_run_lines.sql``), ``run_checks.sql`` counts bad lines
   and duplicates (a bad file is re-read in Python to name its first bad line),
   ``insert_run_results.sql`` ranks it with ``trec_ranked`` and ``store_ranked.sql`` stores it
   by key;
5. fill the evaluation cache (``judged_results``) of the new runs for every ingested qrels
   set, so that the first evaluation reads it as the tenth does, and writes nothing
   (:mod:`.cache`).

Memory holds the files being read and the collection's (topic, document) pairs, whatever
the number of files. Runs from a DataFrame (or a Parquet file) are checked and stored by
:mod:`.frames`, qrels by :mod:`.qrels`, run metadata by :mod:`.metadata`; :mod:`.session`
holds the settings of a bulk ingest (DuckDB's memory bounded, freed memory kept).

May import: :mod:`evalwh.io`, :mod:`evalwh.store.connection`, :mod:`evalwh.errors`,
:mod:`evalwh.sql`, and :mod:`evalwh.store.context` (the evaluation's steps, which
:func:`refresh_cache` replays to fill the cache). The modules import one another directly,
never this package; this package re-exports the names the rest of evalwh uses.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from evalwh import sql
from evalwh.errors import EvalWhError, IngestError, ReplaceError
from evalwh.io.frames import standard_columns
from evalwh.store.ingest.bookkeeping import insert_runs
from evalwh.store.ingest.cache import fingerprint, refresh_cache
from evalwh.store.ingest.files import READ_ERRORS, RunFile, Spill, group_batches, prepare_run_files
from evalwh.store.ingest.frames import check_name, ingest_run_frame
from evalwh.store.ingest.metadata import run_metadata_frame
from evalwh.store.ingest.qrels import ingest_qrels_source
from evalwh.store.ingest.results import IngestResult, Progress
from evalwh.store.ingest.runs import ingest_prepared, ingest_run_files
from evalwh.store.ingest.session import KEEP_FREED, bulk_session, checkpoint, keep_freed_memory

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.store.connection import Store

__all__ = [
    # the three ingests of the warehouse, and what they report
    "ingest_qrels",
    "ingest_runs",
    "ingest_run_metadata",
    "ingest_qrels_and_runs",
    "add_exclusions",
    "IngestResult",
    "Progress",
    # used elsewhere in evalwh (the direct evaluation, trec_eval, transfer, the CLI)
    "KEEP_FREED",
    "READ_ERRORS",
    "RunFile",
    "Spill",
    "fingerprint",
    "group_batches",
    "ingest_prepared",
    "insert_runs",
    "keep_freed_memory",
    "prepare_run_files",
    "refresh_cache",
]

_INGEST = "evalwh.queries.ingest"


# -- the three ingests of the warehouse (evalwh.Warehouse.ingest_qrels, ...) -------------


def ingest_qrels(
    wh: Store,
    sources: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | pd.DataFrame,
    *,
    collection: str,
    qrels_id: str | None = None,
    replace: bool = False,
    source: str = "human",
    judge: str | None = None,
    model: str | None = None,
    prompt: str | os.PathLike[str] | None = None,
    round: int | None = None,
    exclusion_labels: bool = True,
) -> IngestResult | list[IngestResult]:
    """Ingest TREC qrels (``qid iter docid rel``) or judgment records from files or a DataFrame.

    A file is TREC qrels, or JSON lines of judgment records (UMBRELA's; see
    :mod:`evalwh.io.judgments`) when its name ends in ``.jsonl``, ``.json`` or ``.ndjson``
    or its first character is ``{``. A DataFrame (or a ``.parquet`` file) needs
    ``query_id, doc_id, relevance`` (``iteration`` optional), or another layout of
    :mod:`evalwh.io.frames` (PyTerrier's ``qid, docno, label``). One source makes the set
    ``qrels_id`` (``"default"`` when not given); several files make one set each, named by
    the file's stem (``judges/Olz-gpt4o.txt`` is ``Olz-gpt4o``). ``irds:DATASET_ID`` names
    an ir_datasets dataset's qrels instead of a file (:mod:`evalwh.io.irds`; its provenance
    goes to ``qrels_external``; among several sources its set is named by the id's last
    part). Every set gets the same
    provenance. The whole ingest is one transaction: a rejected input leaves the warehouse
    unchanged.

    Args:
        sources: A qrels file (plain or ``.gz``), several, or a DataFrame.
        collection: The collection the judgments belong to (created if new).
        qrels_id: Name of the qrels set within the collection (one source only).
        replace: Replace an existing qrels set of the same name with different content or
            provenance.
        source: Who made the labels: ``human``, ``llm`` or ``inferred``.
        judge: An assessor group, team or tool name.
        model: The model that produced the labels.
        prompt: A file holding the judging prompt; its text is stored once, by sha256.
        round: The round or iteration of judging.
        exclusion_labels: Read lines labelled -100 as excluded documents, not grades: they
            leave the set for the collection's exclusions (methods §17). ``False`` keeps
            them as trec_eval reads them (a negative grade: pooled, not judged).

    Returns:
        What happened to each set (one result for one source, a list for a list of several):
        ingested, replaced, or unchanged (same content and provenance already there).

    Raises:
        IngestError: naming file, line and problem, for malformed input.
        EvalWhError: for a bad name, source, judge, model or round, ``qrels_id`` given with
            several files, or two files of the same stem.
    """
    from evalwh.io.frames import is_table_file, read_table
    from evalwh.io.irds import is_irds
    from evalwh.store.ingest.qrels import (
        Provenance,
        check_provenance,
        ingest_irds_qrels,
        read_prompt,
        store_prompt,
    )
    from evalwh.store.ingest.qrels import check_name as check_set_name

    check_name(collection, "collection")
    several = isinstance(sources, (list, tuple)) and len(sources) != 1
    if isinstance(sources, (list, tuple)):
        if not sources:
            raise EvalWhError("no qrels file given")
        items: list[str | os.PathLike[str] | pd.DataFrame] = list(sources)
    else:
        items = [sources]
    if several:
        if qrels_id is not None:
            raise EvalWhError(
                "--qrels-id names the set of one file; with several files each set is named by its "
                "file's stem (ingest the file alone to name it)"
            )
        names = [_stem(item) for item in items]
        first: dict[str, str | os.PathLike[str] | pd.DataFrame] = {}
        for item, name in zip(items, names):
            if name in first:
                raise EvalWhError(
                    f"{first[name]} and {item} both have the stem {name!r}, and a set is named by its "
                    "file's stem: ingest one of them alone with --qrels-id"
                )
            first[name] = item
            check_set_name(name, f"qrels id (the stem of {item})")
    else:
        check_name(qrels_id if qrels_id is not None else "default", "qrels id")
        names = [qrels_id if qrels_id is not None else "default"]
    check_provenance(source, judge, model, round)
    prompt_text = read_prompt(prompt) if prompt is not None else None
    provenance = Provenance(source, judge, model, prompt_text[1] if prompt_text else None, round)
    results = []
    with bulk_session(wh), wh.transaction():
        if prompt_text is not None:
            store_prompt(wh, prompt_text[0], prompt_text[1], prompt_text[2])
        for item, name in zip(items, names):
            if is_irds(item):  # irds:DATASET_ID, an ir_datasets dataset's qrels (evalwh.io.irds)
                results.append(
                    ingest_irds_qrels(  # type: ignore[arg-type]
                        wh, item, collection, qrels_id=name, replace=replace, provenance=provenance
                    )
                )
                continue
            if is_table_file(item):
                item = read_table(item)  # type: ignore[arg-type]
            results.append(
                ingest_qrels_source(
                    wh, item, collection, qrels_id=name, replace=replace, provenance=provenance,
                    exclusion_labels=exclusion_labels,
                )  # fmt: skip
            )
    return results if isinstance(sources, (list, tuple)) else results[0]


def _stem(item: str | os.PathLike[str] | pd.DataFrame) -> str:
    """The name of the set a file makes among several: its name without ``.gz`` and extension."""
    if not isinstance(item, (str, os.PathLike)):
        raise EvalWhError("a DataFrame among several sources has no name: ingest it alone with qrels_id")
    path = Path(item)
    if str(path) == "-":
        raise EvalWhError("standard input has no name: ingest it alone with --qrels-id")
    name = path.name.removesuffix(".gz")
    return name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name


def ingest_runs(
    wh: Store,
    sources: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | pd.DataFrame,
    *,
    collection: str,
    run_id: str | None = None,
    replace: bool = False,
    ignore_extra_fields: bool = False,
    progress: Progress | None = None,
) -> list[IngestResult]:
    """Ingest TREC run files (``qid Q0 docid rank score tag``) or a DataFrame.

    Files are parsed by DuckDB's CSV reader in batches; ranks are materialised in
    trec_eval's order. The whole call is one transaction: if any file is rejected,
    nothing is ingested.

    Args:
        sources: Run files (plain or ``.gz``; ``.parquet`` files are read as DataFrames),
            or a DataFrame with ``query_id, doc_id, score`` (or another layout of
            :mod:`evalwh.io.frames`) and either ``run_id`` or the ``run_id`` argument.
        collection: The collection the runs belong to (created if new).
        run_id: Name the run, instead of the tag column (one file only).
        replace: Replace an existing run of the same id whose content differs.
        ignore_extra_fields: Accept run lines with more than six fields.
        progress: Called with (files done, files in all) as batches finish.

    Returns:
        One result per run.

    Raises:
        IngestError: naming file, line and problem, for malformed input or a clash.
    """
    check_name(collection, "collection")
    if run_id is not None:
        check_name(run_id, "run id")
    with bulk_session(wh, vacuum=False):
        with wh.transaction():
            results = _ingest_runs(wh, sources, collection, run_id, replace, ignore_extra_fields, progress)
        checkpoint(wh)  # (with the vacuum of appended row groups off, see bulk_session)
    return results


def _ingest_runs(
    wh: Store,
    sources: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | pd.DataFrame,
    collection: str,
    run_id: str | None,
    replace: bool,
    ignore_extra_fields: bool,
    progress: Progress | None,
) -> list[IngestResult]:
    """:func:`ingest_runs` inside its transaction."""
    from evalwh.io.frames import is_table_file, read_table

    wh.ensure_collection(collection)
    if not isinstance(sources, (str, os.PathLike, list, tuple)):
        return ingest_run_frame(wh, sources, collection, run_id=run_id, replace=replace)
    paths = [Path(sources)] if isinstance(sources, (str, os.PathLike)) else [Path(s) for s in sources]
    tables = [p for p in paths if is_table_file(p)]
    if tables:
        # Parquet files: DataFrames in any layout evalwh.io.frames accepts, one run per
        # run_id value (or named by run_id=, else by the file's stem)
        results = []
        for path in tables:
            frame = standard_columns(read_table(path), "run", label=str(path))
            name = run_id or (None if "run_id" in frame.columns else path.stem)
            results += ingest_run_frame(wh, frame, collection, run_id=name, replace=replace)
        paths = [p for p in paths if not is_table_file(p)]
        if not paths:
            return results
        return results + ingest_run_files(
            wh, paths, collection, run_id=run_id, replace=replace,
            ignore_extra_fields=ignore_extra_fields, progress=progress,
        )  # fmt: skip
    return ingest_run_files(
        wh,
        paths,
        collection,
        run_id=run_id,
        replace=replace,
        ignore_extra_fields=ignore_extra_fields,
        progress=progress,
    )


def ingest_qrels_and_runs(
    wh: Store,
    qrels: str | os.PathLike[str],
    runs: Sequence[str | os.PathLike[str]],
    *,
    collection: str,
    ignore_extra_fields: bool = False,
    progress: Progress | None = None,
    exclusions: Sequence[str | os.PathLike[str]] = (),
    identical_ids: bool = False,
) -> tuple[IngestResult, list[IngestResult]]:
    """Ingest a qrels file (the set ``default``) and run files in one command and one transaction.

    What ``ingest_qrels(wh, qrels, collection=...)`` followed by ``ingest_runs(wh, runs,
    collection=...)`` store, row for row, in one transaction: if the qrels or any run file is
    rejected, nothing is stored. (``evalwh eval --qrels QRELS RUN... --into W``, which then
    evaluates from the warehouse in the same process: no second and third interpreter start.)

    Returns:
        The qrels set's result and one result per run.

    Raises:
        IngestError: naming file, line and problem, for malformed input or a clash (a stored
            ``default`` set or run of the same name with other content: a ``ReplaceError``
            that names the command whose ``--replace`` replaces it, as this has none).
    """
    wh.require_writer("ingest qrels and runs")
    check_name(collection, "collection")
    try:
        with bulk_session(wh, vacuum=False):
            with wh.transaction():
                stored = ingest_qrels(wh, qrels, collection=collection)
                assert not isinstance(stored, list)  # (one source, one set)
                add_exclusions(wh, collection, exclusions, identical_ids)
                results = _ingest_runs(
                    wh, list(runs), collection, None, False, ignore_extra_fields, progress
                )
            checkpoint(wh)  # (as ingest_runs: appended row groups' vacuum off, see bulk_session)
    except ReplaceError as clash:  # (the transaction ends with it: nothing of it stays)
        raise clash.elsewhere() from None
    return stored, results


def add_exclusions(
    wh: Store, collection: str, files: Sequence[str | os.PathLike[str]], identical_ids: bool
) -> None:
    """Store exclusion files and the rule identical_ids in the caller's transaction (methods §17).

    Each file is named by its name as given; one stored with other pairs is replaced (the
    command that gives it says which exclusions hold).
    """
    from evalwh.store.ingest.exclusions import add_file, set_identical_ids

    for file in files:
        add_file(wh, file, collection, replace=True)
    if identical_ids:
        set_identical_ids(wh, collection)


def ingest_run_metadata(
    wh: Store,
    source: str | os.PathLike[str] | pd.DataFrame,
    *,
    collection: str,
    allow_unknown_runs: bool = False,
) -> int:
    """Attach group, type and pooled flags to ingested runs from a TSV file or DataFrame.

    The table needs a run id column (``run_id`` or ``runtag``) and any of ``group``
    (or ``group_name``), ``type`` (or ``run_type``), ``pooled`` (or ``judged_pooled``,
    1/0 or true/false). Every row fills every column; a run listed twice has the same
    values both times.

    Args:
        source: A tab-separated file with a header, or a DataFrame.
        collection: The collection whose runs get the metadata.
        allow_unknown_runs: Skip rows for runs the collection does not have (else an error).

    Returns:
        The number of runs updated.

    Raises:
        IngestError: naming file and line (or DataFrame row, from 1) and the problem.
    """
    wh.require_collection(collection)
    frame = run_metadata_frame(source)
    known = set(wh.run_ids(collection))
    unknown = ~frame["run_id"].isin(known)
    if unknown.any() and not allow_unknown_runs:
        row = frame[unknown].iloc[0]
        label = str(source) if isinstance(source, (str, os.PathLike)) else "DataFrame"
        raise IngestError(
            label,
            int(row["line"]),
            f"run {row['run_id']!r} is not in collection {collection!r} "
            "(ingest it first, or allow unknown runs to skip such rows)",
        )
    with wh.transaction():
        wh.con.register("staged_metadata", frame)
        try:
            updated = wh.con.execute(
                sql.query(_INGEST, "update_run_metadata").text, {"collection_id": collection}
            ).fetchone()
        finally:
            wh.con.unregister("staged_metadata")
    return int(updated[0]) if updated else 0
