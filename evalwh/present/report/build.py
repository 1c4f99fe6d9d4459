"""Gather everything an evaluation report shows, as DataFrames and figures.

One evaluation call (:func:`evalwh.measures.evaluation.evaluate`, per topic) yields every number of
the leaderboard, the decision matrix and the ranked-runs figure: the leaderboard means are
the per-topic values averaged here exactly as ``queries/reports/means.sql`` does (undefined
topics left out). The decision matrix uses the vectorised pair tests of
:mod:`evalwh.stats.decision` over the whole family of runs; the collection overview and the
unjudged share per rank come from one more pass over the evaluation context (methods §2.7);
the P@d bounds of the figure pairs from :func:`evalwh.methods.bounds.compute_bounds`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from evalwh import sql
from evalwh._version import __version__
from evalwh.measures import catalog
from evalwh.errors import InsufficientDataError, MetricParamError, NotFoundError
from evalwh.present.report import defaults
from evalwh.stats.compare import family_procedure

from evalwh.present.report.model import (
    ASSESSMENT_DEPTHS,
    DEFAULT_DEPTHS,
    Report,
    ReportOptions,
)

if TYPE_CHECKING:
    from evalwh.store.connection import Store

_QUERIES = "evalwh.queries.report"
_REPORTS = "evalwh.queries.reports"
# shares of unjudged documents reported in the overview ("from which depth on")
INCOMPLETE_SHARES = (0.01, 0.10, 0.50)

Progress = Callable[[int, int], None]


def build_report(
    wh: Store,
    collection: str,
    options: ReportOptions | None = None,
    *,
    progress: Progress | None = None,
) -> Report:
    """Evaluate, test and summarise a collection's runs for the report.

    Args:
        wh: The warehouse (read-only is fine once the judged-rows cache is current).
        collection: The collection.
        options: The report's options; the defaults when None.
        progress: Called with (steps done, steps) as the report is built.

    Returns:
        A :class:`Report`.

    Raises:
        NotFoundError: for an unknown collection, qrels set, baseline or pair run.
        MetricParamError: for a bad measure, pairing or depth.
        InsufficientDataError: for fewer than two runs or topics.

    Examples:
        >>> import tempfile
        >>> from evalwh import Warehouse
        >>> from evalwh.io.demo_data import write_demo
        >>> files = write_demo(tempfile.mkdtemp(), topics=6, docs_per_topic=60, depth=30,
        ...                    pool_depth=5)
        >>> wh = Warehouse(":memory:")
        >>> _ = wh.ingest_qrels(files.qrels, collection="demo")
        >>> _ = wh.ingest_runs(files.runs, collection="demo")
        >>> report = build_report(wh, "demo", ReportOptions(depths=(5, 10, 30), figures=False))
        >>> report.leaderboard["run_id"].iloc[0], report.pair_mode, len(report.pairs)
        ('dense', 'all', 112)
    """
    import time

    from evalwh.methods.decisions import pairings
    from evalwh.measures.evaluation import evaluate

    opts = options if options is not None else ReportOptions()
    clock = time.perf_counter
    timings: dict[str, float] = {}
    steps = 5
    done = 0

    def step(name: str, started: float) -> None:
        nonlocal done
        timings[name] = round(clock() - started, 3)
        done += 1
        if progress is not None:
            progress(done, steps)

    started = clock()
    wh.require_collection(collection)
    run_ids = wh.run_ids(collection)
    if not run_ids:
        raise InsufficientDataError(
            f"report: collection {collection!r} has no runs; evalwh ingest runs adds them"
        )
    # the qrels set: the one named, else the collection's default (Store.qrels_set)
    opts = replace(opts, qrels_id=wh.qrels_set(collection, opts.qrels_id))
    stored_baselines = () if opts.baselines or opts.all_pairs else defaults.read_conventions(wh, collection).baselines
    for name in [*opts.baselines, *stored_baselines, *(r for pair in opts.pairs for r in pair)]:
        if name not in run_ids:
            raise NotFoundError(
                f"report: collection {collection!r} has no run {name!r}; "
                f"evalwh runs -c {collection} lists them"
            )
    runs_meta = wh.runs(collection)
    deepest = int(runs_meta["max_depth"].max())
    qrels = wh.df(
        sql.query(_QUERIES, "qrels_provenance"),
        {"collection_id": collection, "qrels_id": opts.qrels_id},
    )
    if qrels.empty:
        raise NotFoundError(
            f"report: collection {collection!r} has no qrels set {opts.qrels_id!r}; "
            "evalwh ingest qrels adds one"
        )
    if opts.fill:  # (the sets are checked, with a did-you-mean, as the evaluation checks them)
        from evalwh.store.context import check_qrels_sets

        check_qrels_sets(wh, collection, opts.fill)
        topics = wh.df(
            sql.query(_QUERIES, "topics_composed"),
            {"collection_id": collection, "qrels_ids": [opts.qrels_id, *opts.fill], "rel": 1},
        )
    else:
        topics = wh.df(
            sql.query(_QUERIES, "topics"),
            {"collection_id": collection, "qrels_id": opts.qrels_id, "rel": 1},
        )
    stored = defaults.read_conventions(wh, collection)
    depth_stored = opts.pool_depth is None and stored.judged_depth is not None
    if depth_stored:
        opts = replace(opts, pool_depth=stored.judged_depth)
    if not opts.baselines and not opts.all_pairs and stored.baselines:
        opts = replace(opts, baselines=stored.baselines)
    unjudged, judged = _unjudged_and_judged_depth(wh, collection, opts)
    if depth_stored:
        judged = defaults.JudgedDepth(judged.depth, "the collection's conventions (evalwh conventions)")
    graded = defaults.is_graded(wh, collection, [opts.qrels_id, *opts.fill])
    if opts.measures is None:
        opts = replace(opts, measures=stored.measures or defaults.default_measures(graded))
    if opts.depths is None:
        chosen = defaults.default_depths(judged.depth, deepest)
        opts = replace(opts, depths=_depths(chosen, deepest))
    step("collection", started)

    started = clock()
    measures = _leaderboard_measures(opts.measures or ())
    from evalwh.present.report.ties import printed_changes

    # (the runs whose leaderboard means print differently under trec_eval 9's float32 order)
    changed, reordered = printed_changes(wh, collection, None, measures, qrels_id=opts.qrels_id, fill=opts.fill)
    ties = pd.DataFrame(changed, columns=["run_id", "values"])
    columns = pairings(opts.pairing, list(opts.depths or DEFAULT_DEPTHS), full=True)
    assess_specs = [f"A_p@{d}" for d in ASSESSMENT_DEPTHS]
    retrieved_specs = [f"A_p_ret@{d}" for d in ASSESSMENT_DEPTHS]
    decision_specs = [spec for _, perf, assess, _ in columns for spec in (perf, assess)]
    specs = list(dict.fromkeys([*measures, *assess_specs, *retrieved_specs, *decision_specs]))
    from evalwh.methods.comparisons import split_retrieved, with_retrieved

    # NumRet beside them, for compare's note when the runs' topic sets differ
    asked, retrieved_name, kept = with_retrieved(specs, typed_names=False)
    scores = evaluate(wh, asked, collection=collection, per_query=True, qrels_id=opts.qrels_id, fill=opts.fill)
    scores, retrieved = split_retrieved(scores[["run_id", "query_id", "measure", "value"]], retrieved_name, kept)
    means = _means(scores, specs)
    leaderboard = _leaderboard(means, measures, assess_specs, runs_meta, opts.flag_gap)
    from evalwh.present.report.judgments import build_judgments

    judgments = build_judgments(wh, collection, opts, leaderboard, measures[0])
    step("evaluation", started)

    started = clock()
    ranked = leaderboard["run_id"].tolist()
    if opts.baselines:
        # the baselines last, so every pair (run, baseline) reads "run ... baseline"
        order = [r for r in ranked if r not in opts.baselines] + list(opts.baselines)
    else:
        order = ranked
    test, correction = family_procedure(opts.test, opts.correction)
    opts = replace(opts, test=test.value, correction=correction.value)
    marks = comparison = ranks = weak = disagreeing = board_intervals = None
    n_pairs = 0
    family_notes: list[str] = []
    if len(run_ids) >= 2:
        from evalwh.methods.comparisons import family_runs
        from evalwh.present.report import significance

        family = family_runs(wh, collection, [], opts.baselines, all_runs=True)
        board_test = significance.family_compare(scores, family, measures, opts, retrieved)
        marks = significance.marks(board_test, ranked, opts.baselines)
        comparison = board_test.pairs
        family_notes = list(board_test.notes)
        matrix_specs = [spec for _, perf, assess, _ in columns for spec in (perf, assess)]
        matrix_test = significance.family_compare(scores, family, matrix_specs, opts)
        all_pairs = significance.decision_rows(matrix_test, columns, order, opts.baselines)
        all_pairs.insert(0, "collection_id", collection)
        n_pairs = len(all_pairs) // len(columns)
        intervals = _intervals(scores, columns, order, opts)
        pairs, mode = _listed_pairs(all_pairs, order, opts)
        ranks = significance.family_ranks(scores, family, measures[0], opts, board_test)
        board_intervals = board_test.runs[board_test.runs["measure"] == measures[0]]
        if mode == "summary":
            weak = significance.weak_pairs(all_pairs, order)
            pairs = significance.first_pairs(all_pairs, weak, opts.listed)
            disagreeing = significance.disagreements(board_test, ranked)
        from evalwh.stats import decision

        proportions = decision.case_proportions(
            all_pairs, by=["column", "performance", "assessment", "depth"]
        )
    else:
        all_pairs = pairs = proportions = pd.DataFrame()
        intervals = pd.DataFrame()
        mode = "none"
    family_info = {
        "test": opts.test,
        "correction": opts.correction,
        "n_runs": len(run_ids),
        "n_pairs": n_pairs,
        "mode": "baseline" if opts.baselines else "all",
        "baselines": list(opts.baselines),
        # compare's notes on the family (the runs' topic sets differ), as `evalwh compare` prints them
        "notes": family_notes,
    }
    step("decisions", started)

    started = clock()
    figure_pairs = list(opts.pairs)
    if not figure_pairs and len(run_ids) >= 2:
        figure_pairs = _default_pairs(leaderboard, measures, opts.baseline)
    pool_depth = judged.depth
    bands = None
    if opts.figures and opts.bounds and figure_pairs:
        from evalwh.methods.bounds import compute_bounds

        wanted = list(dict.fromkeys(r for pair in figure_pairs for r in pair))
        deepest_pair = int(runs_meta.loc[runs_meta["run_id"].isin(wanted), "max_depth"].max())
        bands = compute_bounds(
            wh,
            collection=collection,
            measure="P",
            runs=wanted,
            depths=_log_grid(max(deepest_pair, 1)),
            aggregation="mean",
            qrels_id=opts.qrels_id,
            fill=opts.fill,
        )
    step("bounds", started)

    started = clock()
    drawn = []
    if opts.figures:
        from evalwh.present.report import audits as report_audits, budget as report_budget, figures

        one_depth = sum(1 for *_, depth in columns if depth is not None) == 1
        if one_depth and ranks is not None and board_intervals is not None:
            # at one depth, lines against depth would be single points: the lead measure instead
            from evalwh.stats.rank_intervals import rank_note

            runs_drawn = figures.caterpillar_figure(ranks, board_intervals, rank_note(ranks.attrs) + ".")
        else:
            runs_drawn = figures.runs_figure(
                _profile(means, columns), opts.pairing, order=ranked, ranked_by=measures[0]
            )
        drawn += [figures.unjudged_figure(unjudged, pool_depth), figures.topics_figure(topics), runs_drawn]
        for index, pair in enumerate(figure_pairs, start=1):
            rows = _pair_rows(all_pairs, pair)
            own = _pair_intervals(scores, rows, family, opts) if opts.test == "t" else None
            drawn.append(
                figures.pair_figure(
                    index, rows, intervals if own is None else own, opts, family_sentence(opts, family_info),
                    own_test=own is not None,
                )
            )
            if bands is not None:
                drawn.append(figures.bounds_figure(index, bands, rows, pool_depth))
        drawn += report_budget.budget_figures(wh, collection)  # stored `experiment budget` rows, if any
        drawn += report_audits.audit_figures(wh, collection, [opts.qrels_id, *opts.fill])  # stored random audits
    step("figures", started)

    overview = _overview(topics, unjudged, runs_meta, opts, judged)
    from evalwh.store.ingest.exclusions import summary as exclusions_summary

    overview["excluded"] = exclusions_summary(wh, collection)  # methods §17
    matrix_measures = [perf for _, perf, _, depth in columns if depth is not None]
    return Report(
        collection=collection,
        options=opts,
        generated=dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
        version=__version__,
        overview=overview,
        topics=topics,
        unjudged=unjudged,
        leaderboard=leaderboard,
        pairs=pairs,
        pair_mode=mode,
        proportions=proportions,
        figures=drawn,
        qrels=qrels,
        runs=runs_meta,
        methods=_methods(opts, measures, family_info, mode, judged, graded) + _audit_method(wh, collection),
        timings=timings,
        judgments=judgments,
        marks=marks,
        family=family_info,
        deeper=defaults.deeper_than_judged([*measures, *matrix_measures], judged.depth, deepest),
        graded=graded,
        ties=ties,
        ties_reordered=reordered,
        comparison=comparison,
        ranks=ranks,
        weak=weak,
        disagreements=disagreeing,
    )


def _depths(given: Sequence[int] | None, deepest: int) -> tuple[int, ...]:
    """The given depths, or the default grid cut at the deepest ranking (which is added).

    Examples:
        >>> _depths(None, 40), _depths((10,), 40), _depths(None, 5000)
        ((10, 30, 40), (10,), (10, 30, 100, 500, 1000))
    """
    if given is not None:
        return tuple(int(d) for d in given)
    grid = [d for d in DEFAULT_DEPTHS if d < deepest]
    return tuple(dict.fromkeys((*grid, min(deepest, DEFAULT_DEPTHS[-1]))))


def _leaderboard_measures(specs: Sequence[str]) -> list[str]:
    """Canonical measure names; ``MAP`` is the mean of ``AP``, so it is read as ``AP``."""
    if not specs:
        raise MetricParamError("report: no measures given; e.g. --measures P@10,AP,nDCG@10")
    return list(dict.fromkeys(str(m) for m in catalog.expand(list(specs))))


def _unjudged_and_judged_depth(
    wh: Store, collection: str, opts: ReportOptions
) -> tuple[pd.DataFrame, defaults.JudgedDepth]:
    """The unjudged share per rank and the judged depth (methods §2.7), in one context."""
    from evalwh.store.context import Averaging, Options, build_context

    # every topic of the qrels set, as `evalwh unjudged` does (methods §2.7)
    options = Options(qrels_id=opts.qrels_id, averaging=Averaging.trec_eval_c, fill=opts.fill)
    with wh.transaction():
        build_context(wh, collection, None, options)
        share = wh.df(sql.query(_REPORTS, "unjudged_share"), {"max_rank": opts.max_rank})
    if opts.pool_depth is not None:  # (given, or the conventions': nothing to infer)
        return share, defaults.judged_depth(pd.DataFrame(), opts.pool_depth)
    depth = defaults.read_judged_depth(wh, collection, opts.qrels_id, opts.fill)
    return share, defaults.judged_depth(depth)


def _means(scores: pd.DataFrame, specs: Sequence[str]) -> pd.DataFrame:
    """Per-run means of per-topic values, as ``queries/reports/means.sql`` (sums for counts)."""
    aggregate = {str(m): m.metric.aggregate for m in catalog.expand(list(specs))}
    grouped = scores.groupby(["run_id", "measure"], sort=False)["value"]
    out = grouped.agg(mean="mean", total="sum", n_topics="count").reset_index()
    is_sum = out["measure"].map(aggregate).eq("sum")
    out["value"] = np.where(is_sum, out["total"], out["mean"])
    return out[["run_id", "measure", "value", "n_topics"]]


def _leaderboard(
    means: pd.DataFrame,
    measures: list[str],
    assess_specs: list[str],
    runs_meta: pd.DataFrame,
    flag_gap: float,
) -> pd.DataFrame:
    """One row per run: measures, assessment beside them, and the less-assessed flag.

    The flag looks at what a run retrieved (A_p_ret@d: judged share of min(d, m) documents):
    a short ranking whose documents are all judged is not less assessed, although its A_p@d
    counts the missing positions as not assessed. So the board shows A_p_ret@d beside A_p@d,
    and marks (``low A_p_ret@d``) the value the flag is about.
    """
    wide = means.pivot(index="run_id", columns="measure", values="value")
    retrieved_specs = [spec.replace("A_p@", "A_p_ret@") for spec in assess_specs]
    board = wide[list(dict.fromkeys([*measures, *assess_specs, *retrieved_specs]))].copy()
    retrieved = {spec: wide[spec.replace("A_p@", "A_p_ret@")] for spec in assess_specs}
    n_topics = means[means["measure"] == measures[0]].set_index("run_id")["n_topics"]
    board["n_topics"] = n_topics.reindex(board.index).astype("int64")
    # best first by the first measure; ties by run id so the order is reproducible
    board = board.reset_index().sort_values(
        [measures[0], "run_id"], ascending=[False, True], kind="stable"
    )
    pooled = runs_meta.set_index("run_id")["pooled"]
    board.insert(1, "pooled", board["run_id"].map(pooled))
    if "ir_method" in runs_meta and runs_meta["ir_method"].notna().any():  # ir_metadata blocks
        board.insert(2, "method", board["run_id"].map(runs_meta.set_index("run_id")["ir_method"]))
    board.insert(0, "position", np.arange(1, len(board) + 1))
    known = board["pooled"].notna().any() and board["pooled"].fillna(False).astype(bool).any()
    reference = board["pooled"].fillna(False).astype(bool) if known else pd.Series(True, index=board.index)
    notes = []
    for spec in assess_specs:
        share = board["run_id"].map(retrieved[spec])
        low, median, fence = flag_rule(share, reference, flag_gap)
        name = spec.replace("A_p@", "A_p_ret@")
        text = name + " " + share.map("{:.2f}".format) + f" (median {median:.2f}, fence {fence:.2f})"
        notes.append(text.where(low, ""))
        board[f"low {name}"] = low.to_numpy()
    board["flag"] = ["; ".join(n for n in row if n) for row in zip(*notes, strict=True)]
    board["flagged"] = board["flag"] != ""
    return board.reset_index(drop=True)


def flag_rule(share: pd.Series, reference: pd.Series, gap: float) -> tuple[pd.Series, float, float]:
    """Which runs are less assessed: below the reference runs' lower fence and ``gap`` below their median.

    The reference runs are the pooled ones when run metadata says which (else every run); their
    judged shares set the median and Tukey's lower fence ``Q1 - 1.5 IQR``. A run is flagged when
    its share lies below both the fence and ``median - gap``: an outlier among the pooled runs,
    by a margin that matters. A pooled run is flagged only when it is such an outlier itself.

    Returns:
        The flags (aligned with ``share``), the median and the fence.

    Examples:
        >>> share = pd.Series([1.0, 1.0, 0.98, 0.97, 0.6, 0.99])
        >>> low, median, fence = flag_rule(share, pd.Series([True] * 4 + [False] * 2), 0.10)
        >>> low.tolist(), round(median, 3), round(fence, 3)
        ([False, False, False, False, True, False], 0.99, 0.944)
    """
    ref = share[reference.to_numpy()].dropna()
    if ref.empty:
        ref = share.dropna()
    q1, median, q3 = (float(v) for v in ref.quantile([0.25, 0.5, 0.75]))
    fence = q1 - 1.5 * (q3 - q1)
    low = (share < fence) & (share < median - gap)
    return low, median, fence


def _intervals(
    scores: pd.DataFrame,
    columns: list[tuple[str, str, str, int | None]],
    order: list[str],
    opts: ReportOptions,
) -> pd.DataFrame:
    """The runs' comparison intervals per depth, for the pair figures."""
    from evalwh.stats import significance

    intervals = []
    for label, perf, assess, depth in columns:
        if depth is None:
            continue
        for kind, spec in (("performance", perf), ("assessment", assess)):
            ci = significance.comparison_intervals(
                scores[scores["measure"] == spec],
                alpha=opts.alpha,
                runs=order,
                blocked=opts.test == "anova2",
            )
            ci.insert(0, "depth", depth)
            ci.insert(0, "measure", spec)
            ci.insert(0, "kind", kind)
            ci.insert(0, "column", label)
            intervals.append(ci)
    if not intervals:
        return pd.DataFrame(columns=["column", "kind", "measure", "depth"])
    ci_frame = pd.concat(intervals, ignore_index=True)
    ci_frame["depth"] = ci_frame["depth"].astype("Int64")
    return ci_frame


def _pair_intervals(
    scores: pd.DataFrame, rows: pd.DataFrame, family: Sequence[str], opts: ReportOptions
) -> pd.DataFrame:
    """A pair's comparison bars under the report's paired t-test and correction, per depth.

    On the topics the family's test used (those with a score for every run of the family in
    the measure, as ``evalwh compare`` aligns them), each run's bar is its mean +- the
    half-width of :func:`evalwh.stats.significance.paired_comparison_half_width` at the pair's
    adjusted p-value: the two bars overlap exactly when the report finds no significant
    difference. Same layout as :func:`_intervals`, for the pair's two runs.
    """
    from evalwh.stats.significance import paired_comparison_half_width

    out = []
    for row in rows.itertuples(index=False):
        if pd.isna(row.depth):
            continue
        for kind, spec, p_adjusted in (
            ("performance", row.performance, row.perf_p_adjusted),
            ("assessment", row.assessment, row.assess_p_adjusted),
        ):
            wide = scores[scores["measure"] == spec].pivot(index="query_id", columns="run_id", values="value")
            wide = wide.reindex(columns=list(family)).dropna()
            a, b = wide[row.run_a].to_numpy(), wide[row.run_b].to_numpy()
            half = paired_comparison_half_width(a, b, p_adjusted=float(p_adjusted), alpha=opts.alpha)
            for run, values in ((row.run_a, a), (row.run_b, b)):
                out.append({
                    "column": row.column, "kind": kind, "measure": spec, "depth": int(row.depth), "run_id": run,
                    "n_topics": len(values), "mean": float(values.mean()), "half_width": half,
                })  # fmt: skip
    frame = pd.DataFrame(out)
    frame["depth"] = frame["depth"].astype("Int64")
    return frame


def _listed_pairs(
    all_pairs: pd.DataFrame, order: list[str], opts: ReportOptions
) -> tuple[pd.DataFrame, str]:
    """The pairs the report lists: against the baseline, all of them, or neighbours."""
    if opts.baselines:
        keep = all_pairs["run_b"].isin(opts.baselines)
        mode = "baseline"
    elif len(order) * (len(order) - 1) // 2 <= opts.max_all_pairs:
        keep = pd.Series(True, index=all_pairs.index)
        mode = "all"
    else:
        # too many pairs to list: the section summarises (tiers, weak pairs, disagreements)
        keep = pd.Series(False, index=all_pairs.index)
        mode = "summary"
    listed = all_pairs[keep]
    # down the leaderboard: by the first run's position, then the second's (stable per column)
    rank = {run: i for i, run in enumerate(order)}
    ordered = listed.assign(_a=listed["run_a"].map(rank), _b=listed["run_b"].map(rank))
    ordered = ordered.sort_values(["_a", "_b"], kind="stable").drop(columns=["_a", "_b"])
    return ordered.reset_index(drop=True), mode


def _default_pairs(
    leaderboard: pd.DataFrame, measures: list[str], baseline: str | None
) -> list[tuple[str, str]]:
    """The pairs drawn when none are given: the top of the board, and where measures disagree.

    The first pair is the two runs at the top of the leaderboard (the best run against the
    baseline, with one). The second is the pair of runs, among the top ten, that the
    leaderboard's measures order most differently: the largest ``min(d_lead, -d_other)``
    over the other measures, ``d`` a difference of means in units of the measure's spread
    over the runs (the lead says a beats b, another measure says b beats a). When no two
    measures disagree, the most flagged run against the anchor, as before.
    """
    ranked = leaderboard["run_id"].tolist()
    anchor = baseline if baseline is not None else ranked[0]
    others = [r for r in ranked if r != anchor]
    pairs = [(others[0], anchor)]
    top = leaderboard.head(10)
    if baseline is not None and baseline not in set(top["run_id"]):
        top = pd.concat([top, leaderboard[leaderboard["run_id"] == baseline]])
    best_pair, best_score = None, 0.0
    lead = top[measures[0]].to_numpy(dtype=float)
    spread = max(float(leaderboard[measures[0]].std(ddof=0)), 1e-12)
    lead_diff = (lead[:, None] - lead[None, :]) / spread
    ids = top["run_id"].to_numpy(dtype=object)
    # with a baseline, only the pairs with it were tested: the other side must be the baseline
    allowed = np.ones(lead_diff.shape, dtype=bool) if baseline is None else (
        (ids[:, None] == baseline) | (ids[None, :] == baseline)
    )
    for other in measures[1:]:
        values = top[other].to_numpy(dtype=float)
        width = max(float(leaderboard[other].std(ddof=0)), 1e-12)
        against = (values[None, :] - values[:, None]) / width  # b beats a on the other measure
        score = np.minimum(lead_diff, against)
        score = np.where(np.isnan(score) | ~allowed, -np.inf, score)
        i, j = np.unravel_index(int(np.argmax(score)), score.shape)
        if score[i, j] > best_score:
            best_pair, best_score = (str(ids[i]), str(ids[j])), float(score[i, j])
    if best_pair is not None and set(best_pair) != set(pairs[0]):
        pairs.append(best_pair)
    elif best_pair is None:
        flagged = leaderboard[leaderboard["flagged"] & (leaderboard["run_id"] != anchor)]
        if not flagged.empty and flagged["run_id"].iloc[0] != others[0]:
            pairs.append((str(flagged["run_id"].iloc[0]), anchor))
    return pairs


def _pair_rows(all_pairs: pd.DataFrame, pair: tuple[str, str]) -> pd.DataFrame:
    """A pair's rows at every column, in the orientation the family gave it."""
    a, b = pair
    rows = all_pairs[
        ((all_pairs["run_a"] == a) & (all_pairs["run_b"] == b))
        | ((all_pairs["run_a"] == b) & (all_pairs["run_b"] == a))
    ]
    if rows.empty:
        raise NotFoundError(f"report: no pair {a!r} / {b!r} in the tested family")
    return rows.reset_index(drop=True)


def _profile(means: pd.DataFrame, columns: list[tuple[str, str, str, int | None]]) -> pd.DataFrame:
    """Means per run and depth in :func:`evalwh.methods.decisions.run_profile`'s layout."""
    rows = []
    for _, perf, assess, depth in columns:
        if depth is None:
            continue
        for kind, spec in (("performance", perf), ("assessment", assess)):
            part = means[means["measure"] == spec][["run_id", "measure", "value"]].copy()
            part.insert(1, "kind", kind)
            part.insert(3, "depth", depth)
            rows.append(part)
    out = pd.concat(rows, ignore_index=True)
    out["depth"] = out["depth"].astype("Int64")
    return out


def _log_grid(deepest: int, points: int = 40) -> list[int]:
    """About ``points`` depths from 1 to ``deepest``, evenly spaced on a log scale."""
    grid = np.unique(np.round(np.geomspace(1, deepest, points)).astype(int))
    return [int(d) for d in grid]


def _audit_method(wh: Store, collection: str) -> list[tuple[str, str]]:
    """The methods line of the collection's random audits, if it has some (the figures' captions say the rest)."""
    from evalwh.methods.audits import list_audits

    audits = sorted(list_audits(wh, collection)["audit_id"])
    if not audits:
        return []
    return [(
        "Random audits",
        f"{', '.join(audits)}: each run's score under the people's labels estimated from the machine's labels of "
        "every frame pair corrected by the audit's (prediction-powered inference with PPI++'s tuned weight, one "
        "for all the runs; Student's t intervals for a pairs audit, the machine's points for a topics audit; 95%), "
        "P@10 for a pairs audit and AP for a topics audit (methods §15). Each figure's caption (HTML report) names "
        "the people's label set, the seed and the command that reproduces it.",
    )]  # fmt: skip


def _overview(
    topics: pd.DataFrame,
    unjudged: pd.DataFrame,
    runs_meta: pd.DataFrame,
    opts: ReportOptions,
    judged: defaults.JudgedDepth,
) -> dict[str, Any]:
    """The collection at a glance."""
    pool_depth, source = judged.depth, judged.source
    first_at = {}
    for share in INCOMPLETE_SHARES:
        reached = unjudged.loc[unjudged["share"] >= share, "rank"]
        first_at[share] = int(reached.iloc[0]) if not reached.empty else None
    at_depths = {}
    by_rank = unjudged.set_index("rank")["share"]
    for depth in opts.depths or ():
        at_depths[int(depth)] = float(by_rank[depth]) if depth in by_rank.index else None
    pooled = runs_meta["pooled"]
    return {
        "topics": len(topics),
        "topics_with_relevant": int((topics["relevant"] > 0).sum()),
        "judged": int(topics["judged"].sum()),
        "relevant": int(topics["relevant"].sum()),
        "judged_per_topic": _spread(topics["judged"]),
        "relevant_per_topic": _spread(topics["relevant"]),
        "runs": len(runs_meta),
        "pooled_runs": int(pooled.fillna(False).astype(bool).sum())
        if pooled.notna().any()
        else None,
        "deepest_run": int(runs_meta["max_depth"].max()),
        "pool_depth": pool_depth,
        "pool_depth_source": source,
        "pool_depth_sentence": judged.sentence(),
        "unjudged_first_at": first_at,
        "unjudged_at_depths": at_depths,
    }


def _spread(values: pd.Series) -> dict[str, float]:
    """Mean, median, minimum and maximum of a per-topic count."""
    return {
        "mean": float(values.mean()),
        "median": float(values.median()),
        "min": int(values.min()),
        "max": int(values.max()),
    }


from evalwh.present.report.method_notes import _methods, family_sentence  # noqa: E402  (re-exported)
