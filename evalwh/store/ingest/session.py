"""The settings of a bulk ingest: DuckDB's memory bounded, rows in any order, freed memory kept.

The warehouse's ingests of qrels and runs enter :func:`bulk_session`; the CLI, whose process
ends with the command, also asks for :func:`keep_freed_memory`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING

import duckdb

if TYPE_CHECKING:
    from evalwh.store.connection import Store

INGEST_MEMORY = "256MiB"  # DuckDB's memory limit while ingesting into a file (bulk_session)


@contextmanager
def bulk_session(wh: Store, *, vacuum: bool = True) -> Iterator[None]:
    """Settings of a bulk ingest: rows in any order, DuckDB's memory bounded.

    Ranks are computed, never taken from the line order, so insertion order does not matter,
    and without it DuckDB materialises and sorts in parallel. A warehouse file's DuckDB
    keeps at most INGEST_MEMORY while ingesting: the rows of the open transaction are
    written to the file as they come, and the staged cache rows and their sort spill to
    DuckDB's temporary directory beyond it, so the peak does not grow with the input.
    ``vacuum=False`` (a run ingest, which ends with :func:`checkpoint` inside it): the
    checkpoint does not merge the row groups the command appended (DuckDB's vacuum,
    ``max_vacuum_tasks``), which read and rewrote them there and took memory growing with the
    command's rows (XL: about 0.3 GiB above the rest at the very end); a command that
    deletes rows asks for it again (:func:`vacuum_at_commit`), so that deleted rows are
    cleaned up as before.
    Enter it outside the ingest's transaction: a failed statement aborts the transaction,
    and the settings can only be put back after the rollback (inside a caller's own
    transaction they stay until then).
    Only the settings it changes are put back: an in-memory warehouse's memory limit is
    never touched, and a file's is put back as :func:`_limit_to_put_back` says.
    """
    ((order, tasks),) = wh.con.execute(
        "SELECT current_setting('preserve_insertion_order'), current_setting('max_vacuum_tasks')"
    ).fetchall()
    bounded = wh.path != ":memory:"
    unvacuumed = bounded and not vacuum
    limit = _limit_to_put_back(wh) if bounded else None
    wh.con.execute("SET preserve_insertion_order = false")
    if bounded:
        wh.con.execute("SET memory_limit = $value", {"value": INGEST_MEMORY})
    if unvacuumed:
        wh.con.execute("SET max_vacuum_tasks = 0")
    try:
        yield
    finally:
        # in an aborted transaction the settings cannot be put back; the rollback does that.
        # A checkpoint after the commit that failed (a full disk) leaves DuckDB's database
        # invalidated: the commit stands in the write-ahead log, and the settings go with the
        # connection (see checkpoint)
        with suppress(duckdb.TransactionException, duckdb.FatalException):
            wh.con.execute("SET preserve_insertion_order = $value", {"value": bool(order)})
            if bounded and limit is None:
                wh.con.execute("RESET memory_limit")
            elif bounded:
                wh.con.execute("SET memory_limit = $value", {"value": limit})
            if unvacuumed:
                wh.con.execute("SET max_vacuum_tasks = $value", {"value": int(tasks)})


# How DuckDB prints a memory limit (StringUtil::BytesToHumanReadableString): whole units and
# the tenths of the next one rounded down, '1.8 GiB' for 2 GB; below a KiB, in bytes.
_PRINTED = re.compile(r"(\d+)(?:\.(\d))? (bytes|KiB|MiB|GiB|TiB|PiB|EiB)")
_POWERS = {"bytes": 0, "KiB": 1, "MiB": 2, "GiB": 3, "TiB": 4, "PiB": 5, "EiB": 6}


def _limit_to_put_back(wh: Store) -> str | None:
    """What puts a file's memory limit back after an ingest: None for DuckDB's default.

    DuckDB says a limit only as it prints it, rounded down ('2GB' reads '1.8 GiB'), and takes
    '1.8 GiB' back as a hair less than 1.8 GiB, which prints '1.7 GiB': putting back the text
    it printed lowered the limit by a tenth of a unit at every ingest (2 GB, 1.7 GiB, 1.6 GiB
    ...). DuckDB's default (never set, or set to what prints the same) is put back with
    RESET, exactly; another limit as the least number of bytes that prints as it did, which
    is at most the limit that was set and prints the same, so that ingest after ingest the
    limit stays where the first put it. A text that does not read as DuckDB prints a limit is
    put back as it is.

    Examples:
        >>> from evalwh.store.connection import Store
        >>> wh = Store(":memory:", described=False)
        >>> _ = wh.con.execute("SET memory_limit = '2GB'")
        >>> _limit_to_put_back(wh)
        '1933574144 bytes'
        >>> _ = wh.con.execute("SET memory_limit = '1933574144 bytes'")
        >>> wh.con.execute("SELECT current_setting('memory_limit')").fetchone()
        ('1.8 GiB',)
    """
    query = "SELECT current_setting('memory_limit')"
    ((printed,),) = wh.con.execute(query).fetchall()
    # the default, as DuckDB prints it (the limit is set to INGEST_MEMORY next anyway)
    wh.con.execute("RESET memory_limit")
    ((default,),) = wh.con.execute(query).fetchall()
    if printed == default:
        return None
    match = _PRINTED.fullmatch(str(printed))
    if match is None:
        return str(printed)
    whole, tenths, power = int(match[1]), int(match[2] or 0), _POWERS[match[3]]
    # tenths of a unit are counted in whole units of the next smaller one, rounded down
    smaller = 1024 ** (power - 1) if power else 0
    return f"{whole * 1024**power + math.ceil(tenths * 1024 / 10) * smaller} bytes"


def checkpoint(wh: Store) -> None:
    """Write what the command committed into the warehouse file now (DuckDB's CHECKPOINT).

    Else DuckDB checkpoints when the connection closes, after bulk_session has put the
    vacuum back. Nothing inside a caller's own transaction, for an in-memory warehouse, after
    a Ctrl-C, or when another transaction of this database is open (the commit stands either
    way, and the connection's close checkpoints as before).

    A checkpoint that fails (a full disk) does not undo the commit: the write-ahead log holds
    it, and the next open of the warehouse writes it into the file (where DuckDB cannot write
    the file, that open fails and says why); the command has done what it said.
    """
    from evalwh.store.connection import Outcome

    if wh.path == ":memory:" or Outcome.interrupted or wh.in_transaction():
        return
    with suppress(duckdb.Error):
        wh.con.execute("CHECKPOINT")


def vacuum_at_commit(wh: Store) -> None:
    """Let the commit's checkpoint vacuum again (a command that deletes rows: bulk_session)."""
    wh.con.execute("RESET max_vacuum_tasks")


# What a bulk ingest's process keeps of the memory it frees (keep_freed_memory): glibc's
# mallopt M_TRIM_THRESHOLD, and DuckDB's block allocator. Blocks of at least MMAP_FROM bytes
# (M_MMAP_THRESHOLD: a file's or a piece's arrays) are mapped on their own and go back when
# freed, so that they leave no holes in the arenas where the long-lived tables live.
KEEP_FREED = 256 << 20
MMAP_FROM = 4 << 20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h


def keep_freed_memory(wh: Store) -> None:
    """Let this process reuse the memory a bulk ingest frees instead of handing it back.

    Reading a run file allocates and frees tens of megabytes (its lines, ranks, judged rows,
    DuckDB's blocks for the rows stored). By default glibc gives such blocks back to the
    system when they are freed, and the next file's first touch of every page costs a page
    fault: on L (25 M lines) 1.2 M faults and about 4 s of system time. Kept, the next file
    reuses them: 0.7 M faults, about 1 CPU s less (bench/scale.py measures the whole). Blocks
    of MMAP_FROM (4 MiB) or more are the exception: kept in glibc's arenas between the small
    tables that stay (the dictionary's and judgments' topics, which come and go from their
    spill files), a large file's pieces left holes that the arenas kept, about 0.2 GiB on XL
    (100 M lines); from 1 MiB on, TREC-8's smaller files took twice the page faults. The
    settings hold for the rest of the process (DuckDB's block memory, KEEP_FREED, is never
    returned), so the CLI, whose process ends with the command, asks for them; a library
    call does not change its caller's allocator. Elsewhere than glibc only DuckDB's is set.
    """
    import ctypes
    import platform

    if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc":
        with suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None)
            libc.mallopt(_M_MMAP_THRESHOLD, MMAP_FROM)
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
