"""Ranks from file order: trec_eval's ranking of run lines that are already nearly in it.

``trec_ranked`` (schema/001_core.sql) defines the order: score descending, then doc_id
descending byte-wise. Run files are almost always written in score order, so their ranking
is already on disk, and sorting 25 million lines again costs more than everything else an
evaluation does. This module *verifies* the order instead, in a few vectorised passes over a
batch of lines (numpy and pyarrow, no Python loop over lines), and sorts only what is not in
order yet: documents with tied scores, and only in tie groups that hold a judged document.

A file is refused (and evaluated by the general path: the ingest's staging, checks and
``trec_ranked``) when one of its topics is not one contiguous block of lines, when a score
rises within a topic, or when a topic holds a document twice. Nothing here decides a rank
that the general path would decide otherwise: ``tests/test_direct.py`` checks that on
random files, ties and refusals included.

Input is one batch of lines as arrays in file order: the file index, topic, document, score
and a 64-bit hash of the document (any hash: equal hashes are only candidates, compared
exactly). Blocks are the (file, topic) runs of consecutive lines.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


@dataclass(frozen=True)
class Blocks:
    """The (file, topic) blocks of a batch: consecutive lines of one file and topic.

    Attributes:
        start: Row index of each block's first line, ascending.
        of_row: Block index of every row.
        file: File index of each block.
    """

    start: np.ndarray
    of_row: np.ndarray
    file: np.ndarray

    @property
    def sizes(self) -> np.ndarray:
        """Lines per block (the number retrieved for that run and topic)."""
        return np.diff(np.append(self.start, len(self.of_row)))


def find_blocks(file_index: np.ndarray, query_id: pa.Array) -> Blocks:
    """Split a batch into blocks where the file or the topic changes from one line to the next."""
    n = len(file_index)
    first = np.ones(n, dtype=bool)
    if n > 1:
        changed = pc.not_equal(query_id.slice(1), query_id.slice(0, n - 1))
        first[1:] = (file_index[1:] != file_index[:-1]) | changed.to_numpy(zero_copy_only=False)
    start = np.flatnonzero(first)
    return Blocks(start=start, of_row=np.cumsum(first) - 1, file=file_index[start])


def sort_keys(score: np.ndarray, float32: bool) -> np.ndarray:
    """The scores as the ranking compares them: as given, or rounded to float32 (trec_eval <= 9.0.8)."""
    return score.astype(np.float32) if float32 else score


def refused_files(
    file_index: np.ndarray,
    query_id: pa.Array,
    doc_id: pa.Array,
    key: np.ndarray,
    doc_hash: np.ndarray,
    blocks: Blocks,
) -> set[int]:
    """Files whose lines are not ranked by file order: split topics, rising scores, duplicates."""
    refused: set[int] = set()
    # a topic in two blocks of one file: the (file, topic) pairs of the blocks repeat
    heads = pa.table({"file": blocks.file, "query_id": query_id.take(pa.array(blocks.start))})
    counts = heads.group_by(["file", "query_id"]).aggregate([([], "count_all")])
    split = pc.greater(counts["count_all"], 1)
    refused.update(pc.filter(counts["file"], split).to_pylist())
    # a score above the one before it, within a block
    inside = np.ones(len(key), dtype=bool)
    inside[blocks.start] = False
    rising = np.zeros(len(key), dtype=bool)
    rising[1:] = inside[1:] & (key[1:] > key[:-1])
    refused.update(np.unique(file_index[rising]).tolist())
    # a document twice in a block: lines whose (block, hash) share a bucket are candidates,
    # compared exactly. Counting buckets is one linear pass (no sort of every line); with
    # 2**22 buckets for a batch of two million lines about two lines in five is a candidate,
    # and only those are sorted, on the full 64-bit key, to find the real candidates.
    keyed = doc_hash ^ (blocks.of_row.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15))
    bucket = (keyed >> np.uint64(42)).astype(np.int64)
    crowded = np.bincount(bucket, minlength=1 << 22) > 1
    maybe = np.flatnonzero(crowded[bucket])
    ordered = np.sort(keyed[maybe])
    repeated = ordered[1:][ordered[1:] == ordered[:-1]]
    if len(repeated):
        rows = maybe[np.isin(keyed[maybe], repeated)]
        pairs = pa.table({"block": blocks.of_row[rows], "doc_id": doc_id.take(pa.array(rows))})
        counted = pairs.group_by(["block", "doc_id"]).aggregate([([], "count_all")])
        twice = pc.filter(counted["block"], pc.greater(counted["count_all"], 1)).to_numpy()
        refused.update(np.unique(blocks.file[twice]).tolist())
    return refused


def judged_ranks(rows: np.ndarray, doc_id: pa.Array, key: np.ndarray, blocks: Blocks) -> np.ndarray:
    """The trec_eval rank of each of ``rows`` (ascending row indices of judged lines).

    In a verified block the rank is the position in the block, except inside a group of
    tied scores, whose documents are ordered by doc_id descending (byte-wise, as
    ``ORDER BY doc_id DESC`` in DuckDB). Only groups that hold one of ``rows`` are sorted.
    """
    n = len(key)
    position = rows - blocks.start[blocks.of_row[rows]] + 1
    tied = np.zeros(n, dtype=bool)  # same score as the line above, same block
    tied[1:] = key[1:] == key[:-1]
    tied[blocks.start] = False
    head = np.zeros(n, dtype=bool)  # first line of a tie group
    head[:-1] = tied[1:]
    head &= ~tied
    in_group = tied | head
    if not in_group[rows].any():
        return position
    group = np.maximum.accumulate(np.where(head, np.arange(n), 0))  # the head's row, per row
    wanted = np.zeros(n, dtype=bool)
    wanted[group[rows[in_group[rows]]]] = True
    members = np.flatnonzero(in_group & wanted[group])
    table = pa.table({"group": group[members], "doc_id": doc_id.take(pa.array(members))})
    order = pc.sort_indices(table, sort_keys=[("group", "ascending"), ("doc_id", "descending")])
    ranked = members[order.to_numpy()]
    heads = group[ranked]
    first = np.searchsorted(heads, heads, side="left")  # index in `ranked` of the group's head
    rank_of = np.zeros(n, dtype=np.int64)
    rank_of[ranked] = heads - blocks.start[blocks.of_row[heads]] + 1 + (np.arange(len(ranked)) - first)
    grouped = in_group[rows]
    position[grouped] = rank_of[rows[grouped]]
    return position


def running_counts(block: np.ndarray, place: np.ndarray, relevant: np.ndarray) -> tuple[np.ndarray, ...]:
    """Order judged rows by rank and count judged and relevant rows at or above each, per block.

    ``place`` is a row's position in the batch once every block is in rank order (block
    start + rank - 1): unique, so one argsort orders the rows. Returns that permutation, then
    judged_so_far and relevant_so_far in its order (the running counts of
    ``queries/context/04_judged_rows.sql``).
    """
    order = np.argsort(place, kind="stable")
    block = block[order]
    relevant = relevant[order].astype(np.int64)
    new = np.ones(len(block), dtype=bool)
    new[1:] = block[1:] != block[:-1]
    first = np.flatnonzero(new)
    segment = np.cumsum(new) - 1
    judged = np.arange(1, len(block) + 1) - first[segment]
    cumulative = np.cumsum(relevant)
    before = cumulative[first] - relevant[first]
    return order, judged, cumulative - before[segment]
