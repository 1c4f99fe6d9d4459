"""What a judging budget buys (methods §5.5-§5.7): replays of pooling strategies, and people with an LLM.

* :func:`replay` (``evalwh experiment budget``): each strategy orders the candidates of the
  pool (:mod:`evalwh.methods.budget_order`), the reference's labels are revealed in that
  order, and at each budget the judged prefix is a label set. Every run is scored under
  every such set in one set-wise pass (:func:`evalwh.methods.budget_scores.score_label_sets`),
  and each set is compared with the complete reference: relevant
  documents found, Kendall's tau_b and tau_ap of the leaderboard
  (:mod:`evalwh.stats.rankings`), the share of the reference's significant pairs kept
  (:func:`evalwh.stats.significance.pairwise`) and the judged share A_p at the
  leaderboard's depth.
* :func:`hybrid` (``evalwh experiment budget --machine SET``): a machine label set with
  relevance probabilities (``judgment_probabilities``); people judge a budget of its pairs
  (chosen at random, where the machine is least sure, or LARA-style), a calibration learnt
  on those pairs (:func:`calibrate`) maps the machine's probabilities to labels for the rest,
  and the hybrid label set is scored as above, beside the uncalibrated fill.
* :func:`simulated_judge`: a machine judge with a known bias, for tests and the TREC-8 study.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from evalwh import sql
from evalwh.errors import EvalWhError, InsufficientDataError, NotFoundError
from evalwh.methods import budget_ids, pools
from evalwh.methods.budget_pools import candidate_order
from evalwh.methods.budget_scores import SEP, score_label_sets
from evalwh.methods.budget_order import RANDOM, STRATEGIES, apply_budget, check_strategy
from evalwh.store.connection import params_json
from evalwh.store.context import Averaging, Options, Unjudged, build_context

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


def parse_budgets(specs: Sequence[str | int | float], pool_size: int, n_topics: int, scope: str) -> list[int]:
    """Budgets as numbers of judgments: ``"10%"`` is that share of the pool, a number is itself.

    A share of the pool is ``round(share * pool_size)`` in total, or that divided by the
    number of topics per topic (at least 1). A count is a whole number (not ``1.5``, ``True``
    or ``1_0``), at most the pool in total (its budget share would pass 1).

    Examples:
        >>> parse_budgets(["10%", 500], 86830, 50, "total"), parse_budgets(["10%"], 86830, 50, "topic")
        ([500, 8683], [174])
    """
    from evalwh.io.formats import parse_number

    specs = [specs] if isinstance(specs, (str, int, float)) else list(specs)
    if not specs:
        raise EvalWhError("budget: give at least one budget (a share of the pool such as 10%, or a count)")
    out = []
    for spec in specs:
        text = str(spec).strip()
        share = parse_number(text[:-1]) if text.endswith("%") and not isinstance(spec, bool) else None
        count = None if isinstance(spec, bool) or text.endswith("%") else parse_number(text)
        if share is not None and 0.0 < share <= 100.0:
            total = share / 100.0 * pool_size
            value = int(np.floor(total / (n_topics if scope == "topic" else 1) + 0.5))
            out.append(max(1, value))
        elif count is not None and count >= 1 and count.is_integer():
            if scope == "total" and pool_size and count > pool_size:
                raise EvalWhError(
                    f"budget: {int(count)} judgments is more than the pool's {pool_size} pairs; "
                    f"give at most {pool_size} or a share (100%)"
                )
            out.append(int(count))
        else:
            raise EvalWhError(f"budget: {text!r} is neither a share of the pool (10%) nor a positive whole count")
    return sorted(set(out))


def _measure_depth(measure: str, depth: int) -> int:
    """The leaderboard's depth: the measure's cutoff k, else the pool depth."""
    from evalwh.measures import catalog

    parsed = catalog.expand([measure])
    if len(parsed) != 1:
        raise EvalWhError(f"budget: give one measure, got {measure!r}")
    k = parsed[0].params.get("k")
    return int(k) if k is not None else depth


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
        strategies: Strategy names (:data:`evalwh.methods.budget_order.STRATEGIES`).
        budgets: ``"10%"`` (a share of the candidate pool) or a number of judgments.
        scope: ``total`` or ``topic``.
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
        experiment_id: Name of the stored experiment (default :func:`evalwh.methods.budget_ids.default_id`).
        store: Keep the rows in ``budget_results`` (replacing an experiment of that name and options).
        progress: Called with ``(done, total)`` strategy replays.
        replace: Replace an experiment of that name made with other options (else refused).

    Returns:
        One row per (strategy, seed, budget): :data:`RESULT_COLUMNS`.

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
    pool_size = 0
    for done, (strategy, seed) in enumerate(replays):
        order = candidate_order(
            wh, collection, members, depth=depth, qrels_id=reference, strategy=strategy, seed=seed,
            gamma=gamma, rbp_p=rbp_p, rrf_k=rrf_k, rel=rel,
        )  # fmt: skip
        pool_size = len(order)
        n_topics = order["query_id"].nunique()
        budget_list = parse_budgets(budgets, pool_size, n_topics, scope)
        label_frames = []
        for budget in budget_list:
            kept = apply_budget(order, budget, scope)
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
    measure_name = str(scores["measure"].iloc[0]) if len(scores) else measure
    compared = compare_to_reference(
        scores, measure_name, judged_measure, "reference", test=test, correction=correction, alpha=alpha
    )
    out = pd.DataFrame(meta).merge(compared, on="label_id", how="left")
    out = out[list(RESULT_COLUMNS)].astype({"seed": "Int64"})
    params = {
        "strategies": list(strategies), "budgets": [str(b) for b in budgets], "budget_counts": budget_list,
        "scope": scope, "seeds": list(seeds), "depth": depth, "runs": members, "measure": measure,
        "judged_measure": judged_measure, "test": test, "correction": correction, "alpha": alpha, "gamma": gamma,
        "rbp_p": rbp_p, "rrf_k": rrf_k, "rel": rel, "pool_size": pool_size, "relevant": total_relevant, "topics": n_topics,
        "reachable_relevant": int(order["relevant"].sum()) if replays else 0, "runs_from": runs_from,
    }  # fmt: skip
    experiment_id = experiment_id or budget_ids.default_id(
        "replay", budgets=budgets, seeds=seeds, scope=scope, strategies=strategies, random=RANDOM)
    if store:
        store_results(wh, collection, experiment_id, "replay", reference, measure, params, out, replace=replace)
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
    out.insert(2, "seeds", grouped.size().to_numpy())
    return out.sort_values(["budget", "strategy"], kind="stable").reset_index(drop=True)


# -- people and an LLM ------------------------------------------------------------------------


def simulated_judge(
    truth: pd.DataFrame, *, bias: float = 2.0, separation: float = 1.5, noise: float = 1.0, seed: int = 0,
    rel: float = 1.0, topic_bias: float = 0.0,
) -> pd.DataFrame:  # fmt: skip
    """A machine judge with a known bias: LARA-format probabilities for every pair of ``truth``.

    Its latent evidence is ``z = +separation`` for a relevant pair and ``-separation`` for
    a non-relevant one, plus normal noise (sd ``noise``); it reports ``prob_yes =
    sigmoid(z + bias + b_t)``, so a positive ``bias`` calls too many pairs relevant; ``b_t`` is
    0, or with ``topic_bias`` a shift of its own per topic, normal with that standard
    deviation (a judge that is lenient on some topics and strict on others, which no single
    calibration over all topics undoes). ``annotation`` is its thresholded label
    (``prob_yes >= 0.5``).

    Args:
        truth: ``query_id, doc_id, relevance`` (the complete labels).
        bias: The judge's shift on the logit scale.
        separation: Half the distance between the classes' mean evidence.
        noise: Standard deviation of the evidence.
        seed: Seed of the noise.
        rel: Grades >= rel are relevant.
        topic_bias: Standard deviation of the per-topic shifts (0: one global bias); drawn
            from their own stream, so the pair noise of a seed stays that of the global judge.

    Returns:
        ``topic_id, doc_id, annotation, prob_yes, prob_no``.

    Examples:
        >>> import pandas as pd
        >>> t = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1, 0]})
        >>> simulated_judge(t, noise=0.0, bias=0.0)["prob_yes"].round(4).tolist()
        [0.8176, 0.1824]
    """
    import pandas as pd
    from scipy.special import expit

    rng = np.random.default_rng(seed)
    relevant = truth["relevance"].to_numpy(dtype=np.float64) >= rel
    z = np.where(relevant, separation, -separation) + rng.normal(0.0, noise, len(truth)) if noise else np.where(
        relevant, separation, -separation
    )
    topics = truth["query_id"].astype(str).to_numpy()
    names, index = np.unique(topics, return_inverse=True)
    shifts = np.random.default_rng([seed, 1]).normal(0.0, topic_bias, len(names)) if topic_bias else np.zeros(len(names))
    prob = expit(z + bias + shifts[index])
    return pd.DataFrame({
        "topic_id": truth["query_id"].astype(str).to_numpy(), "doc_id": truth["doc_id"].astype(str).to_numpy(),
        "annotation": (prob >= 0.5).astype(int), "prob_yes": prob, "prob_no": 1.0 - prob,
    })  # fmt: skip


def calibrate(prob: np.ndarray, labels: np.ndarray, method: str = "isotonic") -> Callable[[np.ndarray], np.ndarray]:
    """Learn a map from the machine's probability of relevance to the chance people say relevant.

    ``isotonic``: the non-decreasing step function closest (least squares) to the 0/1 labels
    in probability order (:func:`scipy.optimize.isotonic_regression`; pool-adjacent-violators),
    the labels of tied probabilities averaged first (weighted by their number, as
    scikit-learn's ``IsotonicRegression`` does), read between the learnt points by linear
    interpolation, flat beyond them. ``logistic``:
    ``sigmoid(a + b * logit(p))`` fitted by maximum likelihood (Platt scaling on the logit,
    :func:`scipy.optimize.minimize`).

    Examples:
        >>> f = calibrate(np.array([0.6, 0.7, 0.8, 0.9]), np.array([0, 0, 1, 1]))
        >>> f(np.array([0.65, 0.85])).tolist()
        [0.0, 1.0]
    """
    from scipy.optimize import isotonic_regression, minimize
    from scipy.special import expit, logit

    p = np.asarray(prob, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    if len(p) < 2 or len(np.unique(y)) < 2:
        raise InsufficientDataError(
            f"calibration: {len(p)} judged pair(s) with {len(np.unique(y))} label value(s); "
            "need both relevant and non-relevant pairs"
        )
    if method == "isotonic":
        # tied probabilities are one point: their labels' mean, weighted by how many share it,
        # so that the fit does not depend on the order of the rows (LLM probabilities are coarse)
        uniq, inverse, counts = np.unique(p, return_inverse=True, return_counts=True)
        means = np.bincount(inverse, weights=y) / counts
        ys = isotonic_regression(means, weights=counts.astype(np.float64)).x
        return lambda q: np.interp(np.asarray(q, dtype=np.float64), uniq, ys)
    if method == "logistic":
        x = logit(np.clip(p, 1e-6, 1 - 1e-6))

        def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
            eta = w[0] + w[1] * x
            value = float(np.sum(np.logaddexp(0.0, eta) - y * eta))
            r = expit(eta) - y
            return value, np.array([r.sum(), (r * x).sum()])

        w = minimize(loss, np.array([0.0, 1.0]), jac=True, method="L-BFGS-B").x
        return lambda q: expit(w[0] + w[1] * logit(np.clip(np.asarray(q, dtype=np.float64), 1e-6, 1 - 1e-6)))
    raise EvalWhError(f"calibration: unknown method {method!r}; use one of {', '.join(CALIBRATIONS)}")


def choose_pairs(
    prob: np.ndarray, budget: int, selection: str, rng: np.random.Generator, *,
    truth: np.ndarray | None = None, rounds: int = 10, calibration: str = "logistic",
) -> np.ndarray:  # fmt: skip
    """Indices of the ``budget`` pairs people judge.

    ``random``: a uniform sample. ``uncertain``: the pairs whose machine probability is
    closest to 0.5. ``lara``: in ``rounds`` batches; the first batch at random, then each
    batch the pairs whose *calibrated* probability (a calibration learnt on the labels
    people gave so far, ``truth`` revealing them) is closest to 0.5 (evalwh's reading of
    LARA, methods §5.7).
    """
    n = len(prob)
    budget = min(budget, n)
    jitter = rng.random(n)  # ties in closeness to 0.5 are broken at random
    if selection == "random":
        return rng.choice(n, size=budget, replace=False)
    if selection == "uncertain":
        return np.lexsort((jitter, np.abs(prob - 0.5)))[:budget]
    if selection != "lara":
        raise EvalWhError(f"budget: unknown selection {selection!r}; use one of {', '.join(SELECTIONS)}")
    if truth is None:
        raise EvalWhError("budget: the lara selection needs the people's labels as they come in")
    chosen = np.zeros(n, dtype=bool)
    sizes = np.diff(np.linspace(0, budget, rounds + 1).round().astype(int))
    chosen[rng.choice(n, size=sizes[0], replace=False)] = True
    for size in sizes[1:]:
        if size == 0:
            continue
        try:
            f = calibrate(prob[chosen], truth[chosen], calibration)
            closeness = np.abs(f(prob) - 0.5)
        except InsufficientDataError:
            closeness = np.abs(prob - 0.5)
        closeness[chosen] = np.inf
        chosen[np.lexsort((jitter, closeness))[:size]] = True
    return np.flatnonzero(chosen)


def machine_probabilities(wh: Store, collection: str, machine: str) -> pd.DataFrame:
    """A machine set's pairs with their probability of relevance (``judgment_probabilities``).

    Raises:
        NotFoundError: when the set has no probabilities (ingest a LARA CSV).
    """
    pools._qrels_set(wh, collection, machine)
    frame = wh.df(
        "SELECT query_id, doc_id, prob_relevant FROM judgment_probabilities"
        " WHERE collection_id = $c AND qrels_id = $q ORDER BY query_id, doc_id",
        {"c": collection, "q": machine},
    )
    if frame.empty:
        raise NotFoundError(
            f"qrels set {machine!r} has no relevance probabilities; ingest the LLM's CSV "
            "(topic_id,doc_id,annotation,prob_yes,prob_no) with `evalwh ingest qrels`"
        )
    return frame


def hybrid(
    wh: Store,
    collection: str,
    machine: str,
    *,
    budgets: Sequence[str | int] = ("10%", "25%", "50%"),
    selections: Sequence[str] = SELECTIONS,
    calibration: str = "isotonic",
    seeds: Sequence[int] = (0,),
    reference: str = "default",
    measure: str = "AP",
    judged_depth: int = 100,
    test: str = "t",
    correction: str = "none",
    alpha: float = 0.05,
    rel: float = 1.0,
    experiment_id: str | None = None,
    store: bool = True,
    store_sets: bool = False,
    replace: bool = False,
) -> pd.DataFrame:
    """People judge a budget of a machine set's pairs; a calibrated machine labels the rest.

    The pairs are those the machine set has probabilities for; the people's labels are the
    reference's (a replay). For each selection, seed and budget: people judge the chosen
    pairs, a calibration (:func:`calibrate`) is learnt on them, and the rest get the label
    ``calibrated probability >= 0.5``; the uncalibrated fill takes the machine's own
    ``probability >= 0.5``. Both hybrid sets, and the machine set alone, are scored against
    the reference as :func:`replay` does.

    Args:
        wh: The warehouse.
        collection: The collection.
        machine: The machine label set with probabilities.
        budgets: People's judgments: ``"10%"`` of the machine's pairs, or a count.
        selections: ``random``, ``uncertain``, ``lara``.
        calibration: ``isotonic`` or ``logistic``.
        seeds: Seeds of the selections (one replay each).
        reference: The complete labels (the people's, revealed).
        measure: The leaderboard's measure.
        judged_depth: Depth of the judged share A_p.
        test: Significance procedure.
        correction: Its correction.
        alpha: Its level.
        rel: Relevance threshold.
        experiment_id: Name of the stored experiment (default :func:`evalwh.methods.budget_ids.default_id`);
            one of that name made with other options is replaced only with ``replace``.
        store: Keep the rows in ``budget_results``.
        store_sets: Also store, for the first seed and each selection and budget, the people's
            labels (``<experiment>-<selection>-<budget>-human``, source human) and the
            calibrated fill (``...-inferred``, source inferred, its params naming both sets).

    Returns:
        One row per (strategy, seed, budget), ``strategy`` being ``<selection>+calibrated``,
        ``<selection>+uncalibrated`` or ``machine`` (budget 0): :data:`RESULT_COLUMNS`.
    """
    import pandas as pd

    machine_frame = machine_probabilities(wh, collection, machine)
    ref_labels = _reference_labels(wh, collection, reference)
    pairs = machine_frame.merge(ref_labels, on=["query_id", "doc_id"], how="inner")
    if pairs.empty:
        raise InsufficientDataError(f"budget: machine set {machine!r} shares no pair with {reference!r}")
    prob = pairs["prob_relevant"].to_numpy(dtype=np.float64)
    truth = (pairs["relevance"].to_numpy(dtype=np.float64) >= rel).astype(np.float64)
    total_relevant = int(truth.sum())
    counts = parse_budgets(budgets, len(pairs), pairs["query_id"].nunique(), "total")
    frames = [ref_labels.assign(label_id="reference")]
    uncalibrated = (prob >= 0.5).astype(np.float64)
    frames.append(pairs[["query_id", "doc_id"]].assign(relevance=uncalibrated, label_id="machine|None|0"))
    meta = [_hybrid_meta("machine", None, 0, len(pairs), np.zeros(len(pairs), bool), truth, total_relevant)]
    stored_sets: list[tuple[str, str, pd.DataFrame, pd.DataFrame, dict[str, Any]]] = []
    measures = [measure, f"A_p@{judged_depth}"]
    all_runs = wh.run_ids(collection)
    score_frames: list[pd.DataFrame] = []

    def score(batch: list[pd.DataFrame]) -> None:
        # one set-wise pass per selection and seed: memory stays that of a few label sets
        score_frames.append(score_label_sets(
            wh, collection, pd.concat(batch, ignore_index=True), measures, runs=all_runs, reference=reference, rel=rel,
        ))  # fmt: skip
        batch.clear()

    for selection in selections:
        for seed in seeds:
            for budget in counts:
                rng = np.random.default_rng([seed, budget])
                chosen = np.zeros(len(pairs), dtype=bool)
                chosen[choose_pairs(prob, budget, selection, rng, truth=truth)] = True
                f = calibrate(prob[chosen], truth[chosen], calibration)
                calibrated = f(prob)
                for fill, values in (("calibrated", (calibrated >= 0.5).astype(np.float64)), ("uncalibrated", uncalibrated)):
                    label = f"{selection}+{fill}|{seed}|{budget}"
                    labels = np.where(chosen, truth, values)
                    frames.append(pairs[["query_id", "doc_id"]].assign(relevance=labels, label_id=label))
                    meta.append(_hybrid_meta(f"{selection}+{fill}", seed, budget, len(pairs), chosen, truth, total_relevant))
                if store_sets and seed == seeds[0]:
                    human = pairs.loc[chosen, ["query_id", "doc_id", "relevance"]]
                    rest = pairs.loc[~chosen, ["query_id", "doc_id"]].assign(relevance=(calibrated[~chosen] >= 0.5).astype(float))
                    info = {"selection": selection, "budget": budget, "seed": seed, "calibration": calibration}
                    stored_sets.append((selection, str(budget), human, rest, info))
            score(frames)
    if frames:
        score(frames)
    scores = pd.concat(score_frames, ignore_index=True)
    measure_name = str(scores[scores["measure"] != f"A_p@{judged_depth}"]["measure"].iloc[0])
    compared = compare_to_reference(
        scores, measure_name, f"A_p@{judged_depth}", "reference", test=test, correction=correction, alpha=alpha
    )
    out = pd.DataFrame(meta).merge(compared, on="label_id", how="left")
    out = out[list(RESULT_COLUMNS)].astype({"seed": "Int64"})
    experiment_id = experiment_id or budget_ids.default_id(
        "hybrid", budgets=budgets, seeds=seeds, machine=machine, selections=selections, calibration=calibration)
    params = {
        "machine": machine, "budgets": [str(b) for b in budgets], "budget_counts": counts, "selections": list(selections),
        "calibration": calibration, "seeds": list(seeds), "measure": measure, "judged_depth": judged_depth,
        "test": test, "correction": correction, "alpha": alpha, "rel": rel, "pairs": len(pairs),
    }  # fmt: skip
    with wh.transaction():  # results and label sets together: all stored, or none
        if store:
            store_results(wh, collection, experiment_id, "hybrid", reference, measure, params, out, replace=replace)
        for selection, budget, human, rest, info in stored_sets:
            _store_hybrid_sets(wh, collection, f"{experiment_id}-{selection}-{budget}", machine, reference, human, rest, info)
    out.attrs.update(experiment_id=experiment_id, reference=reference, measure=measure, params=params)
    return out


def _hybrid_meta(
    strategy: str, seed: int | None, budget: int, n: int, chosen: np.ndarray, truth: np.ndarray, total: int
) -> dict[str, Any]:
    found = int(truth[chosen].sum())
    return {
        "label_id": f"{strategy}|{seed}|{budget}", "strategy": strategy, "seed": seed, "budget": budget,
        "budget_share": budget / n if n else float("nan"), "judged": n, "relevant_found": found,
        "relevant_share": found / total if total else float("nan"),
    }  # fmt: skip


def _store_hybrid_sets(
    wh: Store, collection: str, stem: str, machine: str, reference: str, human: pd.DataFrame, rest: pd.DataFrame,
    info: dict[str, Any],
) -> None:  # fmt: skip
    """Store people's labels (source human) and the calibrated fill (source inferred) as two derived sets."""
    from evalwh.store.connection import sha256_text

    human_id, inferred_id = f"{stem}-human", f"{stem}-inferred"
    with wh.transaction():
        for qrels_id, frame, source, params in (
            (human_id, human, "human", {"kind": "hybrid-human", "labels_from": reference, **info}),
            (inferred_id, rest, "inferred", {"kind": "hybrid-inferred", "machine": machine, "human": human_id, **info}),
        ):
            pools._drop_qrels_set(wh, collection, qrels_id, replace=True, what="budget")
            staged = frame.assign(collection_id=collection, qrels_id=qrels_id, iteration="0")
            wh.con.register("hybrid_set_frame", staged)
            try:
                wh.con.execute(
                    "INSERT INTO qrels (collection_id, qrels_id, query_id, iteration, doc_id, relevance)"
                    " SELECT collection_id, qrels_id, query_id, iteration, doc_id, relevance FROM hybrid_set_frame"
                )
            finally:
                wh.con.unregister("hybrid_set_frame")
            parent = reference if source == "human" else machine
            wh.con.execute(
                "INSERT INTO qrels_sets (collection_id, qrels_id, kind, source_file, sha256, line_count,"
                " parent_qrels_id, params, source) VALUES (?, ?, 'derived', ?, ?, ?, ?, ?, ?)",
                [
                    collection, qrels_id,
                    f"{info['selection']} choice of {info['budget']} pairs for people"
                    if source == "human" else f"{machine} calibrated ({info['calibration']}) on {human_id}",
                    sha256_text(params_json(params)), len(frame), parent, params_json(params), source,
                ],
            )  # fmt: skip


TASK_FORMATS = ("jsonl", "tsv")


def export_tasks(
    wh: Store,
    collection: str,
    pool_id: str,
    output: str | os.PathLike[str],
    *,
    fmt: str = "jsonl",
    topics: str | os.PathLike[str] | None = None,
    documents: str | os.PathLike[str] | None = None,
) -> int:
    """Write a pool's (or a random audit's) judging tasks, first to judge first, as JSON lines or TSV.

    Each task: ``qid`` (topic id), ``docid``, ``order`` (the overall judging order),
    ``topic_order`` and, when ``topics`` / ``documents`` name text sources
    (:func:`evalwh.io.texts.text_source`), ``query`` and ``passage``: the fields
    UMBRELA-style judges read, and the ids :mod:`evalwh.io.judgments` reads back. In TSV the
    columns are ``query_id, doc_id, order, topic_order[, query, passage]`` with a header;
    tabs and line breaks inside a text become spaces. The file appears whole or not at all.

    Returns:
        The number of tasks written.

    Raises:
        NotFoundError: for an unknown pool.
        IngestError: for a bad text file, or a pooled topic or document it lacks.
        EvalWhError: for an unknown format.
    """
    import pandas as pd

    from evalwh.errors import IngestError
    from evalwh.io.files import atomic_output
    from evalwh.io.texts import text_source

    if fmt not in TASK_FORMATS:
        raise EvalWhError(f"pool export: unknown format {fmt!r}; use one of {', '.join(TASK_FORMATS)}")
    from evalwh.methods import audits

    is_audit = wh.con.execute(
        "SELECT count(*) FROM audits WHERE collection_id = ? AND audit_id = ?", [collection, pool_id]
    ).fetchone()[0]
    order = audits.audit_order(wh, collection, pool_id) if is_audit else pools.pool_order(wh, collection, pool_id)
    if order.empty:
        raise EvalWhError(
            f"pool {pool_id!r} has no judging order (built before schema 019); rebuild it with `evalwh pool build --replace`"
        )
    columns: dict[str, Any] = {}
    for spec, ids, field in ((topics, order["query_id"], "query"), (documents, order["doc_id"], "passage")):
        if spec is None:
            continue
        texts = text_source(spec, "topics" if field == "query" else "documents", ids)
        missing = sorted(set(ids) - set(texts))
        if missing:
            what = "topic" if field == "query" else "document"
            raise IngestError(str(spec), None, f"no text for {len(missing)} pooled {what}(s), e.g. {missing[0]!r}")
        columns[field] = ids.map(texts).to_numpy()

    tasks = pd.DataFrame(
        {
            "qid": order["query_id"].astype(str).to_numpy(),
            "docid": order["doc_id"].astype(str).to_numpy(),
            "order": order["overall_order"].astype("int64").to_numpy(),
            "topic_order": order["topic_order"].astype("int64").to_numpy(),
            **columns,
        }
    )
    with atomic_output(output) as handle:
        if fmt == "tsv":
            for field in columns:
                tasks[field] = tasks[field].str.replace(r"[\t\r\n]+", " ", regex=True)
            cells = tasks.astype(str)
            lines = cells.iloc[:, 0].str.cat([cells[c] for c in cells.columns[1:]], sep="\t")
            header = ["query_id", "doc_id", *cells.columns[2:]]
            handle.write("\t".join(header) + "\n" + "\n".join(lines) + "\n")
        else:
            handle.write(tasks.to_json(orient="records", lines=True, force_ascii=False))
    return len(order)


__all__ = [
    "CALIBRATIONS", "RESULT_COLUMNS", "SELECTIONS", "STRATEGIES", "TASK_FORMATS", "calibrate", "choose_pairs",
    "export_tasks", "hybrid",
    "parse_budgets", "replay", "score_label_sets", "simulated_judge", "stored_results", "summarise",
]  # fmt: skip
