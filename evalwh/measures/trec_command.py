"""trec_eval's command line as data: its arguments, its measures and sets, what it prints.

:func:`parse_args` reads trec_eval's arguments into a :class:`Request`; :func:`printed_measures`
lists the lines trec_eval prints for it, each with the :class:`evalwh.measures.catalog.Measure`
that computes it. Nothing here evaluates: :mod:`evalwh.measures.trec_eval` runs the command,
and :mod:`evalwh.measures.trec_names` reads trec_eval's names in ``evalwh eval -m`` through the
same tables, so the two cannot disagree on what a name means.
"""

from __future__ import annotations

import getopt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from evalwh.measures import catalog

VERSION = "10.0"
_CUTS = "5,10,15,20,30,100,200,500,1000"
_RECALLS = "0.0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0"
MIN_GEO_MEAN = 0.00001

USAGE = """Usage: evalwh trec_eval [-h] [-q] [-c] [-J] [-n] [-l N] [-M N] [-N N] [--v9] {-m measure}* trec_rel_file trec_top_file [trec_top_file ...]
   -h: print full help message and exit
"""

HELP = """evalwh trec_eval: trec_eval's command line, computed by evalwh.

  evalwh trec_eval [-q] [-c] [-J] [-n] [-l N] [-M N] [-N N] [--v9] {-m measure[.params]}* QRELS RUN [RUN ...]

Prints what trec_eval 10.0 prints for the same arguments (one block per run file, in the
order given). -q: per-topic values too. -c: average over every qrels topic (a topic the run
lacks is an empty ranking); without -c every qrels topic must be in the run. -J: judged
documents only. -n: no summary. -l N: grade >= N is relevant. -M N: first N documents per
topic. -N N: collection size (utility). -m: a measure or a set of them (official, all_trec,
set), with trec_eval's parameters (P.5,10  ndcg_cut.10  rbp.p=0.5  ndcg.0=0,1=1,2=3
utility.2,-1,0,0  iprec_at_recall.0.5). --v9: trec_eval 9.0.8's behaviour and all_trec set.

Excluded documents (evalwh's, off unless asked; methods §17): --exclude FILE (repeatable;
'topic docid' a line), --exclude-identical-ids (a document whose id is its topic's id),
--exclude-labelled (qrels lines labelled -100): those documents leave every run before it
is ranked, the ranks closing up; what each run lost is said on standard error.
See docs/trec_eval.md.
"""


class TrecEvalExit(Exception):
    """trec_eval's way of failing: a message for stderr and an exit status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


# ---------------------------------------------------------------------------------------
# trec_eval's measures, in its print order (measures.c), and how each is printed


@dataclass(frozen=True)
class TrecMeasure:
    """One trec_eval measure: its name, how its parameters read, what it prints."""

    name: str
    form: str  # runid num_q long double gm relstring cut_long cut_double p_double p_pair
    default: str | None = None
    metric: str | None = None  # evalwh's metric
    v10: bool = False  # new in trec_eval 10


MEASURES: tuple[TrecMeasure, ...] = (
    TrecMeasure("runid", "runid"),
    TrecMeasure("num_q", "num_q"),
    TrecMeasure("num_ret", "long", metric="NumRet"),
    TrecMeasure("num_rel", "long", metric="NumRel"),
    TrecMeasure("num_rel_ret", "long", metric="NumRelRet"),
    TrecMeasure("map", "double", metric="AP"),
    TrecMeasure("gm_map", "gm", metric="gm_map"),
    TrecMeasure("Rprec", "double", metric="Rprec"),
    TrecMeasure("bpref", "double", metric="bpref"),
    TrecMeasure("recip_rank", "double", metric="RR"),
    TrecMeasure("iprec_at_recall", "cut_double", _RECALLS, "iprec_at_recall"),
    TrecMeasure("P", "cut_long", _CUTS, "P"),
    TrecMeasure("relstring", "relstring", "10"),
    TrecMeasure("recall", "cut_long", _CUTS, "R"),
    TrecMeasure("infAP", "double", metric="infAP"),
    TrecMeasure("gm_bpref", "gm", metric="gm_bpref"),
    TrecMeasure("Rprec_mult", "cut_double", "0.2,0.4,0.6,0.8,1.0,1.2,1.4,1.6,1.8,2.0", "Rprec_mult"),
    TrecMeasure("utility", "p_double", "1.0,-1.0,0.0,0.0", "utility"),
    TrecMeasure("11pt_avg", "p_double", _RECALLS, "pt11_avg"),
    TrecMeasure("binG", "double", metric="binG"),
    TrecMeasure("G", "p_pair", metric="G"),
    TrecMeasure("dcg", "p_pair", metric="dcg", v10=True),
    TrecMeasure("ideal_dcg", "p_pair", metric="ideal_dcg", v10=True),
    TrecMeasure("ndcg", "p_pair", metric="trec_ndcg"),
    TrecMeasure("ndcg_rel", "p_pair", metric="ndcg_rel"),
    TrecMeasure("Rndcg", "p_pair", metric="Rndcg"),
    TrecMeasure("ndcg_cut", "cut_long", _CUTS, "nDCG"),
    TrecMeasure("map_cut", "cut_long", _CUTS, "AP"),
    TrecMeasure("relative_P", "cut_long", _CUTS, "relative_P"),
    TrecMeasure("success", "cut_long", "1,5,10", "Success"),
    TrecMeasure("set_P", "double", metric="set_P"),
    TrecMeasure("set_relative_P", "double", metric="set_relative_P"),
    TrecMeasure("set_recall", "double", metric="set_recall"),
    TrecMeasure("set_map", "double", metric="set_map"),
    TrecMeasure("set_F", "p_double", "1.0", "set_F"),
    TrecMeasure("num_nonrel_judged_ret", "long", metric="num_nonrel_judged_ret"),
    TrecMeasure("yaap", "double", metric="yaap"),
    TrecMeasure("rbp", "p_pair", metric="trec_rbp", v10=True),
    TrecMeasure("rbp_resid", "p_pair", metric="trec_rbp_resid", v10=True),
    TrecMeasure("unj", "cut_long", "5,10,20", "unj", v10=True),
)
_BY_NAME = {m.name: m for m in MEASURES}
# trec_eval's measures over other inputs (preference judgments, judgment groups): not here
UNSUPPORTED = frozenset(
    "prefs_num_prefs_poss prefs_num_prefs_ful prefs_num_prefs_ful_ret prefs_simp prefs_pair "
    "prefs_avgjg prefs_avgjg_Rnonrel prefs_simp_ret prefs_pair_ret prefs_avgjg_ret "
    "prefs_avgjg_Rnonrel_ret prefs_simp_imp prefs_pair_imp prefs_avgjg_imp map_avgjg P_avgjg "
    "Rprec_mult_avgjg".split()
)

_OFFICIAL = "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P"
NICKNAMES_V10 = {
    "official": _OFFICIAL.split(),
    "all_trec": (
        _OFFICIAL + " relstring recall unj rbp rbp_resid infAP gm_bpref utility 11pt_avg ndcg relative_P "
        "Rprec_mult success map_cut ndcg_cut ndcg_rel Rndcg binG G set_P set_recall set_relative_P set_map "
        "set_F num_nonrel_judged_ret"
    ).split(),
    "set": "runid num_q num_ret num_rel num_rel_ret utility set_P set_recall set_relative_P set_map set_F".split(),
}
NICKNAMES_V9 = {
    **NICKNAMES_V10,
    "all_trec": [n for n in NICKNAMES_V10["all_trec"] if n not in ("unj", "rbp", "rbp_resid")],
}
UNSUPPORTED_NICKNAMES = frozenset({"all_prefs", "prefs", "qrels_jg"})


# ---------------------------------------------------------------------------------------
# C's atol and atof: a leading number, else 0

_LONG = re.compile(r"\s*([+-]?\d+)")
_FLOAT = re.compile(r"\s*([+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|inf(?:inity)?|nan))", re.I)


def atol(text: str) -> int:
    """C's atol: the leading integer of ``text`` (0 if none), held to a C long as glibc's strtol holds it.

    Examples:
        >>> atol("12abc"), atol("x"), atol("99999999999999999999") == 2**63 - 1
        (12, 0, True)
    """
    match = _LONG.match(text)
    return max(-(2**63), min(2**63 - 1, int(match.group(1)))) if match else 0


def atof(text: str) -> float:
    """C's atof: the leading number of ``text`` (0.0 if none)."""
    match = _FLOAT.match(text)
    return float(match.group(1)) if match else 0.0


# ---------------------------------------------------------------------------------------
# the requested measures, as trec_eval resolves -m arguments


@dataclass
class Printed:
    """One value trec_eval prints per topic and for all: its name, form and evalwh measure."""

    name: str
    form: str  # long double gm relstring runid num_q
    measure: catalog.Measure | None = None
    length: int = 0  # relstring's
    recalls: tuple[float, ...] = ()  # iprec_at_recall's and 11pt_avg's recall levels


@dataclass
class Request:
    """The parsed command line."""

    qrels: str
    runs: list[str]
    per_query: bool = False
    complete: bool = False  # -c
    judged_only: bool = False  # -J
    summary: bool = True
    rel: int = 1
    depth_cap: int | None = None
    num_docs: int = 0
    v9: bool = False
    exclusions: list[str] = field(default_factory=list)  # --exclude FILE (methods §17)
    identical_ids: bool = False  # --exclude-identical-ids
    exclusion_labels: bool = False  # --exclude-labelled: qrels lines labelled -100
    marked: list[str] = field(default_factory=list)  # measure names, in marking order
    params: list[tuple[str, str]] = field(default_factory=list)  # (measure, params), as given


def parse_args(argv: Sequence[str]) -> Request | str:
    """Read trec_eval's command line (getopt_long, as trec_eval does); a str is text to print."""
    longs = [
        "help", "version", "query_eval_wanted", "measure=", "complete_rel_info_wanted",
        "level_for_rel=", "nosummary", "Debug_level=", "Judged_docs_only", "Number_docs_in_coll=",
        "Max_retrieved_per_topic=", "Rel_info_format=", "Results_format=", "Output_old_results_format",
        "Zscore=", "v9", "exclude=", "exclude-identical-ids", "exclude-labelled",
    ]  # fmt: skip
    try:
        options, args = getopt.gnu_getopt(list(argv), "hvqm:cl:nD:JN:M:R:T:oZ:", longs)
    except getopt.GetoptError as error:
        raise TrecEvalExit(f"evalwh trec_eval: {error}\n{USAGE}", 1) from None
    request = Request(qrels="", runs=[])
    measures: list[str] = []
    for flag, value in options:
        if flag in ("-h", "--help"):
            return HELP
        if flag in ("-v", "--version"):
            raise TrecEvalExit(f"trec_eval version {VERSION} (evalwh)", 0)
        if flag in ("-q", "--query_eval_wanted"):
            request.per_query = True
        elif flag in ("-m", "--measure"):
            measures.append(value)
        elif flag in ("-c", "--complete_rel_info_wanted"):
            request.complete = True
        elif flag in ("-l", "--level_for_rel"):
            # (a grade has at most nine digits, so a level beyond 32 bits selects as trec_eval's long does)
            request.rel = max(-(2**31), min(2**31 - 1, atol(value)))
        elif flag in ("-n", "--nosummary"):
            request.summary = False
        elif flag in ("-J", "--Judged_docs_only"):
            request.judged_only = True
        elif flag in ("-N", "--Number_docs_in_coll"):
            request.num_docs = atol(value)
        elif flag in ("-M", "--Max_retrieved_per_topic"):
            request.depth_cap = max(atol(value), 0)
        elif flag == "--v9":
            request.v9 = True
        elif flag == "--exclude":
            request.exclusions.append(value)
        elif flag == "--exclude-identical-ids":
            request.identical_ids = True
        elif flag == "--exclude-labelled":
            request.exclusion_labels = True
        elif flag in ("-R", "--Rel_info_format"):
            if value != "qrels":
                raise TrecEvalExit(f"evalwh trec_eval: rel_info format '{value}' is not supported (only qrels)", 2)
        elif flag in ("-T", "--Results_format"):
            if value != "trec_results":
                raise TrecEvalExit(f"evalwh trec_eval: results format '{value}' is not supported", 2)
        elif flag in ("-Z", "--Zscore"):
            raise TrecEvalExit("evalwh trec_eval: -Z (z-scores) is not supported", 2)
        # -D (debug output) and -o (obsolete) change nothing that is printed here
    if len(args) < 2:
        raise TrecEvalExit(USAGE, 1)
    request.qrels, request.runs = args[0], list(args[1:])
    for text in measures or ["official"]:
        _mark(request, text)
    return request


def _mark(request: Request, text: str) -> None:
    """trec_eval's mark_measure: a nickname or a measure, with parameters after the first '.'."""
    name, dot, params = text.partition(".")
    if dot:
        if params == "":
            raise TrecEvalExit(
                f"trec_eval: improper measure in parameter '{name}'\ntrec_eval: illegal measure '{name}'", 1
            )
        request.params.append((name, params))
    nicknames = NICKNAMES_V9 if request.v9 else NICKNAMES_V10
    if name in UNSUPPORTED_NICKNAMES or name in UNSUPPORTED:
        raise TrecEvalExit(
            f"evalwh trec_eval: measure '{name}' needs preference or judgment-group input, "
            "which evalwh does not read",
            1,
        )
    names = nicknames.get(name, [name])
    for single in names:
        known = _BY_NAME.get(single)
        if known is None or (known.v10 and request.v9):
            raise TrecEvalExit(f"trec_eval: illegal measure '{name}'", 1)
        if single not in request.marked:
            request.marked.append(single)


def _params_of(request: Request, name: str) -> str | None:
    """The parameters given for ``name`` (the first -m that names it with some), else None."""
    return next((p for n, p in request.params if n == name), None)


def _measure(metric: str, **values: Any) -> catalog.Measure:
    """An evalwh measure with the given parameter values, the others at their default."""
    found = catalog.lookup(metric)
    known = {p.name for p in found.params}
    unknown = set(values) - known
    if unknown:  # (a programming error: the table above names the metric's parameters)
        raise ValueError(f"{metric} has no parameters {sorted(unknown)}")
    resolved = tuple((p.name, values.get(p.name, p.default)) for p in found.params)
    return catalog.Measure(found, resolved)


def _cutoffs(text: str, reader: Callable[[str], Any], positive: bool) -> list[Any]:
    """trec_eval's get_long_cutoffs / get_double_cutoffs: sorted, no duplicates."""
    values = sorted(reader(part) for part in text.split(","))
    if positive and values[0] <= 0:
        raise TrecEvalExit("trec_eval: Negative cutoff detected", 2)
    if any(a == b for a, b in zip(values, values[1:], strict=False)):
        raise TrecEvalExit("trec_eval: duplicate cutoffs detected", 2)
    return values


def _check_pairs(text: str) -> None:
    """trec_eval's get_param_pairs: every parameter of the form name=value."""
    last = ","
    for char in text:
        if char == ",":
            if last == ",":
                break
            last = ","
        elif char == "=":
            if last == "=":
                last = ","
                break
            last = "="
    if last != "=":
        raise TrecEvalExit(f"trec_eval: malformed pair parameters in '{text}'", 2)


def printed_measures(request: Request) -> list[Printed]:
    """What trec_eval prints for the marked measures, in its order, with evalwh's measures."""
    out: list[Printed] = []
    for spec in MEASURES:
        if spec.name not in request.marked:
            continue
        given = _params_of(request, spec.name)
        try:
            out.extend(_printed(spec, given, request))
        except TrecEvalExit as error:
            raise TrecEvalExit(f"{error.message}\ntrec_eval: Cannot initialize measure '{spec.name}'", 2) from None
    return out


def _printed(spec: TrecMeasure, given: str | None, request: Request) -> list[Printed]:
    name, form = spec.name, spec.form
    if form in ("runid", "num_q"):
        return [Printed(name, form)]
    if form in ("long", "double", "gm"):
        return [Printed(name, form, _measure(spec.metric))]  # type: ignore[arg-type]
    params = given if given is not None else spec.default
    label = f"{name}_{given}" if given is not None else name
    if form == "cut_long":
        return [
            Printed(f"{name}_{k}", "double", _measure(spec.metric, k=k))  # type: ignore[arg-type]
            for k in _cutoffs(params, atol, positive=True)  # type: ignore[arg-type]
        ]
    if form == "cut_double":
        key = "recall" if name == "iprec_at_recall" else "mult"
        extra = {"legacy": request.v9} if name == "iprec_at_recall" else {}
        return [
            Printed(
                f"{name}_{x:3.2f}",
                "double",
                _measure(spec.metric, **{key: x}, **extra),  # type: ignore[arg-type]
                recalls=(x,) if key == "recall" else (),
            )
            for x in _cutoffs(params, atof, positive=False)  # type: ignore[arg-type]
        ]
    values = [atof(part) for part in params.split(",")] if params is not None else []
    if name == "relstring":
        return [Printed(label, "relstring", length=max(int(values[0]), 0))]
    if name == "utility":
        if len(values) != 4:
            return [Printed(label, "utility_error")]
        a, b, c, d = values
        return [Printed(label, "double", _measure("utility", a=a, b=b, c=c, d=d, docs=float(request.num_docs)))]
    if name == "11pt_avg":
        recalls = ",".join(repr(v) for v in values)
        measure = _measure("pt11_avg", recalls=recalls, legacy=request.v9)
        return [Printed(label, "double", measure, recalls=tuple(values))]
    if name == "set_F":
        return [Printed(label, "double", _measure("set_F", beta=values[0]))]
    # name=value pairs: gain maps (grade=gain) and rbp's p
    if given is not None:
        _check_pairs(given)
    if name in ("rbp", "rbp_resid"):
        p = 0.9
        for pair in (given or "").split(","):
            key, _, value = pair.partition("=")
            if key == "p":
                p = atof(value)
        values_: dict[str, Any] = {"p": p}
        if name == "rbp":
            values_["gains"] = given
        return [Printed(label, "double", _measure(spec.metric, **values_))]  # type: ignore[arg-type]
    if name == "ndcg" and given is None:
        return [Printed(label, "double", _measure("nDCG"))]
    return [Printed(label, "double", _measure(spec.metric, gains=given))]  # type: ignore[arg-type]
