"""evalwh as an ir_measures provider: ``import evalwh.ir_measures``.

Importing this module registers a provider named ``evalwh`` in ir_measures' registry
(``ir_measures.providers.registry["evalwh"]``) and appends it, last, to ir_measures' default
pipeline, so that ir_measures (and PyTerrier's ``pt.Experiment``, which calls it) computes
with it whatever its own providers do not offer. It also registers, as ir_measures measures,
evalwh's measures that ir_measures lacks (the judged share ``A_p@k``, ``U@k``, ``AA``,
``RBP_resid``, ``bpref10``, ...: every mean or sum measure of :mod:`evalwh.measures.catalog`
without an ir_measures name); they are attributes of this module too::

    import ir_measures
    import evalwh.ir_measures
    from evalwh.ir_measures import A_p
    from ir_measures import AP, nDCG, P

    provider = ir_measures.providers.registry["evalwh"]
    provider.calc_aggregate([AP, nDCG @ 10, P @ 10, A_p @ 10], qrels, run)
    ir_measures.calc_aggregate([nDCG @ 10, A_p @ 10], qrels, run)   # A_p by evalwh

Underneath is evalwh's evaluation of a DataFrame (an in-memory warehouse holding the qrels,
one per evaluator, and each run in turn): set-based SQL, no loop over documents. A measure is
handed to evalwh as ir_measures prints it (``nDCG(dcg='exp-log2')@10``), which evalwh's
grammar reads (:mod:`evalwh.measures.catalog`). Values are per topic of the qrels, as
ir_measures gives them: for ir_measures' measures evalwh computes the topics the run and
the qrels share, and ir_measures gives each qrels topic the run lacks the measure's
``DEFAULT`` (0), as it does for its own providers; evalwh's own measures keep evalwh's value
for such a topic (an empty ranking: ``U@k`` is 1, ``A_p@k`` 0). The run's topics the qrels
lack are left out. The aggregates are
ir_measures' (its mean, or its sum for the counts).

Where evalwh and ir_measures' default providers differ, they differ here too, as
``docs/measures.md`` lists: score ties are broken as trec_eval breaks them (score descending,
then doc_id descending), which pytrec_eval also does, while ir_measures' judged and compat
providers break them by doc_id ascending and cwl_eval (RBP, SDCG) by input order; a negative
grade is unjudged (ir_measures' Judged counts it as judged). ``RBP`` without ``rel=`` is
graded in ir_measures and has no provider there; evalwh declines it rather than answer with
its binary RBP.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import ir_measures
from ir_measures import measures as _measures
from ir_measures import providers
from ir_measures.providers.base import NOT_PROVIDED
from ir_measures.providers.base import Any as AnyValue
from ir_measures.util import Metric, QrelsConverter, RunConverter

from evalwh.errors import EvalWhError
from evalwh.measures import catalog
from evalwh.warehouse import Warehouse

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["EvalwhEvaluator", "EvalwhProvider", "PROVIDER", "MEASURES"]

_COLLECTION = "ir_measures"
_DTYPES: dict[str, Any] = {
    "INTEGER": int,
    "DOUBLE": (int, float),
    "VARCHAR": str,
    "BOOLEAN": bool,
    "GAINS": dict,
}
_AGGREGATORS = {"mean": _measures.MeanAgg, "sum": _measures.SumAgg}


def _measure_class(metric: catalog.Metric) -> type[_measures.Measure]:
    """An ir_measures measure class for an evalwh metric (``k`` is ir_measures' ``cutoff``)."""
    params: dict[str, Any] = {}
    for param in metric.params:
        default = NOT_PROVIDED if param.required or param.default is None else param.default
        params["cutoff" if param.name == "k" else param.name] = _measures.ParamInfo(
            dtype=_DTYPES.get(param.type), required=param.required, default=default,
            choices=param.choices or NOT_PROVIDED, desc=f"evalwh's {param.name}",
        )  # fmt: skip
    for option in metric.options:  # rel= and judged_only=, as ir_measures' own measures take them
        dtype: Any = (int, float) if option == "rel" else bool
        params[option] = _measures.ParamInfo(dtype=dtype, desc=f"the evaluation's {option}")
    aggregator = _AGGREGATORS[metric.aggregate]
    return type(
        f"_{metric.name}",
        (_measures.Measure,),
        {
            "__name__": metric.name,
            "NAME": metric.name,
            "PRETTY_NAME": metric.name,
            "SHORT_DESC": metric.description,
            "SUPPORTED_PARAMS": params,
            "__doc__": f"evalwh's {metric.name}: {metric.description}",
            "aggregator": lambda self: aggregator(),
        },
    )


def _own_metrics() -> list[catalog.Metric]:
    """evalwh's metrics that ir_measures lacks: no ir_measures name, a name ir_measures'
    parser reads (an identifier), and a mean or sum over topics (ir_measures' aggregators)."""
    return [
        m
        for m in catalog.metrics()
        if m.name not in catalog.IR_MEASURES
        and m.name not in _measures.registry
        and m.name.isidentifier()
        and m.aggregate in _AGGREGATORS
    ]


def _register_measures() -> dict[str, _measures.Measure]:
    made = {}
    for metric in _own_metrics():
        existing = _measures.registry.get(metric.name)
        if existing is None:
            existing = _measure_class(metric)()
            _measures.register(existing)
        made[metric.name] = existing
    return made


MEASURES: dict[str, _measures.Measure] = _register_measures()
"""evalwh's measures registered in ir_measures, by name (``MEASURES["A_p"] @ 10``)."""
globals().update(MEASURES)


def _supported() -> list[_measures.Measure]:
    """One measure per name evalwh takes, every parameter open (narrowed by :meth:`EvalwhProvider.supports`)."""
    names = (
        {ir or name for name, (_, ir, _) in catalog.IR_MEASURES.items()}
        | {"SetRelP"}
        | set(MEASURES)
    )
    out = []
    for name in sorted(names):
        measure = _measures.registry.get(name)
        if measure is not None:
            out.append(type(measure)(**{p: AnyValue() for p in measure.SUPPORTED_PARAMS}))
    return out


def _spec(measure: _measures.Measure) -> str:
    """The evalwh spec of an ir_measures measure: as ir_measures prints it, but for
    ``NumRet(rel=r)`` (ir_measures' NumRelRet), which is evalwh's ``NumRelRet(rel=r)``."""
    text = str(measure)
    if measure.NAME == "NumRet" and measure["rel"] is not NOT_PROVIDED:
        return "NumRelRet" + text[len("NumRet") :]
    return text


class EvalwhProvider(providers.Provider):
    """evalwh's measures through ir_measures' provider interface.

    ``registry["evalwh"].calc_aggregate(measures, qrels, run)``, ``iter_calc`` and
    ``evaluator(measures, qrels)`` take ir_measures' qrels and runs (DataFrames, dicts of
    dicts, iterables of ``Qrel``/``ScoredDoc``; PyTerrier's column names too).
    """

    NAME = "evalwh"
    SUPPORTED_MEASURES = _supported()

    def supports(self, measure: _measures.Measure) -> bool:
        """Whether evalwh reads ``measure`` as ir_measures defines it."""
        if not super().supports(measure):
            return False
        if measure.NAME == "RBP" and measure["rel"] is NOT_PROVIDED:
            return False  # ir_measures' RBP is graded without rel=; evalwh's is binary
        try:
            catalog.parse(_spec(measure))
        except EvalWhError:
            return False
        return True

    def _evaluator(self, measures: Iterable[_measures.Measure], qrels: Any) -> EvalwhEvaluator:
        measures = list(measures)
        # called directly (``registry["evalwh"].calc_aggregate([RBP], ...)``) no pipeline asks
        # supports() first: a measure evalwh does not read as ir_measures defines it is
        # refused, as ir_measures' own providers refuse theirs, not answered with another
        for measure in measures:
            if not self.supports(measure):
                why = (
                    "ir_measures' RBP without rel= is graded; evalwh's RBP is binary: give RBP(rel=1)"
                    if measure.NAME == "RBP"
                    else "evalwh does not compute it as ir_measures defines it"
                )
                raise ValueError(f"unsupported measure {measure} by the evalwh provider: {why}")
        return EvalwhEvaluator(measures, qrels)

    def install_instructions(self) -> str:
        return "pip install evalwh"


class EvalwhEvaluator(providers.Evaluator):
    """Holds the qrels in an in-memory warehouse; each run is ingested and evaluated in turn."""

    def __init__(self, measures: list[_measures.Measure], qrels: Any) -> None:
        frame = _frame(qrels, "qrels")
        self.specs = {_spec(m): m for m in measures}
        for spec in self.specs:
            catalog.parse(spec)  # an unknown one fails here, not at the first run
        self.warehouse = Warehouse(":memory:")
        self.has_qrels = not frame.empty
        if self.has_qrels:
            from evalwh.store.ingest import ingest_qrels

            # a -100 label stays what ir_measures' default provider (pytrec_eval) reads, not an
            # exclusion (methods §17): the provider answers as ir_measures does
            with self.warehouse.transaction():
                ingest_qrels(self.warehouse, frame, collection=_COLLECTION, exclusion_labels=False)
        super().__init__(
            measures, sorted(set(frame["query_id"].astype(str))) if self.has_qrels else []
        )

    def _iter_calc(self, run: Any) -> Iterator[Metric]:
        frame = _frame(run, "run")
        if frame.empty or not self.has_qrels:
            return
        wh = self.warehouse  # the run replaces the one before (evalwh's ingest deletes it whole)
        run = frame.drop(columns=["run_id"], errors="ignore")
        wh.ingest_runs(run, collection=_COLLECTION, run_id="run", replace=True)
        values = wh.evaluate(
            list(self.specs), collection=_COLLECTION, runs=["run"], per_query=True,
            averaging="trec_eval_c", typed_names=True,
        )  # fmt: skip
        # ir_measures' measures: a topic of the qrels the run lacks is left to ir_measures,
        # which gives it the measure's DEFAULT (0), as for its own providers (so NumRel
        # counts the run's topics only); evalwh's own keep evalwh's value there (U@k is 1)
        own = values["measure"].map(lambda spec: self.specs[spec].NAME in MEASURES)
        values = values[own | values["query_id"].isin(set(run["query_id"].astype(str)))]
        measure = values["measure"].map(self.specs)
        for query_id, spec, value in zip(values["query_id"], measure, values["value"], strict=True):
            yield Metric(query_id=str(query_id), measure=spec, value=float(value))


def _frame(data: Any, kind: str) -> pd.DataFrame:
    """ir_measures' qrels or run (any of its forms; a DataFrame also with PyTerrier's column
    names) as a DataFrame with evalwh's column names (:mod:`evalwh.io.frames`)."""
    import pandas as pd

    from evalwh.io.frames import standard_columns

    if isinstance(data, pd.DataFrame) and not data.empty:
        data = standard_columns(data, kind)  # type: ignore[arg-type]
    converter = QrelsConverter(data) if kind == "qrels" else RunConverter(data)
    frame = converter.as_pd_dataframe()
    return frame if frame.empty else standard_columns(frame, kind)  # type: ignore[arg-type]


PROVIDER = EvalwhProvider()
"""The provider registered as ``ir_measures.providers.registry["evalwh"]``."""
providers.register(PROVIDER)
if not any(isinstance(p, EvalwhProvider) for p in ir_measures.DefaultPipeline.providers):
    ir_measures.DefaultPipeline.providers.append(PROVIDER)
