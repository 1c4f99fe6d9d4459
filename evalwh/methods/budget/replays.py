"""Replays of pooling strategies under a judging budget (methods §5.5-§5.6, ``evalwh experiment budget``).

:func:`replay`: each strategy orders the candidates of the pool (:mod:`evalwh.methods.budget.order`),
the reference's labels are revealed in that order, and at each budget the judged prefix is a label
set. Every run is scored under every such set in one set-wise pass
(:func:`evalwh.methods.budget.scores.score_label_sets`), and each set is compared with the complete
reference (:func:`compare_to_reference`): relevant documents found, Kendall's tau_b and tau_ap of
the leaderboard (:mod:`evalwh.stats.rankings`), the share of the reference's significant pairs kept
(:func:`evalwh.stats.significance.pairwise`) and the judged share A_p at the leaderboard's depth.
The results are stored (:func:`store_results`) and read back (:func:`stored_results`,
:func:`summarise`). People with an LLM on a budget: :mod:`evalwh.methods.budget.hybrids`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from evalwh import sql
from evalwh.errors import EvalWhError, InsufficientDataError
from evalwh.methods import pools
from evalwh.methods.budget import ids as budget_ids
from evalwh.methods.budget.candidates import candidate_order
from evalwh.methods.budget.scores import score_label_sets
from evalwh.methods.budget.order import RANDOM, apply_budget, check_strategy
from evalwh.store.connection import params_json

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.store.connection import Store

_POOLS = "evalwh.queries.pools"
SCORE_DECIMALS = 12
SELECTIONS = ("random", "uncertain", "lara")
CALIBRATIONS = ("isotonic", "logistic")
RESULT_COLUMNS = (
    "strategy", "seed", "budget", "budget_share", "judged", "relevant_found", "relevant_share",
    "kendall_tau_b", "tau_ap", "significant_kept", "judged_share",
)  # fmt: skip


def parse_budgets(
    specs: Sequence[str | int | float], pool_size: int, n_topics: int, scope: str,
    topic_sizes: Sequence[int] | None = None,
) -> list[int]:  # fmt: skip
    """Budgets as numbers of judgments: ``"10%"`` is that share of the pool, a number is itself.

    In total, a share of the pool is ``round(share * pool_size)``. Per topic, a count is that
    many judgments in every topic, and a share is that share of each topic's own candidates,
    ``max(1, round(share * size))`` for each of ``topic_sizes`` (the topics' candidate counts),
    returned as their sum: ``100%`` keeps every candidate. Without ``topic_sizes`` the topics are
    taken to be of equal size ``pool_size / n_topics``. A count is a whole number (not ``1.5``,
    ``True`` or ``1_0``), at most the pool in total (its budget share would pass 1). A budget
    given twice (``5%,5%``) is refused; two that come to the same count (``10%`` and its count)
    are one. :func:`budget_limits` gives what each budget keeps per topic.

    Examples:
        >>> parse_budgets(["10%", 500], 86830, 50, "total"), parse_budgets(["10%", "100%"], 30, 2, "topic", [10, 20])
        ([500, 8683], [3, 30])
    """
    return sorted({budget for budget, _ in budget_limits(specs, pool_size, n_topics, scope, topic_sizes)})


def budget_limits(
    specs: Sequence[str | int | float], pool_size: int, n_topics: int, scope: str,
    topic_sizes: Sequence[int] | None = None,
) -> list[tuple[int, int | list[int]]]:  # fmt: skip
    """Each budget of :func:`parse_budgets`, in the order given, with what it keeps: a number of
    judgments (in total, or in every topic for a per-topic count), or, for a per-topic share, one
    number per topic of ``topic_sizes``.

    Examples:
        >>> budget_limits(["50%", "4"], 30, 2, "topic", [10, 20])
        [(15, [5, 10]), (4, 4)]
    """
    from evalwh.io.formats import parse_number

    specs = [specs] if isinstance(specs, (str, int, float)) else list(specs)
    if not specs:
        raise EvalWhError("budget: give at least one budget (a share of the pool such as 10%, or a count)")
    sizes = list(topic_sizes) if topic_sizes is not None else [pool_size / max(n_topics, 1)] * n_topics
    out: list[tuple[int, int | list[int]]] = []
    given: list[str] = []
    for spec in specs:
        text = str(spec).strip()
        share = parse_number(text[:-1]) if text.endswith("%") and not isinstance(spec, bool) else None
        count = None if isinstance(spec, bool) or text.endswith("%") else parse_number(text)
        if share is not None and 0.0 < share <= 100.0:
            if scope == "topic":
                per_topic = [max(1, int(np.floor(share / 100.0 * size + 0.5))) for size in sizes]
                out.append((int(sum(per_topic)), per_topic))
            else:
                value = max(1, int(np.floor(share / 100.0 * pool_size + 0.5)))
                out.append((value, value))
        elif count is not None and count >= 1 and count.is_integer():
            if scope == "total" and pool_size and count > pool_size:
                raise EvalWhError(
                    f"budget: {int(count)} judgments is more than the pool's {pool_size} pairs; "
                    f"give at most {pool_size} or a share (100%)"
                )
            out.append((int(count), int(count)))
        else:
            raise EvalWhError(f"budget: {text!r} is neither a share of the pool (10%) nor a positive whole count")
        if text in given:
            raise EvalWhError(f"budget: {text!r} is given twice; give each budget once")
        value, limit = out[-1]
        # (only with the topics' real sizes: the equal sizes assumed without them make no row)
        for other, (value_o, limit_o) in zip(given if topic_sizes is not None else [], out[:-1], strict=False):
            if value_o == value and limit_o != limit:  # a share per topic and a count per topic: one row each
                share, count = (other, text) if isinstance(limit_o, list) else (text, other)
                raise EvalWhError(
                    f"budget: {share!r} ({value:,} judgments in all) and {count!r} ({value:,} in every topic) "
                    "would be stored as one budget; give one of them"
                )
        given.append(text)
    return out


def _measure_depth(measure: str, depth: int) -> int:
    """The leaderboard's depth: the measure's cutoff k, else the pool depth."""
    from evalwh.measures import catalog

    parsed = catalog.expand([measure])
    if len(parsed) != 1:
        raise EvalWhError(f"budget: give one measure, got {measure!r}")
    k = parsed[0].params.get("k")
    return int(k) if k is not None else depth


def canonical_measure(measure: str) -> str:
    """The name :func:`score_label_sets` gives ``measure``'s values (one spec)."""
    from evalwh.measures import catalog

    return str(catalog.expand([measure])[0])


def compare_to_reference(
    scores: pd.DataFrame,
    measure: str,
    judged_measure: str,
    reference_label: str,
    *,
    test: str = "t",
    correction: str = "none",
    alpha: float = 0.05,
) -> pd.DataFrame:
    """Each label set's leaderboard against the reference's (:func:`score_label_sets` output).

    Returns:
        One row per label set: ``label_id, kendall_tau_b, tau_ap, significant_kept,
        judged_share``. ``significant_kept`` is the share of the pairs the reference finds
        significantly different that the label set finds significant in the same direction
        (NaN when the reference finds none, or cannot test: fewer than two topics).
    """
    import pandas as pd

    from evalwh.stats import kept_decisions, rankings, significance

    main = scores[scores["measure"] == measure]
    per_run = main.groupby(["label_id", "run_id"])["value"].mean().unstack("run_id").sort_index(axis=1)
    ref_means = per_run.loc[reference_label].round(SCORE_DECIMALS).to_numpy()

    def outcomes(label: str) -> Any:
        frame = main[main["label_id"] == label][["run_id", "query_id", "value"]]
        tested = significance.pairwise(frame, test=test, correction=correction, alpha=alpha)
        return tested.set_index(["run_a", "run_b"])["outcome"]

    try:
        ref_out = outcomes(reference_label)
    except InsufficientDataError:
        ref_out = pd.Series(dtype="float64")  # a single topic: no test, nothing to keep (NaN)
    significant = ref_out[ref_out != 0]
    judged = scores[scores["measure"] == judged_measure].groupby("label_id")["value"].mean()
    rows = []
    for label in per_run.index:
        other = per_run.loc[label].round(SCORE_DECIMALS).to_numpy()
        kept = float("nan")
        if len(significant):
            mine = ref_out if label == reference_label else outcomes(label)
            # the one definition of a kept decision (sensitivity and qrels diff count the same)
            aligned = mine.reindex(ref_out.index).fillna(0).to_numpy()
            kept = float(kept_decisions.count_changes(ref_out.to_numpy(), aligned)["kept_share"])
        rows.append({
            "label_id": label, "kendall_tau_b": rankings.kendall_tau_b(ref_means, other),
            "tau_ap": rankings.tau_ap(ref_means, other), "significant_kept": kept,
            "judged_share": float(judged.get(label, float("nan"))),
        })  # fmt: skip
    return pd.DataFrame(rows)


def _reference_labels(wh: Store, collection: str, reference: str) -> pd.DataFrame:
    return wh.df(
        "SELECT query_id, doc_id, relevance FROM qrels WHERE collection_id = $c AND qrels_id = $q AND relevance >= 0",
        {"c": collection, "q": reference},
    )


def replay(
    wh: Store,
    collection: str,
    *,
    strategies: Sequence[str] = ("depth", "mtf", "bandit", "rrf"),
    budgets: Sequence[str | int] = ("10%", "25%", "50%"),
    scope: str = "total",
    seeds: Sequence[int] = (0,),
    reference: str = "default",
    depth: int = 100,
    runs: Sequence[str] | None = None,
    runs_from: str = "pooled",
    measure: str = "AP",
    test: str = "t",
    correction: str = "none",
    alpha: float = 0.05,
    gamma: float = 0.9,
    rbp_p: float = 0.8,
    rrf_k: float = 60.0,
    rel: float = 1.0,
    experiment_id: str | None = None,
    store: bool = True,
    progress: Callable[[int, int], None] | None = None,
    replace: bool = False,
) -> pd.DataFrame:
    """Replay judging strategies against a complete label set, budget by budget.

    The candidates are the depth-``depth`` pool of the member runs (``runs``, else
    ``runs_from``); each strategy orders them (the sequential ones reading the reference's
    labels as they go), and each budget keeps the first judgments, in total or per topic
    (``scope``). ``depth`` in ``strategies`` stands for the depth order under the budget (the
    same as ``take``). Every run of the collection is ranked under each judged prefix.

    Args:
        wh: The warehouse.
        collection: The collection.
        strategies: Strategy names (:data:`evalwh.methods.budget.order.STRATEGIES`).
        budgets: ``"10%"`` (a share of the candidate pool) or a number of judgments.
        scope: ``total`` or ``topic`` (a count in every topic, a share of each topic's own
            candidates; the row's ``budget`` is then their sum, :func:`budget_limits`).
        seeds: Seeds of the random strategies (``mtf``, ``bandit``, ``random``), one replay each.
        reference: The complete label set.
        depth: Pool depth lambda of the candidates.
        runs: The pool's member runs.
        runs_from: ``pooled`` or ``all`` without ``runs``.
        measure: The leaderboard's measure (one spec; nDCG's ideal ranking is each set's own).
        test: Significance procedure of :func:`evalwh.stats.significance.pairwise`.
        correction: Its multiple-comparison correction.
        alpha: Its level.
        gamma: The bandit's discount.
        rbp_p: Persistence of the rbp order.
        rrf_k: Constant of the rrf order.
        rel: Relevance threshold.
        experiment_id: Name of the stored experiment (default :func:`evalwh.methods.budget.ids.default_id`).
        store: Keep the rows in ``budget_results`` (replacing an experiment of that name and options).
        progress: Called with ``(done, total)`` strategy replays.
        replace: Replace an experiment of that name made with other options (else refused).

    Returns:
        One row per (strategy, seed, budget): :data:`RESULT_COLUMNS` (the stored columns) and
        ``reachable_share``, relevant found over the relevant pairs the candidates hold.

    Raises:
        EvalWhError: for an unknown strategy, a bad budget or scope.
        NotFoundError: for an unknown collection, run or label set.
    """
    import pandas as pd

    for name in strategies:
        check_strategy(name)
    if not strategies:
        raise EvalWhError("budget: give at least one strategy")
    if scope not in ("topic", "total"):
        raise EvalWhError(f"budget: unknown scope {scope!r}; use topic or total")
    parse_budgets(budgets, 0, 1, scope)  # their form, before any work (the pool's size comes with the order)
    members, _ = pools.select_runs(wh, collection, runs=runs, runs_from=runs_from)
    pools._qrels_set(wh, collection, reference)
    all_runs = wh.run_ids(collection)
    judged_depth = _measure_depth(measure, depth)
    judged_measure = f"A_p@{judged_depth}"
    ref_labels = _reference_labels(wh, collection, reference)
    total_relevant = int((ref_labels["relevance"] >= rel).sum())
    replays = [(s, seed) for s in dict.fromkeys(strategies) for seed in (seeds if s in RANDOM else [None])]
    measures = [measure, judged_measure]
    # the reference once, then each replay's budgets together: memory stays that of one replay
    score_frames = [
        score_label_sets(
            wh, collection, ref_labels.assign(label_id="reference"), measures, runs=all_runs, reference=reference,
            rel=rel,
        )
    ]  # fmt: skip
    meta: list[dict[str, Any]] = []
    budget_list: list[int] = []
    limits: dict[int, int | list[int]] = {}
    pool_size = 0
    for done, (strategy, seed) in enumerate(replays):
        order = candidate_order(
            wh, collection, members, depth=depth, qrels_id=reference, strategy=strategy, seed=seed,
            gamma=gamma, rbp_p=rbp_p, rrf_k=rrf_k, rel=rel,
        )  # fmt: skip
        pool_size = len(order)
        n_topics = order["query_id"].nunique()
        sizes = order.groupby("query_id", sort=True).size()
        limits = dict(budget_limits(budgets, pool_size, n_topics, scope, sizes.to_list()))
        budget_list = sorted(limits)
        label_frames = []
        for budget in budget_list:
            limit = limits[budget]
            kept = apply_budget(order, dict(zip(sizes.index, limit, strict=True)) if isinstance(limit, list) else limit, scope)
            label = f"{strategy}|{seed}|{budget}"
            labels = kept[["query_id", "doc_id"]].merge(ref_labels, on=["query_id", "doc_id"], how="inner")
            label_frames.append(labels.assign(label_id=label))
            meta.append({
                "label_id": label, "strategy": strategy, "seed": seed, "budget": budget,
                "budget_share": len(kept) / pool_size if pool_size else float("nan"), "judged": len(labels),
                "relevant_found": int(kept["relevant"].sum()),
                "relevant_share": int(kept["relevant"].sum()) / total_relevant if total_relevant else float("nan"),
            })  # fmt: skip
        score_frames.append(
            score_label_sets(
                wh, collection, pd.concat(label_frames, ignore_index=True), measures, runs=all_runs,
                reference=reference, rel=rel,
            )
        )  # fmt: skip
        if progress:
            progress(done + 1, len(replays))
    scores = pd.concat(score_frames, ignore_index=True)
    measure_name = canonical_measure(measure)  # the scores hold the judged share A_p beside it
    compared = compare_to_reference(
        scores, measure_name, judged_measure, "reference", test=test, correction=correction, alpha=alpha
    )
    out = pd.DataFrame(meta).merge(compared, on="label_id", how="left")
    out = out[list(RESULT_COLUMNS)].astype({"seed": "Int64"})
    params = {
        "strategies": list(strategies), "budgets": [str(b) for b in budgets], "budget_counts": budget_list,
        "scope": scope, "seeds": list(seeds) if any(s in RANDOM for s in strategies) else [], "depth": depth, "runs": members, "measure": measure,
        "judged_measure": judged_measure, "test": test, "correction": correction, "alpha": alpha, "gamma": gamma,
        "rbp_p": rbp_p, "rrf_k": rrf_k, "rel": rel, "pool_size": pool_size, "relevant": total_relevant, "topics": n_topics,
        "reachable_relevant": int(order["relevant"].sum()) if replays else 0, "runs_from": runs_from,
    }  # fmt: skip
    if scope == "topic":  # which budgets are a count in every topic (the others a share of each topic)
        params["per_topic_counts"] = [b for b in budget_list if not isinstance(limits[b], list)]
    experiment_id = experiment_id or budget_ids.default_id(
        "replay", budgets=budgets, seeds=seeds, scope=scope, strategies=strategies, random=RANDOM)
    if store:
        store_results(wh, collection, experiment_id, "replay", reference, measure, params, out, replace=replace)
    out = budget_ids.with_reachable(out, params)  # beside the stored columns, as the command prints it
    out.attrs.update(experiment_id=experiment_id, reference=reference, measure=measure, params=params)
    return out


def store_results(
    wh: Store, collection: str, experiment_id: str, kind: str, reference: str, measure: str,
    params: dict[str, Any], rows: pd.DataFrame, *, replace: bool = False,
) -> None:  # fmt: skip
    """Store the experiment (``budget_experiments``, ``budget_results``); one of that name and other options only with ``replace``."""
    frame = rows[list(RESULT_COLUMNS)].assign(collection_id=collection, experiment_id=experiment_id)
    for column in ("budget_share", "relevant_share", "kendall_tau_b", "tau_ap", "significant_kept", "judged_share"):
        frame[column] = frame[column].astype("Float64")  # NaN (nothing to compare) is stored as NULL
    columns = ", ".join(["collection_id", "experiment_id", *RESULT_COLUMNS])
    with wh.transaction():
        budget_ids.check_replace(wh, collection, experiment_id, params, replace=replace)
        for table in ("budget_experiments", "budget_results"):
            wh.con.execute(
                f"DELETE FROM {table} WHERE collection_id = ? AND experiment_id = ?", [collection, experiment_id]
            )
        wh.con.execute(
            "INSERT INTO budget_experiments (collection_id, experiment_id, kind, reference_id, measure, params)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [collection, experiment_id, kind, reference, measure, params_json(params)],
        )
        wh.con.register("budget_rows_frame", frame)
        try:
            wh.con.execute(f"INSERT INTO budget_results ({columns}) SELECT {columns} FROM budget_rows_frame")
        finally:
            wh.con.unregister("budget_rows_frame")


def stored_results(wh: Store, collection: str, experiment_id: str | None = None) -> pd.DataFrame:
    """The stored budget rows of a collection (one experiment, or all): ``experiment_id`` and :data:`RESULT_COLUMNS`."""
    return wh.df(sql.query(_POOLS, "budget_results"), {"collection_id": collection, "experiment_id": experiment_id})


def summarise(rows: pd.DataFrame) -> pd.DataFrame:
    """Mean over seeds per (strategy, budget), with the number of seeds: the table and figure."""
    value_columns = [c for c in RESULT_COLUMNS if c not in ("strategy", "seed", "budget")]
    grouped = rows.groupby(["strategy", "budget"], sort=False)
    out = grouped[value_columns].mean().reset_index()
    for column in ("judged", "relevant_found"):  # counts stay whole numbers where every mean is one
        if len(out) and (out[column] % 1 == 0).all():
            out[column] = out[column].astype("Int64")
    out.insert(2, "seeds", grouped.size().to_numpy())
    return out.sort_values(["budget", "strategy"], kind="stable").reset_index(drop=True)


# -- people and an LLM ------------------------------------------------------------------------
