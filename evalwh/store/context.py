"""The evaluation context: the stored rows of one collection, qrels set and option set, read as
the few relations every metric query reads.

The context (``queries/context/*.sql``) creates ``ev_judged`` (the judged rows of every ranked
list, with running counts) and ``ev_pairs`` (one row per evaluated run and topic with m, R and
N), through the warehouse's cache of judged rows (``judged_results``) where it can. The cache
is the store's: an ingest fills it with the same steps
(:func:`evalwh.store.ingest.cache.refresh_cache`), so it holds exactly what the first evaluation
would have written. The metric queries, the averaging and the option groups are the measures'
(:mod:`evalwh.measures.evaluation`).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from evalwh import sql
from evalwh.errors import Choice, NotFoundError

if TYPE_CHECKING:
    from evalwh.store.connection import Store

_CONTEXT = "evalwh.queries.context"
NO_CAP = 2**31 - 1


class Unjudged(Choice):
    """How unjudged retrieved documents are treated."""

    nonrelevant = "nonrelevant"  # assumed non-relevant: the TREC convention
    condensed = "condensed"  # removed from the list (Sakai 2007; trec_eval -J)


class Averaging(Choice):
    """Which topics a run is scored and averaged on (methods §0.4)."""

    default = "default"  # topics with >= 1 relevant document; missing topic = empty ranking
    trec_eval_c = "trec_eval_c"  # every qrels topic, missing topic = empty ranking (trec_eval -c)
    trec_eval_default = "trec_eval_default"  # qrels topics the run retrieved for (trec_eval 9, no -c)


@dataclass(frozen=True)
class Options:
    """Everything besides the measure that changes a number; stored beside every result."""

    qrels_id: str = "default"
    rel: int = 1
    unjudged: Unjudged = Unjudged.nonrelevant
    depth_cap: int | None = None
    float32_ties: bool = False
    averaging: Averaging = Averaging.default
    fill: tuple[str, ...] = ()  # sets whose labels fill the pairs qrels_id did not judge, in order

    @property
    def qrels_label(self) -> str:
        """The label sets an evaluation used: ``A``, or ``A+B+C`` when B and C fill A's holes."""
        return composition_label(self.qrels_id, self.fill)

    def columns(self) -> dict[str, Any]:
        """The options as result columns (enums as their string values).

        A composition is one column: ``qrels_id`` holds its label (``A+B``), so stored results
        of a composed set never mix with those of the plain set.
        """
        out = asdict(self)
        del out["fill"]
        out["qrels_id"] = self.qrels_label
        out["unjudged"] = self.unjudged.value
        out["averaging"] = self.averaging.value
        return out


def composition_label(qrels_id: str, fill: Sequence[str] = ()) -> str:
    """``A`` for one set, ``A+B+C`` for A's labels with its holes filled from B, then C.

    Examples:
        >>> composition_label("depth10", ("full",)), composition_label("default")
        ('depth10+full', 'default')
    """
    return "+".join((qrels_id, *fill))


def check_qrels_sets(wh: Store, collection: str, names: Sequence[str]) -> None:
    """Raise NotFoundError, with a did-you-mean, for a name that is no qrels set of ``collection``."""
    known = [r[0] for r in wh.con.execute(
        "SELECT qrels_id FROM qrels_sets WHERE collection_id = ? ORDER BY qrels_id", [collection]
    ).fetchall()]  # fmt: skip
    for name in names:
        if name not in known:
            folded = {k.lower(): k for k in known}
            close = [folded[c] for c in difflib.get_close_matches(name.lower(), list(folded), n=3, cutoff=0.5)]
            hint = f". Did you mean {' or '.join(close)}?" if close else ""
            listed = ", ".join(known) or "none; ingest qrels first"
            raise NotFoundError(f"collection {collection!r} has no qrels set {name!r}{hint} (it has: {listed})")


def build_context(wh: Store, collection: str, runs: Sequence[str] | None, options: Options) -> None:
    """Create the evaluation relations (ev_runs, ev_qrels, ev_topics, ev_judged, ev_pairs)."""
    wh.require_collection(collection)
    check_qrels_sets(wh, collection, (options.qrels_id, *options.fill))
    kinds = dict(
        wh.con.execute("SELECT qrels_id, kind FROM qrels_sets WHERE collection_id = ?", [collection]).fetchall()
    )
    if runs is not None:
        missing = sorted(set(runs) - set(wh.run_ids(collection)))
        if missing:
            raise NotFoundError(f"collection {collection!r} has no run(s) {missing}")
    # Judged rows come from the cache (rebuilt first for runs whose rows are missing or
    # stale) when the warehouse is writable, ranks are the materialised ones, the threshold is
    # the default one (the cached running counts are for grade >= 1) and the qrels set was
    # ingested: derived sets (pools, reduced samples) are usually evaluated once or twice, and
    # caching each of them would multiply the warehouse's size. A composition (fill) is
    # never cached: the cache is keyed by one set, and its rows are A's alone.
    # A read-only warehouse reads a cache that is complete and valid, and joins directly
    # otherwise (it cannot write the missing entries).
    fingerprint = None
    cacheable = kinds[options.qrels_id] == "ingested" and options.rel == 1 and not options.fill
    if cacheable and not options.float32_ties:
        key = {"collection_id": collection, "qrels_id": options.qrels_id}
        fingerprint = wh.run(sql.query(_CONTEXT, "fingerprint"), key).fetchone()[0]  # type: ignore[index]
    steps = context_steps(collection, runs, options, fingerprint=fingerprint, label_sources=True)
    stale = 0
    for name, params in steps:
        if name == "05_cache_refresh" and not stale:
            continue  # nothing to rebuild (its DELETEs would still scan the whole cache)
        wh.run(sql.query(_CONTEXT, name), params)
        if name == "04_join_stale":
            stale = wh.con.execute("SELECT count(*) FROM ev_join_runs").fetchone()[0]  # type: ignore[index]
            if stale and wh.read_only:
                # the cache lacks some lists and cannot be written: join every list directly
                direct = context_steps(collection, runs, options, fingerprint=None, label_sources=True)
                for direct_name, direct_params in direct[direct.index(("04_join_all", {})) :]:
                    wh.run(sql.query(_CONTEXT, direct_name), direct_params)
                return


def context_steps(
    collection: str,
    runs: Sequence[str] | None,
    options: Options,
    *,
    fingerprint: str | None = None,
    label_sources: bool = False,
) -> list[tuple[str, dict[str, Any]]]:
    """The context files (``queries/context``) to run, in order, each with its parameters.

    Shared by DuckDB (:func:`build_context`) and the Spark path (:mod:`evalwh.spark`). With a
    qrels ``fingerprint`` the judged rows go through the warehouse's cache (judged_results);
    without one they are joined directly. A composition (``options.fill``) reads its labels
    from 01_qrels_composed.sql and is joined directly (never given a fingerprint). With
    ``label_sources`` a last step says which provenance source labelled each judged row
    (ev_judged_sources, read by ``A_p(source=...)``).
    """
    cap = options.depth_cap if options.depth_cap is not None else NO_CAP
    keep_empty = options.averaging is not Averaging.default
    condensed = options.unjudged is Unjudged.condensed
    key = {"collection_id": collection, "qrels_id": options.qrels_id}
    steps: list[tuple[str, dict[str, Any]]] = [
        (
            "00_runs",
            {
                **key,
                "rel": options.rel,
                "depth_cap": cap,
                "condensed": condensed,
                "runs": list(runs) if runs is not None else None,
            },
        ),
        ("01_qrels_composed", {"qrels_ids": [options.qrels_id, *options.fill]})
        if options.fill
        else ("01_qrels", {**key, "rel": options.rel}),
        (
            "02_topics",
            {**key, "fill": list(options.fill) or None, "keep_topics_without_relevant": keep_empty},
        ),
        ("03_ranked_float32" if options.float32_ties else "03_ranked", {}),
    ]
    if fingerprint is not None:
        steps += [
            ("04_join_stale", {"fingerprint": fingerprint}),
            ("04_judged_rows", {}),
            ("05_cache_refresh", {"fingerprint": fingerprint}),
            ("05_source_cache", {}),
        ]
    else:
        steps += [("04_join_all", {}), ("04_judged_rows", {}), ("05_source_direct", {})]
    steps.append(("06_judged", {}))
    steps.append(
        (
            "08_pairs",
            {
                "collection_id": collection,
                "depth_cap": cap,
                "condensed": condensed,
                "only_retrieved_topics": options.averaging is Averaging.trec_eval_default,
            },
        )
    )
    if label_sources:
        steps.append(("07_sources_composed", {}) if options.fill else ("07_sources", {}))
    return steps
