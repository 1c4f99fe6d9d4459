"""``evalwh trec_eval``: trec_eval's command line and output, computed by evalwh's SQL metrics.

The command takes trec_eval's arguments (``-q -c -J -n -l N -M N -N N -m MEASURE[.PARAMS]``,
several run files allowed) and prints what trec_eval 10.0 prints for them, byte for byte:
``name<padded to 22>\\tquery\\tvalue`` lines, per topic (``-q``) in trec_eval's topic order,
then the ``all`` block with ``runid`` and ``num_q``. ``v9=True`` gives trec_eval 9.0.8 instead
(scores compared as 32-bit floats, the topics the run has without ``-c``, its all_trec set and
its rounding of recall levels). The arguments and the names they stand for are read by
:mod:`evalwh.measures.trec_command`.

Each trec_eval measure (``P.5,10``, ``ndcg.1=3,2=9``, ``rbp.p=0.5``) becomes one or more
:class:`evalwh.measures.catalog.Measure` of the SQL metrics in ``queries/metrics``, evaluated in one
pass over all run files by :func:`evalwh.measures.direct.evaluate_files`. What is trec_eval's own
doing happens here, in the open: its topic set, its means (summed in topic order, as it
sums), geometric means, counts, and the quirks listed in docs/trec_eval.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalwh.measures import catalog
# the command line's own names, read by the command and by its callers (atof, atol: tests)
from evalwh.measures.trec_command import (  # noqa: F401
    MIN_GEO_MEAN,
    Printed,
    Request,
    TrecEvalExit,
    _measure,
    atof,
    atol,
    parse_args,
    printed_measures,
)

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.store.connection import Store

# ---------------------------------------------------------------------------------------
# evaluation and output


@dataclass
class _Extras:
    """What the output needs besides the metric values, read from the evaluation's warehouse."""

    present: dict[str, set[str]] = field(default_factory=dict)  # run -> topics with results
    qrels_topics: list[str] = field(default_factory=list)
    relstrings: dict[tuple[str, str], str] = field(default_factory=dict)
    positive_grades: int = 0  # qrels lines with a grade > 0 (trec_eval's num_rel with -c)


def _read_extras(wh: Store, extras: _Extras, relstring_length: int | None) -> None:
    # (a list the excluded documents emptied, methods §17, is a topic the run did not return)
    present = wh.con.execute("SELECT run_id, query_id FROM run_topics WHERE num_ret > 0").fetchall()
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


def _pool_unjudged(wh: Store, depth: int) -> dict[tuple[str, str], list[int]]:
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
    return math.floor(recall * num_rel + (0.9 if v9 else 0.5))


def _line(name: str, query: str, text: str) -> str:
    return f"{name:<22}\t{query}\t{text}\n"


def run_quick(argv: Sequence[str], write: Callable[[str], Any]) -> int | None:
    """:func:`run` where :mod:`evalwh.measures.quick` takes the input; else None, nothing written.

    Raises:
        TrecEvalExit: trec_eval's errors (message for stderr, exit status).
    """
    return _run(argv, write, fallback=False)


def run(argv: Sequence[str], write: Callable[[str], Any]) -> int:
    """Run ``evalwh trec_eval`` with ``argv``; output goes to ``write``; returns the exit status.

    Raises:
        TrecEvalExit: trec_eval's errors (message for stderr, exit status).
        EvalWhError: evalwh's own (bad input files, named with file and line).
    """
    status = _run(argv, write, fallback=True)
    assert status is not None  # (with the fallback every input is evaluated)
    return status


def _run(argv: Sequence[str], write: Callable[[str], Any], *, fallback: bool) -> int | None:
    """Parse, evaluate (the quick path first; the direct path when it declines and ``fallback``)
    and write every run; None where the quick path declined and there is no fallback."""
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
    quick = _evaluate_quick(request, printed, measures, relstring)
    if quick is not None:
        run_ids, cells, extras = quick
    elif not fallback:
        return None
    else:
        run_ids, frame, extras = _evaluate(request, measures, relstring)
        cells = _Cells(frame, printed)
    for run_id in run_ids:
        _write_run(request, printed, cells, extras, run_id, write)
    return 0


def _evaluate(
    request: Request, measures: list[catalog.Measure], relstring: int | None
) -> tuple[list[str], pd.DataFrame, _Extras]:
    """Evaluate every run file in one pass; the run ids in the order of the files."""
    from evalwh.io.formats import label
    from evalwh.measures import direct

    paths = [Path(r) for r in request.runs]
    # The runs in the order of their files, asked of the evaluation's own warehouse (each
    # file is read once: standard input, `-`, can only be read once). A run's source_file is
    # its file's name (``<stdin>`` for `-`); files of the same name take their turns.
    positions: dict[str, list[int]] = {}
    for index, path in enumerate(paths):
        positions.setdefault(path.name if label(path) != "<stdin>" else "<stdin>", []).append(index)
    run_ids: list[str] = []

    def then(wh: Any) -> None:
        rows = wh.con.execute("SELECT source_file, run_id FROM runs ORDER BY rowid").fetchall()
        placed = []
        for source, run in rows:
            queue = positions.get(source) or positions.get(Path(source).name) or [len(paths)]
            placed.append((queue.pop(0) if len(queue) > 1 else queue[0], run))
        run_ids.extend(run for _, run in sorted(placed, key=lambda item: item[0]))
        _read_extras(wh, extras, relstring)

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
        then=then,
        # excluded documents only when asked for (methods §17): trec_eval has none
        exclusions=request.exclusions,
        identical_ids=request.identical_ids,
        exclusion_labels=request.exclusion_labels,
        said=_say if (request.exclusions or request.identical_ids or request.exclusion_labels) else None,
    )
    return run_ids, frame, extras


def _say(line: str) -> None:
    """A line about excluded documents, on standard error (standard output is trec_eval's)."""
    import sys

    sys.stderr.write(f"evalwh trec_eval: {line}\n")


def _evaluate_quick(
    request: Request, printed: list[Printed], measures: list[catalog.Measure], relstring: int | None
) -> tuple[list[str], _QuickCells, _Extras] | None:
    """The runs evaluated by :mod:`evalwh.measures.quick` (the C reader and Python, no warehouse),
    or None where it declines (then :func:`_evaluate`'s direct path reads them)."""
    from evalwh.measures import quick

    if request.judged_only or request.exclusions or request.identical_ids or request.exclusion_labels:
        return None  # (-J and exclusions: the direct path)
    done = quick.evaluate(
        Path(request.qrels),
        [Path(r) for r in request.runs],
        measures,
        rel=request.rel,
        depth_cap=request.depth_cap,
        float32=request.v9,
        every_topic=request.complete,
        relstring=relstring,
    )
    if done is None:
        return None
    qrels, runs = done
    positive = sum(count for count, _, _ in quick.per_topic(qrels, 1))
    extras = _Extras(qrels_topics=list(qrels.topics), positive_grades=positive)
    for run in runs:
        extras.present[run.run_id] = run.present
        for topic, text in run.relstrings.items():
            extras.relstrings[(run.run_id, topic)] = text
    return [r.run_id for r in runs], _QuickCells(qrels.topics, runs, measures, printed), extras


class _QuickCells:
    """:class:`_Cells` of :func:`_evaluate_quick`'s values: one matrix per run, [measure][topic]."""

    def __init__(
        self,
        topics: list[str],
        runs: list[Any],
        measures: list[catalog.Measure],
        printed: list[Printed],
    ) -> None:
        self.topics = {t: i for i, t in enumerate(topics)}
        self._runs = {r.run_id: r for r in runs}
        rows = {str(m): i for i, m in enumerate(measures)}
        self.rows = {id(p): rows.get(str(p.measure), -1) for p in printed if p.measure is not None}
        self.num_ret = rows[str(_measure("NumRet"))]
        self.num_rel = rows[str(_measure("NumRel"))]
        self._measures = len(measures)

    def of(self, run_id: str) -> tuple[list[list[float]], list[list[bool]]]:
        """The run's values and which of them it has (every topic of the run), [measure][topic]."""
        run = self._runs.get(run_id)
        n = len(self.topics)
        if run is None:
            return [[math.nan] * n] * self._measures, [[False] * n] * self._measures
        has = [topic in run.present for topic in self.topics]
        return run.values, [has] * self._measures


class _Cells:
    """The evaluation's values as one (measure, topic) matrix per run, indexed once for all runs."""

    def __init__(self, frame: pd.DataFrame, printed: list[Printed]) -> None:
        import numpy as np
        import pandas as pd

        run_codes, runs = pd.factorize(frame["run_id"].astype(str))
        measure_codes, measures = pd.factorize(frame["measure"].astype(str))
        topic_codes, topics = pd.factorize(frame["query_id"].astype(str))
        self.topics = {str(t): i for i, t in enumerate(topics)}
        self._n_measures = len(measures)
        self._runs = {str(r): i for i, r in enumerate(runs)}
        order = np.argsort(run_codes, kind="stable")
        bounds = np.searchsorted(run_codes[order], np.arange(len(runs) + 1))
        self._run_rows = [order[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
        self._measure_codes = measure_codes
        self._topic_codes = topic_codes
        self._values = frame["value"].to_numpy(dtype=np.float64)
        # each printed item's measure's row in the matrices of :meth:`of` (-1: not evaluated)
        measure_rows = {str(m): i for i, m in enumerate(measures)}
        self.rows = {id(p): measure_rows.get(str(p.measure), -1) for p in printed if p.measure is not None}
        self.num_ret = measure_rows.get(str(_measure("NumRet")), -1)
        self.num_rel = measure_rows.get(str(_measure("NumRel")), -1)

    def of(self, run_id: str) -> tuple[list[list[float]], list[list[bool]]]:
        """The run's values and which of them it has, both indexed [measure][topic]."""
        import numpy as np

        shape = (self._n_measures, len(self.topics))
        values, known = np.full(shape, np.nan), np.zeros(shape, dtype=bool)
        index = self._runs.get(run_id)
        if index is not None:
            rows = self._run_rows[index]
            at = (self._measure_codes[rows], self._topic_codes[rows])
            values[at], known[at] = self._values[rows], True
        return values.tolist(), known.tolist()


def _write_run(
    request: Request,
    printed: list[Printed],
    cells: _Cells | _QuickCells,
    extras: _Extras,
    run_id: str,
    write: Callable[[str], Any],
) -> None:
    present = extras.present.get(run_id, set())
    if request.v9:
        topics = [q for q in extras.qrels_topics if q in present]
        if not topics:
            raise TrecEvalExit("trec_eval: No queries with both results and relevance info", 7)
    else:
        topics = list(extras.qrels_topics)
    missing = None if request.complete else next((q for q in topics if q not in present), None)
    if missing is not None:
        topics = topics[: topics.index(missing)]
    utility_error = any(item.form == "utility_error" for item in printed)
    if request.per_query and topics and utility_error:
        raise TrecEvalExit(
            "trec_eval.calc_utility: improper number of coefficients\ntrec_eval: Can't calculate measure 'utility'", 4
        )

    # the value of every item with one (a column) for every topic (a row), in topic order
    valued = [item for item in printed if item.form not in ("runid", "num_q", "relstring", "utility_error")]
    column = {id(item): j for j, item in enumerate(valued)}
    matrix = _values(cells, run_id, valued, topics, present, request)
    out: list[str] = []
    if request.per_query and topics:
        out.append(_per_query(printed, column, matrix, topics, extras, run_id))
    if missing is not None:
        write("".join(out))
        raise TrecEvalExit(f"trec_eval: result qid '{missing}' not found in qrels", 4)
    if utility_error:
        write("".join(out))
        raise TrecEvalExit(
            "trec_eval.calc_utility: improper number of coefficients\ntrec_eval: Can't calculate measure 'utility'", 4
        )
    n_queries = len(extras.qrels_topics) if request.complete else len(topics)
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
            # summed in topic order, one after another as trec_eval sums (not pairwise), with
            # C's log (math.log) for the geometric means
            j = column[id(item)]
            total = 0.0
            if item.form == "gm":
                for row in matrix:
                    total += math.log(max(row[j], MIN_GEO_MEAN))
                total += (n_queries - len(topics)) * math.log(MIN_GEO_MEAN)
                result = math.exp(total / n_queries) if n_queries else total
            else:
                for row in matrix:
                    total += row[j]
                result = total if item.form == "long" or not n_queries else total / n_queries
            out.append(_line(item.name, "all", _format_value(item, result)))
    write("".join(out))


def _values(
    cells: _Cells | _QuickCells,
    run_id: str,
    valued: list[Printed],
    topics: list[str],
    present: set[str],
    request: Request,
) -> list[list[float]]:
    """The values trec_eval prints for ``valued`` items, indexed [topic][item]."""
    run_values, known = cells.of(run_id)
    at = [cells.topics.get(q, -1) for q in topics]
    in_run = [q in present for q in topics]
    rows = [cells.rows.get(id(item), -1) if item.measure is not None else None for item in valued]
    num_ret, num_rel = cells.num_ret, cells.num_rel
    matrix = [[0.0] * len(valued) for _ in topics]  # an item without a measure prints 0
    if not topics:
        return matrix
    wanted = [row for row in rows if row is not None] + [num_ret, num_rel]
    if min(wanted) < 0 or min(at) < 0 or not all(known[w][a] for w in set(wanted) for a in at):
        raise KeyError(f"run {run_id!r} lacks a value trec_eval prints")
    for j, row in enumerate(rows):
        if row is not None:
            values = run_values[row]
            for line, a in zip(matrix, at, strict=True):
                line[j] = values[a]
    # trec_eval's interpolated precision starts from 0/0 on an empty list (-J, -M0, -c -J),
    # which stays NaN at every level that stands for 0 relevant documents (a topic the run
    # lacks is a one-document list, unless -J removes that document)
    empty = [
        run_values[num_ret][a] == 0 and (inside or request.judged_only)
        for a, inside in zip(at, in_run, strict=True)
    ]
    for j, item in enumerate(valued):
        if item.name.startswith("utility"):
            # trec_eval zeroes utility for a topic the run lacks (its -c stand-in ranking)
            for line, inside in zip(matrix, in_run, strict=True):
                if not inside:
                    line[j] = 0.0
        if item.recalls and any(empty):
            for line, a, nothing in zip(matrix, at, empty, strict=True):
                relevant = run_values[num_rel][a]
                if nothing and any(_cut(r, relevant, request.v9) == 0 for r in item.recalls):
                    line[j] = math.nan
    return matrix


def _per_query(
    printed: list[Printed],
    column: dict[int, int],
    matrix: list[list[float]],
    topics: list[str],
    extras: _Extras,
    run_id: str,
) -> str:
    """The per-topic lines (``-q``): every item but the summary's own, topic by topic."""
    shown = [item for item in printed if item.form not in ("runid", "num_q", "gm")]
    # One %-format over all lines, each `name<padded to 22>\tquery\tvalue`: %6.4f and %d print
    # what _format_value prints (%d truncates as int() does), except NaN, put right below.
    specs = {"double": "%6.4f", "long": "%d", "relstring": "'%s'"}
    template = "".join(f"{item.name:<22}".replace("%", "%%") + f"\t%s\t{specs[item.form]}\n" for item in shown)
    places = [None if item.form == "relstring" else column[id(item)] for item in shown]
    cells: list[Any] = []
    for q, line in zip(topics, matrix, strict=True):
        for place in places:
            cells.append(q)
            cells.append(extras.relstrings.get((run_id, q), "") if place is None else line[place])
    lines = (template * len(topics)) % tuple(cells)
    doubles = [column[id(item)] for item in shown if item.form == "double"]
    if any(line[j] != line[j] for line in matrix for j in doubles):
        # Python prints NaN as `   nan`, glibc's printf as `  -nan`; a query id has no blanks,
        # so the pattern is only ever a value
        lines = lines.replace("\t   nan\n", "\t  -nan\n")
    return lines
