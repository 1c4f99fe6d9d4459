"""Pools as data (methods §5): build, complete, contributions, leave-one-out and simulated pools.

A pool is a set of member runs and a depth lambda. Its qrels (the parent judgments restricted
to the union of the members' top lambda documents) are stored as a derived qrels set whose
``qrels_id`` is the pool id, so every metric runs on a pool through
``wh.evaluate(..., qrels_id=pool_id)``. The set-wise scorers here build the evaluation relations
of :mod:`evalwh.measures.evaluation` (``ev_judged``, ``ev_pairs``) with one qrels view *per evaluated
run*, so the unchanged metric queries score every leave-one-out run, or every simulated pool of
an experiment, in one pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from evalwh.measures import catalog
from evalwh import sql
from evalwh.errors import EvalWhError, MetricParamError, NotFoundError, check_count, check_real
from evalwh.measures.evaluation import evaluate
from evalwh.store.context import Averaging, Options, Unjudged, build_context
from evalwh.store.connection import params_json, sha256_text

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.store.connection import Store

_POOLS = "evalwh.queries.pools"
SELECTIONS = ("pooled", "all")


def select_runs(
    wh: Store, collection: str, *, runs: Sequence[str] | None = None, runs_from: str = "pooled"
) -> tuple[list[str], str]:
    """The member runs of a pool and how they were chosen.

    Args:
        wh: The warehouse.
        collection: The collection.
        runs: Explicit run ids; when given, ``runs_from`` is ignored.
        runs_from: ``pooled`` (runs whose metadata flag says they contributed to the official
            pool) or ``all``.

    Returns:
        The sorted run ids and the selection label (``list``, ``pooled`` or ``all``).

    Raises:
        NotFoundError: for unknown runs or an empty selection.
    """
    wh.require_collection(collection)
    known = wh.run_ids(collection)
    if runs is not None:
        chosen = sorted(set(runs))
        missing = sorted(set(chosen) - set(known))
        if missing:
            raise NotFoundError(f"collection {collection!r} has no run(s) {missing}; evalwh runs lists them")
        if not chosen:
            raise NotFoundError("pool: the run list is empty; give at least one run id")
        return chosen, "list"
    if runs_from == "all":
        chosen = known
    elif runs_from == "pooled":
        rows = wh.con.execute(
            "SELECT run_id FROM runs WHERE collection_id = ? AND pooled ORDER BY run_id", [collection]
        ).fetchall()
        chosen = [r[0] for r in rows]
    else:
        raise EvalWhError(f"pool: unknown run selection {runs_from!r}; use one of {', '.join(SELECTIONS)} or a run list")
    if not chosen:
        raise NotFoundError(
            f"collection {collection!r}: no run is flagged as pooled; load the flags with "
            "`evalwh ingest run-metadata`, or pool every run with --runs-from all (evalwh pool build also takes "
            "--runs / --runs-file)"
        )
    return chosen, runs_from


def _qrels_set(wh: Store, collection: str, qrels_id: str) -> None:
    known = [
        r[0]
        for r in wh.con.execute(
            "SELECT qrels_id FROM qrels_sets WHERE collection_id = ? ORDER BY qrels_id", [collection]
        ).fetchall()
    ]
    if qrels_id not in known:
        names = ", ".join(known) or "none; ingest qrels first"
        raise NotFoundError(f"collection {collection!r} has no qrels set {qrels_id!r} (it has: {names})")


def _drop_qrels_set(wh: Store, collection: str, qrels_id: str, *, replace: bool, what: str) -> bool:
    """Delete a derived qrels set of that name if ``replace``; refuse to touch ingested sets."""
    row = wh.con.execute(
        "SELECT kind FROM qrels_sets WHERE collection_id = ? AND qrels_id = ?", [collection, qrels_id]
    ).fetchone()
    if row is None:
        return False
    if not replace or row[0] != "derived":
        hint = "give --replace" if row[0] == "derived" else "choose another id"
        raise EvalWhError(f"{what}: collection {collection!r} already has a qrels set {qrels_id!r} ({row[0]}); {hint}")
    for table in ("qrels", "qrels_sets"):
        wh.con.execute(f"DELETE FROM {table} WHERE collection_id = ? AND qrels_id = ?", [collection, qrels_id])
    for table in ("pools", "pool_runs", "pool_order"):
        wh.con.execute(f"DELETE FROM {table} WHERE collection_id = ? AND pool_id = ?", [collection, qrels_id])
    return True


def build_pool(
    wh: Store,
    collection: str,
    *,
    depth: int,
    runs: Sequence[str] | None = None,
    runs_from: str = "pooled",
    pool_id: str | None = None,
    qrels_id: str = "default",
    replace: bool = False,
    strategy: str = "depth",
    budget: int | None = None,
    budget_scope: str = "topic",
    seed: int | None = None,
    gamma: float = 0.9,
    rbp_p: float = 0.8,
    rrf_k: float = 60.0,
    rel: float = 1.0,
) -> pd.DataFrame:
    """Build and store a pool, its judging order and its qrels.

    The candidates are the union of each member's top ``depth`` documents in trec_eval order
    (methods §5.1). ``strategy`` orders them for judging (methods §5.5,
    :mod:`evalwh.methods.budget.order`) and ``budget`` keeps the first documents of the
    order, per topic or in total. The order goes to ``pool_order``; the pool's qrels (the
    parent set ``qrels_id`` restricted to the kept documents; a kept document the parent
    does not judge gets grade -1, pooled but unjudged) are stored as the derived qrels set
    ``pool_id``. The sequential strategies (``mtf``, ``bandit``) read the parent's labels
    (grade >= ``rel``) as each document is judged: a replay of the judging.

    Args:
        wh: The warehouse.
        collection: The collection.
        depth: Pool depth lambda: the candidates are every member's top ``depth``.
        runs: Member runs; when None, chosen by ``runs_from``.
        runs_from: ``pooled`` (the runs' metadata flag) or ``all``.
        pool_id: Name of the pool and of its qrels set (default ``pool{depth}-{members}``
            for the depth strategy, ``{strategy}{budget}{topic|total}-pool{depth}-{members}``
            otherwise; ``{members}`` is ``pooled``, ``all``, or for a list of runs ``list``
            and 8 hex digits of its digest; then ``-of-{qrels_id}`` for a parent other than
            the collection's default set, ``-seed{seed}`` for the orders that draw, and the
            strategy's own option after the budget where it is not the default: ``-p0.9``
            (rbp), ``-k30`` (rrf), ``-gamma1`` and ``-rel2`` (bandit; ``-rel2`` for mtf)).
        qrels_id: The parent judgments.
        replace: Replace a pool (derived set) of the same name.
        strategy: ``depth``, ``take``, ``mtf``, ``bandit``, ``rbp``, ``rrf`` or ``random``.
        budget: Judgments kept (per topic or in total); None keeps every candidate. The
            ``depth`` strategy takes none (``take`` is the depth order under a budget).
        budget_scope: ``topic`` (the budget per topic) or ``total``.
        seed: Seed of ``mtf``, ``bandit`` and ``random`` (0 when None: always stored).
        gamma: The bandit's discount of past evidence (1: stationary MaxMean).
        rbp_p: Persistence of the RBP weights.
        rrf_k: The constant of the RRF weights.
        rel: Relevance threshold of the labels the sequential strategies read.

    Returns:
        One row: ``pool_id, depth, parent_qrels_id, selection, strategy, budget,
        budget_scope, seed, runs, topics, pooled, judged, relevant, unjudged`` (pooled =
        judged + unjudged documents).

    Raises:
        NotFoundError: for an unknown collection, run or qrels set.
        EvalWhError: for a bad depth, strategy or budget, or a name clash.

    Examples:
        >>> import pandas as pd
        >>> from evalwh import Warehouse
        >>> wh = Warehouse(":memory:")
        >>> _ = wh.ingest_qrels(pd.DataFrame({"query_id": ["1"] * 3, "doc_id": ["a", "b", "c"],
        ...                                    "relevance": [1, 0, 1]}), collection="demo")
        >>> _ = wh.ingest_runs(pd.DataFrame({"run_id": ["r1"] * 3 + ["r2"] * 2,
        ...     "query_id": ["1"] * 5, "doc_id": ["a", "b", "c", "c", "x"],
        ...     "score": [3.0, 2.0, 1.0, 2.0, 1.0]}), collection="demo")
        >>> row = build_pool(wh, "demo", depth=1, runs_from="all").iloc[0]
        >>> row["pool_id"], int(row["pooled"]), int(row["relevant"])
        ('pool1-all', 2, 2)
        >>> row = build_pool(wh, "demo", depth=3, runs_from="all", strategy="rrf", budget=2).iloc[0]
        >>> row["pool_id"], int(row["pooled"])
        ('rrf2topic-pool3-all', 2)
        >>> build_pool(wh, "demo", depth=3, runs_from="all", strategy="rbp", rbp_p=0.9).iloc[0]["pool_id"]
        'rbp-p0.9-pool3-all'
    """
    import pandas as pd

    from evalwh.methods.budget import order as budget_order

    # a depth or budget is a whole number: 5.5 or True is refused, not rounded or counted as 1
    depth = check_count(depth, "pool: depth")
    budget_order.check_strategy(strategy)
    if strategy == "depth" and budget is not None:
        raise EvalWhError("pool: the depth strategy keeps the whole top lambda; use --strategy take for a budget")
    if budget_scope not in ("topic", "total"):
        raise EvalWhError(f"pool: unknown budget scope {budget_scope!r}; use topic or total")
    if budget is not None:
        budget = check_count(budget, "pool: the budget (a number of judgments)")
    rbp_p = check_real(rbp_p, "pool: the RBP persistence", low=0, high=1, low_open=True, high_open=True)
    rrf_k = check_real(rrf_k, "pool: the RRF constant", low=0)
    gamma = check_real(gamma, "pool: the bandit's discount gamma", low=0, high=1, low_open=True)
    rel = check_real(rel, "pool: the relevance threshold rel")
    members, selection = select_runs(wh, collection, runs=runs, runs_from=runs_from)
    default_set = wh.qrels_set(collection, None)
    qrels_id = default_set if qrels_id is None else qrels_id
    _qrels_set(wh, collection, qrels_id)
    if strategy in budget_order.RANDOM and seed is None:
        seed = 0
    if strategy not in budget_order.RANDOM:
        seed = None
    if pool_id is None:
        # every option that changes the pool is named: the budget and its scope, and the seed of a random order
        label = "" if budget is None else f"{budget}{budget_scope}"
        drawn = "" if seed is None else f"-seed{seed}"
        # and a strategy's own option where it is not the default (the default keeps the short id)
        own = {"rbp": [("p", rbp_p, 0.8)], "rrf": [("k", rrf_k, 60.0)], "bandit": [("gamma", gamma, 0.9), ("rel", rel, 1.0)],
               "mtf": [("rel", rel, 1.0)]}.get(strategy, [])  # fmt: skip
        tuned = "".join(f"-{name}{value:g}" for name, value, default in own if value != default)
        # members named by a list (--runs, --runs-file) by a digest of the sorted list, and a parent
        # set other than the collection's default by its name
        members_part = selection if selection != "list" else "list" + sha256_text("\n".join(sorted(members)))[:8]
        parent = "" if qrels_id == default_set else f"-of-{qrels_id}"
        pool_id = (f"pool{depth}-{members_part}{parent}" if strategy == "depth"
                   else f"{strategy}{label}{tuned}-pool{depth}-{members_part}{parent}{drawn}")  # fmt: skip
    audits = "SELECT count(*) FROM audits WHERE collection_id = ? AND audit_id = ?"
    if wh.con.execute(audits, [collection, pool_id]).fetchone()[0]:
        raise EvalWhError(f"{pool_id!r} names an audit of collection {collection!r}; `pool export` must tell them apart")
    strategy_params = {
        "depth": {}, "take": {}, "random": {}, "mtf": {"rel": rel}, "bandit": {"gamma": gamma, "rel": rel},
        "rbp": {"p": rbp_p}, "rrf": {"k": rrf_k},
    }[strategy]  # fmt: skip
    from evalwh.methods.budget.candidates import candidate_order

    order = candidate_order(
        wh, collection, members, depth=depth, qrels_id=qrels_id, strategy=strategy, seed=seed,
        gamma=gamma, rbp_p=rbp_p, rrf_k=rrf_k, rel=rel,
    )  # fmt: skip
    from evalwh.methods.budget.order import apply_budget

    order = apply_budget(order, budget, budget_scope)
    params = {"depth": depth, "runs": members, "parent_qrels_id": qrels_id, "selection": selection}
    if strategy != "depth":
        params.update(strategy=strategy, budget=budget, budget_scope=budget_scope, seed=seed, **strategy_params)
    frame = pd.DataFrame({"collection_id": collection, "pool_id": pool_id, **{c: order[c] for c in ORDER_COLUMNS}})
    frame["weight"] = frame["weight"].astype("Float64")  # the sequential orders have none: NULL, not NaN
    with wh.transaction():
        _drop_qrels_set(wh, collection, pool_id, replace=replace, what="pool build")
        wh.con.register("pool_order_frame", frame)
        try:
            wh.con.execute(
                "INSERT INTO pool_order (collection_id, pool_id, query_id, doc_id, topic_order, overall_order, weight)"
                " SELECT collection_id, pool_id, query_id, doc_id, topic_order, overall_order, weight FROM pool_order_frame"
            )
        finally:
            wh.con.unregister("pool_order_frame")
        wh.run(
            sql.query(_POOLS, "ordered_qrels"),
            {"collection_id": collection, "pool_id": pool_id, "parent_qrels_id": qrels_id},
        )
        count = wh.con.execute(
            "SELECT count(*) FROM qrels WHERE collection_id = ? AND qrels_id = ?", [collection, pool_id]
        ).fetchone()
        described = f"pool of {len(members)} runs at depth {depth}"
        if strategy != "depth":
            described += f", {strategy} order" + ("" if budget is None else f", budget {budget} per {budget_scope}")
        wh.con.execute(
            "INSERT INTO qrels_sets (collection_id, qrels_id, kind, source_file, sha256, line_count,"
            " parent_qrels_id, params, source) VALUES (?, ?, 'derived', ?, ?, ?, ?, ?, 'derived')",
            [
                collection,
                pool_id,
                described,
                sha256_text(params_json(params)),
                count[0] if count else 0,
                qrels_id,
                params_json({"kind": "pool", **params}),
            ],
        )
        wh.con.execute(
            "INSERT INTO pools (collection_id, pool_id, depth, parent_qrels_id, selection, strategy, budget,"
            " budget_scope, seed, params) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                collection, pool_id, depth, qrels_id, selection, strategy, budget,
                None if budget is None else budget_scope, seed, params_json(strategy_params),
            ],
        )  # fmt: skip
        wh.con.executemany(
            "INSERT INTO pool_runs (collection_id, pool_id, run_id) VALUES (?, ?, ?)",
            [[collection, pool_id, run] for run in members],
        )
    return list_pools(wh, collection, pool_id=pool_id)


ORDER_COLUMNS = ("query_id", "doc_id", "topic_order", "overall_order", "weight")


def pool_order(wh: Store, collection: str, pool_id: str) -> pd.DataFrame:
    """A stored pool's judging order: ``query_id, doc_id, topic_order, overall_order, weight``.

    Raises:
        NotFoundError: naming the pools the collection has.
    """
    pool_members(wh, collection, pool_id)
    return wh.df(sql.query(_POOLS, "pool_order"), {"collection_id": collection, "pool_id": pool_id})


def list_pools(wh: Store, collection: str, *, pool_id: str | None = None) -> pd.DataFrame:
    """The stored pools of a collection with their sizes (one row per pool)."""
    wh.require_collection(collection)
    return wh.df(sql.query(_POOLS, "list_pools"), {"collection_id": collection, "pool_id": pool_id})


def pool_members(wh: Store, collection: str, pool_id: str) -> tuple[list[str], int, str]:
    """A stored pool's member runs, depth and parent qrels id.

    Raises:
        NotFoundError: naming the pools the collection has.
    """
    wh.require_collection(collection)
    row = wh.con.execute(
        "SELECT depth, parent_qrels_id FROM pools WHERE collection_id = ? AND pool_id = ?", [collection, pool_id]
    ).fetchone()
    if row is None:
        names = [
            r[0]
            for r in wh.con.execute(
                "SELECT pool_id FROM pools WHERE collection_id = ? ORDER BY pool_id", [collection]
            ).fetchall()
        ]
        known = ", ".join(names) or "none yet; build one with `evalwh pool build`"
        raise NotFoundError(f"collection {collection!r} has no pool {pool_id!r} (pools: {known})")
    members = [
        r[0]
        for r in wh.con.execute(
            "SELECT run_id FROM pool_runs WHERE collection_id = ? AND pool_id = ? ORDER BY run_id",
            [collection, pool_id],
        ).fetchall()
    ]
    return members, int(row[0]), str(row[1])


def complete_qrels(
    wh: Store,
    collection: str,
    *,
    qrels_id: str = "default",
    completed_id: str | None = None,
    runs: Sequence[str] | None = None,
    replace: bool = False,
) -> pd.DataFrame:
    """Store completed qrels Q* (methods §3.4): every returned, unjudged document judged non-relevant.

    Args:
        wh: The warehouse.
        collection: The collection.
        qrels_id: The qrels set to complete.
        completed_id: Name of the completed set (default ``{qrels_id}-completed``).
        runs: The runs of the study; all runs of the collection when None.
        replace: Replace a derived set of the same name.

    Returns:
        One row: ``qrels_id, parent_qrels_id, judged, added, relevant``.

    Examples:
        >>> import pandas as pd
        >>> from evalwh import Warehouse
        >>> wh = Warehouse(":memory:")
        >>> _ = wh.ingest_qrels(pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]}),
        ...                     collection="demo")
        >>> _ = wh.ingest_runs(pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"],
        ...                                   "score": [2.0, 1.0]}), collection="demo", run_id="r1")
        >>> complete_qrels(wh, "demo")[["qrels_id", "judged", "added"]].values.tolist()
        [['default-completed', 2, 1]]
    """
    _qrels_set(wh, collection, qrels_id)
    chosen = None if runs is None else select_runs(wh, collection, runs=runs)[0]
    completed_id = completed_id or f"{qrels_id}-completed"
    params = {"runs": chosen, "parent_qrels_id": qrels_id}
    with wh.transaction():
        _drop_qrels_set(wh, collection, completed_id, replace=replace, what="qrels completion")
        wh.run(
            sql.query(_POOLS, "completed_qrels"),
            {"collection_id": collection, "qrels_id": completed_id, "parent_qrels_id": qrels_id, "runs": chosen},
        )
        counts = wh.con.execute(
            "SELECT count(*), count(*) FILTER (WHERE relevance >= 1) FROM qrels"
            " WHERE collection_id = ? AND qrels_id = ?",
            [collection, completed_id],
        ).fetchone()
        parent = wh.con.execute(
            "SELECT count(*) FROM qrels WHERE collection_id = ? AND qrels_id = ? AND relevance >= 0",
            [collection, qrels_id],
        ).fetchone()
        judged, relevant = (int(counts[0]), int(counts[1])) if counts else (0, 0)
        wh.con.execute(
            "INSERT INTO qrels_sets (collection_id, qrels_id, kind, source_file, sha256, line_count,"
            " parent_qrels_id, params, source) VALUES (?, ?, 'derived', ?, ?, ?, ?, ?, 'derived')",
            [
                collection,
                completed_id,
                f"{qrels_id} completed with returned documents as non-relevant",
                sha256_text(params_json(params)),
                judged,
                qrels_id,
                params_json({"kind": "completion", **params}),
            ],
        )
    import pandas as pd

    added = judged - (int(parent[0]) if parent else 0)
    return pd.DataFrame(
        [{"qrels_id": completed_id, "parent_qrels_id": qrels_id, "judged": judged, "added": added, "relevant": relevant}]
    )


def contributions(
    wh: Store,
    collection: str,
    *,
    pool_id: str | None = None,
    depth: int | None = None,
    runs: Sequence[str] | None = None,
    runs_from: str = "pooled",
    qrels_id: str = "default",
    rel: int = 1,
    by: str = "run",
) -> pd.DataFrame:
    """Unique contributions to a pool (methods §5.2), per member run or per participant group.

    Either name a stored pool (``pool_id``; its members, depth and parent qrels are used) or
    give ``depth`` and the runs as for :func:`build_pool`; nothing is stored.

    Args:
        wh: The warehouse.
        collection: The collection.
        pool_id: A stored pool.
        depth: Pool depth lambda, without ``pool_id``.
        runs: Member runs, without ``pool_id``.
        runs_from: ``pooled`` or ``all``, without ``pool_id`` and ``runs``.
        qrels_id: Where relevance comes from, without ``pool_id``.
        rel: Relevance threshold (grade >= rel is relevant).
        by: ``run`` or ``group``.

    Returns:
        Per run: ``run_id, group_name, pooled_docs, pooled_relevant, unique_docs,
        unique_relevant, topics_with_unique``; per group the same with ``group_name, runs``
        first. Sorted by unique relevant documents, most first.

    Raises:
        EvalWhError: if neither a pool nor a depth is given, or for an unknown ``by``.
    """
    if by not in ("run", "group"):
        raise EvalWhError(f"contributions: unknown unit {by!r}; use run or group")
    if pool_id is not None:
        members, depth, qrels_id = pool_members(wh, collection, pool_id)
    elif depth is None:
        raise EvalWhError("contributions: give a stored pool (--pool) or a pool depth (--depth)")
    else:
        members = select_runs(wh, collection, runs=runs, runs_from=runs_from)[0]
        _qrels_set(wh, collection, qrels_id)
    frame = wh.df(
        sql.query(_POOLS, "contributions"),
        {
            "collection_id": collection,
            "qrels_id": qrels_id,
            "depth": depth,
            "rel": rel,
            "runs": members,
            "by_group": by == "group",
        },
    )
    # one query for both units: a run is a one-run group; keep the columns that name the unit
    if by == "run":
        return frame.rename(columns={"unit": "run_id"}).drop(columns="runs")
    return frame.drop(columns="unit")


def _parse_measures(measures: Sequence[str], unjudged: Unjudged) -> list[catalog.Measure]:
    parsed = catalog.expand(list(measures))
    if not parsed:
        raise MetricParamError("no measures given; evalwh metrics lists them")
    # the per-run qrels live in ev_judged and ev_pairs; a metric that reads the shared
    # ev_qrels or ev_topics (nDCG's ideal ranking) would see the parent judgments instead
    shared = [str(m) for m in parsed if "ev_qrels" in m.metric.file.text or "ev_topics" in m.metric.file.text]
    if shared:
        raise MetricParamError(
            f"{', '.join(shared)}: not available on per-run pool qrels (the metric reads the shared "
            "judgments, e.g. nDCG's ideal ranking); use P, AP, RBP, RBP_trunc, bpref, ..."
        )
    if unjudged is Unjudged.condensed:
        bad = [str(m) for m in parsed if not m.metric.condensable]
        if bad:
            raise MetricParamError(
                f"{', '.join(bad)}: assessment measures are undefined on condensed lists; "
                "use unjudged nonrelevant"
            )
    return parsed


def _max_rank(parsed: list[catalog.Measure], unjudged: Unjudged) -> int | None:
    """The deepest rank the measures read, or None when they need whole lists."""
    depths = [m.params.get("k") for m in parsed]
    if unjudged is Unjudged.condensed or any(k is None for k in depths):
        return None
    return max(int(k) for k in depths if k is not None)


def _drop_context_relations(wh: Store) -> None:
    """Drop ev_judged and ev_pairs, table or view, before the per-run versions replace them."""
    rows = wh.con.execute(
        "SELECT table_name, table_type FROM information_schema.tables"
        " WHERE table_schema = 'main' AND table_catalog = 'temp' AND table_name IN ('ev_judged', 'ev_pairs')"
    ).fetchall()
    for name, kind in rows:
        wh.con.execute(f"DROP {'VIEW' if kind == 'VIEW' else 'TABLE'} {sql.identifier(name)}")


def _metric_values(wh: Store, parsed: list[catalog.Measure]) -> pd.DataFrame:
    """Run the metric queries over the current ev_judged / ev_pairs: run_id, query_id, measure, value."""
    import pandas as pd

    frames = []
    for measure in parsed:
        frame = wh.arrow(measure.metric.file, measure.params).to_pandas()
        frame["measure"] = str(measure)
        frames.append(frame[["run_id", "query_id", "measure", "value"]])
    out = pd.concat(frames, ignore_index=True)
    out["value"] = out["value"].astype("float64")
    return out


def leave_one_out(
    wh: Store,
    collection: str,
    pool_id: str,
    measures: Sequence[str],
    *,
    new_run: str | None = None,
    unjudged: Unjudged | str = Unjudged.nonrelevant,
    by_group: bool = False,
) -> pd.DataFrame:
    """Score every member of a pool against its own leave-one-out qrels, all runs in one pass.

    For each member ``s``, ``pooled`` is its score against the pool's qrels Q and
    ``left_out`` its score against Q^{-s} (or Q^{-s+r} with ``new_run``), the pool without
    the documents only ``s`` (or only its group) placed in the top lambda; ``delta`` is
    ``pooled - left_out`` (methods §5.3). Topics are those of the pool with a relevant document.

    Args:
        wh: The warehouse.
        collection: The collection.
        pool_id: A stored pool.
        measures: Measure specs (not nDCG: its ideal ranking needs the shared qrels).
        new_run: Webber & Park's refinement: the run being assessed replaces the left-out one.
        unjudged: How the left-out scores treat unjudged documents.
        by_group: Leave out the run's whole participant group.

    Returns:
        ``run_id, query_id, measure, pooled, left_out, delta``, one row per member, topic
        and measure.

    Raises:
        NotFoundError: for an unknown pool or run.
        MetricParamError: for measures that cannot be scored per run.
    """
    import pandas as pd

    handling = Unjudged(unjudged)
    parsed = _parse_measures(measures, handling)
    members, depth, _ = pool_members(wh, collection, pool_id)
    if new_run is not None:
        select_runs(wh, collection, runs=[new_run])
        if new_run in members:
            raise EvalWhError(f"leave-one-out: run {new_run!r} is a member of pool {pool_id!r}; pick an unpooled run")
    specs = [str(m) for m in parsed]
    with wh.transaction():
        build_context(wh, collection, members, Options(qrels_id=pool_id, unjudged=handling))
        pooled = _metric_values(wh, parsed).rename(columns={"value": "pooled"})
        _drop_context_relations(wh)
        wh.run(
            sql.query(_POOLS, "loo_judged"),
            {
                "collection_id": collection,
                "pool_id": pool_id,
                "depth": depth,
                "new_run": new_run,
                "by_group": by_group,
            },
        )
        wh.run(sql.query(_POOLS, "judged"), {"max_rank": _max_rank(parsed, handling)})
        if handling is Unjudged.condensed:
            wh.run(sql.query(_POOLS, "condense"))
        wh.run(sql.query(_POOLS, "pairs"), {"collection_id": collection, "condensed": handling is Unjudged.condensed})
        left = _metric_values(wh, parsed).rename(columns={"value": "left_out"})
        # leave the connection as the evaluation context expects it (its own relation kinds)
        _drop_context_relations(wh)
    out = pooled.merge(left, on=["run_id", "query_id", "measure"], how="inner")
    out["delta"] = out["pooled"] - out["left_out"]
    order = {m: i for i, m in enumerate(specs)}
    out = out.assign(_o=out["measure"].map(order)).sort_values(["_o", "run_id", "query_id"])
    return pd.DataFrame(out.drop(columns="_o").reset_index(drop=True))


def pooled_scores(
    wh: Store,
    collection: str,
    spec: pd.DataFrame,
    measures: Sequence[str],
    *,
    depth: int,
    qrels_id: str = "default",
    unjudged: Unjudged | str = Unjudged.nonrelevant,
    rel: int = 1,
) -> pd.DataFrame:
    """Score runs against many simulated pools at once (each evaluation its own pool).

    ``spec`` has one row per (evaluation, pool member): ``eval_id, run_id, member_id``.
    Evaluation ``eval_id`` scores ``run_id`` against the qrels ``qrels_id`` restricted to the
    depth-``depth`` pool of its members. All evaluations share one set-wise pass.

    Args:
        wh: The warehouse.
        collection: The collection.
        spec: The evaluations and their pool members.
        measures: Measure specs (not nDCG).
        depth: Pool depth lambda.
        qrels_id: The judgments pools are restricted from (typically completed qrels).
        unjudged: ``nonrelevant`` or ``condensed``.
        rel: Relevance threshold.

    Returns:
        ``eval_id, query_id, measure, value`` over the topics of ``qrels_id`` with a relevant
        document.

    Raises:
        EvalWhError: if ``spec`` lacks columns.
    """
    import pandas as pd

    missing = [c for c in ("eval_id", "run_id", "member_id") if c not in spec.columns]
    if missing:
        raise EvalWhError(f"pooled_scores: spec is missing columns {missing}; expected ['eval_id', 'run_id', 'member_id']")
    handling = Unjudged(unjudged)
    parsed = _parse_measures(measures, handling)
    runs = sorted(set(spec["run_id"]) | set(spec["member_id"]))
    frame = pd.DataFrame({c: spec[c].astype(str) for c in ("eval_id", "run_id", "member_id")})
    with wh.transaction():
        build_context(
            wh, collection, runs, Options(qrels_id=qrels_id, rel=rel, unjudged=handling, averaging=Averaging.default)
        )
        wh.con.register("ev_pool_spec_frame", frame)
        try:
            wh.con.execute("CREATE OR REPLACE TEMP TABLE ev_pool_spec AS SELECT eval_id, run_id, member_id FROM ev_pool_spec_frame")
        finally:
            wh.con.unregister("ev_pool_spec_frame")
        _drop_context_relations(wh)
        wh.run(sql.query(_POOLS, "spec_judged"), {"collection_id": collection, "depth": depth})
        wh.run(sql.query(_POOLS, "judged"), {"max_rank": _max_rank(parsed, handling)})
        if handling is Unjudged.condensed:
            wh.run(sql.query(_POOLS, "condense"))
        wh.run(sql.query(_POOLS, "pairs"), {"collection_id": collection, "condensed": handling is Unjudged.condensed})
        values = _metric_values(wh, parsed)
        _drop_context_relations(wh)
    return pd.DataFrame(values.rename(columns={"run_id": "eval_id"}))



def adjust(
    wh: Store,
    collection: str,
    run: str,
    pool_id: str,
    measure: str,
    *,
    method: str = "leave-one-out",
    common_topics: Sequence[str] | None = None,
    unjudged: Unjudged | str = Unjudged.nonrelevant,
    confidence: float = 0.95,
    resamples: int = 10_000,
    rng: int | None = None,
    store: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> pd.DataFrame:
    """Adjust an unpooled run's mean score for pooling bias (methods §6.2, §6.3).

    ``leave-one-out`` (Algorithm 1): ``a`` is the mean over the pool's members of their
    pooled minus leave-one-out mean score, each member's documents withdrawn unless ``run``
    has them in its top lambda (``run`` replaces the left-out member). ``common-topics``
    (Algorithm 2): on the common topics ``run`` is scored against the parent judgments
    restricted to the pool with ``run`` added (its top lambda judged) and against the pool
    itself; ``a`` is the mean difference there.

    Args:
        wh: The warehouse.
        collection: The collection.
        run: The new run; must not be a member of the pool.
        pool_id: A stored pool.
        measure: One measure spec, e.g. ``RBP_trunc(p=0.8)@10``.
        method: ``leave-one-out`` or ``common-topics``.
        common_topics: The common topics (``common-topics`` only).
        unjudged: How the unpooled scores treat unjudged documents.
        confidence: Confidence of the CLT check (``common-topics``).
        resamples: Bootstrap resamples (``common-topics``).
        rng: Seed of the bootstrap.
        store: Keep the result in ``pool_adjustments`` (replacing the row of the same run,
            pool, measure, method and handling).
        progress: Called with ``(done, total)`` steps.

    Returns:
        One row with ``run_id, pool_id, measure, method, unjudged`` and the estimates of
        :func:`evalwh.stats.adjust.adjust_leave_one_out` or
        :func:`evalwh.stats.adjust.adjust_common_topics`.

    Raises:
        EvalWhError: for a pooled ``run``, an unknown method or missing common topics.
    """
    import pandas as pd

    from evalwh.stats import adjust as estimators

    handling = Unjudged(unjudged)
    members, depth, parent = pool_members(wh, collection, pool_id)
    select_runs(wh, collection, runs=[run])
    if run in members:
        raise EvalWhError(f"adjust: run {run!r} is a member of pool {pool_id!r}; its score needs no adjustment")
    if progress:
        progress(0, 2)
    if method == "leave-one-out":
        loo = leave_one_out(wh, collection, pool_id, [measure], new_run=run, unjudged=handling)
        if progress:
            progress(1, 2)
        unpooled = evaluate(wh, 
            [measure], collection=collection, runs=[run], per_query=True, qrels_id=pool_id, unjudged=handling
        )
        result = estimators.adjust_leave_one_out(loo, unpooled)
    elif method == "common-topics":
        if not common_topics:
            raise EvalWhError("adjust: --method common-topics needs the common topics (--common-topics FILE)")
        spec = pd.DataFrame(
            [("unpooled", run, m) for m in members] + [("true", run, m) for m in [*members, run]],
            columns=["eval_id", "run_id", "member_id"],
        )
        scores = pooled_scores(wh, collection, spec, [measure], depth=depth, qrels_id=parent, unjudged=handling)
        if progress:
            progress(1, 2)
        wide = scores.pivot(index="query_id", columns="eval_id", values="value").reset_index()
        wide.loc[~wide["query_id"].isin(list(common_topics)), "true"] = float("nan")
        result = estimators.adjust_common_topics(
            wide[["query_id", "unpooled", "true"]], list(common_topics), confidence=confidence, resamples=resamples, rng=rng
        )
    else:
        raise EvalWhError(f"adjust: unknown method {method!r}; use leave-one-out or common-topics")
    head = pd.DataFrame(
        [{"run_id": run, "pool_id": pool_id, "measure": str(catalog.parse(measure)), "method": method, "unjudged": handling.value}]
    )
    out = pd.concat([head, result], axis=1)
    if store:
        _store_adjustment(wh, collection, out, common_topics if method == "common-topics" else None, rng)
    if progress:
        progress(2, 2)
    return out


def _store_adjustment(
    wh: Store, collection: str, row: pd.DataFrame, common_topics: Sequence[str] | None, seed: int | None
) -> None:
    """Replace the stored adjustment of the same run, pool, measure, method and handling (schema/009)."""
    record = row.iloc[0].to_dict()
    record.update(
        collection_id=collection,
        common_topics=sorted(common_topics) if common_topics is not None else None,
        seed=seed if common_topics is not None else None,
    )
    columns = [c for c in ADJUSTMENT_COLUMNS if c in record]
    key = ("collection_id", "run_id", "pool_id", "measure", "method", "unjudged")
    with wh.transaction():
        wh.con.execute(
            "DELETE FROM pool_adjustments WHERE " + " AND ".join(f"{k} = ${k}" for k in key),
            {k: record[k] for k in key},
        )
        wh.con.execute(
            f"INSERT INTO pool_adjustments ({', '.join(columns)}) VALUES ({', '.join('$' + c for c in columns)})",
            {c: (None if _missing(record[c]) else record[c]) for c in columns},
        )


def _missing(value: object) -> bool:
    return isinstance(value, float) and value != value  # NaN


ADJUSTMENT_COLUMNS = (
    "collection_id", "run_id", "pool_id", "measure", "method", "unjudged", "common_topics", "seed",
    "n_topics", "n_common", "n_runs", "unpooled", "a", "adjusted", "mixed", "sampled", "ratio",
    "sigma2_a_hat", "se_adjusted", "clt_ok", "bootstrap_confidence", "delta_min", "delta_max",
)  # fmt: skip
