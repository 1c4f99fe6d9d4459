"""People with an LLM on a judging budget (methods §5.7): a machine judge calibrated on the pairs people judge.

* :func:`hybrid` (``evalwh experiment budget --machine SET``): a machine label set with
  relevance probabilities (``judgment_probabilities``); people judge a budget of its pairs
  (chosen at random, where the machine is least sure, or LARA-style, :func:`choose_pairs`), a
  calibration learnt on those pairs (:func:`calibrate`) maps the machine's probabilities to
  labels for the rest, and the hybrid label set is scored as the replays' sets are
  (:mod:`evalwh.methods.budget.replays`), beside the uncalibrated fill.
* :func:`simulated_judge`: a machine judge with a known bias, for tests and the TREC-8 study.
* :func:`export_tasks`: the pairs people are to judge, as judging tasks.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from evalwh.errors import EvalWhError, InsufficientDataError, NotFoundError
from evalwh.methods import pools
from evalwh.methods.budget import ids as budget_ids
from evalwh.methods.budget.replays import (
    CALIBRATIONS,
    RESULT_COLUMNS,
    SELECTIONS,
    _reference_labels,
    canonical_measure,
    compare_to_reference,
    parse_budgets,
    store_results,
)
from evalwh.methods.budget.scores import score_label_sets
from evalwh.store.connection import params_json

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.store.connection import Store


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
        experiment_id: Name of the stored experiment (default :func:`evalwh.methods.budget.ids.default_id`);
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
    graded = pairs["relevance"].to_numpy(dtype=np.float64)  # what people said, grades kept for graded measures
    truth = (graded >= rel).astype(np.float64)
    total_relevant = int(truth.sum())
    counts = parse_budgets(budgets, len(pairs), pairs["query_id"].nunique(), "total")
    frames = [ref_labels.assign(label_id="reference")]
    # a machine's fill is relevant or not: a relevant pair takes the grade rel, the threshold's
    uncalibrated = np.where(prob >= 0.5, rel, 0.0)
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
                for fill, values in (("calibrated", np.where(calibrated >= 0.5, rel, 0.0)), ("uncalibrated", uncalibrated)):
                    label = f"{selection}+{fill}|{seed}|{budget}"
                    labels = np.where(chosen, graded, values)
                    frames.append(pairs[["query_id", "doc_id"]].assign(relevance=labels, label_id=label))
                    meta.append(_hybrid_meta(f"{selection}+{fill}", seed, budget, len(pairs), chosen, truth, total_relevant))
                if store_sets and seed == seeds[0]:
                    human = pairs.loc[chosen, ["query_id", "doc_id", "relevance"]]
                    rest = pairs.loc[~chosen, ["query_id", "doc_id"]].assign(relevance=np.where(calibrated[~chosen] >= 0.5, rel, 0.0))
                    info = {"selection": selection, "budget": budget, "seed": seed, "calibration": calibration}
                    stored_sets.append((selection, str(budget), human, rest, info))
            score(frames)
    if frames:
        score(frames)
    scores = pd.concat(score_frames, ignore_index=True)
    measure_name = canonical_measure(measure)
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
