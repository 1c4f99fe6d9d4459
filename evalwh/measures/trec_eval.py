"""``evalwh trec_eval``: trec_eval's command line and output, computed by evalwh's SQL metrics.

The command takes trec_eval's arguments (``-q -c -J -n -l N -M N -N N -m MEASURE[.PARAMS]``,
several run files allowed) and prints what trec_eval 10.0 prints for them, byte for byte:
``name<padded to 22>\\tquery\\tvalue`` lines, per topic (``-q``) in trec_eval's topic order,
then the ``all`` block with ``runid`` and ``num_q``. ``v9=True`` gives trec_eval 9.0.8 instead
(scores compared as 32-bit floats, the topics the run has without ``-c``, its all_trec set and
its rounding of recall levels).

Each trec_eval measure (``P.5,10``, ``ndcg.1=3,2=9``, ``rbp.p=0.5``) becomes one or more
:class:`evalwh.catalog.Measure` of the SQL metrics in ``queries/metrics``, evaluated in one
pass over all run files by :func:`evalwh.direct.evaluate_files`. What is trec_eval's own
doing happens here, in the open: its topic set, its means (summed in topic order, as it
sums), geometric means, counts, and the quirks listed in docs/trec_eval.md.
"""

from __future__ import annotations

import getopt
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalwh import catalog

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.warehouse import Warehouse

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
    """C's atol: the leading integer of ``text`` (0 if none)."""
    match = _LONG.match(text)
    return int(match.group(1)) if match else 0


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
    marked: list[str] = field(default_factory=list)  # measure names, in marking order
    params: list[tuple[str, str]] = field(default_factory=list)  # (measure, params), as given


def parse_args(argv: Sequence[str]) -> Request | str:
    """Read trec_eval's command line (getopt_long, as trec_eval does); a str is text to print."""
    longs = [
        "help", "version", "query_eval_wanted", "measure=", "complete_rel_info_wanted",
        "level_for_rel=", "nosummary", "Debug_level=", "Judged_docs_only", "Number_docs_in_coll=",
        "Max_retrieved_per_topic=", "Rel_info_format=", "Results_format=", "Output_old_results_format",
        "Zscore=", "v9",
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
            request.rel = atol(value)
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


# ---------------------------------------------------------------------------------------
# evaluation and output


@dataclass
class _Extras:
    """What the output needs besides the metric values, read from the evaluation's warehouse."""

    present: dict[str, set[str]] = field(default_factory=dict)  # run -> topics with results
    qrels_topics: list[str] = field(default_factory=list)
    relstrings: dict[tuple[str, str], str] = field(default_factory=dict)
    positive_grades: int = 0  # qrels lines with a grade > 0 (trec_eval's num_rel with -c)


def _read_extras(wh: Warehouse, extras: _Extras, relstring_length: int | None) -> None:
    present = wh.con.execute("SELECT run_id, query_id FROM run_topics").fetchall()
    for run_id, query_id in present:
        extras.present.setdefault(str(run_id), set()).add(str(query_id))
    topics = wh.con.execute("SELECT DISTINCT query_id FROM qrels").fetchall()
    extras.qrels_topics = sorted(str(t) for (t,) in topics)
    extras.positive_grades = wh.con.execute("SELECT count(*) FROM qrels WHERE relevance >= 1").fetchall()[0][0]
    if relstring_length is None:
        return
    rows = wh.con.execute(
        """
        SELECT p.run_id, p.query_id, least(p.num_ret, $n) AS length,
               list(j.rank ORDER BY j.rank) FILTER (WHERE j.rank IS NOT NULL) AS ranks,
               list(trunc(j.gain) ORDER BY j.rank) FILTER (WHERE j.rank IS NOT NULL) AS grades
        FROM ev_pairs AS p
        LEFT JOIN ev_judged AS j ON j.run_id = p.run_id AND j.query_id = p.query_id AND j.rank <= $n
        GROUP BY p.run_id, p.query_id, p.num_ret
        """,
        {"n": relstring_length},
    ).fetchall()
    pooled = _pool_unjudged(wh, relstring_length)
    for run_id, query_id, length, ranks, grades in rows:
        chars = ["-"] * int(length)
        for rank in pooled.get((run_id, query_id), ()):
            if rank <= length:
                chars[rank - 1] = "."
        for rank, grade in zip(ranks or (), grades or (), strict=True):
            chars[rank - 1] = ">" if grade > 9 else str(int(grade))
        extras.relstrings[(str(run_id), str(query_id))] = "".join(chars)


def _pool_unjudged(wh: Warehouse, depth: int) -> dict[tuple[str, str], list[int]]:
    """Ranks of retrieved documents with a negative grade (pooled, not judged), where ranked."""
    rows = wh.con.execute(
        """
        SELECT r.run_id, r.query_id, r.rank
        FROM ev_ranked AS r
        JOIN qrels AS q ON q.query_id = r.query_id AND q.doc_id = r.doc_id
        WHERE q.relevance < 0 AND r.rank <= $n AND NOT getvariable('ev_condensed')
        """,
        {"n": depth},
    ).fetchall()
    out: dict[tuple[str, str], list[int]] = {}
    for run_id, query_id, rank in rows:
        out.setdefault((str(run_id), str(query_id)), []).append(int(rank))
    return out


def _format_value(item: Printed, value: float) -> str:
    if item.form == "long":
        return str(int(value))
    return _c_float(value)


def _c_float(value: float) -> str:
    """printf's %6.4f (glibc prints NaN from 0/0 as -nan)."""
    if math.isnan(value):
        return "  -nan"
    if math.isinf(value):
        return f"{'inf' if value > 0 else '-inf':>6}"
    return f"{value:6.4f}"


def _cut(recall: float, num_rel: float, v9: bool) -> int:
    """The number of relevant documents a recall level stands for (trec_eval's rounding)."""
    return math.floor(recall * num_rel + 0.9) if v9 else math.floor(recall * num_rel + 0.5)


def _line(name: str, query: str, text: str) -> str:
    return f"{name:<22}\t{query}\t{text}\n"


def run(argv: Sequence[str], write: Callable[[str], Any]) -> int:
    """Run ``evalwh trec_eval`` with ``argv``; output goes to ``write``; returns the exit status.

    Raises:
        TrecEvalExit: trec_eval's errors (message for stderr, exit status).
        EvalWhError: evalwh's own (bad input files, named with file and line).
    """
    parsed = parse_args(argv)
    if isinstance(parsed, str):
        write(parsed)
        return 0
    request = parsed
    printed = printed_measures(request)
    measures = [p.measure for p in printed if p.measure is not None]
    relstring = next((p.length for p in printed if p.form == "relstring"), None)
    # m and R of every topic: an empty list gives trec_eval's interpolated precision 0/0
    measures += [_measure("NumRet"), _measure("NumRel")]
    run_ids, frame, extras = _evaluate(request, measures, relstring)
    for run_id in run_ids:
        _write_run(request, printed, frame, extras, run_id, write)
    return 0


def _evaluate(
    request: Request, measures: list[catalog.Measure], relstring: int | None
) -> tuple[list[str], pd.DataFrame, _Extras]:
    """Evaluate every run file in one pass; the run ids in the order of the files."""
    from evalwh import direct, ingest

    paths = [Path(r) for r in request.runs]
    spill = ingest.Spill()
    try:  # (the tags name the runs, in the order of the files)
        run_ids = [f.run_id for f in ingest.prepare_run_files(paths, run_id=None, ignore_extra_fields=True, spill=spill)]
    finally:
        spill.close()
    extras = _Extras()
    averaging = "trec_eval_default" if (request.v9 and not request.complete) else "trec_eval_c"
    frame = direct.evaluate_files(
        request.qrels,
        paths,
        measures,
        per_query=True,
        rel=request.rel,
        unjudged="condensed" if request.judged_only else "nonrelevant",
        depth_cap=request.depth_cap,
        float32_ties=request.v9,
        averaging=averaging,
        ignore_extra_fields=True,
        truncate_grades=True,  # trec_eval reads a grade with atol: 2.75 is 2
        then=lambda wh: _read_extras(wh, extras, relstring),
    )
    return run_ids, frame, extras


def _write_run(
    request: Request,
    printed: list[Printed],
    frame: pd.DataFrame,
    extras: _Extras,
    run_id: str,
    write: Callable[[str], Any],
) -> None:
    import numpy as np

    rows = frame[frame["run_id"] == run_id]
    # (measure, topic) -> value, and each printed item's measure label, made once
    values = dict(
        zip(
            zip(rows["measure"].tolist(), rows["query_id"].astype(str).tolist(), strict=True),
            rows["value"].astype(float).tolist(),
            strict=True,
        )
    )
    keys = {id(item): str(item.measure) for item in printed if item.measure is not None}
    present = extras.present.get(run_id, set())
    num_ret, num_rel_key = str(_measure("NumRet")), str(_measure("NumRel"))
    if request.v9:
        topics = [q for q in extras.qrels_topics if q in present]
        if not topics:
            raise TrecEvalExit("trec_eval: No queries with both results and relevance info", 7)
    else:
        topics = list(extras.qrels_topics)
    missing = None if request.complete else next((q for q in topics if q not in present), None)
    if missing is not None:
        topics = topics[: topics.index(missing)]
    out: list[str] = []

    def value(item: Printed, query: str) -> float:
        if item.measure is None:
            return 0.0
        v = values[(keys[id(item)], query)]
        if item.name.startswith("utility") and query not in present:
            return 0.0  # trec_eval zeroes utility for a topic the run lacks (its -c stand-in ranking)
        if item.recalls and values[(num_ret, query)] == 0 and (query in present or request.judged_only):
            # trec_eval's interpolated precision starts from 0/0 on an empty list (-J, -M0, -c -J),
            # which stays NaN at every level that stands for 0 relevant documents (a topic the
            # run lacks is a one-document list, unless -J removes that document)
            num_rel = values[(num_rel_key, query)]
            if any(_cut(x, num_rel, request.v9) == 0 for x in item.recalls):
                return math.nan
        return v

    if request.per_query:
        for query in topics:
            for item in printed:
                if item.form in ("runid", "num_q", "gm"):
                    continue
                if item.form == "utility_error":
                    raise TrecEvalExit(
                        "trec_eval.calc_utility: improper number of coefficients\n"
                        "trec_eval: Can't calculate measure 'utility'",
                        4,
                    )
                if item.form == "relstring":
                    out.append(f"{item.name:<22}\t{query}\t'{extras.relstrings.get((run_id, query), '')}'\n")
                    continue
                out.append(_line(item.name, query, _format_value(item, value(item, query))))
    if missing is not None:
        write("".join(out))
        raise TrecEvalExit(f"trec_eval: result qid '{missing}' not found in qrels", 4)
    if any(item.form == "utility_error" for item in printed):
        write("".join(out))
        raise TrecEvalExit(
            "trec_eval.calc_utility: improper number of coefficients\ntrec_eval: Can't calculate measure 'utility'", 4
        )
    evaluated = [q for q in topics if request.v9 is False or q in present]
    n_queries = len(extras.qrels_topics) if request.complete else len(evaluated)
    if not request.summary:
        write("".join(out))
        return
    for item in printed:
        if item.form == "runid":
            out.append(_line("runid", "all", run_id))
        elif item.form == "num_q":
            out.append(_line("num_q", "all", str(n_queries)))
        elif item.form == "relstring":
            continue
        elif item.name == "num_rel" and request.complete:
            # with -c trec_eval counts the qrels lines with a grade > 0 of every topic,
            # whatever -l says
            out.append(_line("num_rel", "all", str(extras.positive_grades)))
        else:
            series = np.array([value(item, q) for q in evaluated], dtype=np.float64)
            if item.form == "gm":
                logs = np.log(np.maximum(series, MIN_GEO_MEAN))
                total = float(np.cumsum(logs)[-1]) if len(logs) else 0.0
                total += (n_queries - len(evaluated)) * math.log(MIN_GEO_MEAN)
                result = math.exp(total / n_queries) if n_queries else total
            else:
                total = float(np.cumsum(series)[-1]) if len(series) else 0.0
                result = total if item.form == "long" or not n_queries else total / n_queries
            out.append(_line(item.name, "all", _format_value(item, result)))
    write("".join(out))
