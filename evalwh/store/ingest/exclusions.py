"""Excluded documents (methods §17): stored per collection with their source, applied to every run.

A collection's exclusions come from three sources, each a row of ``exclusion_sources``
(schema/024_exclusions.sql) and its pairs in ``excluded_documents``:

* a qrels set's lines labelled ``-100`` (ir_datasets' and BRIGHT's convention): they are
  not grades; the qrels ingest moves them out of the set and here (:func:`take_from_qrels`);
* an exclusion file, ``topic docid`` a line (:mod:`evalwh.io.exclusions`;
  :func:`add_file`);
* the rule ``identical_ids``: a document whose id equals its topic's id (BEIR's ArguAna and
  Quora; ir_datasets' ``ignore_identical_ids``; :func:`set_identical_ids`).

:func:`apply` removes the excluded documents from runs' ranked lists, the ranks closing up
(``queries/ingest/apply_exclusions.sql``), keeps what it removed in ``run_exclusions`` (each
run's losses, :func:`losses`), and rebuilds the evaluation cache of the runs it changed. Every
ingest of runs calls it for the new runs, every change of a source for all runs, so every
evaluation reads filtered runs, whichever path it takes. A collection without exclusions
costs one count.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from evalwh import sql
from evalwh.errors import EvalWhError, ReplaceError
from evalwh.store.ingest.bookkeeping import store_float32_order
from evalwh.store.ingest.cache import refresh_cache

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.store.connection import Store

_INGEST = "evalwh.queries.ingest"
EXCLUDED_LABEL = -100.0  # a qrels label that marks an excluded document, not a grade
IDENTICAL_IDS = "identical_ids"


def active(wh: Store, collection: str) -> bool:
    """Whether the collection has exclusions, or runs from which exclusions removed rows."""
    ((count,),) = wh.con.execute(
        "SELECT (SELECT count(*) FROM exclusion_sources WHERE collection_id = $c)"
        " + (SELECT count(*) FROM run_exclusions WHERE collection_id = $c)",
        {"c": collection},
    ).fetchall()
    return bool(count)


def apply(wh: Store, collection: str, runs: list[str] | None = None, *, refresh: bool = True) -> list[str]:
    """Filter the runs (None: all of the collection's) by the exclusions as they are now.

    Returns the runs whose lists changed; their cached judged rows are rebuilt for every
    ingested qrels set (``refresh=False``: only deleted, for an in-memory evaluation that
    joins directly) and their float32 order counted again.
    """
    if (runs is not None and not runs) or not active(wh, collection):
        return []
    wh.run(sql.query(_INGEST, "apply_exclusions"), {"collection_id": collection, "runs": runs})
    changed = [r for (r,) in wh.con.execute("SELECT DISTINCT run_id FROM ex_lists ORDER BY run_id").fetchall()]
    wh.con.execute("DROP TABLE ex_lists")
    if not changed:
        return []
    key = {"c": collection, "runs": changed}
    wh.con.execute(
        "DELETE FROM judged_results WHERE build_key IN (SELECT build_key FROM judged_builds"
        " WHERE collection_id = $c AND list_contains($runs, run_id))",
        key,
    )
    wh.con.execute("DELETE FROM judged_builds WHERE collection_id = $c AND list_contains($runs, run_id)", key)
    store_float32_order(wh, collection, changed)
    if refresh:
        sets = wh.con.execute(
            "SELECT qrels_id FROM qrels_sets WHERE collection_id = ? AND kind = 'ingested' ORDER BY qrels_id",
            [collection],
        ).fetchall()
        for (qrels_id,) in sets:
            refresh_cache(wh, collection, qrels_id, changed)
    return changed


def take_from_qrels(wh: Store, collection: str, qrels_id: str) -> int:
    """Move the staged qrels lines labelled -100 (``staged_qrels``) to ``staged_excluded``.

    Returns their number. Called before the set is compared with a stored one and stored:
    the set holds grades only; :func:`store_from_qrels` stores the pairs once the set is.
    """
    wh.con.execute(
        "CREATE OR REPLACE TEMP TABLE staged_excluded AS SELECT DISTINCT query_id, doc_id FROM staged_qrels"
        " WHERE TRY_CAST(relevance_text AS DOUBLE) = $label",
        {"label": EXCLUDED_LABEL},
    )
    ((count,),) = wh.con.execute("SELECT count(*) FROM staged_excluded").fetchall()
    if count:
        wh.con.execute(
            "DELETE FROM staged_qrels WHERE TRY_CAST(relevance_text AS DOUBLE) = $label", {"label": EXCLUDED_LABEL}
        )
    return int(count)


def same_as_stored(wh: Store, collection: str, qrels_id: str) -> bool:
    """Whether ``staged_excluded`` holds the pairs the qrels set's -100 lines gave before."""
    ((differing,),) = wh.con.execute(
        "WITH stored AS (SELECT query_id, doc_id FROM excluded_documents"
        " WHERE collection_id = $c AND origin = 'qrels' AND source = $q),"
        " staged AS (SELECT query_id, doc_id FROM staged_excluded)"
        " SELECT count(*) FROM ((FROM stored EXCEPT FROM staged) UNION ALL (FROM staged EXCEPT FROM stored))",
        {"c": collection, "q": qrels_id},
    ).fetchall()
    return int(differing) == 0


def store_from_qrels(wh: Store, collection: str, qrels_id: str, sha256: str) -> bool:
    """Store ``staged_excluded`` as the exclusions of the qrels set (replacing its old ones).

    Returns whether the collection's exclusions changed (the caller then applies them).
    """
    ((before,),) = wh.con.execute(
        "SELECT count(*) FROM exclusion_sources WHERE collection_id = ? AND origin = 'qrels' AND source = ?",
        [collection, qrels_id],
    ).fetchall()
    ((count,),) = wh.con.execute("SELECT count(*) FROM staged_excluded").fetchall()
    changed = not same_as_stored(wh, collection, qrels_id) or bool(before) != bool(count)
    _delete_source(wh, collection, "qrels", qrels_id)
    if count:
        wh.con.execute(
            "INSERT INTO excluded_documents SELECT $c, 'qrels', $q, query_id, doc_id FROM staged_excluded"
            " ORDER BY query_id, doc_id",
            {"c": collection, "q": qrels_id},
        )
        wh.con.execute(
            "INSERT INTO exclusion_sources (collection_id, origin, source, sha256, pairs)"
            " VALUES (?, 'qrels', ?, ?, ?)",
            [collection, qrels_id, sha256, count],
        )
    wh.con.execute("DROP TABLE IF EXISTS staged_excluded")
    return changed


def drop_qrels_exclusions(wh: Store, collection: str, qrels_id: str) -> None:
    """Forget the exclusions a qrels set gave (the set is being replaced)."""
    _delete_source(wh, collection, "qrels", qrels_id)


def _delete_source(wh: Store, collection: str, origin: str, source: str) -> None:
    key = [collection, origin, source]
    wh.con.execute("DELETE FROM excluded_documents WHERE collection_id = ? AND origin = ? AND source = ?", key)
    wh.con.execute("DELETE FROM exclusion_sources WHERE collection_id = ? AND origin = ? AND source = ?", key)


def add_file(
    wh: Store, path: str | os.PathLike[str], collection: str, *, name: str | None = None, replace: bool = False
) -> tuple[str, int, list[str]]:
    """Store an exclusion file's pairs as a source of the collection and apply them to its runs.

    The source is named ``name`` (default: the file's name as given). Inside the caller's
    transaction. Returns the status (``added``, ``replaced`` or ``unchanged``), the number of
    pairs, and the runs whose lists changed.

    Raises:
        IngestError: naming file, line and problem.
        ReplaceError: a source of that name holds other pairs (``replace`` replaces it).
    """
    import pandas as pd

    from evalwh.io import formats
    from evalwh.io.exclusions import read_exclusions

    given = Path(path)
    label = name or formats.label(given)
    found = read_exclusions(given, name=label)
    stored = wh.con.execute(
        "SELECT sha256 FROM exclusion_sources WHERE collection_id = ? AND origin = 'file' AND source = ?",
        [collection, label],
    ).fetchall()
    if stored and stored[0][0] == found.sha256:
        return "unchanged", len(found), []
    if stored and not replace:
        raise ReplaceError(
            label, f"exclusion file {label!r} of collection {collection!r} is already stored with other pairs",
            "exclusions add",
        )  # fmt: skip
    wh.ensure_collection(collection)
    _delete_source(wh, collection, "file", label)
    frame = pd.DataFrame({"query_id": found.query_id, "doc_id": found.doc_id})
    wh.con.register("staged_exclusion_file", frame)
    try:
        wh.con.execute(
            "INSERT INTO excluded_documents SELECT $c, 'file', $s, query_id, doc_id FROM staged_exclusion_file",
            {"c": collection, "s": label},
        )
    finally:
        wh.con.unregister("staged_exclusion_file")
    wh.con.execute(
        "INSERT INTO exclusion_sources (collection_id, origin, source, sha256, pairs) VALUES (?, 'file', ?, ?, ?)",
        [collection, label, found.sha256, len(found)],
    )
    return ("replaced" if stored else "added"), len(found), apply(wh, collection)


def set_identical_ids(wh: Store, collection: str, on: bool = True) -> list[str]:
    """Turn the rule identical_ids on (or off) for the collection and apply it to its runs."""
    wh.ensure_collection(collection)
    _delete_source(wh, collection, "rule", IDENTICAL_IDS)
    if on:
        wh.con.execute(
            "INSERT INTO exclusion_sources (collection_id, origin, source, sha256, pairs) VALUES (?, 'rule', ?, NULL, 0)",
            [collection, IDENTICAL_IDS],
        )
    return apply(wh, collection)


def remove_source(wh: Store, collection: str, source: str) -> list[str]:
    """Remove an exclusion file or the rule by name; the rows it removed return to their runs.

    A qrels set's -100 lines stay with the set (replace the set to change them).
    """
    rows = wh.con.execute(
        "SELECT origin FROM exclusion_sources WHERE collection_id = ? AND source = ? AND origin <> 'qrels'",
        [collection, source],
    ).fetchall()
    if not rows:
        qrels = wh.con.execute(
            "SELECT 1 FROM exclusion_sources WHERE collection_id = ? AND source = ? AND origin = 'qrels'",
            [collection, source],
        ).fetchall()
        if qrels:
            raise EvalWhError(
                f"the exclusions of qrels set {source!r} are its lines labelled -100: they go with the set "
                "(ingest the set again, without them, with --replace)"
            )
        known = sources(wh, collection)
        listed = ", ".join(f"{o} {s}" for o, s in zip(known["origin"], known["source"], strict=True)) or "none"
        raise EvalWhError(
            f"collection {collection!r} has no exclusion file or rule named {source!r} (it has: {listed})"
        )
    _delete_source(wh, collection, rows[0][0], source)
    return apply(wh, collection)


def sources(wh: Store, collection: str) -> pd.DataFrame:
    """The collection's sources of exclusions: ``origin, source, pairs, sha256, created_at``."""
    return wh.con.execute(
        "SELECT origin, source, pairs, sha256, created_at FROM exclusion_sources WHERE collection_id = ?"
        " ORDER BY origin, source",
        [collection],
    ).df()


def losses(wh: Store, collection: str, *, per_topic: bool = False, runs: list[str] | None = None) -> pd.DataFrame:
    """What the exclusions removed from each run (``queries/reports/exclusion_losses.sql``).

    One row per run of the collection (per run and topic with ``per_topic``, topics where
    something was removed): ``run_id, [query_id,] removed, removed_top10, best_rank, lines``
    (documents removed, those of them in the top 10 as given, the best rank as given of a
    removed document, and the lines the run kept); runs that lost nothing show 0.
    """
    return wh.df(
        sql.query("evalwh.queries.reports", "exclusion_losses_topics" if per_topic else "exclusion_losses"),
        {"collection_id": collection, "runs": runs},
    )



def losses_lines(frame: pd.DataFrame) -> list[str]:
    """One line per run that lost documents to the exclusions (a :func:`losses` frame).

    Examples:
        >>> import pandas as pd
        >>> frame = pd.DataFrame({"run_id": ["a", "b"], "removed": [3, 0], "removed_top10": [1, 0],
        ...                       "best_rank": [2, None], "topics": [2, 0], "lines": [97, 100]})
        >>> losses_lines(frame)
        ['exclusions removed 3 documents from run a (1 in its top 10, best rank 2) in 2 topics; 1 run lost nothing']
    """
    lines = []
    lost = frame[frame["removed"] > 0]
    for row in lost.itertuples(index=False):
        lines.append(
            f"exclusions removed {int(row.removed):,} document{'s' if row.removed != 1 else ''} from run"
            f" {row.run_id} ({int(row.removed_top10):,} in its top 10, best rank {int(row.best_rank)})"
            f" in {int(row.topics):,} topic{'s' if row.topics != 1 else ''}"
        )
    untouched = len(frame) - len(lost)
    if lines and untouched:
        lines[-1] += f"; {untouched:,} run{'s' if untouched != 1 else ''} lost nothing"
    return lines


def summary(wh: Store, collection: str) -> str | None:
    """One sentence on the collection's exclusions and what they removed (None without any).

    For the report's provenance: the sources, then the lines removed from the runs.
    """
    if not active(wh, collection):
        return None
    found = sources(wh, collection)
    named = []
    for origin, source, pairs in zip(found["origin"], found["source"], found["pairs"], strict=True):
        if origin == "rule":
            named.append("the rule identical_ids (a document whose id is its topic's id)")
        else:
            what = "-100 lines of qrels set" if origin == "qrels" else "file"
            named.append(f"{int(pairs):,} pairs from {what} {source}")
    lost = losses(wh, collection)
    removed, top = int(lost["removed"].sum()), int(lost["removed_top10"].sum())
    runs = int((lost["removed"] > 0).sum())
    head = "; ".join(named) if named else "none now"
    return (
        f"{head}. Removed from the runs before ranking: {removed:,} lines of {runs:,} of"
        f" {len(lost):,} runs ({top:,} from a run's top 10), listed by evalwh exclusions losses."
    )


def labelled_grades(wh: Store, collection: str, qrels_id: str) -> int:
    """How many of a stored set's judgments are labelled -100 (a set stored as grades, before
    evalwh read that label as an excluded document, or ingested without ``exclusion_labels``)."""
    ((count,),) = wh.con.execute(
        "SELECT count(*) FROM qrels WHERE collection_id = ? AND qrels_id = ? AND relevance = ?",
        [collection, qrels_id, EXCLUDED_LABEL],
    ).fetchall()
    return int(count)
