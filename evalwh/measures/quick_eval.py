"""``evalwh eval --qrels QRELS RUN...`` by the quick path (:mod:`evalwh.measures.quick`).

The command's plainest form, as a shell loop or a Makefile calls it: ``--qrels``, run files,
``-m`` (measures the quick path computes, in ir_measures' grammar), ``-q``, ``-l``, ``-M``,
``--float32-ties`` and ``--format trec``, or the table format written to a pipe or a file
(plain text; a terminal gets the CLI's table). The values are averaged as the command's
default averaging does (the topics with a relevant document; a topic a run lacks is an
empty ranking). Any other option, input or measure: :func:`run` answers None, having written
nothing, and the command goes through the CLI (:mod:`evalwh.cli.eval`) as before, which also
says every error.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

_FLAGS = {"-q": "per_query", "--per-query": "per_query", "--float32-ties": "float32"}
_VALUED = {
    "--qrels": "qrels",
    "-m": "measure",
    "--measure": "measure",
    "-l": "rel",
    "--rel": "rel",
    "-M": "depth_cap",
    "--depth-cap": "depth_cap",
    "-f": "format",
    "--format": "format",
}
DEFAULT_MEASURES = ["P@10", "AP", "nDCG@10", "bpref", "A_p@10"]  # (as evalwh.cli.eval)


def _parse(argv: Sequence[str]) -> dict[str, Any] | None:
    """The options of the plainest form, or None for anything else."""
    got: dict[str, Any] = {"measure": [], "files": [], "per_query": False, "float32": False}
    args = list(argv)
    while args:
        arg = args.pop(0)
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name in _FLAGS and not eq:
            got[_FLAGS[name]] = True
        elif name in _VALUED:
            if not eq:
                if not args:
                    return None
                value = args.pop(0)
            key = _VALUED[name]
            if key == "measure":
                got["measure"].append(value)
            elif key in got:
                return None  # (given twice: the CLI says what it makes of it)
            else:
                got[key] = value
        elif arg.startswith("-"):
            return None
        else:
            got["files"].append(arg)
    try:
        got["rel"] = int(got.get("rel", "1"))
        cap = got.get("depth_cap")
        got["depth_cap"] = None if cap is None else int(cap)
    except ValueError:
        return None
    if got["depth_cap"] is not None and got["depth_cap"] < 1:
        return None
    if (
        "qrels" not in got
        or not got["files"]
        or got.get("format", "table") not in ("table", "trec")
    ):
        return None
    return got


def run(
    argv: Sequence[str],
    write: Callable[[str], Any],
    *,
    terminal: bool | None = None,
    note: Callable[[list[tuple[str, int]]], None] | None = None,
) -> int | None:
    """``evalwh eval ARGV`` by the quick path: its exit status, or None (nothing written).

    ``terminal``: whether standard output is a terminal (the table format leaves it to the CLI).
    ``note``: without ``--float32-ties``, called (before the output) with the runs whose
    printed values change under trec_eval 9's float32 order and how many, if there are any.
    """
    got = _parse(argv)
    if got is None:
        return None
    fmt = got.get("format", "table")
    if fmt == "table" and (sys.stdout.isatty() if terminal is None else terminal):
        return None
    from evalwh.errors import EvalWhError
    from evalwh.measures import catalog, quick

    unique: dict[str, Any] = {}
    for spec in got["measure"] or DEFAULT_MEASURES:
        try:  # (as evalwh.measures.evaluation.parse_measures; a trec_eval name: the CLI's)
            found = catalog.expand([spec], None)
        except EvalWhError:
            return None
        if len(found) != 1:
            return None
        if found[0].label is None:
            found = [replace(found[0], label=spec.strip())]
        unique.setdefault(str(found[0]), found[0])
    measures = list(unique.values())
    qrels_path = Path(got["qrels"])
    done = quick.evaluate(
        qrels_path,
        [Path(f) for f in got["files"]],
        measures,
        rel=got["rel"],
        depth_cap=got["depth_cap"],
        float32=got["float32"],
        every_topic=False,
        other_order=note is not None and not got["float32"],
    )
    if done is None:
        return None
    qrels, runs = done
    relevant = quick.per_topic(qrels, got["rel"])
    scored = [i for i, (count, _, _) in enumerate(relevant) if count > 0]
    if not scored:
        return None  # (the CLI says why no topic is left)
    if note is not None and not got["float32"]:
        counts = [(r.run_id, _changed(r, scored, got["per_query"])) for r in runs]
        changed = [(run_id, n) for run_id, n in counts if n]
        if changed:
            note(changed)
    if fmt == "trec":
        write("".join(_trec(run, measures, qrels.topics, scored, got["per_query"]) for run in runs))
        return 0
    title = (
        f"qrels {qrels_path.name}, rel >= {got['rel']}, unjudged nonrelevant, averaging default"
        + (f", depth cap {got['depth_cap']}" if got["depth_cap"] else "")
        + (", float32 ties" if got["float32"] else "")
    )
    rows: list[list[str]] = []
    for run in runs:
        if got["per_query"]:
            for q in scored:
                rows += [
                    [run.run_id, qrels.topics[q], m.name, _cell(run.values[j][q])]
                    for j, m in enumerate(measures)
                ]
        else:
            means = _means(run.values, scored)
            rows += [[run.run_id, m.name, _cell(means[j])] for j, m in enumerate(measures)]
    names = (
        ["run_id", "query_id", "measure", "value"]
        if got["per_query"]
        else ["run_id", "measure", "value"]
    )
    write(_plain(names, rows, title))
    return 0


def _means(values: list[list[float]], scored: list[int]) -> list[float]:
    """Each measure's mean over the ``scored`` topics (its sum correctly rounded: math.fsum)."""
    return [math.fsum(row[q] for q in scored) / len(scored) for row in values]


def _changed(run: Any, scored: list[int], per_query: bool) -> int:
    """How many of the run's printed values (``%.4f``) the other tie order changes."""
    if run.other_order is None:
        return 0
    if per_query:
        given = [row[q] for row in run.values for q in scored]
        other = [row[q] for row in run.other_order for q in scored]
    else:
        given, other = _means(run.values, scored), _means(run.other_order, scored)
    return sum(f"{a:.4f}" != f"{b:.4f}" for a, b in zip(given, other, strict=True))


def _cell(value: float) -> str:
    return "" if value != value else f"{value:.4f}"


def _plain(names: list[str], rows: list[list[str]], title: str) -> str:
    """The CLI's plain table (evalwh.cli._render): two blanks apart, values right-aligned."""
    widths = [max([len(name)] + [len(row[i]) for row in rows]) for i, name in enumerate(names)]
    last = len(names) - 1

    def line(values: list[str]) -> str:
        parts = [
            v.rjust(w) if i == last else v.ljust(w)
            for i, (v, w) in enumerate(zip(values, widths, strict=True))
        ]
        return "  ".join(parts).rstrip() + "\n"

    return f"# {title}\n" + line(names) + "".join(line(row) for row in rows)


def _trec(
    run: Any, measures: list[Any], topics: list[str], scored: list[int], per_query: bool
) -> str:
    """One run as ``evalwh eval --format trec`` prints it (evalwh.measures.trec_format)."""
    lines: list[str] = []

    def emit(name: str, query: str, text: str) -> None:
        lines.append(f"{name:<22}\t{query}\t{text}")

    if per_query:
        for q in sorted(scored, key=lambda i: topics[i]):
            for j, measure in enumerate(measures):
                emit(measure.trec_name, topics[q], _value(measure, run.values[j][q]))
    emit("runid", "all", run.run_id)
    emit("num_q", "all", str(len(scored)))
    means = _means(run.values, scored)
    for j, measure in enumerate(measures):
        emit(measure.trec_name, "all", _value(measure, float(means[j])))
    return "\n".join(lines) + "\n"


def _value(measure: Any, value: float) -> str:
    if value != value:
        return "NaN"
    if measure.metric.aggregate == "sum":
        return str(int(round(value)))
    return f"{value:.4f}"
