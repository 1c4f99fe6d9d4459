"""A run ingest from files: decided on content, read ahead in worker threads, stored, cached.

:func:`ingest_run_files` prepares the files (:mod:`evalwh.store.ingest.files`) and
:func:`ingest_prepared` takes them through steps 2 to 5 of :mod:`evalwh.store.ingest`: runs
already stored are decided on their content hash, the reader reads the others ahead of the
keyed store (:mod:`evalwh.store.ingest.keyed`), a file it leaves goes the general way
(:mod:`evalwh.store.ingest.general`), and the evaluation cache is filled
(:mod:`evalwh.store.ingest.cache`).
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from evalwh.io import formats, runreader
from evalwh.io.ir_metadata import skip_block
from evalwh.store.ingest.bookkeeping import _clash, _delete_run, _drop_unused_pairs, _stored_runs
from evalwh.store.ingest.bookkeeping import store_float32_order
from evalwh.store.ingest.cache import JudgedCache
from evalwh.store.ingest.exclusions import apply as apply_exclusions
from evalwh.store.ingest.files import (
    READ_ERRORS,
    RunFile,
    Scanner,
    Spill,
    group_batches,
    prepare_run_files,
)
from evalwh.store.ingest.general import _ingest_batch
from evalwh.store.ingest.keyed import (
    STAGE_BYTES,
    STAGE_FILE_BYTES,
    Prepared,
    Stored,
    _held_bytes,
    _in_pieces,
    _text_bytes,
)
from evalwh.store.ingest.results import IngestResult, Progress
from evalwh.store.ingest.run_ir_metadata import read_blocks, store_blocks
from evalwh.store.ingest.session import give_back_freed_memory

if TYPE_CHECKING:
    from evalwh.store.connection import Store

READ_AHEAD = 2  # run files read, ranked and staged at a time (in worker threads), ...
READ_BYTES = 256 << 20  # ... while they hold at most this much text (memory: ~6 bytes a byte)


def ingest_run_files(
    wh: Store,
    paths: list[Path],
    collection: str,
    *,
    run_id: str | None,
    replace: bool,
    ignore_extra_fields: bool,
    progress: Progress | None,
) -> list[IngestResult]:
    """Ingest run files inside the caller's transaction (see Warehouse.ingest_runs)."""
    spill = Spill()
    try:
        files = prepare_run_files(
            paths, run_id=run_id, ignore_extra_fields=ignore_extra_fields, spill=spill
        )
        blocks = read_blocks(files)  # ir_metadata blocks, checked before anything is stored
        results = ingest_prepared(
            wh,
            files,
            collection,
            spill,
            run_id=run_id,
            replace=replace,
            ignore_extra_fields=ignore_extra_fields,
            progress=progress,
        )
        store_blocks(wh, collection, results, blocks)
        return results
    finally:
        spill.close()


def ingest_prepared(
    wh: Store,
    files: list[RunFile],
    collection: str,
    spill: Spill,
    *,
    run_id: str | None,
    replace: bool,
    ignore_extra_fields: bool,
    progress: Progress | None,
    fill_cache: bool = True,
) -> list[IngestResult]:
    """Ingest prepared run files (:func:`prepare_run_files`) inside the caller's transaction.

    ``fill_cache=False`` leaves the evaluation cache alone (the direct evaluation's
    in-memory warehouse joins directly).
    """
    scanner = Scanner(spill)
    pool = ThreadPoolExecutor(max_workers=READ_AHEAD)
    stored_here: Stored | None = None
    try:
        # Runs already stored are decided first, on their content hash: unchanged, or
        # (with replace) deleted now and ingested again below.
        stored = _stored_runs(wh, collection)
        known = [f for f in files if f.run_id in stored]
        scanner.submit(known, copy=False)
        results: dict[str, IngestResult] = {}
        for file in known:
            digest, lines = stored[file.run_id]
            if file.scanned().sha256 == digest:
                results[file.label] = IngestResult(
                    "run", file.run_id, file.label, "unchanged", lines
                )
                continue
            if not replace:
                raise _clash(file.label, file.run_id, collection)
            _delete_run(wh, collection, file.run_id)
            file.status = "replaced"
        if any(f.status == "replaced" for f in known):
            _drop_unused_pairs(wh)

        # the order in which the general path used to meet the files (by delimiter), so
        # that of several bad files the same one is named
        pending = [f for f in files if f.label not in results]
        todo = [f for batch in group_batches(pending) for f in batch]
        cache = JudgedCache(wh, collection if fill_cache else None)
        module = runreader.reader()
        judged_by = cache.judgments(module) if module is not None else None
        text = sum(_text_bytes(f) for f in todo)  # staged in memory when small, of small files
        small = text <= STAGE_BYTES and text <= STAGE_FILE_BYTES * len(todo)
        stored_here = Stored(wh, collection, module, cache, spill, in_memory=small)

        def read(file: RunFile) -> Prepared | str:
            """Read, rank, key and stage one file (in a worker); the reason if the reader leaves it."""
            if module is None:
                return "no reader"

            def rank(data: bytes, digest: bool = True) -> runreader.Ranked | str:
                return runreader.read_run(
                    module,
                    data,
                    delimiter=file.delimiter,
                    tag=file.first_tag,
                    judged_by=judged_by,
                    ignore_extra_fields=ignore_extra_fields,
                    digest=digest,
                    documents=stored_here.documents,
                    skip=skip_block(data),  # past an ir_metadata block (its lines are comments)
                )

            try:
                if _in_pieces(file):
                    pieces = stored_here.prepare_pieces(file, lambda piece: rank(piece, False))
                    if pieces is not None:
                        return pieces
                data = formats.read_bytes(file.readable)
            except READ_ERRORS:
                return "unreadable"  # the general path names the error
            ranked = rank(data)
            del data
            return ranked if isinstance(ranked, str) else stored_here.prepare(ranked)

        done = len(results)
        if progress:
            progress(done, len(files))
        if module is not None and todo:
            stored_here.load()
            give_back_freed_memory()  # (what building the judgments and the dictionary freed)
        ahead: deque[Future[Prepared | str]] = deque()

        def read_ahead(start: int) -> None:
            # a second file only while the two hold at most READ_BYTES of text between them
            while len(ahead) < READ_AHEAD and start + len(ahead) < len(todo):
                window = todo[start : start + len(ahead) + 1]
                if ahead and sum(_held_bytes(f) for f in window) > READ_BYTES:
                    break
                ahead.append(pool.submit(read, todo[start + len(ahead)]))

        general: list[str] = []
        for index, file in enumerate(todo):
            read_ahead(index)
            prepared = ahead.popleft().result()
            read_ahead(index + 1)
            if isinstance(prepared, Prepared):
                results[file.label] = stored_here.add(file, prepared)
                stored_here.flush(wait=False)
            else:
                # The general path gives keys in SQL after the stored ones: what is staged is
                # stored first, and files read ahead with the old keys are read again after.
                for future in ahead:
                    stored_here.discard(future.result())
                ahead.clear()
                stored_here.flush()
                scanner.submit([file], copy=True)
                (result,) = _ingest_batch(wh, [file], collection, run_id, ignore_extra_fields)
                scanner.release([file])
                if module is not None:
                    stored_here.load()
                results[file.label] = result
                general.append(file.run_id)
            done += 1
            if progress:
                progress(done, len(files))
        stored_here.flush()
        store_float32_order(wh, collection, general)  # (the reader counted its own runs')
        # the collection's excluded documents leave the new runs, ranks closed up (methods §17)
        new = [r.name for r in results.values() if r.status != "unchanged"]
        apply_exclusions(wh, collection, new, refresh=fill_cache)
        cache.finish(general, stored_here.runs)
        return [results[f.label] for f in files]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        if stored_here is not None:
            stored_here.close()
        scanner.close()
