"""Evaluate run files against a qrels file without storing them: trec_eval's way of working.

``evalwh eval --qrels QRELS RUN...`` and :func:`evaluate_files` give the numbers
``Warehouse.evaluate`` gives after an ingest, from the same metric queries, without keeping
anything. The judgments are ingested into an in-memory warehouse as usual (they are small);
the run files, which are large, are read once in file order, each line with its judgment
(``stream_run_lines.sql``), and ranked by :mod:`evalwh.fastrank`, which verifies the order the files are already in rather
than sorting 25 million lines again. Only the judged lines, with their ranks and running
counts, are kept (``ev_files_judged``), with the number retrieved per topic (``run_topics``).

Files the fast reader cannot take (other whitespace than one delimiter, unsorted scores, a
topic in two places, a duplicate document, a malformed line, a comment) are ingested into
the in-memory warehouse by the ordinary ingest, which ranks them with ``trec_ranked`` or
names their first bad line; their judged rows join the others in ``05_source_files.sql``.
The strictness is that of ``evalwh ingest``: the same input is accepted or refused with the
same message.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import numpy as np

from evalwh import evaluation, fastrank, ingest, sql
from evalwh.evaluation import Averaging, Options, Unjudged

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from evalwh.warehouse import Warehouse

COLLECTION = "files"
_INGEST = "evalwh.queries.ingest"
_CONTEXT = "evalwh.queries.context"


def evaluate_files(
    qrels: str | os.PathLike[str] | pd.DataFrame,
    runs: Sequence[str | os.PathLike[str]],
    measures: list[str],
    *,
    per_query: bool = False,
    depths: Sequence[int] | None = None,
    rel: int = 1,
    unjudged: Unjudged | str = Unjudged.nonrelevant,
    depth_cap: int | None = None,
    float32_ties: bool = False,
    averaging: Averaging | str = Averaging.default,
    ignore_extra_fields: bool = False,
) -> pd.DataFrame:
    """Evaluate TREC run files against a qrels file, as trec_eval does, storing nothing.

    Args:
        qrels: A qrels file (plain or ``.gz``) or a DataFrame, as ``Warehouse.ingest_qrels``.
        runs: Run files (plain or ``.gz``); each file's tag names its run.
        measures: Measure specs (``P@10``, ``AP``, ``nDCG@10``, ``all_trec``, ...).
        per_query, depths, rel, unjudged, depth_cap, float32_ties, averaging: as
            :func:`evalwh.evaluation.evaluate`.
        ignore_extra_fields: Accept run lines with more than six fields (the first six count).

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
    from evalwh.warehouse import Warehouse

    options = Options(
        rel=rel,
        unjudged=Unjudged(unjudged),
        depth_cap=depth_cap,
        float32_ties=float32_ties,
        averaging=Averaging(averaging),
    )
    parsed = evaluation.parse_measures(measures, depths, options)
    paths = [Path(p) for p in runs]
    with Warehouse(":memory:") as wh:
        wh.ingest_qrels(qrels, collection=COLLECTION)
        # Ranking runs outside a transaction: the warehouse is private and thrown away on any
        # error, and DuckDB keeps what a transaction drops (each batch's registered lines)
        # until it commits.
        judged, general = _rank_files(wh, paths, options, ignore_extra_fields)
        with wh.transaction():
            if general:
                ingest.ingest_run_files(
                    wh,
                    general,
                    COLLECTION,
                    run_id=None,
                    replace=False,
                    ignore_extra_fields=ignore_extra_fields,
                    progress=None,
                )
            wh.con.register("ev_files_judged_arrow", judged)
            wh.con.execute("CREATE OR REPLACE TEMP TABLE ev_files_judged AS SELECT * FROM ev_files_judged_arrow")
            wh.con.unregister("ev_files_judged_arrow")
            for name, params in _context_steps(options):
                wh.run(sql.query(_CONTEXT, name), params)
            frame = evaluation.compute(wh, COLLECTION, parsed, options, per_query=per_query)
    return frame


def _context_steps(options: Options) -> list[tuple[str, dict[str, Any]]]:
    """The evaluation context of :mod:`evalwh.evaluation`, with the files' judged rows added."""
    steps = evaluation.context_steps(COLLECTION, None, options, fingerprint=None)
    at = steps.index(("05_source_direct", {})) + 1
    return steps[:at] + [("05_source_files", {})] + steps[at:]


def _rank_files(
    wh: Warehouse, paths: list[Path], options: Options, ignore_extra_fields: bool
) -> tuple[pa.Table, list[Path]]:
    """Rank what the fast reader can take; return its judged rows and the other files.

    Three things overlap: the scans (two threads, a batch or two ahead), DuckDB reading the
    next batch (one thread, on its own cursor) and the ranking of this batch (numpy).
    """
    import pyarrow as pa

    files = ingest.prepare_run_files(paths, run_id=None, ignore_extra_fields=ignore_extra_fields)
    scanner = ingest.Scanner(digest=False)
    general: list[Path] = []
    tables: list[pa.Table] = [_empty_judged()]
    try:
        batches = ingest.group_batches(files)
        with ThreadPoolExecutor(max_workers=1) as reader:
            scanner.submit([f for batch in batches[:2] for f in batch], copy=True)
            pending = reader.submit(_read_batch, wh, batches[0]) if batches else None
            for index, batch in enumerate(batches):
                assert pending is not None
                fast, slow, lines = pending.result()
                if index + 1 < len(batches):
                    scanner.submit([f for later in batches[index + 1 : index + 3] for f in later], copy=True)
                    pending = reader.submit(_read_batch, wh, batches[index + 1])
                scanner.release(batch)
                general.extend(f.path for f in slow)
                if fast:
                    table, refused = _rank_batch(wh, fast, lines, options)
                    tables.append(table)
                    general.extend(fast[i].path for i in sorted(refused))
    finally:
        scanner.close()
    # in the order the ingest would meet them (its batches group files by delimiter), so that
    # of several bad files the one the ingest names is named here too
    order = {f.path: i for i, f in enumerate(f for batch in batches for f in batch)}
    return pa.concat_tables(tables), sorted(general, key=order.__getitem__)


def _read_batch(
    wh: Warehouse, batch: list[ingest.RunFile]
) -> tuple[list[ingest.RunFile], list[ingest.RunFile], pa.Table | None]:
    """The files of a batch the fast reader takes, the others, and its lines (None: unreadable).

    Runs in a worker thread on its own cursor; a line the typed reader cannot read fails the
    query, which then leaves the evaluation's transaction untouched, and the whole batch
    takes the general path.
    """
    fast, slow = [], []
    for file in batch:
        scan = file.scanned()
        if scan.unreadable or scan.plus_minus or scan.fast_delimiter != file.delimiter:
            slow.append(file)
        else:
            fast.append(file)
    if not fast:
        return fast, slow, None
    query = sql.query(_INGEST, "stream_run_lines")
    params = {
        "files": [str(f.text) for f in fast],
        "delim": fast[0].delimiter,
        "tags": [f.first_tag for f in fast],
        "collection_id": COLLECTION,
        "qrels_id": "default",
    }
    cursor = wh.con.cursor()
    # the judgments as the join's build side, so the lines keep their order (see the SQL)
    cursor.execute("SET disabled_optimizers = 'join_order,build_side_probe_side'")
    try:
        # streamed in record batches: DuckDB never holds the whole result besides Arrow's copy
        reader = cursor.sql(query.text, params=params).to_arrow_reader(1 << 20)
        return fast, slow, reader.read_all()
    except (duckdb.Error, OSError):  # raised by DuckDB, or by Arrow while streaming
        return [], batch, None
    finally:
        cursor.close()


def _empty_judged() -> pa.Table:
    import pyarrow as pa

    return pa.table(
        {
            "run_id": pa.array([], pa.string()),
            "query_id": pa.array([], pa.string()),
            "rank": pa.array([], pa.int32()),
            "gain": pa.array([], pa.int32()),
            "judged_so_far": pa.array([], pa.int32()),
            "relevant_so_far": pa.array([], pa.int32()),
        }
    )


def _rank_batch(
    wh: Warehouse, batch: list[ingest.RunFile], lines: pa.Table | None, options: Options
) -> tuple[pa.Table, set[int]]:
    """Verify and rank one batch's lines; store its runs and run_topics rows; judged rows out.

    Returns the judged rows of the accepted files and the batch indices of refused ones.
    """
    import pyarrow as pa

    everything = set(range(len(batch)))
    if lines is None:
        return _empty_judged(), everything
    file_index = lines["file_index"].to_numpy()
    if len(file_index) == 0:
        return _empty_judged(), everything
    query_id = lines["query_id"]  # chunked: the kernels below take it as it is, uncopied
    doc_id = lines["doc_id"]
    key = fastrank.sort_keys(lines["score"].to_numpy(), options.float32_ties)
    blocks = fastrank.find_blocks(file_index, query_id)
    refused = fastrank.refused_files(
        file_index, query_id, doc_id, key, lines["doc_hash"].to_numpy(), blocks
    )
    refused.update(np.unique(file_index[~lines["line_ok"].to_numpy(zero_copy_only=False)]).tolist())
    refused.update(everything - set(np.unique(blocks.file).tolist()))  # no lines: comments only
    accepted = np.ones(len(batch), dtype=bool)
    accepted[list(refused)] = False

    # the judged lines of accepted files, in file order, with their grades
    judged_line = ~lines["gain"].is_null().to_numpy(zero_copy_only=False)
    line = np.flatnonzero(judged_line & accepted[file_index])
    gain = lines["gain"].take(pa.array(line)).to_numpy()

    rank = fastrank.judged_ranks(line, doc_id, key, blocks)
    block = blocks.of_row[line]
    order, judged_so_far, relevant_so_far = fastrank.running_counts(
        block, blocks.start[block] + rank - 1, gain >= options.rel
    )
    run_ids = pa.array([f.run_id for f in batch])
    rows = line[order]
    judged = pa.table(
        {
            "run_id": run_ids.take(pa.array(file_index[rows])),
            "query_id": query_id.take(pa.array(rows)),
            "rank": pa.array(rank[order], pa.int32()),
            "gain": pa.array(gain[order], pa.int32()),
            "judged_so_far": pa.array(judged_so_far, pa.int32()),
            "relevant_so_far": pa.array(relevant_so_far, pa.int32()),
        }
    )

    # what the ingest stores for a run: its row in runs, and the number retrieved per topic
    kept = accepted[blocks.file]
    sizes = blocks.sizes
    topics = pa.table(
        {
            "collection_id": pa.array([COLLECTION] * int(kept.sum()), pa.string()),
            "run_id": run_ids.take(pa.array(blocks.file[kept])),
            "query_id": query_id.take(pa.array(blocks.start[kept])),
            "num_ret": pa.array(sizes[kept], pa.int32()),
        }
    )
    wh.con.register("ev_new_topics", topics)
    try:
        wh.con.execute("INSERT INTO run_topics SELECT * FROM ev_new_topics")
    finally:
        wh.con.unregister("ev_new_topics")
    line_counts = np.bincount(blocks.file, weights=sizes, minlength=len(batch))
    ingest.insert_runs(
        wh,
        [
            [COLLECTION, f.run_id, f.first_tag, os.path.basename(f.label), "", int(line_counts[i])]
            for i, f in enumerate(batch)
            if accepted[i]
        ],
    )
    return judged, refused
