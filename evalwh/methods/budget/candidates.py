"""The candidates of a pool in judging order (methods §5.5): the warehouse side of :mod:`evalwh.methods.budget.order`.

:func:`candidate_order` reads the candidates (``queries/pools/candidates.sql``) and, for the
sequential strategies, the members' ranked lists (``queries/pools/member_lists.sql``), and
orders them; :func:`evalwh.methods.pools.build_pool` stores the result and
:func:`evalwh.methods.budget.replays` replays it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from evalwh import sql

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.store.connection import Store

_POOLS = "evalwh.queries.pools"


def candidate_order(
    wh: Store,
    collection: str,
    members: Sequence[str],
    *,
    depth: int,
    qrels_id: str,
    strategy: str,
    seed: int | None = None,
    gamma: float = 0.9,
    rbp_p: float = 0.8,
    rrf_k: float = 60.0,
    rel: float = 1.0,
) -> pd.DataFrame:
    """The judging order of every candidate of the depth-``depth`` pool of ``members`` (nothing stored).

    Returns:
        :func:`evalwh.methods.budget.order.order_pool`'s frame plus ``relevant`` (the
        parent's grade >= ``rel``), sorted by ``overall_order``.
    """
    from evalwh.methods.budget.order import SEQUENTIAL, order_pool

    base = {"collection_id": collection, "parent_qrels_id": qrels_id, "depth": depth, "runs": list(members)}
    candidates = wh.df(sql.query(_POOLS, "candidates"), {**base, "rel": rel, "rbp_p": rbp_p, "rrf_k": rrf_k})
    lists = wh.df(sql.query(_POOLS, "member_lists"), base) if strategy in SEQUENTIAL else None
    order = order_pool(candidates, strategy, lists=lists, seed=seed, gamma=gamma)
    # each candidate's flag by a join on the keys (a left merge keeps the order's row order)
    flags = candidates[["query_id", "doc_id", "relevant"]]
    order = order.merge(flags, on=["query_id", "doc_id"], how="left", validate="many_to_one", sort=False)
    order["relevant"] = order["relevant"].to_numpy(bool)
    return order
