"""Evaluate run files against a qrels file without storing them: trec_eval's way of working.

``evalwh eval --qrels QRELS RUN...`` and :func:`evaluate_files` give the numbers
``Warehouse.evaluate`` gives after an ingest, from the same metric queries, without keeping
anything. The judgments are ingested into an in-memory warehouse as usual (they are small).
The run files, which are large, are each read once by the reader the ingest uses
(:mod:`evalwh.io.runreader`, ``evalwh.io._runlines``: C, one file per thread, without the GIL),
which looks every line up in the judgments, ranks the judged ones as ``trec_ranked`` does
and hands back only those, with their running counts, and the number retrieved per topic
(``run_topics``). Reading starts while the judgments are still being ingested. A plain file
is read a piece of whole topics at a time, so that two pieces (not two files) are in memory
at once; the judged rows go, a few files at a time, into a compressed in-memory table of
numbers (``05_files_store.sql``), which the metrics read (``05_source_files.sql``).

The reader takes only the plainest form of a run file (see ``evalwh/io/_runlines.c``); a file
it does not take (a comment, other whitespace, another spelling of a score, non-ASCII text,
a duplicate document, a malformed line) is ingested into the in-memory warehouse by the
ordinary ingest, which ranks it with ``trec_ranked`` or names its first bad line, and its
judged rows join the others in ``05_source_files.sql``. So the strictness is that of
``evalwh ingest``: the same input is accepted or refused with the same message. Where the
reader was not compiled (``pip install`` without a C compiler), every file takes that path.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evalwh import sql
from evalwh.io import arrays, formats, runreader
from evalwh.io.frames import is_table_file, read_table, standard_columns
from evalwh.io.ir_metadata import skip_block
from evalwh.measures import catalog, evaluation
from evalwh.store import ingest
from evalwh.store.context import Averaging, Options, Unjudged, context_steps

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from evalwh.store.connection import Store


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
    then: Callable[[Store], None] | None = None,
    exclusions: Sequence[str | os.PathLike[str]] = (),
    identical_ids: bool = False,
    exclusion_labels: bool = True,
    said: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """Evaluate TREC run files against a qrels file, as trec_eval does, storing nothing.

    Args:
        qrels: A qrels file (plain or ``.gz``) or a DataFrame, as ``Warehouse.ingest_qrels``.
        runs: Run files (plain or ``.gz``); each file's tag names its run. Or DataFrames (one,
            a list, or a mapping from run name), in any layout :mod:`evalwh.io.frames` accepts;
            these are evaluated through an in-memory warehouse.
        measures: Measure specs (``P@10``, ``AP``, ``nDCG@10``, ``all_trec``, ...).
        per_query, depths, rel, unjudged, depth_cap, float32_ties, averaging: as
            :func:`evalwh.measures.evaluation.evaluate`.
        ignore_extra_fields: Accept run lines with more than six fields (the first six count).
        typed_names: Report measures under the names given (as ``evaluation.evaluate``).
        truncate_grades: Read fractional grades as trec_eval does (C's atol: toward zero).
        then: Called with the in-memory warehouse after the metrics, while the evaluation's
            relations (ev_judged, ev_pairs, ...) still exist (``evalwh trec_eval`` reads them).
        exclusions: Exclusion files (``topic docid`` a line): those documents leave every
            run before it is ranked, the ranks closing up (methods §17).
        identical_ids: Exclude a document whose id equals its topic's id (BEIR's ArguAna, Quora).
        exclusion_labels: Read qrels lines labelled -100 as excluded documents, not grades
            (``False``: as trec_eval reads them, a negative grade).
        said: Called with each line worth saying: the -100 lines taken out of the qrels, and
            what the exclusions removed from each run.

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
    excluding = dict(
        exclusions=exclusions, identical_ids=identical_ids, exclusion_labels=exclusion_labels, said=said
    )
    if has_frames(runs):
        return evaluate_frames(
            qrels, runs, measures, per_query=per_query, depths=depths, rel=rel, unjudged=unjudged,
            depth_cap=depth_cap, float32_ties=float32_ties, averaging=averaging,
            ignore_extra_fields=ignore_extra_fields, typed_names=typed_names, **excluding,
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
    from evalwh.store.connection import Store

    spill = ingest.Spill()
    try:
        files = ingest.prepare_run_files(
            paths, run_id=None, ignore_extra_fields=ignore_extra_fields, spill=spill
        )
        with Store(":memory:", described=False) as wh, _Reader(files, options, ignore_extra_fields) as reader:
            stored = _ingest_judgments(wh, qrels, excluding)
            if truncate_grades:
                wh.con.execute("UPDATE qrels SET relevance = trunc(relevance) WHERE relevance <> trunc(relevance)")
            general = reader.store(wh)
            frame = _evaluate(
                wh, general, spill, parsed, options, per_query, ignore_extra_fields,
                typed_names=typed_names, then=then,
            )  # fmt: skip
            _say_losses(wh, stored, said)
            return in_given_order(frame, [f.run_id for f in files])
    finally:
        spill.close()


def in_given_order(frame: pd.DataFrame, run_ids: Sequence[str]) -> pd.DataFrame:
    """The rows of ``frame`` with runs in the order their files were given, as trec_eval and
    ir_measures print them (topics and measures keep their order within a run)."""
    place = {run_id: i for i, run_id in enumerate(dict.fromkeys(run_ids))}
    rank = frame["run_id"].map(place).fillna(len(place))
    return frame.iloc[rank.argsort(kind="stable")].reset_index(drop=True)


def has_frames(runs: object) -> bool:
    """Whether ``runs`` (as given to :func:`evaluate_files`) holds DataFrames or
    table files."""
    import pandas as pd

    if isinstance(runs, (pd.DataFrame, Mapping)):
        return True
    return isinstance(runs, (list, tuple)) and any(isinstance(r, pd.DataFrame) or is_table_file(r) for r in runs)


def evaluate_frames(
    qrels: str | os.PathLike[str] | pd.DataFrame,
    runs: pd.DataFrame | Mapping[str, pd.DataFrame] | Sequence[pd.DataFrame | str | os.PathLike[str]],
    measures: list[str],
    **options: Any,
) -> pd.DataFrame:
    """Evaluate runs given as DataFrames (and files) in a warehouse kept in memory.

    ``runs`` is one DataFrame, a list of DataFrames and run files, or a mapping from run name to
    DataFrame. A frame without a ``run_id`` column is named by its key in the mapping, else
    ``run`` (a single frame) or ``run1``, ``run2``, ... by its place in the list.
    """
    import pandas as pd

    from evalwh.store.connection import Store

    if isinstance(runs, pd.DataFrame):
        named: list[tuple[str | None, object]] = [("run", runs)]
    elif isinstance(runs, Mapping):
        named = [(str(name), frame) for name, frame in runs.items()]
    else:
        named = [(f"run{i}", item) for i, item in enumerate(runs, start=1)]
    extra = options.pop("ignore_extra_fields", False)
    excluding = {k: options.pop(k) for k in ("exclusions", "identical_ids", "exclusion_labels", "said") if k in options}
    with Store(":memory:", described=False) as wh:  # throw-away: no table descriptions
        stored = _ingest_judgments(wh, qrels, excluding)
        for name, item in named:
            if is_table_file(item):
                name, item = Path(item).stem, read_table(item)  # type: ignore[arg-type]
            if isinstance(item, pd.DataFrame):
                frame = standard_columns(item, "run", label=f"DataFrame {name}")
                run_id = None if "run_id" in frame.columns else name
                ingest.ingest_runs(wh, frame, collection=COLLECTION, run_id=run_id)
            else:
                ingest.ingest_runs(wh, item, collection=COLLECTION, ignore_extra_fields=extra)  # type: ignore[arg-type]
        frame = evaluation.evaluate(wh, measures, collection=COLLECTION, **options)
        _say_losses(wh, stored, excluding.get("said"))
        return frame


def _ingest_judgments(wh: Store, qrels: Any, excluding: dict[str, Any]) -> ingest.IngestResult:
    """The qrels ingested into the in-memory warehouse, with the exclusions asked for (methods §17)."""
    stored = ingest.ingest_qrels(
        wh, qrels, collection=COLLECTION, exclusion_labels=excluding.get("exclusion_labels", True)
    )
    assert not isinstance(stored, list)  # (one source, one set)
    if excluding.get("exclusions") or excluding.get("identical_ids"):
        with wh.transaction():
            ingest.add_exclusions(wh, COLLECTION, excluding.get("exclusions", ()), excluding.get("identical_ids", False))
    return stored


def _say_losses(wh: Store, stored: ingest.IngestResult, said: Callable[[str], None] | None) -> None:
    """Say what the qrels' -100 lines became and what the exclusions removed from each run."""
    from evalwh.store.ingest import exclusions

    if said is None or not exclusions.active(wh, COLLECTION):
        return
    if stored.note:
        said(f"{stored.source}: {stored.note}")
    for line in exclusions.losses_lines(exclusions.losses(wh, COLLECTION)):
        said(line)


def _evaluate(
    wh: Store,
    general: list[ingest.RunFile],
    spill: ingest.Spill,
    parsed: Any,
    options: Options,
    per_query: bool,
    ignore_extra_fields: bool,
    *,
    typed_names: bool,
    then: Callable[[Store], None] | None,
) -> pd.DataFrame:
    """Ingest the files the reader left, then run the metrics over all judged rows.

    Two transactions: one DuckDB transaction writes one database, and the context writes
    the files' judged rows (``ev_files``, see 05_files_store.sql) while the ingest writes
    the in-memory warehouse. Nothing of either outlives the evaluation.
    """
    if general:
        with wh.transaction():
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
    with wh.transaction():
        for name, params in _context_steps(options):
            wh.run(sql.query(_CONTEXT, name), params)
        frame = evaluation.compute(wh, COLLECTION, parsed, options, per_query=per_query, typed_names=typed_names)
        if then is not None:
            then(wh)
        return frame


def _context_steps(options: Options) -> list[tuple[str, dict[str, Any]]]:
    """The evaluation context of :mod:`evalwh.measures.evaluation`, with the files' judged rows added."""
    steps = context_steps(COLLECTION, None, options, fingerprint=None, label_sources=True)
    at = steps.index(("05_source_direct", {})) + 1
    return steps[:at] + [("05_source_files", {})] + steps[at:]


class _Reader:
    """The run files read and ranked by the C reader, two at a time, their judged rows stored.

    Two threads each read a file and rank it (``rank_file`` releases the GIL); the first two
    start while the judgments are still being ingested. A plain file is read and ranked a
    piece of whole topics at a time (:func:`evalwh.io.runreader.pieces`, about ``_PIECE`` bytes, and the
    reader's work on a piece takes about twice its size), which ranks every topic as the
    whole file would; one whose topics do not come one after another has its lines sorted
    into pieces by topic first (:func:`evalwh.io.runreader.topic_pieces`); a ``.gz`` file is
    read whole. The calling thread stores each file's judged rows, in file order, into
    ``ev_files.judged`` (05_files_store.sql), which DuckDB compresses at every checkpoint.
    So at most two pieces (or two files' text) and the judged rows of ``_AHEAD`` files wait
    in memory, and those of all files are held once, compressed.
    """

    _PIECE = 8 << 20  # bytes read and ranked at a time (8-16 MB as fast; 8 lowers XL's peak)
    _AHEAD = 6  # files read or ranked but not yet stored
    _STORE_ROWS = 1 << 20  # judged rows stored in one statement
    _CHECKPOINT_ROWS = 1 << 20  # rows stored uncompressed before a checkpoint compresses them

    def __init__(
        self, files: list[ingest.RunFile], options: Options, ignore_extra_fields: bool
    ) -> None:
        self.files = files
        self.options = options
        self.ignore_extra_fields = ignore_extra_fields
        self.module = runreader.reader()
        self.judgments: Future[Any] = Future()
        self.turns = _Turns(self._AHEAD)
        self.pool: ThreadPoolExecutor | None = None
        self.ranked: list[Future[list[tuple[Any, ...]] | str]] = []
        if self.module is not None:
            self.pool = ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1))
            self.ranked = [self.pool.submit(self._rank, i) for i in range(len(files))]

    def _rank(self, turn: int) -> list[tuple[Any, ...]] | str:
        """File ``turn`` ranked (in a worker thread): what ``rank_file`` gives for each piece,
        or why the general path reads the file instead."""
        if not self.turns.take(turn):  # given back when the calling thread stores the file
            return "not read"
        file = self.files[turn]
        try:
            if file.readable.suffix != ".gz":
                pieces = self._rank_pieces(file)
                if pieces is not None:
                    return pieces
            whole = self._rank_text(file, formats.read_bytes(file.readable))
        except ingest.READ_ERRORS:
            return "unreadable"  # the general path names the error
        return whole if isinstance(whole, str) else [whole]

    def _rank_pieces(self, file: ingest.RunFile) -> list[tuple[Any, ...]] | str | None:
        """A plain file ranked a piece at a time; None if a topic is in two pieces even once
        its lines are sorted into pieces by topic (:func:`evalwh.io.runreader.topic_pieces`)."""
        delimiter = file.delimiter.encode()
        with open(file.readable, "rb", buffering=0) as handle:
            ranked = self._rank_from(file, runreader.pieces(handle.fileno(), delimiter, self._PIECE))
            if ranked is not None:
                return ranked
            by_topic = runreader.topic_pieces(self.module, handle.fileno(), delimiter, self._PIECE)
            return self._rank_from(file, by_topic)

    def _rank_from(self, file: ingest.RunFile, texts: Iterator[bytes]) -> list[tuple[Any, ...]] | str | None:
        """The pieces ``texts`` gives, ranked; None if a topic is in two of them."""
        ranked: list[tuple[Any, ...]] = []
        seen: set[bytes] = set()
        for piece in texts:
            result = self._rank_text(file, piece)
            del piece
            if isinstance(result, str):
                return result
            offsets, names = np.frombuffer(result[0], np.int32).tolist(), result[1]
            before = len(seen)
            seen.update(names[a:b] for a, b in zip(offsets[:-1], offsets[1:], strict=True))
            if len(seen) != before + len(offsets) - 1:
                return None
            ranked.append(result)
        return ranked if ranked else "no lines"

    def _rank_text(self, file: ingest.RunFile, data: bytes) -> tuple[Any, ...] | str:
        """``rank_file`` of a file's text (or a piece of it), once the judgments are known."""
        judgments = self.judgments.result()
        if judgments is None or self.turns.closed:
            return "not read"
        return self.module.rank_file(
            data[skip_block(data) :],  # past an ir_metadata block (comments, as to trec_eval)
            file.delimiter,
            file.first_tag,
            judgments,
            self.options.rel,
            self.options.float32_ties,
            self.ignore_extra_fields,
            formats.MAX_LINE,
        )

    def store(self, wh: Store) -> list[ingest.RunFile]:
        """Store what the reader takes (judged rows, runs and run_topics rows).

        Returns the files it left to the general path, in the order the ingest meets them:
        its batches group files by delimiter, so of several bad files the one the ingest
        names is named here too.
        """
        in_batches = (f for batch in ingest.group_batches(self.files) for f in batch)
        order = {f.label: i for i, f in enumerate(in_batches)}
        _attach_store(wh)
        wh.run(sql.query(_CONTEXT, "05_files_store"), {"collection_id": COLLECTION})
        # The reader keeps judged rows only; a document with a negative grade (pooled, not
        # judged) counts for infAP and trec_eval's relstring and is seen in ranked lists only
        # (ev_ranked): such judgments, like fractional grades, send every file the general way.
        ((pooled,),) = wh.con.execute("SELECT count(*) FROM qrels WHERE relevance < 0").fetchall()
        # Excluded documents (methods §17) leave the runs before they are ranked, which the
        # ingest does on stored rows: with exclusions every file goes the general way too.
        # (the reader takes integer grades)
        if self.module is None or pooled or _fractional_grades(wh) or _excluding(wh):
            self.judgments.set_result(None)
            return sorted(self.files, key=lambda f: order[f.label])
        # The qrels table stays for the metrics (01_qrels.sql). A checkpoint compresses it (an
        # in-memory database's tables are compressed only then) and gives back what its ingest
        # held on to, before the reader's judgments and files take their part: on the shared
        # XL (2.7 M judgments) the table's 175 MiB become about 23, and the direct path's peak
        # about 0.8 GiB instead of 1 GiB (bench/results/2026-12-07-direct-peak.md).
        wh.con.execute("CHECKPOINT")
        self.judgments.set_result(runreader.judgments(self.module, wh.con, COLLECTION, "default"))
        numbered = wh.con.execute("SELECT topic, query_id FROM ev_files.topics").fetchall()
        numbers = {name.encode(): number for number, name in numbered}
        accepted: list[tuple[ingest.RunFile, list[_Topics], int]] = []
        general: list[ingest.RunFile] = []
        waiting: list[pa.Table] = []  # rows to store in one statement
        unstored = uncompressed = given = 0
        last = len(self.files) - 1
        for turn, file in enumerate(self.files):
            result = self.ranked[turn].result()
            self.ranked[turn] = _DONE  # (a future holds its result: the file's rows)
            if isinstance(result, str):
                general.append(file)
            else:
                topics = [_Topics(*piece[:3]) for piece in result]
                accepted.append((file, topics, turn))
                for piece, piece_topics in zip(result, topics, strict=True):
                    waiting.append(_judged_table(turn, piece_topics.numbers(numbers), piece[3:]))
                    unstored += waiting[-1].num_rows
                del result
            # (the reader's threads take no more than _AHEAD files until these are stored)
            if unstored >= self._STORE_ROWS or (turn + 1) % self._AHEAD == 0 or turn == last:
                if waiting:
                    _store_judged(wh, waiting)
                waiting.clear()
                self.turns.give(turn + 1 - given)
                given = turn + 1
                uncompressed += unstored
                unstored = 0
                if uncompressed >= self._CHECKPOINT_ROWS or (turn == last and uncompressed):
                    wh.con.execute("CHECKPOINT ev_files")
                    uncompressed = 0
        if accepted:
            _store_runs(wh, accepted)
        return sorted(general, key=lambda f: order[f.label])

    def __enter__(self) -> _Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.turns.close()  # no worker waits for its turn any more
        if not self.judgments.done():
            self.judgments.set_result(None)
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
        self.ranked.clear()


def _attach_store(wh: Store) -> None:
    """The in-memory database ``ev_files`` of 05_files_store.sql, compressed where DuckDB can.

    DuckDB compresses an in-memory database from 1.4 on; before, the rows stay plain (24
    bytes a judged row instead of a few).
    """
    import duckdb

    try:
        wh.con.execute("ATTACH ':memory:' AS ev_files (COMPRESS)")
    except duckdb.BinderException:  # Unrecognized option for attach "compress"
        wh.con.execute("ATTACH ':memory:' AS ev_files")


class _Turns:
    """Files taken in file order by the reader's threads, at most ``limit`` not yet given back."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.taken = 0
        self.turn = 0  # the file whose turn it is
        self.closed = False
        self.changed = threading.Condition()

    def take(self, turn: int) -> bool:
        """Wait for file ``turn``'s turn and a free place; False if closed meanwhile.

        In file order, as the calling thread stores the files: a later file that took the
        place an earlier one waits for would wait for ever.
        """
        with self.changed:
            self.changed.wait_for(
                lambda: self.closed or (self.turn == turn and self.taken < self.limit)
            )
            if self.closed:
                return False
            self.taken += 1
            self.turn += 1
            self.changed.notify_all()
            return True

    def give(self, count: int) -> None:
        """``count`` files are stored: their places are free."""
        with self.changed:
            self.taken -= count
            self.changed.notify_all()

    def close(self) -> None:
        with self.changed:
            self.closed = True
            self.changed.notify_all()


_DONE: Future[list[tuple[Any, ...]] | str] = Future()


class _Topics:
    """A ranked file's topics (an Arrow string array) and the lines retrieved for each."""

    def __init__(self, topic_offsets: bytes, topic_bytes: bytes, num_ret: bytes) -> None:
        import pyarrow as pa

        buffers = [None, pa.py_buffer(topic_offsets), pa.py_buffer(topic_bytes)]
        self.ids = pa.Array.from_buffers(pa.string(), len(topic_offsets) // 4 - 1, buffers)
        self.num_ret = np.frombuffer(num_ret, np.int32)
        self.offsets = topic_offsets
        self.names = topic_bytes

    def numbers(self, numbers: dict[bytes, int]) -> np.ndarray:
        """Each topic's number in ``ev_files.topics`` (-1: not judged, so in no judged row)."""
        at = np.frombuffer(self.offsets, np.int32).tolist()
        names = self.names
        pairs = zip(at[:-1], at[1:], strict=True)
        return np.array([numbers.get(names[a:b], -1) for a, b in pairs], np.int32)


def _judged_table(run: int, topic_numbers: np.ndarray, rows: tuple[Any, ...]) -> pa.Table:
    """One piece's judged rows, as ``rank_file`` gives them, as rows of ``ev_files.judged``.

    Relevant rows first, as in the warehouse's cache (schema/010): most metrics read only
    those, and DuckDB skips the row groups of the others.
    """
    import pyarrow as pa

    _relevant, topic, *columns = rows
    count = len(topic) // 4

    def ints(column: bytes) -> pa.Array:
        return pa.Array.from_buffers(pa.int32(), count, [None, pa.py_buffer(column)])

    return pa.Table.from_arrays(
        [
            arrays.int32s(np.full(count, run, np.int32)),
            arrays.int32s(topic_numbers[np.frombuffer(topic, np.int32)]),
            *(ints(column) for column in columns),
        ],
        names=["run", "topic", "rank", "gain", "judged_so_far", "relevant_so_far"],
    )


def _store_judged(wh: Store, tables: list[pa.Table]) -> None:
    """Append judged rows (:func:`_judged_table`) to ``ev_files.judged``, in one statement."""
    import pyarrow as pa

    wh.con.register("ev_file_judged", pa.concat_tables(tables))
    try:
        wh.con.execute("INSERT INTO ev_files.judged BY NAME SELECT * FROM ev_file_judged")
    finally:
        wh.con.unregister("ev_file_judged")


def _store_runs(wh: Store, accepted: list[tuple[ingest.RunFile, list[_Topics], int]]) -> None:
    """What the ingest stores for the files the reader took: runs and run_topics rows."""
    import pyarrow as pa

    ingest.insert_runs(
        wh,
        [
            [COLLECTION, f.run_id, f.first_tag, os.path.basename(f.label), "", _lines(ts)]
            for f, ts, _ in accepted
        ],
    )
    wh.con.execute(
        "INSERT INTO ev_files.runs SELECT unnest($runs), unnest($run_ids)",
        {"runs": [turn for _, _, turn in accepted], "run_ids": [f.run_id for f, _, _ in accepted]},
    )
    pieces = [(i, t) for i, (_, ts, _) in enumerate(accepted) for t in ts]
    run_of_topic = np.repeat([i for i, _ in pieces], [len(t.ids) for _, t in pieces])
    frame = pa.Table.from_arrays(
        [
            arrays.repeated(COLLECTION, len(run_of_topic)),
            arrays.strings([f.run_id for f, _, _ in accepted]).take(arrays.int32s(run_of_topic)),
            pa.concat_arrays([t.ids for _, t in pieces]),
            arrays.int32s(np.concatenate([t.num_ret for _, t in pieces])),
        ],
        names=["collection_id", "run_id", "query_id", "num_ret"],
    )
    wh.con.register("ev_new_topics", frame)
    try:
        wh.con.execute(
            "INSERT INTO run_topics (collection_id, run_id, query_id, num_ret, list_key)"
            " SELECT collection_id, run_id, query_id, num_ret,"
            " CAST((SELECT coalesce(max(list_key), 0) FROM run_topics) + row_number() OVER () AS INTEGER)"
            " FROM ev_new_topics"
        )
    finally:
        wh.con.unregister("ev_new_topics")


def _lines(topics: list[_Topics]) -> int:
    """The lines of a file: the sum of its topics' num_ret."""
    return sum(int(t.num_ret.sum()) for t in topics)


def _excluding(wh: Store) -> bool:
    """Whether the in-memory warehouse holds exclusions (methods §17)."""
    from evalwh.store.ingest.exclusions import active

    return active(wh, COLLECTION)


def _fractional_grades(wh: Store) -> bool:
    """True if a judged grade of the qrels is fractional: the general path ranks every file then."""
    ((fractional,),) = wh.con.execute(
        "SELECT coalesce(bool_or(relevance <> trunc(relevance)), false) FROM qrels"
        " WHERE collection_id = ? AND relevance >= 0",
        [COLLECTION],
    ).fetchall()
    return bool(fractional)
