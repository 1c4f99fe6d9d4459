"""trec_eval's measure names in ``evalwh eval -m``: ``P_10``, ``P.10``, ``P.5,10,20``, ``ndcg_cut``, ``all_trec``.

A name in trec_eval's printed form (``P_10``, ``map_cut_100``, ``iprec_at_recall_0.50``) or
its command-line form (``P.5,10``, ``map_cut.100``, ``ndcg.1=3,2=9``, a bare family such as
``ndcg_cut`` with trec_eval's default cutoffs, or a set: ``official``, ``all_trec``, ``set``)
becomes the evalwh measures :mod:`evalwh.measures.trec_command` maps it to. A result keeps the name the
user typed when the name stands for one value, else the names trec_eval prints (``P_5``,
``P_10``, ...). trec_eval's own per-topic quirks (its -c stand-in ranking, NaN on empty lists)
are ``evalwh trec_eval``'s alone; here every measure has evalwh's definition.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evalwh.measures import catalog

# trec_eval families whose printed names are "<family>_<cutoff>"
_CUT_FAMILIES = (
    "iprec_at_recall", "Rprec_mult", "ndcg_cut", "map_cut", "relative_P", "success", "recall", "unj", "P",
)  # fmt: skip
_PRINTED = re.compile(r"^(?P<family>" + "|".join(_CUT_FAMILIES) + r")_(?P<cut>\d+(?:\.\d+)?)$")


@dataclass(frozen=True)
class NamedMeasure(catalog.Measure):
    """A measure reported under the name the user gave it (``P_10`` rather than ``P@10``)."""

    label: str = ""
    printed: str = ""

    def __str__(self) -> str:
        return self.label

    @property
    def trec_name(self) -> str:
        """The name trec_eval prints (``ndcg_cut_10`` for ``-m ndcg_cut.10``), not the name as typed."""
        return self.printed or self.label


def parse(spec: str) -> list[catalog.Measure] | None:
    """The measures a trec_eval name stands for, or None if ``spec`` is not one."""
    from evalwh.measures import trec_command as te

    text = spec.strip()
    match = _PRINTED.match(text)
    command = f"{match.group('family')}.{match.group('cut')}" if match else text
    name = command.partition(".")[0]
    if name not in te.NICKNAMES_V10 and name not in {m.name for m in te.MEASURES}:
        return None
    request = te.Request(qrels="", runs=[])
    try:
        te._mark(request, command)
        printed = [p for p in te.printed_measures(request) if p.measure is not None]
    except te.TrecEvalExit as error:
        from evalwh.errors import MetricParamError

        raise MetricParamError(f"{spec}: {error.message.splitlines()[0].removeprefix('trec_eval: ')}") from None
    if len(printed) == 1:
        (only,) = printed
        return [NamedMeasure(only.measure.metric, only.measure.values, label=text, printed=only.name)]  # type: ignore[union-attr]
    return [NamedMeasure(p.measure.metric, p.measure.values, label=p.name, printed=p.name) for p in printed]  # type: ignore[union-attr]
