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
        ('hybrid', 'all', 112)
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
    if len(run_ids) < 2:
        raise InsufficientDataError(
            f"report: collection {collection!r} has {len(run_ids)} run(s); a report compares "
            "at least two (evalwh ingest runs adds more)"
        )
    for name in [opts.baseline, *(r for pair in opts.pairs for r in pair)]:
        if name is not None and name not in run_ids:
            raise NotFoundError(
                f"report: collection {collection!r} has no run {name!r}; "
                f"evalwh runs -c {collection} lists them"
            )
    runs_meta = wh.runs(collection)
    opts = replace(opts, depths=_depths(opts.depths, int(runs_meta["max_depth"].max())))
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
    unjudged, inferred_depth = _unjudged_and_pool_depth(wh, collection, opts)
    step("collection", started)

    started = clock()
    measures = _leaderboard_measures(opts.measures)
    columns = pairings(opts.pairing, list(opts.depths or DEFAULT_DEPTHS), full=True)
    assess_specs = [f"A_p@{d}" for d in ASSESSMENT_DEPTHS]
    retrieved_specs = [f"A_p_ret@{d}" for d in ASSESSMENT_DEPTHS]
    decision_specs = [spec for _, perf, assess, _ in columns for spec in (perf, assess)]
    specs = list(dict.fromkeys([*measures, *assess_specs, *retrieved_specs, *decision_specs]))
    scores = evaluate(wh, specs, collection=collection, per_query=True, qrels_id=opts.qrels_id, fill=opts.fill)
    scores = scores[["run_id", "query_id", "measure", "value"]]
    means = _means(scores, specs)
    leaderboard = _leaderboard(means, measures, assess_specs, runs_meta, opts.flag_gap)
    from evalwh.present.report.judgments import build_judgments

    judgments = build_judgments(wh, collection, opts, leaderboard, measures[0])
    step("evaluation", started)

    started = clock()
    ranked = leaderboard["run_id"].tolist()
    if opts.baseline is not None:
        # the baseline last, so every pair (run, baseline) reads "run ... baseline"
        order = [r for r in ranked if r != opts.baseline] + [opts.baseline]
    else:
        order = ranked
    all_pairs, intervals = _decisions(scores, columns, order, opts, collection)
    pairs, mode = _listed_pairs(all_pairs, order, opts)
    from evalwh.stats import decision

    proportions = decision.case_proportions(
        all_pairs, by=["column", "performance", "assessment", "depth"]
    )
    step("decisions", started)

    started = clock()
    figure_pairs = list(opts.pairs) or _default_pairs(leaderboard, opts.baseline)
    pool_depth = opts.pool_depth if opts.pool_depth is not None else inferred_depth
    bands = None
    if opts.figures and opts.bounds and figure_pairs:
        from evalwh.methods.bounds import compute_bounds

        wanted = list(dict.fromkeys(r for pair in figure_pairs for r in pair))
        deepest = int(runs_meta.loc[runs_meta["run_id"].isin(wanted), "max_depth"].max())
        bands = compute_bounds(
            wh,
            collection=collection,
            measure="P",
            runs=wanted,
            depths=_log_grid(max(deepest, 1)),
            aggregation="mean",
            qrels_id=opts.qrels_id,
            fill=opts.fill,
        )
    step("bounds", started)

    started = clock()
    drawn = []
    if opts.figures:
        from evalwh.present.report import budget as report_budget, figures

        drawn += [
            figures.unjudged_figure(unjudged, pool_depth),
            figures.topics_figure(topics),
            figures.runs_figure(_profile(means, columns), opts.pairing),
        ]
        for index, pair in enumerate(figure_pairs, start=1):
            rows = _pair_rows(all_pairs, pair)
            drawn.append(figures.pair_figure(index, rows, intervals, opts))
            if bands is not None:
                drawn.append(figures.bounds_figure(index, bands, rows, pool_depth))
        drawn += report_budget.budget_figures(wh, collection)  # stored `experiment budget` rows, if any
    step("figures", started)

    overview = _overview(topics, unjudged, runs_meta, opts, inferred_depth)
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
        methods=_methods(opts, measures, len(order), len(all_pairs) // len(columns), mode),
        timings=timings,
        judgments=judgments,
    )


def _depths(given: Sequence[int] | None, deepest: int) -> tuple[int, ...]:
    """The given depths, or the default grid cut at the deepest ranking (which is added)."""
    if given is not None:
        return tuple(int(d) for d in given)
    grid = [d for d in DEFAULT_DEPTHS if d < deepest]
    return (*grid, min(deepest, DEFAULT_DEPTHS[-1]))


def _leaderboard_measures(specs: Sequence[str]) -> list[str]:
    """Canonical measure names; ``MAP`` is the mean of ``AP``, so it is read as ``AP``."""
    if not specs:
        raise MetricParamError("report: no measures given; e.g. --measures P@10,AP,nDCG@10")
    return list(dict.fromkeys(str(m) for m in catalog.expand(list(specs))))


def _unjudged_and_pool_depth(
    wh: Store, collection: str, opts: ReportOptions
) -> tuple[pd.DataFrame, int | None]:
    """The unjudged share per rank and the pool depth implied by pooled runs, in one context."""
    from evalwh.store.context import Averaging, Options, build_context

    # every topic of the qrels set, as `evalwh unjudged` does (methods §2.7)
    options = Options(qrels_id=opts.qrels_id, averaging=Averaging.trec_eval_c, fill=opts.fill)
    with wh.transaction():
        build_context(wh, collection, None, options)
        share = wh.df(sql.query(_REPORTS, "unjudged_share"), {"max_rank": opts.max_rank})
        depth = wh.df(sql.query(_QUERIES, "pool_depth"), {"collection_id": collection})
    value = depth["pool_depth"].iloc[0]
    return share, None if pd.isna(value) else int(value)


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
    board.insert(0, "position", np.arange(1, len(board) + 1))
    notes = []
    for spec in assess_specs:
        share = board["run_id"].map(retrieved[spec])
        median = float(share.median())
        low = share < median - flag_gap
        name = spec.replace("A_p@", "A_p_ret@")
        text = name + " " + share.map("{:.2f}".format) + f" (median {median:.2f})"
        notes.append(text.where(low, ""))
        board[f"low {name}"] = low.to_numpy()
    board["flag"] = ["; ".join(n for n in row if n) for row in zip(*notes, strict=True)]
    board["flagged"] = board["flag"] != ""
    return board.reset_index(drop=True)


def _decisions(
    scores: pd.DataFrame,
    columns: list[tuple[str, str, str, int | None]],
    order: list[str],
    opts: ReportOptions,
    collection: str,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every pair of the family at every column, and the runs' comparison intervals."""
    from evalwh.stats import decision, significance

    generator = np.random.default_rng(opts.seed)
    frames = []
    intervals = []
    for label, perf, assess, depth in columns:
        performance = scores[scores["measure"] == perf]
        assessment = scores[scores["measure"] == assess]
        pairs = decision.decision_pairs(
            performance,
            assessment,
            test=opts.test,
            correction=opts.correction,
            alpha=opts.alpha,
            runs=order,
            n_resamples=opts.n_resamples,
            rng=generator,
        )
        pairs.insert(0, "depth", depth)
        pairs.insert(0, "assessment", assess)
        pairs.insert(0, "performance", perf)
        pairs.insert(0, "column", label)
        frames.append(pairs)
        if depth is None:
            continue
        for kind, frame, spec in (
            ("performance", performance, perf),
            ("assessment", assessment, assess),
        ):
            ci = significance.comparison_intervals(
                frame, alpha=opts.alpha, runs=order, blocked=opts.test == "anova2"
            )
            ci.insert(0, "depth", depth)
            ci.insert(0, "measure", spec)
            ci.insert(0, "kind", kind)
            ci.insert(0, "column", label)
            intervals.append(ci)
    out = pd.concat(frames, ignore_index=True)
    out["depth"] = out["depth"].astype("Int64")
    out.insert(0, "collection_id", collection)
    ci_frame = pd.concat(intervals, ignore_index=True)
    ci_frame["depth"] = ci_frame["depth"].astype("Int64")
    return out, ci_frame


def _listed_pairs(
    all_pairs: pd.DataFrame, order: list[str], opts: ReportOptions
) -> tuple[pd.DataFrame, str]:
    """The pairs the report lists: against the baseline, all of them, or neighbours."""
    if opts.baseline is not None:
        keep = all_pairs["run_b"] == opts.baseline
        mode = "baseline"
    elif len(order) * (len(order) - 1) // 2 <= opts.max_all_pairs:
        keep = pd.Series(True, index=all_pairs.index)
        mode = "all"
    else:
        position = {run: i for i, run in enumerate(order)}
        keep = all_pairs["run_b"].map(position) == all_pairs["run_a"].map(position) + 1
        mode = "adjacent"
    return all_pairs[keep].reset_index(drop=True), mode


def _default_pairs(leaderboard: pd.DataFrame, baseline: str | None) -> list[tuple[str, str]]:
    """The pairs drawn when none are given: the top of the board, and its most flagged run."""
    ranked = leaderboard["run_id"].tolist()
    anchor = baseline if baseline is not None else ranked[0]
    others = [r for r in ranked if r != anchor]
    pairs = [(others[0], anchor)]
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


def _overview(
    topics: pd.DataFrame,
    unjudged: pd.DataFrame,
    runs_meta: pd.DataFrame,
    opts: ReportOptions,
    inferred: int | None,
) -> dict[str, Any]:
    """The collection at a glance."""
    if opts.pool_depth is not None:
        pool_depth, source = opts.pool_depth, "given"
    elif inferred is not None:
        pool_depth, source = inferred, "inferred from the pooled runs' fully judged prefixes"
    else:
        pool_depth, source = None, "unknown (no run metadata says which runs were pooled)"
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


def _methods(
    opts: ReportOptions, measures: list[str], n_runs: int, n_pairs: int, mode: str
) -> list[tuple[str, str]]:
    """How every number of the report was computed, one line per kind of number."""
    pairing = "P@d with A_p@d" if opts.pairing == "P" else "MAP@d (AP@d) with A_p@d"
    listed = {
        "baseline": f"every run against the baseline {opts.baseline}",
        "all": "every pair",
        "adjacent": "each run against the next one down the leaderboard",
    }[mode]
    seed = "none" if opts.seed is None else str(opts.seed)
    return [
        (
            "Measures",
            f"{', '.join(measures)}: means over topics with at least one relevant document "
            f"(methods §0.4); qrels set {opts.qrels_label!r}{_filled(opts)}, relevant = grade >= 1, unjudged "
            "documents count as non-relevant, a topic a run did not answer scores as an empty "
            "ranking. AP's mean is MAP.",
        ),
        (
            "Assessment",
            "A_p@d = share of the top d positions holding a judged document (positions past "
            "the end of a short run count as not assessed, methods §2.2). A run is flagged "
            "as less assessed when the documents it retrieved are: its mean A_p_ret@10 or "
            "A_p_ret@100 (judged share of the min(d, retrieved) documents it returned) lies "
            f"more than {opts.flag_gap:.2f} below the median run's.",
        ),
        (
            "Significance",
            f"test {opts.test}, correction {opts.correction} over all {n_pairs} pairs of the "
            f"family of {n_runs} runs, alpha {opts.alpha}, seed {seed} "
            f"(randomization test only, {opts.n_resamples} resamples). Topics undefined for "
            "any run in either metric are dropped from both.",
        ),
        (
            "Decision matrix",
            f"pairing {pairing} at depths {', '.join(map(str, opts.depths or ()))}, plus MAP/MAA "
            "(AP with AA). Cases: 1 (== ==), 2 (== ≠), 3a (≠ ==), 3b (better run assessed "
            "significantly less), 4 (better run also assessed more). 1 and 3 are strong, 2 "
            f"and 4 weak. Listed: {listed}; the case proportions cover all pairs.",
        ),
        (
            "Bounds",
            "P@d belief and plausibility: [P@d, P@d + U@d] with U@d = 1 - A_p@d, mean masses "
            "over topics (methods §7); the interval holds P@d under every completion of the "
            "judgments.",
        ),
        (
            "Unjudged share",
            "at rank k: lists (run, topic, every qrels topic) reaching k whose document at k "
            "is unjudged, over lists reaching k (methods §2.7).",
        ),
    ]


def _filled(opts: ReportOptions) -> str:
    """How a composition's labels were chosen, for the methods line (empty for one set)."""
    if not opts.fill:
        return ""
    return (
        f" ({opts.qrels_id}'s labels; a document it did not judge takes the label of the first "
        f"of {', '.join(opts.fill)} that judged it, grade >= 0)"
    )
