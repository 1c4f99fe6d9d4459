"""Meta-analysis of systems across a warehouse's collections (the warehouse side of ``evalwh meta``).

Per-topic scores come from :func:`evalwh.measures.evaluation.evaluate`, one call per
collection; the statistics are the pure :func:`evalwh.stats.meta.meta_analysis`, which takes
the same long frame from any other source (methods §18).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from evalwh.errors import EvalWhError, NotFoundError

if TYPE_CHECKING:
    from evalwh.stats.meta import MetaAnalysis
    from evalwh.store.connection import Store

PathLike = str | os.PathLike[str]


class MetaAnalyses:
    """The Warehouse's meta-analysis job (a mixin of :class:`evalwh.Warehouse`; ``evalwh meta``)."""

    def meta_analysis(
        self, measures: str | Iterable[str], run_a: str | None = None, run_b: str | None = None, *,
        collections: Sequence[str] = (), baseline: str | None = None, runs: Sequence[str] = (),
        systems: Mapping[tuple[str, str], str] | PathLike | None = None, effect: str = "smd", tau2: str = "dl",
        interval: str = "z", alpha: float = 0.05, qrels_id: str | None = None,
    ) -> MetaAnalysis:  # fmt: skip
        """Pool one system's effect over another across collections: ``evalwh meta``.

        Each collection contributes the standardised paired effect of ``run_a`` over
        ``run_b`` (or of each system over ``baseline``) on its own topics; the effects are
        pooled with fixed-effect and random-effects models, with the heterogeneity between
        collections (methods §18, :func:`evalwh.stats.meta.meta_analysis`).

        Args:
            measures: Measure specs, each analysed on its own.
            run_a, run_b: The systems compared (A over B); or give ``baseline``.
            collections: The collections (default: every collection with runs).
            baseline: Every other system found in two of the baseline's collections over it
                (those of ``runs`` when given).
            systems: Which run is which system: ``{(collection_id, run_id): system}`` or a
                mapping file (:func:`evalwh.io.systems.read_systems`); default: the run ids.
            effect: ``smd`` (standardised mean difference), ``dz`` or ``raw``.
            tau2: ``dl`` (DerSimonian-Laird), ``pm`` (Paule-Mandel) or ``reml``.
            interval: ``z`` (normal) or ``hksj`` (Hartung-Knapp-Sidik-Jonkman).
            alpha: 1 - the intervals' coverage, and the level of the p-values' verdicts.
            qrels_id: The qrels set of every collection (None: each collection's default set).

        Returns:
            The :class:`~evalwh.stats.meta.MetaAnalysis`: ``effects`` (one row per collection),
            ``pooled`` (fixed and random) and ``heterogeneity`` DataFrames.
        """
        from evalwh.methods.meta import meta_collections

        if systems is not None and not isinstance(systems, Mapping):
            from evalwh.io.systems import read_systems

            systems = read_systems(systems)
        return meta_collections(
            self, [measures] if isinstance(measures, str) else list(measures), collections=list(collections), run_a=run_a, run_b=run_b, baseline=baseline,
            runs=list(runs), systems=systems, effect=effect, tau2=tau2, interval=interval, alpha=alpha, qrels_id=qrels_id,
        )  # fmt: skip



def _system_runs(
    wh: Store, collections: Sequence[str], systems: Mapping[tuple[str, str], str]
) -> dict[str, dict[str, str]]:
    """``collection -> {system: run_id}`` for every stored run (a run not mapped is its own system)."""
    found: dict[str, dict[str, str]] = {}
    for collection in collections:
        named: dict[str, str] = {}
        for run in wh.run_ids(collection):
            system = systems.get((collection, run), run)
            if system in named:
                raise EvalWhError(
                    f"meta: runs {named[system]!r} and {run!r} of {collection!r} are both system {system!r}; "
                    "map one of them to another system in --systems"
                )
            named[system] = run
        found[collection] = named
    unknown = sorted(f"{c}/{r}" for c, r in systems if c in found and r not in found[c].values())
    if unknown:
        raise NotFoundError(f"meta: the system mapping names runs the warehouse does not have: {', '.join(unknown[:5])}")
    return found


def meta_collections(
    wh: Store, measures: Sequence[str], *, collections: Sequence[str] = (), run_a: str | None = None,
    run_b: str | None = None, baseline: str | None = None, runs: Sequence[str] = (),
    systems: Mapping[tuple[str, str], str] | None = None, effect: str = "smd", tau2: str = "dl",
    interval: str = "z", alpha: float = 0.05, qrels_id: str | None = None,
) -> MetaAnalysis:  # fmt: skip
    """Meta-analyse systems over collections of the warehouse.

    Args:
        measures: Measure specs; each is analysed on its own.
        collections: The collections (default: every collection with runs).
        run_a, run_b: One comparison, A over B (systems, after the mapping).
        baseline: Instead: every system found in at least two collections with the baseline
            (or those of ``runs``) over the baseline.
        systems: ``(collection_id, run_id) -> system`` (:func:`evalwh.io.systems.read_systems`).
        effect, tau2, interval, alpha: :func:`evalwh.stats.meta.meta_analysis`'s.
        qrels_id: The qrels set of every collection (None: each one's default, :meth:`Store.qrels_set`).
    """
    import pandas as pd

    from evalwh.measures.evaluation import evaluate
    from evalwh.stats.meta import meta_analysis

    names = list(dict.fromkeys(collections))
    if not names:
        names = [c for c in wh.collections()["collection_id"] if wh.run_ids(c)]
    for name in names:
        wh.require_collection(name)
    if len(names) < 2:
        raise EvalWhError(f"meta: {len(names)} collection(s) with runs; a meta-analysis pools at least two (-c C1 -c C2)")
    mapping = dict(systems or {})
    by_collection = _system_runs(wh, names, mapping)
    if (run_a is None) != (run_b is None):
        raise EvalWhError("meta: give two systems (A B) or --baseline")
    if run_a is not None and baseline is not None:
        raise EvalWhError("meta: give two systems (A B) or --baseline, not both")
    if run_a is not None and run_b is not None:
        comparisons = [(run_a, run_b)]
    elif baseline is not None:
        with_baseline = [c for c in names if baseline in by_collection[c]]
        if len(with_baseline) < 2:
            raise NotFoundError(f"meta: baseline {baseline!r} is in {len(with_baseline)} of the collections; it must be in two")
        present: dict[str, int] = {}
        for collection in with_baseline:
            for system in by_collection[collection]:
                present[system] = present.get(system, 0) + 1
        if runs:
            missing = [r for r in runs if present.get(r, 0) < 2]
            if missing:
                raise NotFoundError(f"meta: {', '.join(missing)} not in two of the collections that have {baseline!r}")
            others = list(dict.fromkeys(runs))
        else:
            others = sorted(s for s, n in present.items() if n >= 2 and s != baseline)
        if not others:
            raise NotFoundError(f"meta: no system besides {baseline!r} is in two of its collections")
        comparisons = [(system, baseline) for system in others]
    else:
        raise EvalWhError("meta: give two systems (A B) or --baseline")
    wanted = {s for pair in comparisons for s in pair}
    for system in wanted:
        if not any(system in by_collection[c] for c in names):
            raise NotFoundError(f"meta: no collection has a run of system {system!r}")

    frames = []
    for collection in names:
        run_ids = [by_collection[collection][s] for s in sorted(wanted) if s in by_collection[collection]]
        if len(run_ids) < 2:
            continue
        scores = evaluate(wh, list(measures), collection=collection, runs=run_ids, per_query=True,
                          qrels_id=qrels_id or wh.qrels_set(collection))  # fmt: skip
        scores = scores[scores["query_id"] != "all"] if "query_id" in scores else scores
        part = scores[["run_id", "query_id", "measure", "value"]].copy()
        reverse = {run: system for system, run in by_collection[collection].items()}
        part["run_id"] = part["run_id"].map(reverse)
        part.insert(0, "collection_id", collection)
        frames.append(part)
    if not frames:
        raise NotFoundError("meta: no collection has two of the systems compared")
    table = pd.concat(frames, ignore_index=True)
    return meta_analysis(table, comparisons, effect=effect, tau2=tau2, interval=interval, alpha=alpha)
