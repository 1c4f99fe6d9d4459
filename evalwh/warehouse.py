"""The Warehouse: one DuckDB file of runs, qrels and results, and every job of the CLI on it.

Each method is a thin call to the function the matching ``evalwh`` command calls, with the
command's defaults, so ``wh.compare(["AP"], baseline="bm25")`` computes what
``evalwh compare -b bm25 -m AP --all-runs`` prints. Every ``collection`` argument may be left
out when the warehouse holds one collection (:meth:`Store.default_collection
<evalwh.store.connection.Store.default_collection>`, the CLI's rule); every result is a
pandas DataFrame, a dataclass of DataFrames or a dict of them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, overload

from evalwh.methods.meta import MetaAnalyses
from evalwh.methods.audit_methods import AuditMethods
from evalwh.store.connection import Store
from evalwh.store.jobs import one_at_a_time
from evalwh.store.excluded import ExcludedDocuments

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.methods.decisions import DecisionMatrix, PairComparison
    from evalwh.methods.judgments import Sensitivity
    from evalwh.methods.label_uncertainty import LabelUncertainty
    from evalwh.methods.qrels_diff import QrelsDiff
    from evalwh.stats.compare import Comparison
    from evalwh.store.ingest import IngestResult

Progress = Callable[[int, int], None]
PathLike = str | os.PathLike[str]


def _names(value: str | Iterable[str] | None) -> list[str]:
    """A name or names as a list (a single string is one name, not its characters)."""
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


class Warehouse(ExcludedDocuments, MetaAnalyses, AuditMethods, Store):
    """A warehouse file (or ``":memory:"``) with the jobs of the CLI as methods.

    Open it as a context manager (``with Warehouse("trec8.duckdb") as wh:``) or close it with
    :meth:`close`. One ``Warehouse`` may be shared between threads: its jobs take turns (a
    lock), each whole; for work in parallel, open a reader per thread; :meth:`open_reader` opens an existing file read-only, as the reading
    commands do. The inherited :meth:`collections` and :meth:`runs` list what it holds.

    Examples:
        >>> import pandas as pd
        >>> from evalwh import Warehouse
        >>> wh = Warehouse(":memory:")
        >>> qrels = pd.DataFrame({"query_id": ["1", "1", "2", "2"], "doc_id": ["a", "b", "a", "c"],
        ...                       "relevance": [1, 0, 1, 1]})
        >>> _ = wh.ingest_qrels(qrels, collection="demo")
        >>> run = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "c"], "score": [2.0, 1.0, 1.0]})
        >>> _ = wh.ingest_runs(run, run_id="r1")  # the only collection: no collection= needed
        >>> wh.evaluate(["P@1", "AP"])[["run_id", "measure", "value"]].values.tolist()
        [['r1', 'P@1', 1.0], ['r1', 'AP', 0.75]]
        >>> wh.sql("SELECT count(*) AS judged FROM qrels").judged.tolist()
        [4]
    """

    # -- ingest (evalwh ingest qrels | runs | run-metadata) ---------------------------------

    @overload
    def ingest_qrels(
        self, sources: PathLike | pd.DataFrame, /, *, collection: str | None = None, qrels_id: str | None = None,
        replace: bool = False, source: str = "human", judge: str | None = None, model: str | None = None,
        prompt: PathLike | None = None, round: int | None = None,
    ) -> IngestResult: ...  # fmt: skip
    @overload
    def ingest_qrels(
        self, sources: Sequence[PathLike], /, *, collection: str | None = None, qrels_id: str | None = None,
        replace: bool = False, source: str = "human", judge: str | None = None, model: str | None = None,
        prompt: PathLike | None = None, round: int | None = None,
    ) -> list[IngestResult]: ...  # fmt: skip
    def ingest_qrels(
        self, sources: PathLike | Sequence[PathLike] | pd.DataFrame, /, *, collection: str | None = None,
        qrels_id: str | None = None, replace: bool = False, source: str = "human", judge: str | None = None,
        model: str | None = None, prompt: PathLike | None = None, round: int | None = None,
    ) -> IngestResult | list[IngestResult]:  # fmt: skip
        """Ingest qrels or judgment files, or a DataFrame, with their provenance: ``evalwh ingest qrels``.

        ``wh.ingest_qrels(paths, source="llm", judge=..., model=..., prompt=..., round=...)``:
        ``source`` says who made the labels (``human``, the default, ``llm`` or ``inferred``),
        ``prompt`` is a file holding the judging prompt. One file or DataFrame makes the set
        ``qrels_id`` (``"default"`` when not given) and returns one result; a list of files
        makes one set per file, named by its stem, and returns a list; all in one transaction.
        See :func:`evalwh.store.ingest.ingest_qrels`.
        """
        from evalwh.store import ingest

        self.require_writer("ingest qrels")
        return ingest.ingest_qrels(
            self, sources, collection=self.default_collection(collection), qrels_id=qrels_id, replace=replace,
            source=source, judge=judge, model=model, prompt=prompt, round=round,
        )  # fmt: skip

    def qrels_sets(self, collection: str | None = None) -> pd.DataFrame:
        """The qrels sets of a collection with their provenance and sizes: ``evalwh qrels``.

        One row per set: ``qrels_id, source, judge, model, prompt_sha256, round, topics,
        pairs`` (judged, grade >= 0), ``relevant`` (grade >= 1), ``file``, ``created_at``
        (``queries/reports/qrels_sets.sql``).
        """
        from evalwh import sql

        collection = self.default_collection(collection)
        self.require_collection(collection)
        frame = self.df(sql.query("evalwh.queries.reports", "qrels_sets"), {"collection_id": collection})
        # a set without a round shows nothing there, as a set without a judge does
        frame["round"] = frame["round"].astype(object).where(frame["round"].notna(), None)
        return frame

    def ingest_runs(
        self, sources: PathLike | Sequence[PathLike] | pd.DataFrame, *, collection: str | None = None,
        run_id: str | None = None, replace: bool = False, ignore_extra_fields: bool = False,
        progress: Progress | None = None,
    ) -> list[IngestResult]:  # fmt: skip
        """Ingest run files or a DataFrame (:func:`evalwh.store.ingest.ingest_runs`); ``evalwh ingest runs``."""
        from evalwh.store import ingest

        self.require_writer("ingest runs")
        return ingest.ingest_runs(
            self, sources, collection=self.default_collection(collection), run_id=run_id, replace=replace,
            ignore_extra_fields=ignore_extra_fields, progress=progress,
        )  # fmt: skip

    def ingest_run_metadata(
        self, source: PathLike | pd.DataFrame, *, collection: str | None = None, allow_unknown_runs: bool = False
    ) -> int:
        """Attach group, type and pooled flag to runs (:func:`evalwh.store.ingest.ingest_run_metadata`).

        ``evalwh ingest run-metadata``. Returns the number of runs updated.
        """
        from evalwh.store import ingest

        self.require_writer("ingest run metadata")
        return ingest.ingest_run_metadata(
            self, source, collection=self.default_collection(collection), allow_unknown_runs=allow_unknown_runs
        )

    # -- evaluate (evalwh eval | unjudged) --------------------------------------------------

    def evaluate(
        self, measures: str | Iterable[str], *, collection: str | None = None, runs: Sequence[str] | None = None,
        per_query: bool = False, depths: Sequence[int] | None = None, qrels_id: str | None = None, rel: int = 1,
        unjudged: str = "nonrelevant", depth_cap: int | None = None, float32_ties: bool = False,
        averaging: str = "default", store: bool = False, typed_names: bool = False, wide: bool = False,
        fill: str | Sequence[str] = (),
    ) -> pd.DataFrame:  # fmt: skip
        """Evaluate runs of a collection: ``evalwh eval``.

        The arguments are :func:`evalwh.measures.evaluation.evaluate`'s (``runs=None``: every
        run). The result is long (``run_id, measure, value, n_topics, ...``, or per ``query_id``
        with ``per_query=True``); with ``wide=True`` one row per run (and topic) and one column
        per measure, in the order asked for (:func:`evalwh.measures.evaluation.wide_form`).
        ``fill`` names sets whose labels fill the pairs ``qrels_id`` did not judge, in order
        (``--fill``); the ``qrels_id`` column then reads ``A+B``.
        """
        from evalwh.measures.evaluation import evaluate, wide_form
        from evalwh.methods.judgments import require_runs

        if store:
            self.require_writer("store results")
        require_runs(self, self.default_collection(collection), command="eval")
        frame = evaluate(
            self, _names(measures), collection=self.default_collection(collection), runs=runs,
            per_query=per_query, depths=depths, qrels_id=qrels_id, rel=rel, unjudged=unjudged,
            depth_cap=depth_cap, float32_ties=float32_ties, averaging=averaging, store=store,
            typed_names=typed_names, fill=_names(fill),
        )  # fmt: skip
        return wide_form(frame) if wide else frame

    def unjudged(
        self, *, collection: str | None = None, qrels_id: str | None = None, max_rank: int = 1000,
        ranks: Sequence[int] | None = None, fill: str | Sequence[str] = (),
    ) -> pd.DataFrame:  # fmt: skip
        """The unjudged share of all runs' documents per rank: ``evalwh unjudged``.

        ``rank, lists, unjudged, share`` up to ``max_rank``, or at ``ranks`` only
        (:func:`evalwh.measures.evaluation.unjudged_share`); ``fill`` as in :meth:`evaluate`.
        """
        from evalwh.measures.evaluation import unjudged_share

        wanted = list(ranks or [])
        frame = unjudged_share(
            self, self.default_collection(collection), qrels_id=qrels_id, max_rank=max(wanted) if wanted else max_rank,
            fill=_names(fill),
        )
        return frame[frame["rank"].isin(wanted)].reset_index(drop=True) if wanted else frame

    # -- compare (evalwh compare | matrix | kendall) -------------------------------------------

    def compare(
        self, measures: str | Iterable[str], runs: Sequence[str] | None = None, *,
        collection: str | None = None, baseline: str | Sequence[str] | None = None, all_runs: bool = False,
        all_pairs: bool = False, test: str = "t", correction: str | None = None, alpha: float = 0.05, resamples: int = 10_000,
        seed: int | None = None, qrels_id: str | None = None, fill: str | Sequence[str] = (), ranks: bool = False,
    ) -> Comparison:  # fmt: skip
        """Paired tests between stored runs on any measures: ``evalwh compare``.

        Args:
            measures: Measure specs (``AP``, ``nDCG@10``, ...).
            runs: The runs compared besides the baselines; None: every run of the collection.
            collection: The collection (default: the only one).
            baseline: A run, or runs, every other run is compared with; None: all pairs.
            all_runs: Add every run of the collection after those named (``--all-runs``).
            all_pairs: Compare every pair even with baselines.
            test: ``t``, ``wilcoxon``, ``sign``, ``randomization``, ``bootstrap``, ``tukey``,
                ``randomized_tukey``, ``anova`` or ``anova2``.
            correction: ``bonferroni``, ``holm``, ``bh``, ``by`` or ``none``; None: Holm
                (none for the Tukey tests).
            alpha: Significance level (and the intervals' coverage, 1 - alpha).
            resamples: Resamples of the resampling tests.
            seed: Seed of the resampling tests.
            qrels_id: The qrels set (``--qrels``).
            fill: Sets whose labels fill the pairs ``qrels_id`` did not judge, in order
                (``--fill``); ``pairs`` and ``runs`` then carry ``qrels_id`` ``A+B``.
            ranks: Also each run's rank, 95% bootstrap rank interval and tier in ``.ranks``
                (``evalwh compare --ranks``, methods §13).

        Returns:
            The :class:`~evalwh.stats.compare.Comparison` of
            :func:`evalwh.methods.comparisons.compare_collection`: ``pairs`` is the
            significance table, ``runs``, ``anova`` and ``families`` are DataFrames too.
        """
        from evalwh.methods.comparisons import compare_collection
        from evalwh.methods.judgments import require_runs

        require_runs(self, self.default_collection(collection), command="compare")
        return compare_collection(
            self, self.default_collection(collection), _names(measures), list(runs or []),
            baselines=_names(baseline), all_runs=all_runs or runs is None, qrels_id=qrels_id, fill=_names(fill),
            all_pairs=all_pairs, ranks=ranks,
            test=test, correction=correction, alpha=alpha, n_resamples=resamples, rng=seed,
        )  # fmt: skip

    def compare_decision(
        self, run_a: str, run_b: str, *, collection: str | None = None, measure: str = "P",
        depths: Sequence[int] | None = None, full: bool = True, assessment: str = "A_p", all_runs: bool = False,
        test: str = "anova", correction: str | None = None, alpha: float = 0.05, qrels_id: str | None = None,
        resamples: int = 10_000, seed: int | None = None, fill: str | Sequence[str] = (),
    ) -> PairComparison:  # fmt: skip
        """The decision matrix of two runs per depth: ``evalwh compare A B --decision``.

        The pair is tested alone, or within every run of the collection with ``all_runs``; at
        ``depths`` (None: the default grid, 10, 30, 100, 500 and 1000);
        ``correction`` None is Bonferroni (none for the Tukey tests). See
        :func:`evalwh.methods.decisions.compare_runs`; ``.pairs`` is what the command prints.
        ``fill``: sets that fill the pairs ``qrels_id`` did not judge, as in :meth:`evaluate`.
        """
        from evalwh.methods.decisions import compare_runs
        from evalwh.stats.significance import default_correction

        collection = self.default_collection(collection)
        return compare_runs(
            self, collection, run_a, run_b, measure=measure, depths=None if depths is None else list(depths), full=full,
            assessment=assessment, runs=self.run_ids(collection) if all_runs else [run_a, run_b], test=test,
            correction=default_correction(test, "bonferroni").value if correction is None else correction,
            alpha=alpha, qrels_id=qrels_id, fill=_names(fill), n_resamples=resamples, rng=seed,
        )  # fmt: skip

    def matrix(
        self, *, collection: str | None = None, measure: str = "P", depths: Sequence[int] | None = None,
        full: bool = True, assessment: str = "A_p", runs: Sequence[str] | None = None, test: str = "anova",
        correction: str | None = None, alpha: float = 0.05, qrels_id: str | None = None, resamples: int = 9999,
        seed: int | None = None, store: bool = False, progress: Progress | None = None,
        fill: str | Sequence[str] = (),
    ) -> DecisionMatrix:  # fmt: skip
        """Classify every pair of runs at every depth: ``evalwh matrix``.

        ``depths`` None is the default grid (10, 30, 100, 500, 1000), ``correction`` None is
        Bonferroni (none for the Tukey tests); ``store`` keeps pairs and
        proportions in the warehouse, as the command does with ``--store``. Returns the
        :class:`~evalwh.methods.decisions.DecisionMatrix` (``summary``, ``table`` and
        ``pairs``: the command's three layouts) of :func:`evalwh.methods.decisions.decision_matrix`.
        ``fill``: sets that fill the pairs ``qrels_id`` did not judge, as in :meth:`evaluate`.
        """
        from evalwh.methods.decisions import decision_matrix
        from evalwh.stats.significance import default_correction

        if store:
            self.require_writer("store the decision matrix")
        return decision_matrix(
            self, self.default_collection(collection), measure=measure,
            depths=None if depths is None else list(depths), full=full,
            assessment=assessment, runs=runs, test=test,
            correction=default_correction(test, "bonferroni").value if correction is None else correction,
            alpha=alpha, qrels_id=qrels_id, fill=_names(fill), n_resamples=resamples, rng=seed, store=store,
            progress=progress,
        )  # fmt: skip

    def kendall(
        self, *, collection: str | None = None, x: str = "AP", y: str = "A_p@1000",
        runs: Sequence[str] | None = None, qrels_id: str | None = None,
    ) -> pd.DataFrame:  # fmt: skip
        """Kendall's tau_b between the run rankings by two measures: ``evalwh kendall``.

        One row: ``x, y, tau, p_value, n_runs`` (:func:`evalwh.methods.decisions.rank_correlation`).
        """
        import pandas as pd

        from evalwh.methods.decisions import rank_correlation

        row = rank_correlation(self, self.default_collection(collection), x=x, y=y, runs=runs, qrels_id=qrels_id)
        return pd.DataFrame([row])

    # -- pools (evalwh pool build | list | contributions | complete; evalwh adjust) ------------

    def build_pool(
        self, *, collection: str | None = None, depth: int = 100, runs: Sequence[str] | None = None,
        runs_from: str = "pooled", pool_id: str | None = None, qrels_id: str | None = None, replace: bool = False,
        strategy: str = "depth", budget: int | None = None, budget_scope: str = "topic", seed: int | None = None,
        gamma: float = 0.9, rbp_p: float = 0.8, rrf_k: float = 60.0,
    ) -> pd.DataFrame:  # fmt: skip
        """Build and store a pool, its judging order and its qrels set: ``evalwh pool build``.

        Members are ``runs``, else ``runs_from`` (``pooled``: the run-metadata flag, or
        ``all``); the candidates are their top ``depth``; ``strategy`` (``depth``, ``take``,
        ``mtf``, ``bandit``, ``rbp``, ``rrf``, ``random``) orders them for judging and
        ``budget`` keeps the first, per topic or in total (``budget_scope``); see
        :func:`evalwh.methods.pools.build_pool` and docs/budgets.md.
        """
        from evalwh.methods.pools import build_pool

        self.require_writer("build and store a pool")
        if pool_id is not None:
            from evalwh.store.ingest.frames import check_name

            check_name(pool_id, "pool id")
        return build_pool(
            self, self.default_collection(collection), depth=depth, runs=runs, runs_from=runs_from,
            pool_id=pool_id, qrels_id=qrels_id, replace=replace, strategy=strategy, budget=budget,
            budget_scope=budget_scope, seed=seed, gamma=gamma, rbp_p=rbp_p, rrf_k=rrf_k,
        )  # fmt: skip

    def pools(self, *, collection: str | None = None) -> pd.DataFrame:
        """The stored pools of a collection with their sizes: ``evalwh pool list``."""
        from evalwh.methods.pools import list_pools

        return list_pools(self, self.default_collection(collection))

    def pool_contributions(
        self, *, collection: str | None = None, pool: str | None = None, depth: int | None = None,
        runs: Sequence[str] | None = None, runs_from: str = "pooled", qrels_id: str | None = None, by: str = "run",
    ) -> pd.DataFrame:  # fmt: skip
        """Documents only one run (``by="run"``) or group brought into a pool: ``evalwh pool contributions``.

        Of a stored ``pool``, else of the depth-``depth`` pool of the runs
        (:func:`evalwh.methods.pools.contributions`).
        """
        from evalwh.methods.pools import contributions

        return contributions(
            self, self.default_collection(collection), pool_id=pool, depth=depth, runs=runs, runs_from=runs_from,
            qrels_id=qrels_id, by=by,
        )  # fmt: skip

    def complete_qrels(
        self, *, collection: str | None = None, qrels_id: str | None = None, completed_id: str | None = None,
        replace: bool = False,
    ) -> pd.DataFrame:  # fmt: skip
        """Store qrels with every returned, unjudged document non-relevant: ``evalwh pool complete``.

        See :func:`evalwh.methods.pools.complete_qrels`.
        """
        from evalwh.methods.pools import complete_qrels

        self.require_writer("store completed qrels")
        if completed_id is not None:
            from evalwh.store.ingest.frames import check_name

            check_name(completed_id, "qrels id")
        return complete_qrels(
            self, self.default_collection(collection), qrels_id=qrels_id, completed_id=completed_id, replace=replace
        )

    def adjust(
        self, run: str, pool: str, *, collection: str | None = None, measure: str = "RBP_trunc(p=0.8)@10",
        method: str = "leave-one-out", common_topics: Sequence[str] | None = None, unjudged: str = "nonrelevant",
        confidence: float = 0.95, resamples: int = 10_000, seed: int = 1, store: bool = True,
        progress: Progress | None = None,
    ) -> pd.DataFrame:  # fmt: skip
        """Adjust an unpooled run's mean score for pooling bias (Webber & Park): ``evalwh adjust``.

        ``method`` is ``leave-one-out`` (Algorithm 1) or ``common-topics`` (Algorithm 2, with
        ``common_topics``); see :func:`evalwh.methods.pools.adjust`. One row.
        """
        from evalwh.methods.pools import adjust

        return adjust(
            self, self.default_collection(collection), run, pool, measure, method=method,
            common_topics=common_topics, unjudged=unjudged, confidence=confidence, resamples=resamples,
            rng=seed, store=store, progress=progress,
        )  # fmt: skip

    # -- bounds (evalwh bounds) -------------------------------------------------------------

    def bounds(
        self, runs: Sequence[str] | None = None, *, collection: str | None = None, measure: str = "P",
        depths: Sequence[int] | None = None, every_rank: bool = False, max_depth: int = 1000,
        aggregation: str = "mean", compare: bool = False, per_query: bool = False, qrels_id: str | None = None,
        rel: int = 1, store: bool = False, fill: str | Sequence[str] = (),
    ) -> pd.DataFrame:  # fmt: skip
        """Lower and upper values per run across depth: ``evalwh bounds``.

        ``aggregation`` is ``mean`` or ``dempster``; ``store`` keeps both aggregates in the
        bounds table; ``compare`` (two runs) says per depth whether one is certainly better.
        See :func:`evalwh.methods.bounds.compute_bounds` and :func:`evalwh.methods.bounds.compare`.
        ``fill``: sets that fill the pairs ``qrels_id`` did not judge, as in :meth:`evaluate`.
        """
        from evalwh.errors import MetricParamError
        from evalwh.methods.bounds import compare as compare_bands
        from evalwh.methods.bounds import compute_bounds
        from evalwh.methods.judgments import require_runs

        require_runs(self, self.default_collection(collection), command="bounds")
        chosen = list(runs) if runs is not None else None
        if compare and (chosen is None or len(chosen) != 2):
            raise MetricParamError("bounds: compare=True needs exactly two runs")
        frame = compute_bounds(
            self, collection=self.default_collection(collection), measure=measure, runs=chosen,
            depths=None if depths is None else list(depths), every_rank=every_rank, max_depth=max_depth,
            aggregation=None if store else aggregation, per_query=per_query, qrels_id=qrels_id, rel=rel, store=store,
            fill=_names(fill),
        )  # fmt: skip
        if store and not per_query:
            frame = frame[frame["aggregation"] == aggregation]
        if compare and chosen is not None:
            frame = compare_bands(frame, chosen[0], chosen[1])
        return frame

    def label_uncertainty(
        self, reference: str, machine: str, measures: str | Iterable[str], *, collection: str | None = None,
        runs: Sequence[str] | None = None, samples: int = 1000, seed: int | None = 1, level: float = 0.95,
        prior: float = 1.0, resample_confusion: bool = False, confusion: pd.DataFrame | None = None, rel: int = 1,
        per_query: bool = False, pairs: bool = False,
    ) -> LabelUncertainty:  # fmt: skip
        """Scores under ``reference`` filled by ``machine``, with the machine labels' uncertainty.

        ``evalwh label-uncertainty``: the judge's confusion matrix, estimated on the pairs both
        sets judged (Dirichlet ``prior`` per cell) or given as ``confusion``, is propagated by
        ``samples`` Monte Carlo replicates (``seed``) to each run's ``P@k``, ``nDCG[@k]`` and
        ``AP[@k]``: ``.runs`` (value, mean, sd, central ``level`` interval), ``.topics`` with
        ``per_query``, ``.pairs`` (swap probabilities) with ``pairs``, ``.confusion``. See
        :func:`evalwh.methods.label_uncertainty.label_uncertainty`.
        """
        from evalwh.methods.label_uncertainty import label_uncertainty

        return label_uncertainty(
            self, self.default_collection(collection), reference=reference, machine=machine,
            measures=_names(measures), runs=runs, samples=samples, seed=seed, level=level, prior=prior,
            resample_confusion=resample_confusion, confusion=confusion, rel=rel, per_query=per_query, pairs=pairs,
        )  # fmt: skip

    # -- experiments (evalwh experiment ...) --------------------------------------------------

    def exclusions(
        self, *, collection: str | None = None, qrels_id: str | None = None, cap: int = 1000, share: float = 0.95
    ) -> pd.DataFrame:
        """Every run with whether the S4 experiments exclude it and why: ``evalwh experiment exclusions --all``.

        See :func:`evalwh.methods.experiments.exclusion.run_exclusion`.
        """
        from evalwh.methods.experiments.exclusion import run_exclusion

        return run_exclusion(self, self.default_collection(collection), qrels_id=qrels_id, cap=cap, share=share)

    def swap_rates(
        self, measures: str | Iterable[str], *, collection: str | None = None, samples: int = 1000, seed: int = 1,
        qrels_id: str | None = None, cap: int = 1000, share: float = 0.95, experiment_id: str | None = None,
        progress: Progress | None = None,
    ) -> dict[str, pd.DataFrame]:  # fmt: skip
        """Swap error rates over disjoint topic-set pairs: ``evalwh experiment swap-rates``.

        Frames ``summary``, ``rates`` (per bin), ``exclusion``, ...; see
        :func:`evalwh.methods.experiments.swap.run_swap_rates`.
        """
        from evalwh.methods.experiments.swap import run_swap_rates

        return run_swap_rates(
            self, self.default_collection(collection), _names(measures), samples=samples, seed=seed,
            qrels_id=qrels_id, cap=cap, share=share, experiment_id=experiment_id, progress=progress,
        )  # fmt: skip

    def reduced_qrels(
        self, measures: str | Iterable[str], *, collection: str | None = None, seed: int = 1,
        levels: Sequence[int] | None = None, qrels_id: str | None = None, cap: int = 1000, share: float = 0.95,
        experiment_id: str | None = None, progress: Progress | None = None,
    ) -> dict[str, pd.DataFrame]:  # fmt: skip
        """Re-evaluate on reduced qrels per level: ``evalwh experiment reduced-qrels``.

        Frames ``levels``, ``measure_tau``, ``level_below``, ``exclusion``, ...; ``levels``
        None is 100, 95, ..., 10, 9, ..., 1. See
        :func:`evalwh.methods.experiments.reduced.run_reduced_qrels`.
        """
        from evalwh.methods.experiments.reduced import DEFAULT_LEVELS, run_reduced_qrels

        return run_reduced_qrels(
            self, self.default_collection(collection), _names(measures), seed=seed,
            levels=list(DEFAULT_LEVELS if levels is None else levels), qrels_id=qrels_id, cap=cap, share=share,
            experiment_id=experiment_id, progress=progress,
        )  # fmt: skip

    def pool_bias(
        self, *, collection: str | None = None, widths: Sequence[int] = (2, 4, 10, 20, 40), repeats: int = 100,
        topic_samples: int = 200, common_topics: Sequence[int] | None = None, seed: int = 1,
        measure: str = "RBP_trunc(p=0.8)@10", pool_depth: int = 10, handling: str = "both",
        manual_vs_automatic: bool = False, qrels_id: str | None = None, experiment_id: str | None = None,
        progress: Progress | None = None,
    ) -> dict[str, pd.DataFrame]:  # fmt: skip
        """Pooling bias and the adjustments' accuracy against pool width: ``evalwh experiment pool-bias``.

        Frames ``common_topics``, ``summary``, ``experiment``, ...; see
        :func:`evalwh.methods.experiments.pool_bias.run_pool_bias`.
        """
        from evalwh.methods.experiments.pool_bias import run_pool_bias

        return run_pool_bias(
            self, self.default_collection(collection), widths=list(widths), repeats=repeats,
            topic_samples=topic_samples, common_topics=None if common_topics is None else list(common_topics),
            seed=seed, measure=measure, pool_depth=pool_depth, handling=handling,
            setting="manual-vs-automatic" if manual_vs_automatic else "all", qrels_id=qrels_id,
            experiment_id=experiment_id, progress=progress,
        )  # fmt: skip

    def budget(
        self, *, collection: str | None = None, machine: str | None = None, store: bool = True, **options: Any
    ) -> pd.DataFrame:  # fmt: skip
        """What a judging budget buys, replayed against a complete label set: ``evalwh experiment budget``.

        Without ``machine``: :func:`evalwh.methods.budget.replays` (options ``strategies``,
        ``budgets``, ``scope``, ``seeds``, ``reference``, ``depth``, ``measure``, ...). With
        ``machine``, a label set with relevance probabilities: :func:`evalwh.methods.budget.hybrids`
        (``budgets``, ``selections``, ``calibration``, ``store_sets``, ...). One row per
        (strategy, seed, budget): relevant found, tau_b, tau_ap, significant pairs kept, judged share
        (and for a replay ``reachable_share``).
        """
        from evalwh.methods import budget
        from evalwh.methods.budget import checks as budget_checks

        options = budget_checks.check_budget_options(options)  # as the CLI's typed options are
        if store or options.get("store_sets"):
            self.require_writer("store a budget experiment")
        name = self.default_collection(collection)
        options["reference"] = self.qrels_set(name, options.get("reference"))  # (None: the default set)
        if machine is not None:
            return budget.hybrid(self, name, machine, store=store, **options)
        return budget.replay(self, name, store=store, **options)

    def pool_order(self, pool: str, *, collection: str | None = None) -> pd.DataFrame:
        """A stored pool's judging order, first to judge first (:func:`evalwh.methods.pools.pool_order`)."""
        from evalwh.methods.pools import pool_order

        return pool_order(self, self.default_collection(collection), pool)

    def export_pool(
        self, pool: str, output: str | os.PathLike[str], *, collection: str | None = None, fmt: str = "jsonl",
        topics: str | None = None, documents: str | None = None,
    ) -> int:  # fmt: skip
        """Write a pool's judging tasks in order: ``evalwh pool export`` (:func:`evalwh.methods.budget.export_tasks`)."""
        from evalwh.methods.budget import export_tasks

        name = self.default_collection(collection)
        return export_tasks(self, name, pool, output, fmt=fmt, topics=topics, documents=documents)

    # -- judgments (evalwh agreement | sensitivity) --------------------------------------------

    def agreement(
        self, reference: str, sets: str | Iterable[str] | None = None, *, collection: str | None = None,
        binary_at: float | None = None, per_query: bool = False, layout: str = "summary", resamples: int = 0,
        confidence: float = 0.95, seed: int | None = 0, level: str = "ordinal",
    ) -> pd.DataFrame:  # fmt: skip
        """Label sets against a reference on the pairs both judged: ``evalwh agreement``.

        Percent agreement, Cohen's kappa (unweighted, linear, quadratic) and Krippendorff's
        alpha (nominal, ordinal, interval), with ``binary_at`` also on grade >= it; per set, or
        per set and topic, or the confusion matrices (``layout="confusion"``), or alpha of the
        reference and the sets together (``layout="raters"``); ``sets`` None is every other
        set. ``resamples`` > 0 adds bootstrap intervals over topics for kappa and alpha at
        ``level``, drawn with ``seed`` (None: a fresh seed each call). See
        :func:`evalwh.methods.judgments.agreement`.
        """
        from evalwh.errors import check_real
        from evalwh.methods.judgments import agreement

        binary_at = None if binary_at is None else check_real(binary_at, "agreement: binary_at")
        return agreement(
            self, self.default_collection(collection), reference, None if sets is None else _names(sets),
            binary_at=binary_at, per_query=per_query, layout=layout, resamples=resamples, confidence=confidence,
            seed=seed, level=level,
        )  # fmt: skip

    def sensitivity(
        self, sets: Sequence[str], measures: str | Iterable[str] = ("AP", "nDCG@10", "P@10", "bpref"), *,
        collection: str | None = None, reference: str | None = None, runs: Sequence[str] | None = None,
        rbo_p: float = 0.9, top_k: int = 10, resamples: int = 1000, confidence: float = 0.95, seed: int | None = None,
        test: str | None = None, correction: str | None = None, alpha: float = 0.05,
    ) -> Sensitivity:  # fmt: skip
        """How the ranking of the runs moves between label sets: ``evalwh sensitivity``; :func:`evalwh.methods.judgments.sensitivity`.

        ``sets``: qrels sets or compositions ``A+B`` (A's labels, B's where A has none), the first (or ``reference``) the reference; ``test``, ``correction`` (None: :meth:`compare`'s defaults) decide the pairs of runs.
        """
        from evalwh.methods.judgments import sensitivity

        return sensitivity(
            self, self.default_collection(collection), list(sets), _names(measures), reference=reference, runs=runs,
            rbo_p=rbo_p, top_k=top_k, resamples=resamples, confidence=confidence, seed=seed, test=test, correction=correction, alpha=alpha)  # fmt: skip

    def qrels_diff(self, old: str, new: str, measures: str | Iterable[str] = ("AP", "nDCG@10", "P@10"), *, collection: str | None = None, **options: Any) -> QrelsDiff:  # fmt: skip
        """Two label sets compared: ``evalwh qrels diff``; ``options`` as :func:`evalwh.methods.qrels_diff.qrels_diff`'s."""
        from evalwh.methods.qrels_diff import qrels_diff

        return qrels_diff(self, self.default_collection(collection), old, new, _names(measures), **options)

    # -- report (evalwh report) ---------------------------------------------------------------

    def report(
        self, path: PathLike | None = None, *, collection: str | None = None, format: str = "html",
        measures: Sequence[str] | None = None, pairing: str = "P",
        depths: Sequence[int] | None = None, baseline: str | Sequence[str] | None = None, all_pairs: bool = False,
        pairs: Sequence[tuple[str, str]] = (),
        test: str | None = None, correction: str | None = None, alpha: float = 0.05, seed: int = 0,
        resamples: int = 9999, qrels_id: str | None = None, flag_gap: float = 0.10, pool_depth: int | None = None,
        bounds: bool = True, progress: Progress | None = None, fill: str | Sequence[str] = (),
    ) -> str:  # fmt: skip
        """The evaluation report of a collection: ``evalwh report``.

        The other arguments are the command's options, with its defaults: ``measures`` of the
        leaderboard (None: the collection's conventions or defaults,
        :mod:`evalwh.present.report.defaults`), ``all_pairs`` (all pairs despite stored
        baselines), the decision matrix's ``pairing`` (``P`` or ``MAP``) and ``depths``, a ``baseline`` or
        several, the ``pairs`` to draw, ``test`` and ``correction`` (None: :meth:`compare`'s
        defaults, over the same family), ``alpha``, ``seed``,
        ``resamples``, ``qrels_id``, ``flag_gap``, ``pool_depth``, ``bounds`` and ``fill`` (sets
        that fill the pairs ``qrels_id`` did not judge, as in :meth:`evaluate`)
        (:class:`~evalwh.present.report.ReportOptions`). A collection with more than one label
        set gets a judgments section; a collection of label sets without runs gets the
        label-set report instead (:func:`evalwh.present.report.labels.label_set_report`).

        Args:
            path: Write the report to this file (atomically); None writes nothing.
            collection: The collection (default: the only one).
            format: ``html`` (one self-contained file, with figures) or ``md`` (no figures).
            progress: Called with (steps done, steps in all).

        Returns:
            The report's text (HTML or Markdown), also when it was written to ``path``.
        """
        from evalwh.errors import EvalWhError
        from evalwh.present.report import ReportOptions, build_report, render_html, render_markdown

        if format not in ("html", "md"):
            raise EvalWhError(f"report: format {format!r}: give html or md")
        name = self.default_collection(collection)
        self.require_collection(name)
        if not self.run_ids(name):
            # label sets without runs (a judging study): the label-set report
            from evalwh.present.report.labels import label_set_report

            text = label_set_report(self, name, format=format, qrels_id=qrels_id or "default", seed=seed)
            if path is not None:
                from evalwh.io.files import write_text

                write_text(path, text)
            return text
        options = ReportOptions(
            measures=None if measures is None else tuple(measures), pairing=pairing,
            depths=None if depths is None else tuple(depths),
            baselines=tuple(_names(baseline)), all_pairs=all_pairs, pairs=tuple((a, b) for a, b in pairs), test=test, correction=correction, alpha=alpha,
            seed=seed, n_resamples=resamples, qrels_id=qrels_id, flag_gap=flag_gap, pool_depth=pool_depth,
            bounds=bounds, figures=format == "html", fill=tuple(_names(fill)),
        )  # fmt: skip
        result = build_report(self, self.default_collection(collection), options, progress=progress)
        text = render_html(result) if format == "html" else render_markdown(result)
        if path is not None:
            from evalwh.io.files import write_text

            write_text(path, text)
        return text

    # -- SQL and Parquet (evalwh sql | schema | export | import) ------------------------------

    def sql(self, statement: str, params: dict[str, Any] | None = None, *, write: bool = False) -> pd.DataFrame:
        """Run the user's SQL and return the last statement's rows: ``evalwh sql``.

        The statements are checked as ``evalwh sql`` checks them (:func:`evalwh.store.adhoc.run`):
        one that would change the warehouse is refused (:class:`~evalwh.store.adhoc.ReadOnlyError`)
        unless ``write``; a syntax error, an unknown table or column gets a precise message.
        Without ``write`` on a warehouse opened for writing, the statements also run in a
        transaction that is rolled back, so nothing they do stays. This is a convenience for a
        caller who holds the connection already (``wh.con`` runs anything), not a sandbox: for
        SQL you do not trust, use ``Warehouse.open_reader(path, sandbox=True)``, the connection
        ``evalwh sql`` runs on, which reaches no file, extension or network.

        Args:
            statement: One or more statements, DuckDB dialect; ``$name`` placeholders.
            params: Values of the placeholders.
            write: Allow statements that change data (all in one transaction).
        """
        from evalwh.store import adhoc

        if write or self.read_only or self.in_transaction():  # (the caller's transaction is theirs)
            return adhoc.run(self, statement, params, write=write)
        self.con.begin()
        try:
            return adhoc.run(self, statement, params)
        finally:
            self.con.rollback()

    def schema(self, relation: str | None = None) -> pd.DataFrame:
        """The tables and documented views, or one relation's columns: ``evalwh schema``."""
        from evalwh.store import adhoc

        return adhoc.schema(self, relation)

    def export(
        self, directory: PathLike, *, collections: Sequence[str] | None = None, tables: Sequence[str] | None = None
    ) -> dict[str, Any]:
        """Write the tables as Parquet, partitioned by collection, with a manifest: ``evalwh export``.

        Every collection (and table) unless named. Returns the manifest
        (:func:`evalwh.store.transfer.export`). A reader from :meth:`open_reader` writes only
        into its ``allowed_directories``.
        """
        from evalwh.store import transfer

        return transfer.export(self, directory, collections=collections, tables=tables)

    def import_export(self, directory: PathLike, *, replace: bool = False) -> dict[str, int]:
        """Load a directory written by :meth:`export` (``evalwh import``), in one transaction.

        ``replace`` replaces the rows of imported collections the warehouse holds. Returns the
        rows imported per table (:func:`evalwh.store.transfer.import_export`).
        """
        from evalwh.store import transfer

        self.require_writer("import")
        return transfer.import_export(self, directory, replace=replace)


one_at_a_time(Warehouse)
