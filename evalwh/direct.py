"""Evaluate run files against a qrels file without storing them: trec_eval's way of working.

``evalwh eval --qrels QRELS RUN...`` and :func:`evaluate_files` give the numbers
``Warehouse.evaluate`` gives after an ingest, from the same metric queries, without keeping
anything. The judgments are ingested into an in-memory warehouse as usual (they are small).
The run files, which are large, are each read once by the reader the ingest uses
(:mod:`evalwh.runreader`, ``evalwh._runlines``: C, one file per thread, without the GIL),
which looks every line up in the judgments, ranks the judged ones as ``trec_ranked`` does
and hands back only those, with their running counts (``ev_files_judged``), and the number
retrieved per topic (``run_topics``). Reading starts while the judgments are still being
ingested; at most two files' text is in memory at a time besides what is read ahead.

The reader takes only the plainest form of a run file (see ``evalwh/_runlines.c``); a file
it does not take (a comment, other whitespace, another spelling of a score, non-ASCII text,
a duplicate document, a malformed line) is ingested into the in-memory warehouse by the
ordinary ingest, which ranks it with ``trec_ranked`` or names its first bad line, and its
judged rows join the others in ``05_source_files.sql``. So the strictness is that of
``evalwh ingest``: the same input is accepted or refused with the same message. Where the
reader was not compiled (``pip install`` without a C compiler), every file takes that path.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evalwh import arrays, catalog, evaluation, formats, ingest, runreader, sql
from evalwh.evaluation import Averaging, Options, Unjudged

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from evalwh.warehouse import Warehouse

COLLECTION = "files"
_CONTEXT = "evalwh.queries.context"


def evaluate_files(
    qrels: str | os.PathLike[str] | pd.DataFrame,
    runs: Sequence[str | os.PathLike[str] | pd.DataFrame] | pd.DataFrame | Mapping[str, pd.DataFrame],
    measures: Sequence[str | catalog.Measure],
    *,
    per_query: bool = False,
    depths: Sequence[int] | None = None,
    rel: int = 1,
    unjudged: Unjudged | str = Unjudged.nonrelevant,
    depth_cap: int | None = None,
    float32_ties: bool = False,
    averaging: Averaging | str = Averaging.default,
    ignore_extra_fields: bool = False,
    typed_names: bool = False,
    truncate_grades: bool = False,
    then: Callable[[Warehouse], None] | None = None,
) -> pd.DataFrame:
    """Evaluate TREC run files against a qrels file, as trec_eval does, storing nothing.

    Args:
        qrels: A qrels file (plain or ``.gz``) or a DataFrame, as ``Warehouse.ingest_qrels``.
        runs: Run files (plain or ``.gz``); each file's tag names its run. Or DataFrames (one,
            a list, or a mapping from run name), in any layout :mod:`evalwh.frames` accepts;
            these are evaluated through an in-memory warehouse.
        measures: Measure specs (``P@10``, ``AP``, ``nDCG@10``, ``all_trec``, ...).
        per_query, depths, rel, unjudged, depth_cap, float32_ties, averaging: as
            :func:`evalwh.evaluation.evaluate`.
        ignore_extra_fields: Accept run lines with more than six fields (the first six count).
        typed_names: Report measures under the names given (as ``evaluation.evaluate``).
        truncate_grades: Read fractional grades as trec_eval does (C's atol: toward zero).
        then: Called with the in-memory warehouse after the metrics, while the evaluation's
            relations (ev_judged, ev_pairs, ...) still exist (``evalwh trec_eval`` reads them).

    Returns:
        The frame ``Warehouse.evaluate`` returns, with ``collection_id`` ``"files"``.

    Raises:
        IngestError: naming file, line and problem, for malformed input (as ``evalwh ingest``).
        UnknownMetricError, MetricParamError: for bad measure specs.

    Examples:
        >>> import pathlib, tempfile
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "qrels").write_text("1 0 a 1\\n1 0 b 0\\n1 0 c 1\\n")
        >>> _ = (folder / "run").write_text("1 Q0 a 1 3.0 r1\\n1 Q0 b 2 2.0 r1\\n1 Q0 x 3 1.0 r1\\n")
        >>> frame = evaluate_files(folder / "qrels", [folder / "run"], ["P@2", "AP"])
        >>> frame[["run_id", "measure", "value"]].values.tolist()
        [['r1', 'P@2', 0.5], ['r1', 'AP', 0.5]]
    """
    from evalwh.frames import evaluate_frames, has_frames
    from evalwh.warehouse import Warehouse

    if has_frames(runs):
        return evaluate_frames(
            qrels, runs, measures, per_query=per_query, depths=depths, rel=rel, unjudged=unjudged,
            depth_cap=depth_cap, float32_ties=float32_ties, averaging=averaging,
            ignore_extra_fields=ignore_extra_fields, typed_names=typed_names,
        )  # fmt: skip
    options = Options(
        rel=rel,
        unjudged=Unjudged(unjudged),
        depth_cap=depth_cap,
        float32_ties=float32_ties,
        averaging=Averaging(averaging),
    )
    parsed = evaluation.parse_measures(measures, depths, options)
    paths = [Path(p) for p in runs]
    spill = ingest.Spill()
    try:
        files = ingest.prepare_run_files(
            paths, run_id=None, ignore_extra_fields=ignore_extra_fields, spill=spill
        )
        with Warehouse(":memory:") as wh, _ReadAhead(files) as texts:
            wh.ingest_qrels(qrels, collection=COLLECTION)
            if truncate_grades:
                wh.con.execute("UPDATE qrels SET relevance = trunc(relevance) WHERE relevance <> trunc(relevance)")
            judged, general = _rank_files(wh, texts, files, options, ignore_extra_fields)
            return _evaluate(
                wh, judged, general, spill, parsed, options, per_query, ignore_extra_fields,
                typed_names=typed_names, then=then,
            )  # fmt: skip
    finally:
        spill.close()


def _evaluate(
    wh: Warehouse,
    judged: pa.Table,
    general: list[ingest.RunFile],
    spill: ingest.Spill,
    parsed: Any,
    options: Options,
    per_query: bool,
    ignore_extra_fields: bool,
    *,
    typed_names: bool,
    then: Callable[[Warehouse], None] | None,
) -> pd.DataFrame:
    """Ingest the files the reader left, then run the metrics over all judged rows."""
    with wh.transaction():
        if general:
            ingest.ingest_prepared(
                wh,
                general,
                COLLECTION,
                spill,
                run_id=None,
                replace=False,
                ignore_extra_fields=ignore_extra_fields,
                progress=None,
                fill_cache=False,
            )
        # read once, by 05_source_files.sql, into the table the metrics scan
        wh.con.register("ev_files_judged", judged)
        try:
            for name, params in _context_steps(options):
                wh.run(sql.query(_CONTEXT, name), params)
        finally:
            wh.con.unregister("ev_files_judged")
        frame = evaluation.compute(wh, COLLECTION, parsed, options, per_query=per_query, typed_names=typed_names)
        if then is not None:
            then(wh)
        return frame


def _context_steps(options: Options) -> list[tuple[str, dict[str, Any]]]:
    """The evaluation context of :mod:`evalwh.evaluation`, with the files' judged rows added."""
    steps = evaluation.context_steps(COLLECTION, None, options, fingerprint=None)
    at = steps.index(("05_source_direct", {})) + 1
    return steps[:at] + [("05_source_files", {})] + steps[at:]


class _ReadAhead:
    """The run files' text, read ahead (one thread) while the judgments are ingested.

    Reading, and for ``.gz`` files inflating, is up to half of the reader's work, and the
    qrels ingest leaves a core idle; up to ``budget`` bytes of text wait in memory.
    """

    def __init__(self, files: list[ingest.RunFile], budget: int = 256 << 20) -> None:
        self.pool = ThreadPoolExecutor(max_workers=1) if runreader.reader() is not None else None
        self.ahead: dict[Path, Future[bytes]] = {}
        if self.pool is None:
            return
        for path in (f.readable for f in files):
            try:
                size = path.stat().st_size * (ingest.GZIP_RATIO if path.suffix == ".gz" else 1)
            except OSError:
                break  # the ingest names a missing file
            if size > budget or path in self.ahead:
                break
            budget -= size
            self.ahead[path] = self.pool.submit(formats.read_bytes, path)

    def read(self, path: Path) -> bytes:
        """The text of ``path``: read ahead, or read now."""
        ahead = self.ahead.pop(path, None)
        return ahead.result() if ahead is not None else formats.read_bytes(path)

    def __enter__(self) -> _ReadAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
        self.ahead.clear()


def _rank_files(
    wh: Warehouse,
    texts: _ReadAhead,
    files: list[ingest.RunFile],
    options: Options,
    ignore_extra_fields: bool,
) -> tuple[pa.Table, list[ingest.RunFile]]:
    """Rank what the run-file reader takes; store its runs and run_topics rows.

    Returns the judged rows (``ev_files_judged``) of those files and the files it left to
    the general path, in the order the ingest meets them: its batches group files by
    delimiter, so of several bad files the one the ingest names is named here too.
    """
    in_batches = (f for batch in ingest.group_batches(files) for f in batch)
    order = {f.label: i for i, f in enumerate(in_batches)}
    # The reader keeps judged rows only; a document with a negative grade (pooled, not judged)
    # counts for infAP and trec_eval's relstring and is seen in ranked lists only (ev_ranked):
    # such judgments, like fractional grades, send every file the general way.
    pooled = wh.con.execute("SELECT count(*) FROM qrels WHERE relevance < 0").fetchall()[0][0]
    reader = runreader.reader() if not pooled else None
    if reader is None or _fractional_grades(wh):  # (the reader takes integer grades)
        return _empty_judged(), sorted(files, key=lambda f: order[f.label])
    judgments = runreader.judgments(reader, wh, COLLECTION, "default")

    def rank(file: ingest.RunFile) -> tuple[Any, ...] | str:
        try:
            data = texts.read(file.readable)
        except ingest.READ_ERRORS:
            return "unreadable"  # the general path names the error
        return reader.rank_file(
            data,
            file.delimiter,
            file.first_tag,
            judgments,
            options.rel,
            options.float32_ties,
            ignore_extra_fields,
            formats.MAX_LINE,
        )

    accepted: list[ingest.RunFile] = []
    ranked: list[_Ranked] = []
    general: list[ingest.RunFile] = []
    # the reader releases the GIL: one file per core at a time (and only that in memory;
    # map submits every file at once, but each reads its text only when it starts)
    with ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool:
        for file, result in zip(files, pool.map(rank, files), strict=True):
            if isinstance(result, str):
                general.append(file)
            else:
                accepted.append(file)
                ranked.append(_Ranked(*result))
    if accepted:
        _store_runs(wh, accepted, ranked)
    return _judged_rows(accepted, ranked), sorted(general, key=lambda f: order[f.label])


class _Ranked:
    """What the reader hands back for one file (see evalwh/_runlines.c), as arrays."""

    def __init__(self, topic_offsets: bytes, topic_bytes: bytes, num_ret: bytes, relevant: int, *rows: bytes) -> None:
        import pyarrow as pa

        buffers = [None, pa.py_buffer(topic_offsets), pa.py_buffer(topic_bytes)]
        self.topics = pa.Array.from_buffers(pa.string(), len(topic_offsets) // 4 - 1, buffers)
        self.num_ret = np.frombuffer(num_ret, np.int32)
        self.relevant = relevant  # the judged rows' first `relevant` are the relevant ones
        self.topic, self.rank, self.grade, self.judged_so_far, self.relevant_so_far = (
            np.frombuffer(column, np.int32) for column in rows
        )


def _topics(files: list[ingest.RunFile], ranked: list[_Ranked]) -> tuple[pa.Array, np.ndarray, pa.Array]:
    """All files' topics, in file order: the run ids, each topic's run (an index), its id."""
    import pyarrow as pa

    run_of_topic = np.repeat(np.arange(len(files)), [len(r.topics) for r in ranked])
    query_ids = pa.concat_arrays([r.topics for r in ranked])
    return arrays.strings([f.run_id for f in files]), run_of_topic, query_ids


def _judged_rows(files: list[ingest.RunFile], ranked: list[_Ranked]) -> pa.Table:
    """The judged rows of the files the reader took, as one table (``ev_files_judged``).

    Relevant rows first, as in the warehouse's cache (schema/010): most metrics read only
    those, and DuckDB skips the row groups of the others.
    """
    import pyarrow as pa

    if not files:
        return _empty_judged()

    def column(values: list[np.ndarray]) -> np.ndarray:
        """One column of all files: their relevant rows, then their other rows."""
        firsts = [v[: r.relevant] for v, r in zip(values, ranked, strict=True)]
        rests = [v[r.relevant :] for v, r in zip(values, ranked, strict=True)]
        return np.concatenate(firsts + rests)

    # each file's topic indices, made indices into all files' topics
    base = np.cumsum([0] + [len(r.topics) for r in ranked[:-1]])
    at = column([r.topic + b for r, b in zip(ranked, base, strict=True)])
    run_ids, run_of_topic, query_ids = _topics(files, ranked)
    names = ("rank", "grade", "judged_so_far", "relevant_so_far")
    # the ids as dictionaries (DuckDB reads them without a copy of every string here)
    return pa.Table.from_arrays(
        [
            pa.DictionaryArray.from_arrays(arrays.int32s(run_of_topic[at]), run_ids),
            pa.DictionaryArray.from_arrays(arrays.int32s(at), query_ids),
            *(arrays.int32s(column([getattr(r, name) for r in ranked])) for name in names),
        ],
        names=["run_id", "query_id", "rank", "gain", "judged_so_far", "relevant_so_far"],
    )


def _store_runs(wh: Warehouse, files: list[ingest.RunFile], ranked: list[_Ranked]) -> None:
    """What the ingest stores for the files the reader took: runs and run_topics rows."""
    import pyarrow as pa

    ingest.insert_runs(
        wh,
        [
            [COLLECTION, f.run_id, f.first_tag, os.path.basename(f.label), "", int(r.num_ret.sum())]
            for f, r in zip(files, ranked, strict=True)
        ],
    )
    run_ids, run_of_topic, query_ids = _topics(files, ranked)
    topics = pa.Table.from_arrays(
        [
            arrays.repeated(COLLECTION, len(query_ids)),
            run_ids.take(arrays.int32s(run_of_topic)),
            query_ids,
            arrays.int32s(np.concatenate([r.num_ret for r in ranked])),
        ],
        names=["collection_id", "run_id", "query_id", "num_ret"],
    )
    wh.con.register("ev_new_topics", topics)
    try:
        wh.con.execute(
            "INSERT INTO run_topics (collection_id, run_id, query_id, num_ret, list_key)"
            " SELECT collection_id, run_id, query_id, num_ret,"
            " CAST((SELECT coalesce(max(list_key), 0) FROM run_topics) + row_number() OVER () AS INTEGER)"
            " FROM ev_new_topics"
        )
    finally:
        wh.con.unregister("ev_new_topics")


def _fractional_grades(wh: Warehouse) -> bool:
    """True if a judged grade of the qrels is fractional: the general path ranks every file then."""
    ((fractional,),) = wh.con.execute(
        "SELECT coalesce(bool_or(relevance <> trunc(relevance)), false) FROM qrels"
        " WHERE collection_id = ? AND relevance >= 0",
        [COLLECTION],
    ).fetchall()
    return bool(fractional)


def _empty_judged() -> pa.Table:
    import pyarrow as pa

    fields = [("run_id", pa.string()), ("query_id", pa.string())]
    fields += [(name, pa.int32()) for name in ("rank", "gain", "judged_so_far", "relevant_so_far")]
    return pa.schema(fields).empty_table()
