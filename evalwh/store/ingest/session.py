"""The settings of a bulk ingest: DuckDB's memory bounded, rows in any order, freed memory kept.

The warehouse's ingests of qrels and runs enter :func:`bulk_session`; the CLI, whose process
ends with the command, also asks for :func:`keep_freed_memory`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING

import duckdb

if TYPE_CHECKING:
    from evalwh.store.connection import Store

INGEST_MEMORY = "256MiB"  # DuckDB's memory limit while ingesting into a file (bulk_session)


@contextmanager
def bulk_session(wh: Store) -> Iterator[None]:
    """Settings of a bulk ingest: rows in any order, DuckDB's memory bounded.

    Ranks are computed, never taken from the line order, so insertion order does not matter,
    and without it DuckDB materialises and sorts in parallel. A warehouse file's DuckDB
    keeps at most INGEST_MEMORY while ingesting: the rows of the open transaction are
    written to the file as they come, and the staged cache rows and their sort spill to
    DuckDB's temporary directory beyond it, so the peak does not grow with the input.
    Enter it outside the ingest's transaction: a failed statement aborts the transaction,
    and the settings can only be put back after the rollback (inside a caller's own
    transaction they stay until then).
    """
    ((order, limit),) = wh.con.execute(
        "SELECT current_setting('preserve_insertion_order'), current_setting('memory_limit')"
    ).fetchall()
    wh.con.execute("SET preserve_insertion_order = false")
    if wh.path != ":memory:":
        wh.con.execute(f"SET memory_limit = '{INGEST_MEMORY}'")
    try:
        yield
    finally:
        # in an aborted transaction the settings cannot be put back; the rollback does that
        with suppress(duckdb.TransactionException):
            wh.con.execute("SET preserve_insertion_order = $value", {"value": bool(order)})
            wh.con.execute(f"SET memory_limit = '{limit}'")


# What a bulk ingest's process keeps of the memory it frees (keep_freed_memory): glibc's
# mallopt M_TRIM_THRESHOLD and M_MMAP_THRESHOLD (at most 32 MiB), and DuckDB's block allocator.
KEEP_FREED = 256 << 20
KEEP_MMAP_BELOW = 32 << 20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h


def keep_freed_memory(wh: Store) -> None:
    """Let this process reuse the memory a bulk ingest frees instead of handing it back.

    Reading a run file allocates and frees tens of megabytes (its lines, ranks, judged rows,
    DuckDB's blocks for the rows stored). By default glibc gives such blocks back to the
    system when they are freed, and the next file's first touch of every page costs a page
    fault: on L (25 M lines) 1.2 M faults and about 4 s of system time. Kept, the next file
    reuses them: 0.7 M faults, about 1 CPU s less (bench/scale.py measures the whole). The
    settings hold for the rest of the process (DuckDB's block memory, KEEP_FREED, is never
    returned), so the CLI, whose process ends with the command, asks for them; a library
    call does not change its caller's allocator. Elsewhere than glibc only DuckDB's is set.
    """
    import ctypes
    import platform

    if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc":
        with suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None)
            libc.mallopt(_M_MMAP_THRESHOLD, KEEP_MMAP_BELOW)
            libc.mallopt(_M_TRIM_THRESHOLD, KEEP_FREED)
    if wh.path != ":memory:":
        wh.con.execute("SET block_allocator_memory = $size", {"size": f"{KEEP_FREED >> 20}MiB"})


def give_back_freed_memory() -> None:
    """Hand the memory this process has freed back to the system now (glibc's malloc_trim).

    Building the reader's judgments and dictionary frees their batches and the tables of the
    topics that went to the spill file, and keep_freed_memory keeps up to KEEP_FREED of that in
    each of glibc's arenas for reuse; given back once, before the files are read, it does not
    add to the command's peak (XL: 90 MiB). Elsewhere than glibc, nothing.
    """
    import ctypes
    import platform

    if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc":
        with suppress(OSError, AttributeError):
            ctypes.CDLL(None).malloc_trim(0)
