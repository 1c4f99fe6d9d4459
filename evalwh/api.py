r"""Run files in, scores and significance tables out, with no warehouse: ``evalwh.evaluate``, ``evalwh.compare``.

As ``pt.Experiment`` or ``ranx.compare``: a qrels file (or DataFrame) and runs (files,
DataFrames, or a mapping from run name to DataFrame) go in; pandas DataFrames come out. The
numbers are those of ``evalwh eval --qrels`` and of :meth:`evalwh.Warehouse.evaluate` after an
ingest (:func:`evalwh.measures.direct.evaluate_files`), and the tests those of
``evalwh compare`` (:func:`evalwh.stats.compare.compare`), with the command's names and
defaults. :func:`paper_table` turns a comparison into the LaTeX or Markdown table of a paper.

Examples:
    >>> import tempfile
    >>> import evalwh
    >>> from evalwh.io.demo_data import write_demo
    >>> files = write_demo(tempfile.mkdtemp())  # qrels and 8 run files, 30 topics
    >>> scores = evalwh.evaluate(files.qrels, files.runs, ["AP", "nDCG@10"], wide=True)
    >>> list(scores.columns), len(scores)
    (['collection_id', 'run_id', 'AP', 'nDCG@10'], 8)
    >>> result = evalwh.compare(files.qrels, files.runs, ["AP"], baseline="bm25")
    >>> result.pairs[["run_a", "run_b", "p_adjusted", "reject"]].shape
    (7, 4)
    >>> evalwh.paper_table(result, "latex").startswith("% evalwh paper table; needs \\usepackage{booktabs}")
    True
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.stats.compare import Comparison

    PathLike = str | os.PathLike[str]
    Runs = PathLike | pd.DataFrame | Sequence[PathLike | pd.DataFrame] | Mapping[str, pd.DataFrame]

__all__ = ["compare", "evaluate", "paper_table", "ranks"]


def _runs(runs: Runs) -> Runs:
    """One run file as a list of one (a path is not a sequence of runs)."""
    return [runs] if isinstance(runs, (str, os.PathLike)) else runs


def _measures(measures: str | Iterable[str]) -> list[str]:
    return [measures] if isinstance(measures, str) else list(measures)


def evaluate(
    qrels: PathLike | pd.DataFrame,
    runs: Runs,
    measures: str | Iterable[str],
    *,
    per_query: bool = False,
    depths: Sequence[int] | None = None,
    rel: int = 1,
    unjudged: str = "nonrelevant",
    depth_cap: int | None = None,
    float32_ties: bool = False,
    averaging: str = "default",
    ignore_extra_fields: bool = False,
    typed_names: bool = False,
    wide: bool = False,
    exclusions: Sequence[PathLike] = (),
    identical_ids: bool = False,
    said: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """Evaluate runs against qrels, storing nothing: ``evalwh eval --qrels QRELS RUN...``.

    Args:
        qrels: A qrels file (plain or ``.gz``), ``irds:DATASET_ID`` (an ir_datasets
            dataset's qrels, :mod:`evalwh.io.irds`) or a DataFrame (``query_id, doc_id,
            relevance``, or PyTerrier's ``qid, docno, label``).
        runs: A run file, a list of run files (each file's tag names its run), a DataFrame
            (with ``run_id``, or PyTerrier's ``qid, docno, score``), a list of DataFrames, or
            a mapping from run name to DataFrame.
        measures: Measure specs in ir_measures' grammar or trec_eval's names (``P@10``,
            ``AP``, ``nDCG@10``, ``'P(rel=2)@10'``, ``A_p@100``, ``all_trec``).
        per_query: One value per topic instead of the mean (``--per-query``).
        depths: Expand every measure given without ``@k`` to these depths (``--depths``).
        rel: Relevance threshold: grade >= rel is relevant (``--rel``, trec_eval ``-l``).
        unjudged: ``nonrelevant`` (assumed) or ``condensed`` (removed; trec_eval ``-J``).
        depth_cap: Keep the first documents per topic (``--depth-cap``, trec_eval ``-M``).
        float32_ties: Order on scores rounded to float32, as trec_eval <= 9.0.8.
        averaging: ``default`` (topics with a relevant document; a missing topic is an
            empty ranking), ``trec_eval_c`` (trec_eval ``-c``) or ``trec_eval_default``.
        ignore_extra_fields: Accept run lines with more than six fields.
        typed_names: Report each measure under the name given (``map``) rather than its
            canonical one (``AP``), as the command does.
        wide: One row per run (and topic) and one column per measure, in the order given.
        exclusions: Exclusion files (``topic docid`` a line): those documents leave every run
            before it is ranked, the ranks closing up, as qrels lines labelled -100 do
            (``--exclude``; methods §17).
        identical_ids: Exclude a document whose id equals its topic's id (BEIR's ArguAna and
            Quora; ``--exclude-identical-ids``).
        said: Called with each line about excluded documents: the qrels' -100 lines, and what
            each run lost (the command prints them on standard error).

    Returns:
        Long form, as :meth:`evalwh.Warehouse.evaluate` (``collection_id`` is ``"files"``):
        means ``run_id, measure, value, n_topics, n_undefined`` and the option columns, or
        per topic ``run_id, query_id, measure, value``.

    Raises:
        IngestError: naming file, line and problem, for malformed input.
        UnknownMetricError, MetricParamError: for bad measure specs.

    Examples:
        >>> import pandas as pd
        >>> import evalwh
        >>> qrels = pd.DataFrame({"query_id": ["1", "1", "1"], "doc_id": ["a", "b", "c"], "relevance": [1, 0, 1]})
        >>> run = pd.DataFrame({"query_id": ["1"] * 3, "doc_id": ["a", "b", "x"], "score": [3.0, 2.0, 1.0]})
        >>> evalwh.evaluate(qrels, {"r1": run}, ["P@2", "AP"])[["run_id", "measure", "value"]].values.tolist()
        [['r1', 'P@2', 0.5], ['r1', 'AP', 0.5]]
    """
    from evalwh.measures.direct import evaluate_files
    from evalwh.measures.evaluation import wide_form

    frame = evaluate_files(
        qrels, _runs(runs), _measures(measures), per_query=per_query, depths=depths, rel=rel, unjudged=unjudged,
        depth_cap=depth_cap, float32_ties=float32_ties, averaging=averaging,
        ignore_extra_fields=ignore_extra_fields, typed_names=typed_names, exclusions=exclusions,
        identical_ids=identical_ids, said=said,
    )  # fmt: skip
    return wide_form(frame) if wide else frame


def compare(
    qrels: PathLike | pd.DataFrame,
    runs: Runs,
    measures: str | Iterable[str],
    *,
    baseline: str | Sequence[str] | None = None,
    all_pairs: bool = False,
    test: str = "t",
    correction: str | None = None,
    alpha: float = 0.05,
    resamples: int = 10_000,
    seed: int | None = None,
    rel: int = 1,
    unjudged: str = "nonrelevant",
    depth_cap: int | None = None,
    averaging: str = "default",
    ignore_extra_fields: bool = False,
    exclusions: Sequence[PathLike] = (),
    identical_ids: bool = False,
    ranks: bool = False,
    said: Callable[[str], None] | None = None,
) -> Comparison:
    """Compare runs with paired significance tests, storing nothing: ``evalwh compare``.

    The runs are evaluated per topic (as :func:`evaluate` with ``per_query=True``), then
    compared per measure as ``evalwh compare --qrels QRELS RUN...`` compares
    (:func:`evalwh.stats.compare.compare`): the family is every run, the baselines first and
    then the runs in the order given (a file is named by its tag), aligned on the topics every
    run has (the others are dropped, and a note says so); the correction runs over the
    comparisons of one measure.

    Args:
        qrels, runs: As :func:`evaluate`.
        measures: Measure specs (``AP``, ``nDCG@10``, ``'RBP(p=0.9)@100'``, ...).
        baseline: A run name, or a list of them (``-b``): every other run is compared with
            each. None compares all pairs.
        all_pairs: Compare every pair even with baselines (``--all-pairs``).
        test: ``t`` (paired t-test), ``wilcoxon``, ``sign``, ``randomization``, ``bootstrap``,
            ``tukey`` (HSD after two-way ANOVA), ``randomized_tukey``, ``anova`` or ``anova2``.
        correction: ``bonferroni``, ``holm``, ``bh``, ``by`` or ``none``; None is the
            command's default: Holm, and none for the Tukey tests (family-wise already).
        alpha: Significance level; the intervals cover 1 - alpha.
        resamples: Resamples of the randomization, bootstrap and randomised Tukey tests.
        seed: Seed of those resamples (the same seed, the same p-values).
        rel, unjudged, depth_cap, averaging, ignore_extra_fields, exclusions, identical_ids, said:
            As :func:`evaluate`.
        ranks: Also each run's rank, 95% rank interval and tier in ``.ranks``
            (``evalwh compare --ranks``; :func:`ranks` on a DataFrame).

    Returns:
        A :class:`~evalwh.stats.compare.Comparison` whose fields are DataFrames:
        ``pairs`` is the significance table, one row per measure and comparison
        (``measure, run_a, run_b, n_topics, mean_a, mean_b, mean_diff, ci_low, ci_high,
        effect_size, es_e, wins, ties, losses, statistic, p_value, p_adjusted, reject``;
        ``run_b`` is the baseline); ``runs`` each run's mean and interval; ``anova`` the
        two-way ANOVA table per measure; ``families`` the test, correction, topics kept and
        margin of error per measure; ``notes`` the topics dropped, and the topics a run has no
        ranking for when the runs differ in them (each scores 0 for that run), as sentences.
        :func:`paper_table` lays it out for a paper.

    Raises:
        InsufficientDataError: for fewer than two runs, a baseline that is not a run, or
            fewer than two topics every run has.

    Examples:
        >>> import pandas as pd
        >>> import evalwh
        >>> qrels = pd.DataFrame({"query_id": ["1", "2", "3"], "doc_id": ["a"] * 3, "relevance": [1] * 3})
        >>> runs = {name: pd.DataFrame({"query_id": ["1", "2", "3"] * 2, "doc_id": [top] * 3 + [low] * 3,
        ...                             "score": [2.0] * 3 + [1.0] * 3})
        ...         for name, top, low in [("x", "a", "b"), ("y", "b", "a")]}
        >>> result = evalwh.compare(qrels, runs, ["AP"], baseline="y")
        >>> result.pairs[["run_a", "run_b", "mean_diff", "wins", "losses"]].values.tolist()
        [['x', 'y', 0.5, 3, 0]]
    """
    from evalwh.errors import check_seed
    from evalwh.methods.comparisons import split_retrieved, with_retrieved
    from evalwh.stats.compare import compare as compare_scores

    check_seed(seed)
    asked, name, kept = with_retrieved(_measures(measures), typed_names=False)
    scores = evaluate(
        qrels, runs, asked, per_query=True, rel=rel, unjudged=unjudged, depth_cap=depth_cap,
        averaging=averaging, ignore_extra_fields=ignore_extra_fields, exclusions=exclusions,
        identical_ids=identical_ids, said=said,
    )  # fmt: skip
    # (NumRet per topic, in the same pass: the topics a run has no ranking for, for the note)
    scores, retrieved = split_retrieved(scores[["run_id", "query_id", "measure", "value"]], name, kept)
    baselines = [baseline] if isinstance(baseline, str) else list(baseline or [])
    # as `evalwh compare -b B RUN...`: the baselines first, then the runs in the order given
    given = _given_order(runs, scores)
    unknown = [b for b in baselines if b not in given]
    if unknown:
        from evalwh.errors import InsufficientDataError

        raise InsufficientDataError(
            f"baseline {unknown[0]!r} is not one of the runs ({', '.join(given)}); a run file is named by its tag"
        )
    family = list(dict.fromkeys([*baselines, *given]))
    return compare_scores(
        scores, runs=family, measures=list(dict.fromkeys(scores["measure"])), baselines=baselines,
        all_pairs=all_pairs, test=test, correction=correction, alpha=alpha, n_resamples=resamples, rng=seed,
        retrieved=retrieved, ranks=ranks,
    )  # fmt: skip


def ranks(
    scores: pd.DataFrame,
    *,
    runs: Sequence[str] | None = None,
    measures: str | Iterable[str] | None = None,
    test: str = "t",
    correction: str | None = None,
    alpha: float = 0.05,
    resamples: int = 10_000,
    seed: int | None = None,
    confidence: float = 0.95,
    replicates: int = 2000,
    rank_seed: int | None = 0,
) -> pd.DataFrame:
    """Each run's rank, its bootstrap rank interval and its tier, from per-topic scores: ``evalwh compare --ranks``.

    No warehouse and no run files: ``scores`` is any table of per-topic scores with columns
    ``run_id, query_id, measure, value`` (``measure`` may be absent for one measure), from
    :func:`evaluate` with ``per_query=True``, ir_measures, ranx or a spreadsheet. Per measure,
    the runs are aligned on the topics every run has; the rank interval is the percentile
    interval of the run's rank over ``replicates`` bootstrap samples of the topics (seed
    ``rank_seed``); tier 1 is the best run and every run the family's test (``test``,
    ``correction`` over all pairs, ``alpha``, as ``evalwh compare``) cannot distinguish from
    it, tier 2 the same among the rest, and so on (methods §13;
    :func:`evalwh.stats.compare.rank_table`).

    Returns:
        One row per measure and run, best first: ``measure, run_id, n_topics, mean, rank,
        rank_low, rank_high, tier``; ``attrs`` holds the replicates, seed, confidence, test,
        correction and alpha.

    Examples:
        >>> import pandas as pd
        >>> import evalwh
        >>> scores = pd.DataFrame({"run_id": ["a"] * 5 + ["b"] * 5 + ["c"] * 5, "query_id": list("vwxyz") * 3,
        ...                        "value": [0.9, 0.8, 0.7, 0.9, 0.6, 0.5, 0.4, 0.9, 0.2, 0.3,
        ...                                  0.5, 0.6, 0.4, 0.3, 0.4]})
        >>> evalwh.ranks(scores)[["run_id", "rank", "rank_low", "rank_high", "tier"]].values.tolist()
        [['a', 1, 1, 1, 1], ['b', 2, 2, 3, 1], ['c', 3, 2, 3, 2]]
    """
    from evalwh.errors import check_seed
    from evalwh.stats.compare import rank_table

    check_seed(seed)
    check_seed(rank_seed)
    return rank_table(
        scores, runs=runs, measures=None if measures is None else _measures(measures), test=test,
        correction=correction, alpha=alpha, n_resamples=resamples, rng=seed, confidence=confidence,
        replicates=replicates, seed=rank_seed,
    )  # fmt: skip


def _given_order(runs: Runs, scores: pd.DataFrame) -> list[str]:
    """The run ids in the order the runs were given: a file's tag (its first line's), a mapping's
    keys; runs the files name otherwise (a file holding several tags, standard input) follow, sorted."""
    from pathlib import Path

    import pandas as pd

    from evalwh.io import formats

    order: list[str] = []
    if isinstance(runs, Mapping):
        order = [str(name) for name in runs]
    elif not isinstance(runs, pd.DataFrame):
        for item in _runs(runs):  # type: ignore[union-attr]
            if isinstance(item, (str, os.PathLike)) and not formats.needs_copy(Path(item)):
                first = formats.first_data_line(Path(item))
                if first is not None and len(first.fields) >= formats.RUN_FIELDS:
                    order.append(first.fields[formats.RUN_FIELDS - 1])
    present = set(scores["run_id"])
    given = [r for r in dict.fromkeys(order) if r in present]
    return given + sorted(present - set(given))


def paper_table(
    comparison: Comparison, format: str = "latex", *, digits: int = 4, compact: bool = False, marks: str = "letters"
) -> str:
    """A comparison as a paper's table: ``evalwh compare ... -f latex`` (or ``-f markdown``).

    One row per run, lettered ``a``, ``b``, ...; one column per measure holding the mean, bold
    where it is the best, and the letters of the runs it is significantly better than after
    the correction; the caption names the test, the correction and alpha
    (:mod:`evalwh.present.paper_table`).

    Args:
        comparison: What :func:`compare` or :meth:`evalwh.Warehouse.compare` returned.
        format: ``latex`` (a ``booktabs`` table that compiles in a plain ``article``; its
            first line names the package) or ``markdown`` (a pipe table, the caption below).
        digits: Decimals of the means.
        compact: Means only (the best still bold), no marks.
        marks: ``letters`` (the runs a run beats) or ``arrows`` (an up or down marker where a
            run is significantly better or worse than a baseline).

    Raises:
        EvalWhError: for another format or marks.
    """
    from evalwh.errors import EvalWhError
    from evalwh.present import paper_table as tables

    if format == "latex":
        return tables.to_latex(comparison, digits=digits, compact=compact, marks=marks)
    if format == "markdown":
        return tables.to_markdown(comparison, digits=digits, compact=compact, marks=marks)
    raise EvalWhError(f"paper_table: format {format!r}: give latex or markdown")
