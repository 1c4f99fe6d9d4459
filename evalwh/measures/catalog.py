"""The metric registry, built from the headers of ``queries/metrics/*.sql``, and the spec parser.

Measure specs follow ir_measures' grammar: ``P@10``, ``AP``, ``AP@100``, ``nDCG@10``,
``RBP(p=0.8)@10``, ``P(rel=2)@10``, ``nDCG(dcg=exp-log2, gains={0:0,1:1,2:3})@10``,
``Judged@10``. ``@`` binds the depth parameter ``k`` (IPrec's recall level); other parameters
go in parentheses, ``name=value`` separated by commas; a gain map is ``{grade:gain,...}``.
The canonical string omits parameters at their default value; :attr:`Measure.label` keeps
the spec as the user typed it, so that results can be reported under that name.

Every value is checked against its parameter's domain, declared in the metric's header after
the default: ``p DOUBLE = 0.8 (0 < p < 1)``, ``mult DOUBLE = 1.0 (mult > 0)``, ``max_rel
DOUBLE (max_rel > min_rel)`` (a bound may be another parameter). A number is finite always
(``1e400`` is refused, as ``nan`` and ``inf`` are), a depth a whole number >= 1. So
``RBP(p=2)`` is one line naming the domain, not a negative score. (``evalwh trec_eval`` keeps
trec_eval's own reading of its parameters: it does not go through this grammar.)

Two parameters are not the query's but the evaluation's, as in ir_measures: ``rel=`` (grade
>= rel is relevant) on every measure that reads the relevance threshold, and
``judged_only=true`` (unjudged documents removed, trec_eval -J) on every measure defined on
condensed lists. :mod:`evalwh.measures.evaluation` evaluates such a measure over the same topics with
its own threshold or condensing (``Measure.options``).
"""

from __future__ import annotations

import difflib
import functools
import math
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from evalwh import sql
from evalwh.errors import MetricParamError, UnknownMetricError

if TYPE_CHECKING:
    import pandas as pd

METRICS_PACKAGE = "evalwh.queries.metrics"
_REQUIRED = object()
_SPEC = re.compile(
    r"^\s*(?P<name>[A-Za-z_][A-Za-z0-9_\-]*)\s*(?:\((?P<args>[^()]*)\))?\s*(?:@\s*(?P<k>[^\s]+))?\s*$"
)
_PARAM = re.compile(
    r"^\s*(?P<name>[a-z_]+)\s+(?P<type>INTEGER|DOUBLE|BOOLEAN|VARCHAR|GAINS)"
    r"\s*(?:=\s*(?P<default>[^\s\[(]+))?\s*(?:\[(?P<choices>[^\]]*)\])?\s*(?:\((?P<domain>[^()]*)\))?\s*$"
)
# A parameter's domain in its declaration: ``0 < p < 1``, ``mult > 0``, ``max_rel > min_rel``.
_BOUND = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)|[a-z_]+"
_DOMAIN = re.compile(
    rf"^\s*(?:(?P<low>{_BOUND})\s*(?P<low_op><=?)\s*)?(?P<name>[a-z_]+)\s*(?:(?P<op>[<>]=?)\s*(?P<bound>{_BOUND}))?\s*$"
)
_NUMBER = re.compile(r"^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$")
# Columns of the evaluation context that depend on the relevance threshold: a query that
# reads one of them takes ``rel=``.
_THRESHOLD_COLUMNS = re.compile(r"\b(is_rel|relevant_so_far|nonrelevant_above|num_rel|num_nonrel)\b")
# The evaluation's options a spec may set per measure (ir_measures' rel= and judged_only=).
OPTIONS = ("rel", "judged_only")
# ir_measures' spelling of each evalwh metric it has (shown by evalwh metrics), and its name
# where that differs from evalwh's: specs may use it, with ``@`` binding the named parameter.
IR_MEASURES: dict[str, tuple[str, str | None, str]] = {
    # evalwh name: (ir_measures spelling, ir_measures name if it differs, what @ binds)
    "P": ("P@k", None, "k"),
    "AP": ("AP, AP@k", None, "k"),
    "R": ("R@k", None, "k"),
    "RR": ("RR", None, "k"),
    "Rprec": ("Rprec", None, "k"),
    "bpref": ("Bpref", "Bpref", "k"),
    "nDCG": ("nDCG@k", None, "k"),
    "nDCG_gains": ("nDCG(dcg=..., gains={...})@k", None, "k"),
    "NumRel": ("NumRel", None, "k"),
    "NumRet": ("NumRet", None, "k"),
    "NumRelRet": ("NumRelRet", None, "k"),
    "NumQ": ("NumQ", None, "k"),
    "Success": ("Success@k", None, "k"),
    "RBP": ("RBP(p=..., rel=...)@k", None, "k"),
    "Judged": ("Judged@k", None, "k"),
    "ERR": ("ERR@k", None, "k"),
    "SDCG": ("SDCG(min_rel=..., max_rel=...)@k", None, "k"),
    "Compat": ("Compat(p=..., normalize=...)", None, "k"),
    "infAP": ("infAP", None, "k"),
    "iprec_at_recall": ("IPrec@recall", "IPrec", "recall"),
    "set_P": ("SetP", "SetP", "k"),
    "set_relative_P": ("SetP(relative=True)", None, "k"),
    "set_recall": ("SetR", "SetR", "k"),
    "set_F": ("SetF(beta=...)", "SetF", "k"),
    "set_map": ("SetAP", "SetAP", "k"),
}
_IR_NAMES = {ir: (name, at) for name, (_, ir, at) in IR_MEASURES.items() if ir is not None}
_IR_NAMES["SetRelP"] = ("set_relative_P", "k")  # ir_measures' other name for SetP(relative=True)


@dataclass(frozen=True)
class Param:
    """A declared metric parameter: name, SQL type and default (``REQUIRED`` if none)."""

    name: str
    type: str
    default: Any
    choices: tuple[str, ...] = ()
    domain: str = ""
    """The declared domain as written (``0 < p < 1``), empty when any value of the type will do."""

    @property
    def required(self) -> bool:
        """True if a spec must give a value."""
        return self.default is _REQUIRED

    @functools.cached_property
    def bounds(self) -> tuple[tuple[float | str, bool] | None, tuple[float | str, bool] | None]:
        """``(lower, upper)`` of :attr:`domain`, each ``(bound, inclusive)`` or None; a bound is a
        number or the name of another parameter of the metric.

        Examples:
            >>> Param("p", "DOUBLE", 0.8, domain="0 < p < 1").bounds
            ((0.0, False), (1.0, False))
            >>> Param("max_rel", "DOUBLE", None, domain="max_rel > min_rel").bounds
            (('min_rel', False), None)
        """
        if not self.domain:
            return None, None
        match = _DOMAIN.match(self.domain)
        if not match or match.group("name") != self.name:
            raise ValueError(f"{self.name}: cannot read the domain {self.domain!r}")

        def bound(text: str) -> float | str:
            return text if re.match(r"[a-z_]", text) else float(text)

        lower = upper = None
        if match.group("low") is not None:
            lower = (bound(match.group("low")), match.group("low_op") == "<=")
        op = match.group("op")
        if op is not None:
            side = (bound(match.group("bound")), op.endswith("="))
            if op.startswith("<"):
                upper = side
            else:
                lower = side
        return lower, upper

    def check(self, value: Any, values: dict[str, Any], metric: str) -> None:
        """Refuse ``value`` outside :attr:`domain` (``values``: the other parameters, for a bound that names one)."""
        lower, upper = self.bounds
        for side, inside in ((lower, lambda v, b, eq: v > b or (eq and v == b)),
                             (upper, lambda v, b, eq: v < b or (eq and v == b))):  # fmt: skip
            if side is None or value is None:
                continue
            bound = values.get(side[0]) if isinstance(side[0], str) else side[0]
            if bound is not None and not inside(value, bound, side[1]):
                given = " with ".join(f"{n}={_format(values.get(n, value))}" for n in dict.fromkeys([self.name, side[0]]) if isinstance(n, str))
                raise MetricParamError(f"{metric}: {given} is outside the domain {self.domain}")

    def convert(self, text: str, metric: str) -> Any:
        """Parse ``text`` as a value of this parameter's type."""
        try:
            if self.type == "INTEGER":
                value = int(text)
                if value < 1:
                    raise ValueError
                return value
            if self.type == "DOUBLE":
                if not _NUMBER.match(text) or not math.isfinite(float(text)):
                    raise ValueError  # (1e400 matches the pattern and is inf)
                return float(text)
            if self.type == "VARCHAR":
                if self.choices and text not in self.choices:
                    raise ValueError
                return text
            if self.type == "GAINS":
                return parse_gains(text)
            if text.lower() in ("true", "1", "yes"):
                return True
            if text.lower() in ("false", "0", "no"):
                return False
            raise ValueError
        except ValueError:
            kind = {
                "INTEGER": "a positive integer",
                "DOUBLE": "a finite number",
                "BOOLEAN": "true or false",
                "VARCHAR": " or ".join(self.choices) or "a word",
                "GAINS": "a gain map such as {0:0,1:1,2:3}",
            }
            raise MetricParamError(
                f"{metric}: parameter {self.name}={text!r} must be {kind[self.type]}"
            ) from None

    def sql_value(self, value: Any) -> Any:
        """The value as the query binds it (a gain map becomes a DuckDB MAP)."""
        if self.type == "GAINS" and value is not None:
            return {"key": [float(g) for g, _ in value], "value": [float(v) for _, v in value]}
        return value


def parse_gains(text: str) -> tuple[tuple[float, float], ...]:
    """``{0:0,1:1,2:3}`` as sorted (grade, gain) pairs; a grade given twice is an error."""
    body = text.strip()
    if not (body.startswith("{") and body.endswith("}")):
        raise ValueError(text)
    pairs: dict[float, float] = {}
    for item in filter(None, (i.strip() for i in body[1:-1].split(","))):
        grade, colon, gain = item.partition(":")
        if not colon or not _NUMBER.match(grade) or not _NUMBER.match(gain) or float(grade) in pairs:
            raise ValueError(text)
        if not (math.isfinite(float(grade)) and math.isfinite(float(gain))):
            raise ValueError(text)  # (1e400 is inf)
        pairs[float(grade)] = float(gain)
    if not pairs:
        raise ValueError(text)
    return tuple(sorted(pairs.items()))


@dataclass(frozen=True)
class Metric:
    """One metric: its SQL file and what its header declares."""

    key: str
    name: str
    description: str
    params: tuple[Param, ...]
    aliases: tuple[str, ...]
    kind: str
    aggregate: str
    condensable: bool
    trec_eval: str | None
    reference: str
    file: sql.SqlFile
    ir_measures: str | None = None
    limits: tuple[float, float] | None = None  # the header's ``range``: every value lies in it

    def param(self, name: str) -> Param | None:
        """The declared parameter ``name``, if any."""
        return next((p for p in self.params if p.name == name), None)

    @property
    def options(self) -> tuple[str, ...]:
        """The evaluation options a spec may set for this metric (``rel``, ``judged_only``).

        ``rel`` where the query reads a column that depends on the relevance threshold,
        ``judged_only`` where the metric is defined on condensed lists.
        """
        body = "\n".join(line.split("--", 1)[0] for line in self.file.text.splitlines())
        out = []
        if self.param("rel") is None and _THRESHOLD_COLUMNS.search(body):
            out.append("rel")
        if self.condensable:
            out.append("judged_only")
        return tuple(out)


@dataclass(frozen=True)
class Measure:
    """A metric with parameter values: what ``P@10`` or ``RBP(p=0.9)`` parses to."""

    metric: Metric
    values: tuple[tuple[str, Any], ...]
    options: tuple[tuple[str, Any], ...] = ()
    label: str | None = field(default=None, compare=False)

    @property
    def params(self) -> dict[str, Any]:
        """Parameter values by name, defaults filled in (``None`` = whole list)."""
        return dict(self.values)

    @property
    def sql_params(self) -> dict[str, Any]:
        """Parameter values as the metric's query binds them."""
        return {p.name: p.sql_value(v) for p, (_, v) in zip(self.metric.params, self.values, strict=True)}

    @property
    def name(self) -> str:
        """The name results are reported under: the spec as typed, else the canonical string."""
        return self.label or str(self)

    def __str__(self) -> str:
        params = self.params
        inner = [
            f"{p.name}={_format(params[p.name])}"
            for p in self.metric.params
            if p.name != "k" and params[p.name] != p.default
        ]
        inner += [f"{key}={_format(value)}" for key, value in self.options]
        text = self.metric.name + (f"({','.join(inner)})" if inner else "")
        if params.get("k") is not None:
            text += f"@{_format(params['k'])}"
        return text

    @property
    def trec_name(self) -> str:
        """trec_eval's name for this measure (``P_10``, ``map_cut_100``), else the spec string."""
        template = self.metric.trec_eval
        if template is None:
            return str(self)
        forms = [f.strip() for f in template.split("|")]
        k = self.params.get("k")
        if k is None:
            form = forms[0]
            return form if "{k}" not in form else str(self)
        cut = next((f for f in forms if "{k}" in f), None)
        return cut.format(k=k) if cut else str(self)


def _format(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value).rstrip("0").rstrip(".") if "." in repr(value) and "e" not in repr(value) else repr(value)
    if isinstance(value, tuple):  # a gain map
        return "{" + ",".join(f"{_format(g)}:{_format(v)}" for g, v in value) + "}"
    return str(value)


def _split_args(text: str) -> list[str]:
    """Split ``a=1, gains={0:0,1:1}`` at the commas outside braces (and parentheses)."""
    parts, depth, current = [], 0, []
    for char in text:
        if char in "{(":
            depth += 1
        elif char in "})":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


def _parse_params(text: str, source: str) -> tuple[Param, ...]:
    params = []
    for part in filter(None, (p.strip() for p in _split_args(text))):
        match = _PARAM.match(part)
        if not match:
            raise ValueError(f"{source}: cannot parse parameter declaration {part!r}")
        ptype = match.group("type")
        raw = match.group("default")
        default: Any = _REQUIRED
        choices = tuple(c.strip() for c in (match.group("choices") or "").split("|") if c.strip())
        declared = Param(match.group("name"), ptype, None, choices, (match.group("domain") or "").strip())
        if raw == "NULL":
            default = None
        elif raw is not None:  # (no default: the parameter is required)
            default = declared.convert(raw, source)
            declared.check(default, {}, source)  # (a default outside the domain is the header's error)
        params.append(Param(declared.name, ptype, default, choices, declared.domain))
    return tuple(params)


@functools.cache
def registry() -> MappingProxyType[str, Metric]:
    """Every metric by name and by alias (immutable; a name registered twice raises)."""
    table: dict[str, Metric] = {}
    for key, file in sql.load_package(METRICS_PACKAGE).items():
        header = file.header
        metric = Metric(
            key=key,
            name=header["name"],
            description=header["description"],
            params=_parse_params(header.get("params", ""), file.source),
            aliases=tuple(a.strip() for a in header.get("aliases", "").split(",") if a.strip()),
            kind=header.get("kind", "performance"),
            aggregate=header.get("aggregate", "mean"),
            condensable=header.get("unjudged", "any") != "nonrelevant",
            trec_eval=header.get("trec_eval"),
            reference=header.get("reference", ""),
            file=file,
            ir_measures=IR_MEASURES.get(header["name"], (None,))[0],
            limits=_limits(header.get("range"), file.source),
        )
        declared = {p.name for p in metric.params}
        if declared != set(file.placeholders):
            raise ValueError(
                f"{file.source}: header params {sorted(declared)} differ from the query's "
                f"placeholders {sorted(file.placeholders)}"
            )
        for name in (metric.name, *metric.aliases):
            if name in table:
                raise ValueError(f"metric name {name!r} is registered twice ({table[name].key}, {key})")
            table[name] = metric
    return MappingProxyType(table)


def _limits(text: str | None, source: str) -> tuple[float, float] | None:
    """A header's ``range: low, high``: the values the metric can take, per topic and so on average."""
    if text is None:
        return None
    try:
        low, high = (float(part) for part in text.split(","))
    except ValueError:
        raise ValueError(f"{source}: range {text!r} must be 'low, high'") from None
    if not low < high:
        raise ValueError(f"{source}: range {text!r} must have low < high")
    return low, high


def metrics() -> list[Metric]:
    """Every metric once, in registry order."""
    seen: dict[str, Metric] = {}
    for metric in registry().values():
        seen.setdefault(metric.key, metric)
    return list(seen.values())


def lookup(name: str) -> Metric:
    """The metric called ``name`` (or an alias); a near miss gets a suggestion."""
    table = registry()
    if name in table:
        return table[name]
    folded = [m for n, m in table.items() if n.lower() == name.lower()]
    if len({m.key for m in folded}) == 1:
        return folded[0]
    close = difflib.get_close_matches(name, list(table), n=3, cutoff=0.5)
    hint = f" Did you mean {' or '.join(close)}?" if close else ""
    raise UnknownMetricError(f"Unknown metric {name!r}.{hint} (evalwh metrics lists them all)")


def parse(spec: str, *, k: int | None = None) -> Measure:
    """Parse a measure spec such as ``nDCG@10``, ``RBP(p=0.9)`` or ``P(rel=2)@10``.

    Args:
        spec: The spec string.
        k: A depth to use when the spec has no ``@k`` (for depth profiles).

    Returns:
        The measure with every parameter value resolved; ``label`` is the spec as typed
        (stripped), or the canonical string plus ``@k`` when ``k`` supplied the depth.

    Raises:
        UnknownMetricError: for an unknown name.
        MetricParamError: for unknown, missing or invalid parameters.

    Examples:
        >>> str(parse("nDCG@10")), parse("map").metric.name, parse("map").name
        ('nDCG@10', 'AP', 'map')
        >>> str(parse("RBP(p=0.8)@10")), str(parse("RBP(p=0.9)"))
        ('RBP@10', 'RBP(p=0.9)')
        >>> str(parse("P( rel = 2 )@10")), parse("P( rel = 2 )@10").name
        ('P(rel=2)@10', 'P( rel = 2 )@10')
    """
    match = _SPEC.match(spec)
    if not match:
        raise MetricParamError(f"cannot parse measure {spec!r}; expected e.g. P@10 or RBP(p=0.8)@10")
    args = _split_args(match.group("args") or "")
    metric, at = _resolve(match.group("name"), args)
    given: dict[str, str] = {}
    options: dict[str, Any] = {}
    for part in args:
        if "=" not in part:
            raise MetricParamError(f"{spec}: parameter {part!r} needs the form name=value")
        key, _, value = (s.strip() for s in part.partition("="))
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]  # ir_measures quotes strings: dcg='exp-log2'
        if key in given or key in options:
            raise MetricParamError(f"{spec}: parameter {key!r} is given twice")
        if metric.param(key) is None and key in metric.options:
            options[key] = _option(key, value, spec)
            continue
        if metric.param(key) is None or key == "k":
            declared = ", ".join([p.name for p in metric.params] + list(metric.options)) or "none"
            raise MetricParamError(f"{spec}: {metric.name} has no parameter {key!r} (it has: {declared})")
        given[key] = value
    label = spec.strip()
    if match.group("k") is not None:
        if metric.param(at) is None:
            raise MetricParamError(f"{spec}: {metric.name} takes no depth (@k)")
        given[at] = match.group("k")
    elif k is not None and metric.param("k") is not None:
        given["k"] = str(k)
        label = ""
    values = []
    for param in metric.params:
        if param.name in given:
            values.append((param.name, param.convert(given[param.name], spec)))
        elif param.required:
            at = "@k" if param.name == "k" else f"({param.name}=...)"
            raise MetricParamError(f"{spec}: {metric.name} needs {at}, e.g. {metric.name}@10")
        else:
            values.append((param.name, param.default))
    resolved = dict(values)
    for param in metric.params:
        param.check(resolved[param.name], resolved, spec)
    chosen = tuple((key, options[key]) for key in OPTIONS if key in options)
    if not label:  # the depth came from k: the spec as typed, with that depth
        label = f"{spec.strip()}@{k}"
    return Measure(metric, tuple(values), chosen, label)


def _resolve(name: str, args: list[str]) -> tuple[Metric, str]:
    """The metric a spec names, and the parameter its ``@`` binds (k, or IPrec's recall).

    ir_measures' names that differ from evalwh's (SetP, IPrec, ...) resolve here;
    ``SetP(relative=True)`` is trec_eval's set_relative_P (the argument is consumed).
    """
    if name == "SetP":
        relative = [a for a in args if a.replace(" ", "").lower().startswith("relative=")]
        for arg in relative:
            args.remove(arg)
        if any(a.replace(" ", "").lower() in ("relative=true", "relative=1") for a in relative):
            return lookup("set_relative_P"), "k"
    if name in _IR_NAMES and name not in registry():
        target, at = _IR_NAMES[name]
        return lookup(target), at
    metric = lookup(name)
    keys = {a.partition("=")[0].strip() for a in args}
    if metric.name == "nDCG" and keys & {"dcg", "gains"}:
        return lookup("nDCG_gains"), "k"  # (nDCG's own query stays plain and portable)
    if metric.name == "RBP" and "gain" in keys:
        return lookup("RBP_graded"), "k"
    if metric.name == "A_p" and "source" in keys:
        return lookup("A_p_source"), "k"  # (the judged share by provenance source)
    return metric, "k"


def _option(key: str, value: str, spec: str) -> Any:
    """The value of an evaluation option given in a spec (``rel=2``, ``judged_only=true``)."""
    if key == "rel":
        return Param("rel", "DOUBLE", None).convert(value, spec)
    return Param("judged_only", "BOOLEAN", None).convert(value, spec)


def expand(specs: list[str], depths: list[int] | None = None) -> list[Measure]:
    """Parse specs; with ``depths``, a spec without ``@k`` becomes one measure per depth.

    ``all_trec`` stands for evalwh's share of trec_eval's ``-m all_trec`` set. Measures are
    kept once by their reported name (:attr:`Measure.name`).
    """
    out: list[Measure] = []
    for spec in specs:
        if spec == "all_trec":
            out.extend(parse(s) for s in ALL_TREC)
            continue
        has_depth = "@" in spec
        match = _SPEC.match(spec)
        metric = _resolve(match.group("name"), _split_args(match.group("args") or ""))[0] if match else None
        if depths and not has_depth and metric is not None and metric.param("k") is not None:
            out.extend(parse(spec, k=d) for d in depths)
        else:
            out.append(parse(spec))
    unique: dict[str, Measure] = {}
    for measure in out:
        unique.setdefault(str(measure), measure)
    return list(unique.values())


_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
# evalwh's share of trec_eval's all_trec, in trec_eval's print order (runid and num_q are
# printed by the trec formatter itself).
ALL_TREC: tuple[str, ...] = (
    "NumRet",
    "NumRel",
    "NumRelRet",
    "AP",
    "Rprec",
    "bpref",
    "RR",
    *(f"P@{k}" for k in _CUTS),
    *(f"R@{k}" for k in _CUTS),
    "nDCG",
    *(f"nDCG@{k}" for k in _CUTS),
    *(f"AP@{k}" for k in _CUTS),
    *(f"Success@{k}" for k in (1, 5, 10)),
    "RBP(p=0.9)",
)


def _param_text(param: Param) -> str:
    if param.required:
        return param.name
    default = "whole list" if param.default is None else _format(param.default)
    return f"{param.name}={default}"


def metric_table() -> pd.DataFrame:
    """One row per metric: name, parameters, aliases, trec_eval and ir_measures names, kind, description."""
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "name": m.name,
                "params": ", ".join(_param_text(p) for p in m.params),
                "aliases": ", ".join(m.aliases),
                "trec_eval": m.trec_eval or "",
                "ir_measures": m.ir_measures or "",
                "kind": m.kind,
                "description": m.description,
            }
            for m in metrics()
        ]
    )


def metric_table_markdown() -> str:
    """The README's metric table, generated from the registry (a test keeps README current)."""
    lines = [
        "| metric | parameters | aliases | trec_eval | kind | definition |",
        "|---|---|---|---|---|---|",
    ]
    for row in metric_table().itertuples(index=False):
        cells = [f"`{row.name}`", row.params, row.aliases, row.trec_eval, row.kind, row.description]
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"
