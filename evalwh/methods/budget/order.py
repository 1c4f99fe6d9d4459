"""Judging orders of a pool (methods §5.5): which candidate document to judge next.

A strategy orders the candidates of a pool (the union of the members' top lambda,
``queries/pools/candidates.sql``) per topic; a budget then keeps the first documents. Every
function here is pure: frames in, frames out, randomness only from the ``seed`` argument.

* Static orders (one sort, no feedback): ``depth`` / ``take`` (the best rank any member gives a
  document, then the number of members that have it, then the document id), ``rbp`` (Moffat,
  Webber and Zobel, SIGIR 2007: the summed rank-biased weight ``(1 - p) p^(rank - 1)``) and
  ``rrf`` (the summed reciprocal-rank weight ``1 / (k + rank)``, Cormack, Clarke and Buettcher,
  SIGIR 2009), and ``random`` (a seeded permutation per topic).
* Sequential orders, which read the relevance of each judged document before choosing the
  next: ``mtf`` (Cormack, Palmer and Clarke, SIGIR 1998, move-to-front) and ``bandit``
  (Losada, Parapar and Barreiro, SIGIR 2016 / IP&M 2017: MaxMean, non-stationary). They run
  on all topics at once: one step judges one document in every topic still open, with numpy
  over (topic, run) arrays.

The overall order (how a total budget is spent) sorts static orders by their key across
topics (all rank-1 documents of every topic first, say) and sequential or random ones by
their place within the topic, then topic id: a total budget is spread evenly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from evalwh.errors import EvalWhError

if TYPE_CHECKING:
    import pandas as pd

STRATEGIES = ("depth", "take", "mtf", "bandit", "rbp", "rrf", "random")
SEQUENTIAL = ("mtf", "bandit")
RANDOM = ("mtf", "bandit", "random")
"""Strategies that draw from the seed: the order of the runs' queue, the bandit's ties, a permutation."""


def check_strategy(strategy: str) -> str:
    """The strategy name, or an error listing the known ones."""
    if strategy not in STRATEGIES:
        raise EvalWhError(f"pool: unknown strategy {strategy!r}; use one of {', '.join(STRATEGIES)}")
    return strategy


def order_pool(
    candidates: pd.DataFrame,
    strategy: str,
    *,
    lists: pd.DataFrame | None = None,
    seed: int | None = None,
    gamma: float = 0.9,
) -> pd.DataFrame:
    """Order a pool's candidates for judging.

    Args:
        candidates: One row per candidate: ``query_id, doc_id, best_rank, n_runs, rbp_weight,
            rrf_weight, relevant`` (``queries/pools/candidates.sql``).
        strategy: One of :data:`STRATEGIES`.
        lists: The members' top lambda, ``query_id, run_id, rank, doc_id`` (sequential
            strategies only).
        seed: Seed of the random draws (``mtf``, ``bandit``, ``random``).
        gamma: The bandit's discount of past rewards (1: stationary MaxMean).

    Returns:
        ``query_id, doc_id, topic_order, overall_order, weight``, one row per candidate,
        sorted by ``overall_order``.

    Examples:
        >>> import pandas as pd
        >>> c = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "c"], "best_rank": [2, 1, 1],
        ...                   "n_runs": [1, 1, 2], "rbp_weight": [0.1, 0.2, 0.4], "rrf_weight": [0.1, 0.2, 0.3],
        ...                   "relevant": [True, False, True]})
        >>> order_pool(c, "depth")[["query_id", "doc_id", "topic_order", "overall_order"]].values.tolist()
        [['2', 'c', 1, 1], ['1', 'b', 1, 2], ['1', 'a', 2, 3]]
    """
    import pandas as pd

    check_strategy(strategy)
    frame = candidates.sort_values(["query_id", "doc_id"]).reset_index(drop=True)
    weight: np.ndarray | None
    if strategy in ("depth", "take"):
        # rank 1 of every member first, documents several members have first within a rank
        key = [frame["best_rank"].to_numpy(), -frame["n_runs"].to_numpy()]
        weight = frame["best_rank"].to_numpy(dtype=np.float64)
        within = _sort_within(frame, key)
        overall = _sort_across(frame, key)
    elif strategy in ("rbp", "rrf"):
        weight = frame[f"{strategy}_weight"].to_numpy(dtype=np.float64)
        key = [-weight, frame["best_rank"].to_numpy()]
        within = _sort_within(frame, key)
        overall = _sort_across(frame, key)
    else:
        rng = np.random.default_rng(seed)
        weight = None
        if strategy == "random":
            within = _sort_within(frame, [rng.permutation(len(frame))])
        else:
            if lists is None:
                raise EvalWhError(f"pool: strategy {strategy!r} needs the members' ranked lists")
            within = _sequential(frame, lists, strategy, rng, gamma)
        # a total budget is spread evenly: place 1 of every topic, then place 2, ...
        overall = _sort_across(frame, [within])
    out = pd.DataFrame(
        {
            "query_id": frame["query_id"].to_numpy(),
            "doc_id": frame["doc_id"].to_numpy(),
            "topic_order": within.astype(np.int32),
            "overall_order": overall.astype(np.int64),
            "weight": weight if weight is not None else np.full(len(frame), np.nan),
        }
    )
    return out.sort_values("overall_order").reset_index(drop=True)


def apply_budget(order: pd.DataFrame, budget: int | Mapping[str, int] | None, scope: str) -> pd.DataFrame:
    """Keep the first ``budget`` documents of each topic (``scope="topic"``) or overall (``"total"``).

    Per topic, ``budget`` may also map each topic id to its own number (a share of each topic's
    candidates); a topic it does not name keeps none. The overall order of the kept documents is
    renumbered from 1 (their relative order stays).

    Examples:
        >>> import pandas as pd
        >>> o = pd.DataFrame({"query_id": ["1", "2", "1", "2"], "doc_id": list("abcd"),
        ...                   "topic_order": [1, 1, 2, 2], "overall_order": [1, 2, 3, 4], "weight": [0.0] * 4})
        >>> apply_budget(o, 1, "topic")["doc_id"].tolist(), apply_budget(o, 3, "total")["doc_id"].tolist()
        (['a', 'b'], ['a', 'b', 'c'])
        >>> apply_budget(o, {"1": 2, "2": 1}, "topic")["doc_id"].tolist()
        ['a', 'b', 'c']
    """
    if scope not in ("topic", "total"):
        raise EvalWhError(f"pool: unknown budget scope {scope!r}; use topic or total")
    if budget is None:
        return order
    if isinstance(budget, Mapping):
        if scope != "topic" or min(budget.values(), default=1) < 1:
            raise EvalWhError("pool: a budget per topic id is a positive number of judgments in each topic")
        limit = order["query_id"].map(budget).fillna(0).to_numpy()
        kept = order[order["topic_order"].to_numpy() <= limit]
    else:
        if budget < 1:
            raise EvalWhError(f"pool: the budget must be a positive number of judgments, got {budget}")
        column = "topic_order" if scope == "topic" else "overall_order"
        kept = order[order[column] <= budget]
    kept = kept.sort_values("overall_order").reset_index(drop=True)
    kept["overall_order"] = np.arange(1, len(kept) + 1, dtype=np.int64)
    return kept


def _sort_within(frame: pd.DataFrame, key: list[np.ndarray]) -> np.ndarray:
    """1-based place of each row within its topic, sorted by ``key`` then doc id."""
    topic = frame["query_id"].to_numpy().astype(str)
    doc = frame["doc_id"].to_numpy().astype(str)
    idx = np.lexsort((doc, *reversed(key), topic))
    place = np.empty(len(frame), dtype=np.int64)
    starts = np.r_[0, np.flatnonzero(topic[idx][1:] != topic[idx][:-1]) + 1]
    counter = np.arange(len(frame)) - np.repeat(starts, np.diff(np.r_[starts, len(frame)]))
    place[idx] = counter + 1
    return place


def _sort_across(frame: pd.DataFrame, key: list[np.ndarray]) -> np.ndarray:
    """1-based place of each row across topics, sorted by ``key``, then topic id, then doc id."""
    idx = np.lexsort((frame["doc_id"].to_numpy().astype(str), frame["query_id"].to_numpy().astype(str), *reversed(key)))
    place = np.empty(len(frame), dtype=np.int64)
    place[idx] = np.arange(1, len(frame) + 1)
    return place


def _sequential(
    frame: pd.DataFrame, lists: pd.DataFrame, strategy: str, rng: np.random.Generator, gamma: float
) -> np.ndarray:
    """Replay move-to-front or the MaxMean bandit on every topic at once; 1-based places.

    Arms are the member runs; pulling an arm judges the first document of its list not yet
    judged. An arm's pointer moves past every judged document of its list (judged by its own
    pull or through another run: a document is judged once), and that document's label is
    the arm's evidence. ``mtf`` keeps pulling the arm at the head of the queue while it
    yields relevant documents and sends it to the back after a non-relevant one; ``bandit``
    pulls the arm with the highest posterior mean ``(1 + a) / (2 + a + b)`` of its relevant
    (``a``) and non-relevant (``b``) evidence, each new label discounting the old by ``gamma``.
    Ties (and the queue's first order) follow one seeded permutation of the runs per topic.
    """
    import pandas as pd

    if not 0.0 < gamma <= 1.0:
        raise EvalWhError(f"pool: the bandit's discount gamma must be in (0, 1], got {gamma}")
    topics = np.unique(frame["query_id"].to_numpy().astype(str))
    n_topics = len(topics)
    topic_idx = np.searchsorted(topics, frame["query_id"].to_numpy().astype(str))
    # local document index within the topic (frame is sorted by topic, doc)
    starts = np.searchsorted(topic_idx, np.arange(n_topics))
    local = np.arange(len(frame)) - starts[topic_idx]
    sizes = np.bincount(topic_idx, minlength=n_topics)
    width = int(sizes.max()) if n_topics else 0
    # per topic one column more than it needs, never judged: a list that has run out points
    # there. Documents are numbered across topics (topic * stride + place), so that every
    # lookup below is one flat take.
    stride = width + 1
    relevant = np.zeros(n_topics * stride, dtype=bool)
    relevant[topic_idx * stride + local] = frame["relevant"].to_numpy(dtype=bool)

    run_ids = np.unique(lists["run_id"].to_numpy().astype(str))
    n_runs = len(run_ids)
    depth = int(lists["rank"].max()) if len(lists) else 0
    # each arm's documents by rank, then its topic's never-judged column (where it stops)
    end = (np.arange(n_topics, dtype=np.int64) * stride + width)[:, None]
    arms = np.repeat(np.repeat(end[:, :, None], n_runs, axis=1), depth + 1, axis=2)
    # each listed document's topic and place among the candidates (every one is a candidate)
    places = pd.DataFrame({"query_id": frame["query_id"].to_numpy(), "doc_id": frame["doc_id"].to_numpy(),
                           "ti": topic_idx, "di": local})  # fmt: skip
    located = lists[["query_id", "run_id", "rank", "doc_id"]].merge(places, on=["query_id", "doc_id"], how="inner")
    ti = located["ti"].to_numpy(dtype=np.int64)
    di = located["di"].to_numpy(dtype=np.int64)
    ri = np.searchsorted(run_ids, located["run_id"].to_numpy().astype(str))
    arms[ti, ri, located["rank"].to_numpy(dtype=np.int64) - 1] = ti * stride + di
    arms = arms.reshape(-1)
    # where each arm's list starts in ``arms``
    first = (np.arange(n_topics * n_runs, dtype=np.int64) * (depth + 1)).reshape(n_topics, n_runs)
    # the queue's first order and every tie: one seeded permutation of the runs per topic
    tiebreak = np.argsort(rng.random((n_topics, n_runs)), axis=1).astype(np.float64)

    judged = np.zeros(n_topics * stride, dtype=bool)
    place = np.zeros(n_topics * stride, dtype=np.int64)
    done = np.zeros(n_topics, dtype=np.int64)
    pointer = np.zeros((n_topics, n_runs), dtype=np.int64)
    hits = np.zeros((n_topics, n_runs))
    misses = np.zeros((n_topics, n_runs))
    priority = tiebreak.copy()
    flat_hits, flat_misses, flat_pointer, flat_first = (a.reshape(-1) for a in (hits, misses, pointer, first))

    def advance() -> np.ndarray:
        # move every pointer past judged documents; their labels are the arm's evidence (an
        # arm at its topic's never-judged column has run out, and stays there)
        doc = arms[first + pointer]
        flat_doc = doc.reshape(-1)
        moving = np.flatnonzero(judged[flat_doc])
        while moving.size:
            label = relevant[flat_doc[moving]]
            flat_hits[moving] = gamma * flat_hits[moving] + label
            flat_misses[moving] = gamma * flat_misses[moving] + ~label
            flat_pointer[moving] += 1
            flat_doc[moving] = arms[flat_first[moving] + flat_pointer[moving]]
            moving = moving[judged[flat_doc[moving]]]
        return doc

    doc = advance()
    while (open_ := done < sizes).any():
        live = doc != end
        if strategy == "mtf":
            score = np.where(live, priority, -np.inf)
        else:
            mean = (1.0 + hits) / (2.0 + hits + misses)
            best = np.where(live, mean, -np.inf).max(axis=1, keepdims=True)
            score = np.where(live & (mean == best), tiebreak, -np.inf)
        arm = score.argmax(axis=1)
        rows = np.flatnonzero(open_)
        chosen = doc[rows, arm[rows]]
        judged[chosen] = True
        done[rows] += 1
        place[chosen] = done[rows]
        if strategy == "mtf":
            # a non-relevant document sends the run to the back of the queue
            miss = rows[~relevant[chosen]]
            priority[miss, arm[miss]] = priority[miss].min(axis=1) - 1.0
        doc = advance()
    return place[topic_idx * stride + local]
