"""Keep an experiment's tidy result frames in the tables of ``schema/006_experiments.sql``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalwh import sql
from evalwh.store.connection import params_json

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.store.connection import Store

# every table keyed by (collection_id, experiment_id), experiments itself last
TABLES = (
    "experiment_runs",
    "swap_rates",
    "swap_summary",
    "measure_tau",
    "reduced_run_means",
    "reduced_levels",
)


def replace_experiment(
    wh: Store,
    collection: str,
    experiment_id: str,
    *,
    kind: str,
    qrels_id: str,
    params: dict[str, Any],
    frames: dict[str, pd.DataFrame],
) -> None:
    """Replace the stored rows of ``experiment_id`` by ``frames`` (table -> rows), atomically."""
    key = {"collection_id": collection, "experiment_id": experiment_id}
    where = "WHERE collection_id = $collection_id AND experiment_id = $experiment_id"
    with wh.transaction():
        for table in (*TABLES, "experiments"):
            wh.con.execute(f"DELETE FROM {sql.identifier(table)} {where}", key)
        wh.con.execute(
            "INSERT INTO experiments (collection_id, experiment_id, kind, qrels_id, params)"
            " VALUES ($collection_id, $experiment_id, $kind, $qrels_id, $params)",
            {**key, "kind": kind, "qrels_id": qrels_id, "params": params_json(params)},
        )
        for table, frame in frames.items():
            if table not in TABLES:
                raise ValueError(f"{table!r} is not an experiment table; expected one of {TABLES}")
            columns = ", ".join(sql.identifier(str(c)) for c in frame.columns)
            wh.con.register("staged_experiment", frame)
            try:
                wh.con.execute(
                    f"INSERT INTO {sql.identifier(table)} (collection_id, experiment_id, {columns})"
                    f" SELECT $collection_id, $experiment_id, {columns} FROM staged_experiment",
                    key,
                )
            finally:
                wh.con.unregister("staged_experiment")
