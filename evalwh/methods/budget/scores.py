"""Score every run under many label sets in one set-wise pass: the budget replay's leaderboards.

:func:`score_label_sets` builds the evaluation context on the reference set, puts each
simulated label set beside it (``queries/pools/budget_judged.sql``: the evaluation key
``label_id TAB run_id`` takes the place of ``run_id``) and runs the metric queries once over
all keys. A metric whose query reads the shared judgments is refused by
:func:`evalwh.methods.pools._parse_measures`, except nDCG, whose ideal ranking
``queries/pools/budget_ndcg.sql`` takes from each set's own labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from evalwh import sql
from evalwh.methods import pools
from evalwh.store.context import Averaging, Options, Unjudged, build_context

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.store.connection import Store

_POOLS = "evalwh.queries.pools"
SEP = "\t"  # label_id TAB run_id: a run id never holds a TAB


def score_label_sets(
    wh: Store,
    collection: str,
    labels: pd.DataFrame,
    measures: Sequence[str],
    *,
    runs: Sequence[str],
    reference: str,
    rel: float = 1.0,
) -> pd.DataFrame:
    """Score ``runs`` under many label sets in one set-wise pass.

    Args:
        wh: The warehouse.
        collection: The collection.
        labels: ``label_id, query_id, doc_id, relevance``: one row per labelled pair of each set.
        measures: Measure specs; nDCG takes its ideal ranking from each set's own labels
            (``queries/pools/budget_ndcg.sql``).
        runs: The runs scored.
        reference: The set whose topics are the topic set (topics with a relevant document).
        rel: Relevance threshold.

    Returns:
        ``label_id, run_id, query_id, measure, value``.
    """
    import pandas as pd

    from evalwh.measures import catalog

    asked = catalog.expand(list(measures))
    ndcg = [m for m in asked if m.metric.key == "ndcg"]  # the others read only ev_judged / ev_pairs
    others = [str(m) for m in asked if m.metric.key != "ndcg"]
    parsed = pools._parse_measures(others, Unjudged.nonrelevant) if others else []
    frame = pd.DataFrame(
        {
            "label_id": labels["label_id"].astype(str).to_numpy(),
            "query_id": labels["query_id"].astype(str).to_numpy(),
            "doc_id": labels["doc_id"].astype(str).to_numpy(),
            "relevance": labels["relevance"].to_numpy(dtype=np.float64),
        }
    )
    frame["is_rel"] = frame["relevance"].to_numpy() >= rel  # the threshold, as ev_qrels applies it
    run_frame = pd.DataFrame({"run_id": list(runs)})
    with wh.transaction():
        build_context(
            wh, collection, list(runs),
            Options(qrels_id=reference, rel=int(rel), unjudged=Unjudged.nonrelevant, averaging=Averaging.default),
        )  # fmt: skip
        for name, value in (("ev_budget_labels", frame), ("ev_budget_runs", run_frame)):
            wh.con.register(f"{name}_frame", value)
            try:
                wh.con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT * FROM {name}_frame")
            finally:
                wh.con.unregister(f"{name}_frame")
        pools._drop_context_relations(wh)
        wh.run(sql.query(_POOLS, "budget_judged"))
        wh.run(sql.query(_POOLS, "judged"), {"max_rank": pools._max_rank([*parsed, *ndcg], Unjudged.nonrelevant)})
        wh.run(sql.query(_POOLS, "pairs"), {"collection_id": collection, "condensed": False})
        frames = [pools._metric_values(wh, parsed)] if parsed else []
        for measure in ndcg:
            frame = wh.df(sql.query(_POOLS, "budget_ndcg"), {"k": measure.params.get("k")})
            frames.append(frame.assign(measure=str(measure))[["run_id", "query_id", "measure", "value"]])
        values = pd.concat(frames, ignore_index=True).astype({"value": "float64"})
        pools._drop_context_relations(wh)
        wh.con.execute("DROP TABLE IF EXISTS ev_budget_labels")
        wh.con.execute("DROP TABLE IF EXISTS ev_budget_runs")
    keys = values["run_id"].str.split(SEP, n=1, expand=True)
    values["label_id"], values["run_id"] = keys[0], keys[1]
    return pd.DataFrame(values[["label_id", "run_id", "query_id", "measure", "value"]])
