"""The runs a collection stores, as an ingest keeps them: looked up, added, deleted, refused.

A run stored with the same content (its sha256) is left unchanged; one stored with different
content is refused (:func:`_clash`) or, with ``replace``, deleted (:func:`_delete_run`) and
ingested again. Every way in adds its runs' entries with :func:`insert_runs`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalwh import sql
from evalwh.errors import ReplaceError
from evalwh.store.ingest.session import vacuum_at_commit

if TYPE_CHECKING:
    from evalwh.store.connection import Store

_INGEST = "evalwh.queries.ingest"


def _stored_runs(wh: Store, collection: str) -> dict[str, tuple[str, int]]:
    """sha256 and line count of each stored run of the collection."""
    rows = wh.con.execute(
        "SELECT run_id, sha256, line_count FROM runs WHERE collection_id = ?", [collection]
    ).fetchall()
    return {run_id: (digest, lines) for run_id, digest, lines in rows}


def insert_runs(wh: Store, rows: list[list[Any]]) -> None:
    """Add runs rows: (collection_id, run_id, tag, source_file, sha256, line_count) each.

    Rows of eight also give ``float32_lists`` and ``float32_first_rank`` (schema/021), as the
    reader counted them; else they stay NULL (unknown) until :func:`store_float32_order`.
    One statement over the columns as lists (executemany costs a round trip per row).
    """
    if rows:
        names = ("c", "r", "t", "s", "h", "n", "l", "f")[: len(rows[0])]
        columns = zip(names, zip(*rows, strict=True), strict=True)
        targets = (
            "collection_id", "run_id", "tag", "source_file", "sha256", "line_count",
            "float32_lists", "float32_first_rank",
        )[: len(names)]
        wh.con.execute(
            f"INSERT INTO runs ({', '.join(targets)})"
            f" SELECT {', '.join(f'unnest(${name})' for name in names)}",
            {name: list(values) for name, values in columns},
        )


def store_float32_order(wh: Store, collection: str, run_ids: list[str]) -> None:
    """Store, for runs stored without the reader, where float32 scores would reorder them.

    The reader counts it as it ranks (evalwh/io/_runlines.c); for the runs the general way
    or a DataFrame stored, the reference query ``float32_order.sql`` finds it over their
    rows, inside the ingest's transaction: 0 lists (and no rank) where nothing trades places.
    """
    if not run_ids:
        return
    found = wh.df(
        sql.query("evalwh.queries.reports", "float32_order"),
        {"collection_id": collection, "runs": list(run_ids)},
    )
    wh.con.execute(
        "UPDATE runs SET float32_lists = 0, float32_first_rank = NULL"
        " WHERE collection_id = $collection AND list_contains($runs, run_id)",
        {"collection": collection, "runs": list(run_ids)},
    )
    if not found.empty:
        wh.con.execute(
            "UPDATE runs AS r SET float32_lists = f.lists, float32_first_rank = f.first_rank"
            " FROM (SELECT unnest($runs) AS run_id, unnest($lists) AS lists,"
            " unnest($first) AS first_rank) AS f"
            " WHERE r.collection_id = $collection AND r.run_id = f.run_id",
            {
                "collection": collection,
                "runs": found["run_id"].tolist(),
                "lists": [int(v) for v in found["lists"]],
                "first": [int(v) for v in found["first_rank"]],
            },
        )


def _delete_run(wh: Store, collection: str, run_id: str) -> None:
    """Delete a stored run: its rows and cache by key, then its lists, builds and entry.

    Its (topic, document) pairs are noted: :func:`_drop_unused_pairs` drops, once the
    command's deletions are done, those no other run's line refers to.
    """
    key = {"collection_id": collection, "run_id": run_id}
    wh.run(sql.query(_INGEST, "delete_run"), key)
    vacuum_at_commit(wh)  # (the deleted rows are cleaned up at the commit, as before)


def _drop_unused_pairs(wh: Store) -> None:
    """Drop the pairs of the runs deleted by this command that no line refers to any more.

    Before any new key is given (the reader's dictionary is loaded after it).
    """
    wh.run(sql.query(_INGEST, "drop_unused_pairs"))


def _clash(label: str, run_id: str, collection: str) -> ReplaceError:
    return ReplaceError(
        label,
        f"run {run_id!r} already exists in collection {collection!r} with different content",
        "ingest runs",
    )
