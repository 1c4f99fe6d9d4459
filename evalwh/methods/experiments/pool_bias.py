"""Pooling-bias experiments of Webber & Park (SIGIR 2009; methods §6.8).

For each pool width ``w`` the experiment draws ``I`` samples of ``w + 1`` runs; one is the new
run ``r``, the others form the pool ``S``. Every simulated pool restricts the completed qrels
Q* (methods §3.4) to ``Pool_lambda(S)``, and ``r`` is scored against it (its unpooled scores
``u``) and against Q* (its true scores ``t``). From these:

- (i) the empirical bias ``mean(u - t)`` per sample, summarised by mean and quartiles over
  samples, under assumed non-relevance and condensed lists (S2 Fig. 1);
- (ii) Algorithm 1's accuracy: MAE of ``u-bar + a`` (``a`` the mean leave-one-out error of the
  members of ``S``, ``r`` replacing the left-out run) against the unadjusted ``u-bar`` (S2 Table 1);
- (iii) Algorithm 3: for each number ``n`` of common topics, ``J`` topic samples per run
  sample, the MAE of the unadjusted, mixed, adjusted (and sampled) estimates (S2 Tables 2-4).

Scores of all ``I`` samples of a width come from one set-wise SQL pass
(:func:`evalwh.methods.pools.pooled_scores`, and ``queries/pools/sample_loo_judged.sql`` for
Algorithm 1); topic resampling is numpy over an ``I x J x N`` mask. All randomness comes from
one ``numpy.random.Generator`` seeded with ``seed``, drawn in a fixed order before any
scoring, and the seed is stored with the results (``schema/009_pool_experiments.sql``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from evalwh.measures import catalog
from evalwh.methods import pools
from evalwh import sql
from evalwh.errors import Choice, EvalWhError, InsufficientDataError, NotFoundError
from evalwh.measures.evaluation import evaluate
from evalwh.store.context import Averaging, Options, Unjudged, build_context
from evalwh.stats import adjust as estimators
from evalwh.store.connection import params_json

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.store.connection import Store

Rng = np.random.Generator | int | None
Progress = Callable[[int, int], None] | None

DEFAULT_WIDTHS = (2, 4, 10, 20, 40)
CANDIDATE_COMMON_TOPICS = (5, 10, 20, 50, 100)
BEST_MANUAL = 11
_POOLS = "evalwh.queries.pools"
# every table of schema/009 keyed by (collection_id, experiment_id), pool_experiments last
TABLES = ("pool_bias_samples", "pool_bias_summary", "pool_common_topics", "pool_experiments")


class Setting(Choice):
    """Which runs may be the new run and which may form the pool."""

    all = "all"
    manual_vs_automatic = "manual-vs-automatic"


class Handling(Choice):
    """How unpooled scores treat documents the simulated pool did not judge."""

    nonrelevant = "nonrelevant"
    condensed = "condensed"
    both = "both"

    def handlings(self) -> list[Unjudged]:
        """The handlings this choice runs, assumed non-relevance first."""
        if self is Handling.both:
            return [Unjudged.nonrelevant, Unjudged.condensed]
        return [Unjudged(self.value)]


def default_common_topics(n_topics: int) -> list[int]:
    """Numbers of common topics for ``N`` topics: those of 5, 10, 20, 50, 100 below ``N`` (methods §9.24).

    Examples:
        >>> default_common_topics(50), default_common_topics(249)
        ([5, 10, 20], [5, 10, 20, 50, 100])
    """
    return [n for n in CANDIDATE_COMMON_TOPICS if n < n_topics]


def _generator(rng: Rng) -> np.random.Generator:
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def draw_pools(
    width: int,
    repeats: int,
    *,
    pool_candidates: Sequence[str],
    new_candidates: Sequence[str] | None = None,
    rng: Rng = None,
) -> tuple[list[str], list[list[str]]]:
    """Draw ``repeats`` (new run, pool) samples of one width, vectorised over repeats.

    Without ``new_candidates`` (setting ``all``) each sample is ``width + 1`` runs drawn
    without replacement from ``pool_candidates``, the first of them (a uniform choice) the new
    run. With ``new_candidates`` the new run is drawn from them and the ``width`` members from
    ``pool_candidates`` (which must not contain them).

    Returns:
        The new runs and, per sample, the pool members (in draw order).

    Raises:
        InsufficientDataError: if there are too few candidates for the width.

    Examples:
        >>> new, members = draw_pools(2, 3, pool_candidates=["a", "b", "c", "d"], rng=1)
        >>> len(new), [len(m) for m in members], all(n not in m for n, m in zip(new, members))
        (3, [2, 2, 2], True)
    """
    gen = _generator(rng)
    pool = np.asarray(list(pool_candidates), dtype=object)
    needed = width + (1 if new_candidates is None else 0)
    if width < 1 or len(pool) < needed:
        raise InsufficientDataError(
            f"pool-bias: width {width} needs {needed} eligible runs, found {len(pool)}; choose smaller widths"
        )
    # a random permutation per repeat: argsort of uniform keys, one row per repeat
    order = gen.random((repeats, len(pool))).argsort(axis=1)[:, :needed]
    if new_candidates is None:
        return [str(x) for x in pool[order[:, 0]]], [[str(x) for x in row] for row in pool[order[:, 1:]]]
    new_pool = np.asarray(list(new_candidates), dtype=object)
    new = new_pool[gen.integers(0, len(new_pool), size=repeats)]
    return [str(x) for x in new], [[str(x) for x in row] for row in pool[order]]


def draw_common_topics(repeats: int, samples: int, n_topics: int, n: int, *, rng: Rng = None) -> np.ndarray:
    """``samples`` simple random samples of ``n`` of ``n_topics`` topics for each of ``repeats``.

    Returns:
        Topic indices, shape ``(repeats, samples, n)``, without repetition within a sample.

    Examples:
        >>> idx = draw_common_topics(2, 3, 6, 2, rng=1)
        >>> idx.shape, bool((idx[..., 0] != idx[..., 1]).all())
        ((2, 3, 2), True)
    """
    if not 1 <= n <= n_topics:
        raise InsufficientDataError(f"pool-bias: {n} common topics is not between 1 and the {n_topics} topics")
    gen = _generator(rng)
    return gen.random((repeats, samples, n_topics)).argsort(axis=-1)[..., :n].astype(np.intp)


def common_topics_errors(true: np.ndarray, unpooled: np.ndarray, topics: np.ndarray) -> dict[str, np.ndarray]:
    """Algorithm 3's absolute errors for every run sample and topic sample at once.

    Args:
        true: True scores ``t``, shape ``(I, N)``.
        unpooled: Unpooled scores ``u``, shape ``(I, N)``.
        topics: Common-topic indices, shape ``(I, J, n)`` (see :func:`draw_common_topics`).

    Returns:
        ``unadjusted`` (shape ``(I,)``: ``|u-bar - mu|``), and with shape ``(I, J)``:
        ``adjusted, mixed, sampled`` (absolute errors of those estimates, methods §6.4),
        ``helps`` (``0 < a/A < 2``) and ``sd_adjusted`` (the standard deviation of the
        adjusted estimate by methods §6.5, from the true sigma2_a).

    Examples:
        >>> t = np.array([[0.5, 0.4, 0.6, 0.3, 0.2, 0.7]])
        >>> u = np.array([[0.4, 0.4, 0.45, 0.2, 0.2, 0.5]])
        >>> e = common_topics_errors(t, u, np.array([[[0, 2]]]))
        >>> [round(float(e[k].ravel()[0]), 6) for k in ("unadjusted", "adjusted", "mixed", "sampled")]
        [0.091667, 0.033333, 0.05, 0.1]
    """
    true = np.asarray(true, dtype=float)
    unpooled = np.asarray(unpooled, dtype=float)
    repeats, samples, _ = topics.shape
    mask = np.zeros((repeats, samples, true.shape[-1]), dtype=bool)
    np.put_along_axis(mask, topics, True, axis=-1)
    est = estimators.common_topics_estimates(true[:, None, :], unpooled[:, None, :], mask)
    mu = est["mu"]
    return {
        "unadjusted": np.abs(est["u_bar"] - mu)[:, 0],
        "adjusted": np.abs(est["adjusted"] - mu),
        "mixed": np.abs(est["mixed"] - mu),
        "sampled": np.abs(est["sampled"] - mu),
        "helps": estimators.adjustment_helps(est["a"], est["A"]),
        "sd_adjusted": np.sqrt(est["var_adjusted"]),
    }


def _completed_qrels(wh: Store, collection: str, qrels_id: str) -> str:
    """Q* of the whole collection: reuse ``{qrels_id}-completed`` or build it (methods §3.4)."""
    import json

    name = f"{qrels_id}-completed"
    row = wh.con.execute(
        "SELECT kind, params FROM qrels_sets WHERE collection_id = ? AND qrels_id = ?", [collection, name]
    ).fetchone()
    if row is None:
        pools.complete_qrels(wh, collection, qrels_id=qrels_id, completed_id=name)
        return name
    params = json.loads(row[1]) if row[1] else {}
    if row[0] != "derived" or params.get("kind") != "completion" or params.get("runs") is not None:
        raise EvalWhError(
            f"pool-bias: qrels set {name!r} exists but is not {qrels_id!r} completed with every run; "
            f"rebuild it with `evalwh pool complete -c {collection} --replace`"
        )
    return name


def _true_scores(wh: Store, collection: str, measure: str, completed: str) -> pd.DataFrame:
    """Every run's per-topic score against Q*, wide: one row per run, one column per topic."""
    frame = evaluate(wh, [measure], collection=collection, per_query=True, qrels_id=completed)
    return frame.pivot(index="run_id", columns="query_id", values="value").sort_index(axis=1)


def _unpooled(
    wh: Store,
    collection: str,
    keys: list[str],
    new: list[str],
    members: list[list[str]],
    measure: str,
    *,
    depth: int,
    completed: str,
    handling: Unjudged,
    topics: list[str],
) -> np.ndarray:
    """Unpooled per-topic scores of every sample, ``(I, N)``, from one set-wise pass."""
    import pandas as pd

    spec = pd.DataFrame(
        [(key, run, m) for key, run, pool in zip(keys, new, members, strict=True) for m in pool],
        columns=["eval_id", "run_id", "member_id"],
    )
    scores = pools.pooled_scores(wh, collection, spec, [measure], depth=depth, qrels_id=completed, unjudged=handling)
    wide = scores.pivot(index="eval_id", columns="query_id", values="value")
    return wide.reindex(index=keys, columns=topics).to_numpy(dtype=float)


def sampled_leave_one_out(
    wh: Store,
    collection: str,
    spec: pd.DataFrame,
    measure: str,
    *,
    depth: int,
    qrels_id: str,
) -> pd.DataFrame:
    """Algorithm 1's leave-one-out errors for many sampled pools in one set-wise pass.

    ``spec`` has one row per (sample, pool member): ``sample_id, run_id, member_id`` with
    ``run_id`` the sample's new run. Each member is scored (assumed non-relevance) against
    ``qrels_id`` restricted to its sample's pool Q, and against Q less the documents only it
    has in its top ``depth`` among the members and the new run (methods §6.2).

    Returns:
        ``sample_id, member_id, query_id, pooled, left_out`` over the topics of ``qrels_id``
        with a relevant document.
    """
    import pandas as pd

    parsed = pools._parse_measures([measure], Unjudged.nonrelevant)
    runs = sorted(set(spec["run_id"]) | set(spec["member_id"]))
    frame = pd.DataFrame({c: spec[c].astype(str) for c in ("sample_id", "run_id", "member_id")})
    with wh.transaction():
        build_context(wh, collection, runs, Options(qrels_id=qrels_id, averaging=Averaging.default))
        wh.con.register("ev_loo_spec_frame", frame)
        try:
            wh.con.execute(
                "CREATE OR REPLACE TEMP TABLE ev_loo_spec AS SELECT sample_id, run_id, member_id FROM ev_loo_spec_frame"
            )
        finally:
            wh.con.unregister("ev_loo_spec_frame")
        pools._drop_context_relations(wh)
        max_rank = pools._max_rank(parsed, Unjudged.nonrelevant)
        params = {"collection_id": collection, "depth": depth}
        wh.run(sql.query(_POOLS, "sample_loo_judged"), params)
        wh.run(sql.query(_POOLS, "judged"), {"max_rank": max_rank})
        wh.run(sql.query(_POOLS, "pairs"), {"collection_id": collection, "condensed": False})
        values = pools._metric_values(wh, parsed)
        pools._drop_context_relations(wh)
    parts = values["run_id"].str.rsplit("/", n=2, expand=True)
    values = values.assign(sample_id=parts[0], member_id=parts[1], kind=parts[2])
    wide = values.pivot_table(index=["sample_id", "member_id", "query_id"], columns="kind", values="value")
    return pd.DataFrame(wide.reset_index()[["sample_id", "member_id", "query_id", "pooled", "left_out"]])


def _eligible(wh: Store, collection: str, setting: Setting, true: pd.DataFrame, best_manual: int) -> dict[str, Any]:
    """The candidate runs of the setting: pool candidates and (manual setting) new-run candidates."""
    runs = list(true.index)
    if setting is Setting.all:
        return {"pool": runs, "new": None}
    types = dict(
        wh.con.execute(
            "SELECT run_id, run_type FROM runs WHERE collection_id = ? AND run_type IS NOT NULL", [collection]
        ).fetchall()
    )
    manual = [r for r in runs if types.get(r) == "manual"]
    automatic = [r for r in runs if types.get(r) == "automatic"]
    if not manual or not automatic:
        raise NotFoundError(
            f"collection {collection!r}: the manual-vs-automatic setting needs run types "
            f"(found {len(manual)} manual, {len(automatic)} automatic); load them with "
            "`evalwh ingest run-metadata runs.tsv`"
        )
    # "best" = the highest true mean of the measure on the full (completed) qrels, methods §9.26
    means = true.loc[manual].mean(axis=1).sort_values(ascending=False, kind="stable")
    return {"pool": automatic, "new": list(means.index[:best_manual])}


def run_pool_bias(wh: Store, collection: str, **options: Any) -> dict[str, pd.DataFrame]:
    """:func:`_run_pool_bias` in one transaction: the completed qrels set it builds first (Q*,
    ``{qrels_id}-completed``) is stored with the results, or, when a check fails after it was
    built (a pool width above the runs there are, a common-topic count above the topics), not
    at all: the warehouse is as it was."""
    with wh.transaction():
        return _run_pool_bias(wh, collection, **options)


def _run_pool_bias(
    wh: Store,
    collection: str,
    *,
    widths: Sequence[int] = DEFAULT_WIDTHS,
    repeats: int = 100,
    topic_samples: int = 200,
    common_topics: Sequence[int] | None = None,
    seed: int = 1,
    measure: str = "RBP_trunc(p=0.8)@10",
    pool_depth: int = 10,
    handling: Handling | str = Handling.both,
    setting: Setting | str = Setting.all,
    best_manual: int = BEST_MANUAL,
    qrels_id: str = "default",
    experiment_id: str | None = None,
    store: bool = True,
    progress: Progress = None,
) -> dict[str, pd.DataFrame]:
    """Run the pooling-bias experiments of methods §6.8 and store them.

    Args:
        wh: The warehouse.
        collection: The collection.
        widths: Pool widths ``w`` (pooled runs, the new run excluded).
        repeats: Run samplings ``I`` per width.
        topic_samples: Topic samplings ``J`` per run sampling (Algorithm 3).
        common_topics: Numbers ``n`` of common topics (default from ``N``, methods §9.24).
        seed: Seed of the one random generator; stored with the results.
        measure: One measure spec (not nDCG).
        pool_depth: Pool depth lambda.
        handling: ``nonrelevant``, ``condensed`` or ``both``.
        setting: ``all`` (every run eligible) or ``manual-vs-automatic`` (the new run one of the
            ``best_manual`` best manual runs, the pool automatic runs; needs run types).
        best_manual: How many of the best manual runs the new run is drawn from.
        qrels_id: The judgments; completed to Q* as ``{qrels_id}-completed`` if not yet done.
        experiment_id: Name to store under (default ``pool-bias-<setting>-seed<seed>``).
        store: Store the results (replacing an experiment of the same id).
        progress: Called with ``(done, total)`` scoring passes.

    Returns:
        Frames ``experiment`` (one row of parameters), ``samples`` (per handling, width and
        repeat), ``summary`` (bias and Algorithm 1 per handling and width) and
        ``common_topics`` (Algorithm 3 per handling, width and ``n``), as stored in
        ``pool_experiments``, ``pool_bias_samples``, ``pool_bias_summary`` and
        ``pool_common_topics``.

    Raises:
        EvalWhError: for bad sizes; NotFoundError without run types in the manual setting.
    """
    import pandas as pd

    try:
        chosen_setting, handlings = Setting(setting), Handling(handling).handlings()
    except ValueError:
        raise EvalWhError(
            f"pool-bias: unknown setting {str(getattr(setting, 'value', setting))!r} or handling "
            f"{str(getattr(handling, 'value', handling))!r}; settings: "
            f"{', '.join(s.value for s in Setting)}; handlings: {', '.join(h.value for h in Handling)}"
        ) from None
    spec_measure = str(catalog.parse(measure))
    if repeats < 1 or topic_samples < 1 or pool_depth < 1:
        raise EvalWhError("pool-bias: --repeats, --topic-samples and --pool-depth must be positive")
    if not widths:
        raise EvalWhError("pool-bias: give at least one pool width")
    pools._parse_measures([measure], handlings[-1])  # refuse nDCG and assessment measures early
    completed = _completed_qrels(wh, collection, qrels_id)
    true = _true_scores(wh, collection, measure, completed)
    topics = [str(t) for t in true.columns]
    n_topics = len(topics)
    ns = sorted(set(common_topics)) if common_topics else default_common_topics(n_topics)
    if not ns or ns[0] < 1 or ns[-1] > n_topics:
        raise EvalWhError(f"pool-bias: common-topic counts must lie in 1..{n_topics}, got {ns}")
    eligible = _eligible(wh, collection, chosen_setting, true, best_manual)

    # every random draw, in a fixed order, before any scoring: the results depend on the seed only
    gen = np.random.default_rng(seed)
    draws = []
    for width in widths:
        new, members = draw_pools(width, repeats, pool_candidates=eligible["pool"], new_candidates=eligible["new"], rng=gen)
        topic_idx = {n: draw_common_topics(repeats, topic_samples, n_topics, n, rng=gen) for n in ns}
        draws.append((width, new, members, topic_idx))

    with_loo = Unjudged.nonrelevant in handlings
    total, done = len(widths) * (len(handlings) + int(with_loo)), 0
    t_matrix = true.reindex(columns=topics)
    sample_rows, summary_rows, ct_rows = [], [], []
    for width, new, members, topic_idx in draws:
        keys = [f"{width}:{i}" for i in range(repeats)]
        t = t_matrix.loc[new].to_numpy(dtype=float)
        mu = t.mean(axis=1)
        loo_a = None
        if with_loo:
            spec = pd.DataFrame(
                [(key, run, m) for key, run, pool in zip(keys, new, members, strict=True) for m in pool],
                columns=["sample_id", "run_id", "member_id"],
            )
            loo = sampled_leave_one_out(wh, collection, spec, measure, depth=pool_depth, qrels_id=completed)
            per_member = loo.groupby(["sample_id", "member_id"])[["pooled", "left_out"]].mean()
            deltas = (per_member["pooled"] - per_member["left_out"]).groupby(level="sample_id").mean()
            loo_a = deltas.reindex(keys).to_numpy(dtype=float)
            done += 1
            if progress:
                progress(done, total)
        for h in handlings:
            u = _unpooled(
                wh, collection, keys, new, members, measure,
                depth=pool_depth, completed=completed, handling=h, topics=topics,
            )  # fmt: skip
            u_bar = u.mean(axis=1)
            bias = u_bar - mu
            a = loo_a if h is Unjudged.nonrelevant else None
            adjusted = None if a is None else u_bar + a
            for i in range(repeats):
                sample_rows.append(
                    {
                        "handling": h.value, "width": width, "repeat": i, "new_run": new[i],
                        "pool_runs": members[i], "true_mean": mu[i], "unpooled_mean": u_bar[i], "bias": bias[i],
                        "loo_adjustment": None if a is None else a[i],
                        "loo_adjusted": None if adjusted is None else adjusted[i],
                    }
                )  # fmt: skip
            q1, median, q3 = np.quantile(bias, [0.25, 0.5, 0.75])
            summary_rows.append(
                {
                    "handling": h.value, "width": width, "repeats": repeats, "bias_mean": bias.mean(),
                    "bias_q1": q1, "bias_median": median, "bias_q3": q3, "mae_unadjusted": np.abs(bias).mean(),
                    "mae_loo_adjusted": None if adjusted is None else np.abs(adjusted - mu).mean(),
                    "loo_better": None if adjusted is None else np.mean(np.abs(adjusted - mu) < np.abs(bias)),
                }
            )  # fmt: skip
            for n in ns:
                err = common_topics_errors(t, u, topic_idx[n])
                ct_rows.append(
                    {
                        "handling": h.value, "width": width, "n_common": n, "replicates": repeats * topic_samples,
                        "mae_unadjusted": err["unadjusted"].mean(), "mae_mixed": err["mixed"].mean(),
                        "mae_adjusted": err["adjusted"].mean(), "mae_sampled": err["sampled"].mean(),
                        "adjusted_better": err["helps"].mean(),
                        "fpc_factor": np.sqrt((n_topics - n) / (n * n_topics)),
                        # E|X| = sqrt(2/pi) SD for a normal error of mean zero
                        "predicted_mae": np.sqrt(2 / np.pi) * err["sd_adjusted"][:, 0].mean(),
                    }
                )  # fmt: skip
            done += 1
            if progress:
                progress(done, total)

    experiment_id = experiment_id or f"pool-bias-{chosen_setting.value}-seed{seed}"
    params = {
        "setting": chosen_setting.value, "measure": spec_measure, "pool_depth": pool_depth, "qrels_id": qrels_id,
        "completed_qrels_id": completed, "seed": seed, "repeats": repeats, "topic_samples": topic_samples,
        "widths": list(widths), "common_topics": ns, "handlings": [h.value for h in handlings],
        "n_topics": n_topics, "best_manual": best_manual if chosen_setting is Setting.manual_vs_automatic else None,
        "pool_candidates": eligible["pool"], "new_candidates": eligible["new"],
    }  # fmt: skip
    experiment = pd.DataFrame(
        [
            {
                "experiment_id": experiment_id,
                **{k: params[k] for k in ("setting", "measure", "pool_depth", "qrels_id", "completed_qrels_id")},
                **{k: params[k] for k in ("seed", "repeats", "topic_samples", "widths", "common_topics")},
                "handlings": params["handlings"],
                "n_topics": n_topics,
                "params": params_json(params),
            }
        ]
    )
    frames = {
        "experiment": experiment,
        "samples": pd.DataFrame(sample_rows),
        "summary": pd.DataFrame(summary_rows),
        "common_topics": pd.DataFrame(ct_rows),
    }
    if store:
        _store(wh, collection, experiment_id, frames)
    return frames


def _store(wh: Store, collection: str, experiment_id: str, frames: dict[str, pd.DataFrame]) -> None:
    """Replace every stored row of ``experiment_id`` with ``frames``, atomically."""
    key = {"collection_id": collection, "experiment_id": experiment_id}
    targets = {
        "pool_experiments": frames["experiment"].drop(columns="experiment_id"),
        "pool_bias_samples": frames["samples"],
        "pool_bias_summary": frames["summary"],
        "pool_common_topics": frames["common_topics"],
    }
    with wh.transaction():
        for table in TABLES:
            wh.con.execute(
                f"DELETE FROM {sql.identifier(table)} WHERE collection_id = $collection_id"
                " AND experiment_id = $experiment_id",
                key,
            )
        for table in reversed(TABLES):
            frame = targets[table]
            columns = ", ".join(sql.identifier(str(c)) for c in frame.columns)
            wh.con.register("staged_pool_experiment", frame)
            try:
                wh.con.execute(
                    f"INSERT INTO {sql.identifier(table)} (collection_id, experiment_id, {columns})"
                    f" SELECT $collection_id, $experiment_id, {columns} FROM staged_pool_experiment",
                    key,
                )
            finally:
                wh.con.unregister("staged_pool_experiment")


def stored_pool_bias(wh: Store, collection: str, *, experiment_id: str | None = None) -> dict[str, pd.DataFrame]:
    """Read a stored pool-bias experiment (default: the latest) back as ``summary`` and ``common_topics``.

    Raises:
        NotFoundError: naming the stored experiments.
    """
    wh.require_collection(collection)
    rows = wh.con.execute(
        "SELECT experiment_id FROM pool_experiments WHERE collection_id = ? ORDER BY created_at DESC, experiment_id",
        [collection],
    ).fetchall()
    names = [r[0] for r in rows]
    if not names:
        raise NotFoundError(
            f"collection {collection!r} has no pool-bias experiment; run `evalwh experiment pool-bias` first"
        )
    chosen = experiment_id or names[0]
    if chosen not in names:
        raise NotFoundError(f"collection {collection!r} has no pool-bias experiment {chosen!r} (it has: {', '.join(names)})")
    key = {"collection_id": collection, "experiment_id": chosen}
    out = {}
    for name, table, order in (
        ("experiment", "pool_experiments", "experiment_id"),
        ("summary", "pool_bias_summary", "width, handling DESC"),
        ("common_topics", "pool_common_topics", "width, handling DESC, n_common"),
    ):
        frame = wh.query(
            f"SELECT * EXCLUDE (collection_id) FROM {sql.identifier(table)}"
            f" WHERE collection_id = $collection_id AND experiment_id = $experiment_id ORDER BY {order}",
            key,
        )
        out[name] = frame
    if out["summary"].empty:
        raise InsufficientDataError(f"pool-bias experiment {chosen!r} has no stored results")
    return out
