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

trec_eval's measures at the default relevance level (AP, P, R, nDCG, RR, Rprec, Bpref,
Success, SetP, SetR, NumRet, NumRel, NumRelRet, IPrec) are computed as ``evalwh trec_eval``
computes them (:mod:`evalwh.measures.quick`), each run ranked in pandas and numpy, with no
warehouse. The others go through evalwh's evaluation of a DataFrame (an in-memory warehouse
holding the qrels, made at the first need, one per evaluator, and each run in turn): set-based
SQL, no loop over documents. A measure is
handed to evalwh as ir_measures prints it (``nDCG(dcg='exp-log2')@10``), which evalwh's
grammar reads (:mod:`evalwh.measures.catalog`). Values are per topic of the qrels, as
ir_measures gives them: for ir_measures' measures evalwh computes the topics the run and
the qrels share, and ir_measures gives each qrels topic the run lacks the measure's
``DEFAULT`` (0), as it does for its own providers; evalwh's own measures keep evalwh's value
for such a topic (an empty ranking: ``U@k`` is 1, ``A_p@k`` 0). The run's topics the qrels
lack are left out. The aggregates are
ir_measures' (its mean, or its sum for the counts).

Score ties are broken as pytrec_eval, ir_measures' default provider for these measures,
breaks them: score descending on scores rounded to float32 (as trec_eval 9 keeps them), then
doc_id descending; so the two give the same value per query. ``evalwh_trec_eval10``
(:data:`PROVIDER_TREC_EVAL_10`) orders on the scores as given, as trec_eval 10 and ``evalwh
eval`` do, and a :class:`Float32TiesWarning` says, once per run, how many values the other
order would change at four decimals. Where evalwh and ir_measures' default providers differ,
they differ here too, as ``docs/measures.md`` lists: ir_measures' judged and compat
providers break ties by doc_id ascending and cwl_eval (RBP, SDCG) by input order; a negative
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
from evalwh.measures import catalog, quick

if TYPE_CHECKING:
    from evalwh.warehouse import Warehouse

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "EvalwhEvaluator",
    "EvalwhProvider",
    "Float32TiesWarning",
    "PROVIDER",
    "PROVIDER_TREC_EVAL_10",
    "MEASURES",
]

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

    Args:
        float32_ties: Order a run as ir_measures' default provider (pytrec_eval) and trec_eval
            9 do, on its scores rounded to 32-bit floats (the default), so that the two give
            the same value per query, tied scores included; False orders on the scores as
            given (64-bit), as trec_eval 10 and ``evalwh eval`` do: the provider registered
            as ``evalwh_trec_eval10`` (:data:`PROVIDER_TREC_EVAL_10`).
    """

    NAME = "evalwh"
    SUPPORTED_MEASURES = _supported()

    def __init__(self, float32_ties: bool = True) -> None:
        super().__init__()
        self.float32_ties = float32_ties
        if not float32_ties:
            self.NAME = "evalwh_trec_eval10"

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
        return EvalwhEvaluator(measures, qrels, float32_ties=self.float32_ties)

    def install_instructions(self) -> str:
        return "pip install evalwh"


class EvalwhEvaluator(providers.Evaluator):
    """Evaluates each run as it comes, the qrels read once.

    The measures :mod:`evalwh.measures.quick` computes (trec_eval's: AP, P, R, nDCG, RR,
    Rprec, Bpref, Success, SetP, SetR, SetF, NumRet, NumRel, IPrec, at the default relevance level)
    are computed there, from the run ranked here in numpy (no warehouse: as fast as pytrec_eval
    on 8 runs of 30 topics x 1,000, docs/benchmarks.md). The others, and every measure where
    the qrels hold a negative or fractional grade, go through an in-memory warehouse holding
    the qrels (made at the first need, once per evaluator), which ingests and evaluates each run.
    """

    def __init__(
        self, measures: list[_measures.Measure], qrels: Any, *, float32_ties: bool = True
    ) -> None:
        frame = _frame(qrels, "qrels")
        self.float32_ties = float32_ties
        self.specs = {_spec(m): m for m in measures}
        parsed = {spec: catalog.parse(spec) for spec in self.specs}  # an unknown one fails here
        self.qrels_frame = frame
        self.has_qrels = not frame.empty
        self.quick = _QuickQrels.of(frame) if self.has_qrels else None
        self.quick_specs = {
            spec: measure
            for spec, measure in parsed.items()
            if self.quick is not None and quick.takes(measure, rel=1)
        }
        self.other_specs = [spec for spec in self.specs if spec not in self.quick_specs]
        self._warehouse: Warehouse | None = None
        super().__init__(
            measures, sorted(set(frame["query_id"].astype(str))) if self.has_qrels else []
        )

    @property
    def warehouse(self) -> Warehouse:
        """The in-memory warehouse holding the qrels, made at its first use."""
        if self._warehouse is None:
            from evalwh.warehouse import Warehouse

            self._warehouse = Warehouse(":memory:")
            if self.has_qrels:
                from evalwh.store.ingest import ingest_qrels

                # a -100 label stays what ir_measures' default provider (pytrec_eval) reads, not an
                # exclusion (methods §17): the provider answers as ir_measures does
                with self._warehouse.transaction():
                    ingest_qrels(self._warehouse, self.qrels_frame, collection=_COLLECTION, exclusion_labels=False)
        return self._warehouse

    def _iter_calc(self, run: Any) -> Iterator[Metric]:
        frame = _frame(run, "run")
        if frame.empty or not self.has_qrels:
            return
        specs = list(self.specs)
        if self.quick_specs:
            ranked = self.quick.rank(frame, self.float32_ties)  # type: ignore[union-attr]
            if ranked is not None:
                metrics = list(self._quick_metrics(ranked))
                self._float32_warning(frame, metrics)
                yield from metrics
                specs = self.other_specs
        if specs:
            yield from self._warehouse_metrics(frame, specs)

    def _quick_metrics(self, ranked: tuple[Any, ...]) -> Iterator[Metric]:
        """The quick measures' values, per topic the run and the qrels share."""
        qrels = self.quick.qrels  # type: ignore[union-attr]
        measures = list(self.quick_specs.values())
        stats = self.quick.per_topic  # type: ignore[union-attr]
        values, _ = quick.values_of(qrels, stats, *ranked, quick.functions(measures), 1)
        in_run = set(ranked[0])
        shared = [(q, t) for q, t in enumerate(qrels.topics) if t in in_run]
        for j, spec in enumerate(self.quick_specs):
            measure = self.specs[spec]
            row = values[j]
            for q, topic in shared:
                yield Metric(query_id=topic, measure=measure, value=row[q])

    def _float32_warning(self, frame: pd.DataFrame, metrics: list[Metric]) -> None:
        """Warn, once per run, when the other tie order changes a value at four decimals.

        Only where rounding the scores to float32 makes two of them tie that did not (else
        both orders are one); then the run is ranked the other way and its values of these
        measures compared as ``%.4f`` prints them. The warning names the measures and how many
        values change, and the provider that gives the other values.
        """
        if not self.quick.collides(frame):  # type: ignore[union-attr]
            return
        other = self.quick.rank(frame, not self.float32_ties)  # type: ignore[union-attr]
        if other is None:
            return
        shown = {(m.query_id, m.measure): f"{m.value:.4f}" for m in metrics}
        changed = [
            m
            for m in self._quick_metrics(other)
            if shown.get((m.query_id, m.measure)) != f"{m.value:.4f}"
        ]
        if not changed:
            return
        import warnings

        names = ", ".join(dict.fromkeys(str(m.measure) for m in changed))
        topics = len({m.query_id for m in changed})
        this, that = (
            (
                "float32 scores (pytrec_eval's and trec_eval 9's order)",
                "64-bit scores (trec_eval 10's order; provider evalwh_trec_eval10)",
            )
            if self.float32_ties
            else (
                "64-bit scores (trec_eval 10's order)",
                "float32 scores (pytrec_eval's order; provider evalwh)",
            )
        )
        warnings.warn(
            f"evalwh: this run's tied scores order differently on {this} than on {that}: "
            f"{len(changed)} per-topic values of {names} differ at four decimals, "
            f"on {topics} topics",
            Float32TiesWarning,
            stacklevel=3,
        )

    def _warehouse_metrics(self, frame: pd.DataFrame, specs: list[str]) -> Iterator[Metric]:
        wh = self.warehouse  # the run replaces the one before (evalwh's ingest deletes it whole)
        run = frame.drop(columns=["run_id"], errors="ignore")
        wh.ingest_runs(run, collection=_COLLECTION, run_id="run", replace=True)
        values = wh.evaluate(
            specs, collection=_COLLECTION, runs=["run"], per_query=True,
            averaging="trec_eval_c", typed_names=True, float32_ties=self.float32_ties,
        )  # fmt: skip
        # ir_measures' measures: a topic of the qrels the run lacks is left to ir_measures,
        # which gives it the measure's DEFAULT (0), as for its own providers (so NumRel
        # counts the run's topics only); evalwh's own keep evalwh's value there (U@k is 1)
        own = values["measure"].map(lambda spec: self.specs[spec].NAME in MEASURES)
        values = values[own | values["query_id"].isin(set(run["query_id"].astype(str)))]
        measure = values["measure"].map(self.specs)
        for query_id, spec, value in zip(values["query_id"], measure, values["value"], strict=True):
            yield Metric(query_id=str(query_id), measure=spec, value=float(value))


class Float32TiesWarning(UserWarning):
    """A run whose values change at four decimals with the other tie order (float32 or 64-bit)."""


class _QuickQrels:
    """A qrels frame as :mod:`evalwh.measures.quick` reads it, and runs ranked against it."""

    def __init__(self, qrels: quick.Qrels, grades: pd.DataFrame) -> None:
        self.qrels = qrels
        self.per_topic = quick.per_topic(qrels, 1)
        self.grades = grades  # query_id, doc_id -> relevance, for the merge with a run

    @classmethod
    def of(cls, frame: pd.DataFrame) -> _QuickQrels | None:
        """None where a grade is negative or fractional, or a pair is judged twice."""
        import numpy as np
        import pandas as pd

        grades = pd.to_numeric(frame["relevance"], errors="coerce")
        if grades.isna().any() or (grades < 0).any() or (grades != np.floor(grades)).any():
            return None
        table = pd.DataFrame(
            {
                "query_id": frame["query_id"].astype(str),
                "doc_id": frame["doc_id"].astype(str),
                "relevance": grades.astype(np.int64),
            }
        )
        if table.duplicated(["query_id", "doc_id"]).any():
            return None
        by_topic = [
            (str(topic), sorted(grades.tolist()))
            for topic, grades in table.groupby("query_id", sort=True)["relevance"]
        ]
        qrels = quick.Qrels(topics=[t for t, _ in by_topic], grades=[g for _, g in by_topic])
        return cls(qrels, table)

    @staticmethod
    def collides(frame: pd.DataFrame) -> bool:
        """Whether two scores of one topic differ as given and tie as float32."""
        import numpy as np
        import pandas as pd

        scores = pd.to_numeric(frame["score"], errors="coerce").to_numpy(np.float64)
        with np.errstate(over="ignore"):
            rounded = scores.astype(np.float32)
        topics = frame["query_id"].astype(str).to_numpy()
        table = pd.DataFrame({"q": topics, "s": scores, "r": rounded})
        return bool(table.drop_duplicates(["q", "s"]).duplicated(["q", "r"]).any())

    def rank(self, frame: pd.DataFrame, float32_ties: bool) -> tuple[Any, ...] | None:
        """The run as :func:`evalwh.measures.quick.values_of` takes it, ranked in trec_eval's
        order (score descending, then doc_id descending); None where the warehouse must read
        it (a document twice in a topic, a score that is not a finite number)."""
        import numpy as np
        import pandas as pd

        scores = pd.to_numeric(frame["score"], errors="coerce").to_numpy(np.float64)
        if not np.isfinite(scores).all():
            return None
        with np.errstate(over="ignore"):  # (beyond float32: infinity, as trec_eval 9 reads it)
            key = scores.astype(np.float32) if float32_ties else scores
        run = pd.DataFrame(
            {
                "query_id": frame["query_id"].astype(str).to_numpy(),
                "doc_id": frame["doc_id"].astype(str).to_numpy(),
                "key": key,
            }
        )
        if run.duplicated(["query_id", "doc_id"]).any():
            return None
        run = run.sort_values(["query_id", "key", "doc_id"], ascending=[True, False, False])
        run["rank"] = run.groupby("query_id", sort=False).cumcount() + 1
        counts = run.groupby("query_id", sort=True).size()
        run_topics = [str(t) for t in counts.index]
        judged = run.merge(self.grades, on=["query_id", "doc_id"], how="inner")
        topic = pd.Index(run_topics).get_indexer(judged["query_id"])
        return (
            run_topics,
            counts.to_numpy(np.int64).tolist(),
            topic.astype(np.int64).tolist(),
            judged["rank"].to_numpy(np.int64).tolist(),
            judged["relevance"].to_numpy(np.int64).tolist(),
        )


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
"""The provider registered as ``registry["evalwh"]``: pytrec_eval's tie order (float32 scores)."""
PROVIDER_TREC_EVAL_10 = EvalwhProvider(float32_ties=False)
"""The provider registered as ``registry["evalwh_trec_eval10"]``: trec_eval 10's tie order."""
providers.register(PROVIDER)
providers.register(PROVIDER_TREC_EVAL_10)
if not any(isinstance(p, EvalwhProvider) for p in ir_measures.DefaultPipeline.providers):
    ir_measures.DefaultPipeline.providers.append(PROVIDER)
