"""Tell the user when trec_eval 9's float32 ties would order a run differently (docs/report.md).

evalwh orders a list as trec_eval 10 does: score as a double, descending, then doc_id
descending. trec_eval up to 9.0.8 read scores into a C float, so two scores that round to the
same float32 tied and fell back to the doc_id order; published TREC tables were made that way.
Where a run's order differs between the two, its values can differ from the published ones,
and ``--float32-ties`` reproduces them. ``eval``, ``compare`` and ``report`` say so once, with
this module's sentence, naming only the runs whose printed values of the measures shown change
(:func:`printed_changes`, :func:`printed_ties_note`). The ingest finds it once per run, as it ranks the run, and stores it
with the run (``runs.float32_lists``, ``float32_first_rank``; schema 021), so that the check
reads one row a run; only for runs stored before that step does it run the reference query
over their stored scores (``queries/reports/float32_order.sql``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evalwh import sql

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.store.connection import Store


def float32_order(wh: Store, collection: str, runs: Sequence[str] | None = None) -> pd.DataFrame:
    """The runs whose order changes under float32 scores: ``run_id, lists, first_rank``.

    The figures the ingest stored (``float32_stored.sql``); ``float32_order.sql`` over the
    stored scores of the runs that have none (stored before schema 021). By run_id.

    Examples:
        >>> import pandas as pd
        >>> from evalwh import Warehouse
        >>> wh = Warehouse(":memory:")
        >>> _ = wh.ingest_qrels(pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]}),
        ...                     collection="c")
        >>> lines = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"],
        ...                       "score": [1.00000001, 1.0]})
        >>> _ = wh.ingest_runs(lines, collection="c", run_id="r")
        >>> float32_order(wh, "c").values.tolist()
        [['r', 1, 2]]
    """
    import pandas as pd

    chosen = None if runs is None else list(runs)
    stored = wh.df(
        sql.query("evalwh.queries.reports", "float32_stored"),
        {"collection_id": collection, "runs": chosen},
    )
    unknown = stored["lists"].isna()
    found = stored[~unknown & (stored["lists"] > 0)]
    if unknown.any():
        computed = wh.df(
            sql.query("evalwh.queries.reports", "float32_order"),
            {"collection_id": collection, "runs": stored.loc[unknown, "run_id"].tolist()},
        )
        found = pd.concat([found, computed]) if not computed.empty else found
    columns = {"run_id": str, "lists": "int64", "first_rank": "int64"}
    return found.astype(columns).sort_values("run_id").reset_index(drop=True)


def ties_note(frame: pd.DataFrame) -> str | None:
    """One sentence naming ``--float32-ties`` when some run's order differs; None otherwise.

    Examples:
        >>> import pandas as pd
        >>> ties_note(pd.DataFrame({"run_id": ["a", "b"], "lists": [3, 1], "first_rank": [5, 40]}))
        '2 runs (a, b) order 4 lists differently when scores are rounded to float32, as trec_eval 9 and the published TREC tables did (the first at rank 5); their values can differ from those tables: --float32-ties reproduces them.'
        >>> ties_note(pd.DataFrame({"run_id": [], "lists": [], "first_rank": []})) is None
        True
    """
    if frame.empty:
        return None
    n = len(frame)
    names = ", ".join(str(r) for r in frame["run_id"].head(5)) + (", ..." if n > 5 else "")
    lists = int(frame["lists"].sum())
    runs = "1 run" if n == 1 else f"{n} runs"
    verb = "orders" if n == 1 else "order"
    return (
        f"{runs} ({names}) {verb} {lists} list{'s' if lists != 1 else ''} differently when scores "
        "are rounded to float32, as trec_eval 9 and the published TREC tables did (the first at "
        f"rank {int(frame['first_rank'].min())}); "
        f"{'its values' if n == 1 else 'their values'} can differ from those tables: "
        "--float32-ties reproduces them."
    )


def changed_values(
    as_given: pd.DataFrame, as_float32: pd.DataFrame, digits: int = 4
) -> pd.DataFrame:
    """Per run, how many of its values print differently (``%.4f``) under float32 order.

    ``as_given`` and ``as_float32``: the same evaluation (``run_id``, ``measure``, ``value``,
    and ``query_id`` per topic) in trec_eval 10's order and in trec_eval 9's. Returns
    ``run_id, values`` for the runs with at least one such value, by run_id.

    Examples:
        >>> import pandas as pd
        >>> a = pd.DataFrame({"run_id": ["r", "r", "s"], "measure": ["AP", "P@10", "AP"],
        ...                   "value": [0.12344, 0.5, 0.2]})
        >>> b = a.assign(value=[0.12346, 0.5, 0.20001])
        >>> changed_values(a, b).values.tolist()
        [['r', 1]]
    """
    import pandas as pd

    keys = [c for c in ("run_id", "query_id", "measure") if c in as_given.columns]
    given, rounded = as_given[[*keys, "value"]], as_float32[[*keys, "value"]]
    merged = given.merge(rounded, on=keys, suffixes=("", "_f32"))

    def printed(values: pd.Series) -> pd.Series:
        return values.map(lambda v: "" if pd.isna(v) else f"{v:.{digits}f}")

    differ = merged[printed(merged["value"]) != printed(merged["value_f32"])]
    counts = differ.groupby("run_id").size().rename("values").reset_index()
    return counts.astype({"run_id": str}).sort_values("run_id").reset_index(drop=True)


def printed_ties_note(
    changed: Sequence[tuple[str, int]], reordered: int, *, warehouse: bool = True
) -> str | None:
    """The note of ``evalwh eval``: the runs whose printed values float32 order changes, or None.

    ``changed``: (run, number of values) of those runs; ``reordered``: how many runs float32
    scores reorder (those that print the same are counted, not named). On a warehouse the
    note says where every reordered run is listed (``evalwh runs``' ``float32_lists``).

    Examples:
        >>> printed_ties_note([("a", 4)], 11)
        "1 run prints different values when scores are rounded to float32 (as trec_eval 9 and the published TREC tables did): a (4 values); the other 10 runs it reorders print the same; --float32-ties prints trec_eval 9's values; evalwh runs lists every reordered run (float32_lists)"
        >>> printed_ties_note([("a", 4), ("b", 1)], 2, warehouse=False)
        "2 runs print different values when scores are rounded to float32 (as trec_eval 9 and the published TREC tables did): a (4 values), b (1 value); --float32-ties prints trec_eval 9's values"
        >>> printed_ties_note([], 3) is None
        True
    """
    if not changed:
        return None
    n = len(changed)
    shown = [f"{r} ({v} value{'s' if v != 1 else ''})" for r, v in changed]
    names = ", ".join(shown[:5]) + (", ..." if n > 5 else "")
    runs = "1 run prints" if n == 1 else f"{n} runs print"
    others = reordered - n
    rest = ""
    if others > 0:
        rest = f"; the other {others} run{'s' if others != 1 else ''} it reorders print the same"
    return (
        f"{runs} different values when scores are rounded to float32 (as trec_eval 9 and the "
        f"published TREC tables did): {names}{rest}; --float32-ties prints trec_eval 9's values"
        + ("; evalwh runs lists every reordered run (float32_lists)" if warehouse else "")
    )


def printed_changes(
    wh: Store,
    collection: str,
    runs: Sequence[str] | None,
    measures: Sequence[str],
    *,
    per_query: bool = False,
    **options: Any,
) -> tuple[list[tuple[str, int]], int]:
    """The runs whose printed values of ``measures`` float32 order changes, and how many it reorders.

    Only the runs whose order float32 scores change (stored at ingest: :func:`float32_order`)
    are evaluated again, both ways, on ``measures`` (per topic with ``per_query``; ``options``
    as ``Warehouse.evaluate``'s: qrels_id, fill, rel, ...). Returns ``[(run, values), ...]``
    for the runs with a value that prints differently at four decimals (:func:`changed_values`),
    and the number of runs float32 reorders. ``evalwh eval``, ``compare`` and ``report`` say
    this, not every reordered list (issue #54).
    """
    reordered = float32_order(wh, collection, runs or None)
    if reordered.empty:
        return [], 0
    flagged = [str(r) for r in reordered["run_id"]]
    options = {k: v for k, v in options.items() if k not in ("runs", "float32_ties", "collection", "store")}

    def values(float32: bool) -> pd.DataFrame:
        return wh.evaluate(  # type: ignore[attr-defined, no-any-return]
            list(measures), collection=collection, runs=flagged, per_query=per_query,
            typed_names=True, float32_ties=float32, **options,
        )  # fmt: skip

    changed = changed_values(values(False), values(True))
    return [(str(r), int(v)) for r, v in zip(changed["run_id"], changed["values"], strict=True)], len(flagged)
