"""trec_eval's common measures from plain files with the C reader and Python: a shell loop's path.

``evalwh trec_eval QRELS RUN`` is often called once per run file, from a shell loop or a
Makefile, where the start-up of every call counts: pandas and DuckDB alone take most of a
CPU second and 200 MB to load, numpy 0.05 to 0.1 s. When every input is in its plainest
form and every measure asked for is one of those below, :func:`evaluate` computes the values
here, per topic, with the run-file reader of the direct path (``evalwh/io/_runlines.c``,
which parses, checks and ranks each file as the ingest does) and plain Python over the
judged rows it hands back (a few thousand per run: no array library would repay its own
start-up); otherwise it answers None and the caller takes the direct path
(:mod:`evalwh.measures.direct`), which reads anything the ingest reads and names the first
bad line of what it refuses. So this path never refuses and never differs: it only declines.

It takes:

- a qrels file (plain or ``.gz``) of printable ASCII, each line four fields joined by one
  space or one tab (the same in every line), a grade of at most nine digits (no sign, no
  fraction: no pooled-unjudged ``-1``), no (topic, document) pair twice;
- run files the C reader takes whole (one tag, plain scores, ASCII, ...), each given once,
  with distinct tags, none read from standard input;
- trec_eval's options but ``-J`` and ``-M 0``, and ``-c`` only when every run has every
  qrels topic (trec_eval's stand-in ranking of a missing topic is the direct path's);
- the measures of :data:`METRICS` with trec_eval's default parameters (``official``,
  ``P``, ``recall``, ``ndcg_cut``, ``map_cut``, ``success``, ``ndcg``, ``set_P`` ...).

Each value is computed as trec_eval computes it (its ``m_*.c``): sums in rank order, one
term after the other (a Python loop, not a pairwise or compensated sum), the same divisions, and
C's ``log2`` (``math.log2``) for the discounts, so that the printed digits are trec_eval's.
"""

from __future__ import annotations

import math
import os
from array import array
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import Any

_QRELS_BYTES = 256 << 20  # a larger qrels file takes the direct path
_RUN_BYTES = 256 << 20  # so does a larger run file (read whole here)
_PRINTABLE = bytes(range(33, 127))


@dataclass
class Qrels:
    """A plain qrels file's judgments with a grade >= 0, topics in sorted (text) order."""

    topics: list[str]  # sorted
    grades: list[list[int]]  # per topic (in that order): its grades, ascending
    capsule: Any = None  # the C reader's judgments (read_qrels makes them)


@dataclass
class RunValues:
    """One run's values: ``values[measure][topic]`` over the qrels topics, and its own topics."""

    run_id: str
    present: set[str]
    values: list[list[float]]
    relstrings: dict[str, str] = field(default_factory=dict)
    other_order: list[list[float]] | None = None  # the values in the other tie order, when asked


def reader() -> Any:
    """The compiled reader, or None (then nothing is taken here)."""
    if os.environ.get("EVALWH_NO_READER") or os.environ.get("EVALWH_NO_QUICK"):
        return None
    try:
        from evalwh.io import _runlines
    except ImportError:
        return None
    return _runlines


def read_qrels(path: Path) -> Qrels | None:
    """The qrels file if it is in the plain form this path takes (see the module), else None.

    Read with bytes' own methods (each a loop in C over the whole file), not line by line:
    TREC-8's qrels file of 86,830 lines took 59 ms at load 13. The C reader's judgments are made
    here, which also finds a pair judged twice (declined: the direct path says what it makes
    of it).
    """
    module = reader()
    if module is None:
        return None
    text = str(path)
    if text == "-" or text.startswith("irds:") or not path.is_file():
        return None
    data = _read(path, _QRELS_BYTES)
    if not data:
        return None
    if not data.endswith(b"\n"):
        data += b"\n"
    first = data[: data.find(b"\n")]
    sep = b"\t" if b"\t" in first else b" "
    # printable ASCII, the separator and line breaks only (no CR, control character, other blank)
    if data.translate(None, _PRINTABLE + sep + b"\n"):
        return None
    # no empty field: no separator or line break after a separator or line break, or first
    if data[:1] in (sep, b"\n") or sep + sep in data or sep + b"\n" in data or b"\n" + sep in data:
        return None
    lines = data.count(b"\n")
    # Each line break ends a piece once a separator follows it: the pieces of line i are then
    # 4i .. 4i + 3 exactly when every line has three separators, i.e. when the pieces that end
    # with a line break (one per line) are all at 3, 7, 11 ... (and a last, empty piece).
    pieces = data.replace(b"\n", b"\n" + sep).split(sep)
    if len(pieces) != 4 * lines + 1:
        return None
    grade_text = pieces[3::4]
    joined = b"".join(grade_text)
    if joined.count(b"\n") != lines:
        return None
    # grades: digits only (no sign, no fraction: the direct path reads those), at most nine
    if not joined.replace(b"\n", b"").isdigit():
        return None
    if len(joined) == 2 * lines:  # (one digit each: "d\n" ...)
        grades = [digit - 48 for digit in joined[::2]]
    elif max(map(len, grade_text)) <= 10:
        grades = list(map(int, grade_text))
    else:
        return None
    topics, docs = pieces[0:-1:4], pieces[2::4]
    names = sorted(set(topics))
    by_topic: list[list[int]]
    if topics == sorted(topics):  # (most qrels files are sorted by topic)
        bounds = [bisect_left(topics, name) for name in names] + [len(topics)]
        by_topic = [sorted(grades[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
        topic_buffers = _repeated(names, bounds)
    else:
        index = {name: i for i, name in enumerate(names)}
        by_topic = [[] for _ in names]
        for topic, grade in zip(topics, grades, strict=True):
            by_topic[index[topic]].append(grade)
        for topic_grades in by_topic:
            topic_grades.sort()
        topic_buffers = _arrow(topics)
    try:
        capsule = module.judgments(*topic_buffers, *_arrow(docs), array("i", grades).tobytes())
    except ValueError:  # (a pair judged twice)
        return None
    return Qrels([name.decode("ascii") for name in names], by_topic, capsule)


def _arrow(strings: list[bytes]) -> tuple[bytes, bytes]:
    """Arrow string buffers of ``strings``: int32 offsets and the bytes, one after another."""
    return array("i", accumulate(map(len, strings), initial=0)).tobytes(), b"".join(strings)


def _repeated(names: list[bytes], bounds: list[int]) -> tuple[bytes, bytes]:
    """:func:`_arrow` of ``names[i]`` repeated ``bounds[i + 1] - bounds[i]`` times, each."""
    offsets, strings, end = array("i", [0]), [], 0
    for name, a, b in zip(names, bounds[:-1], bounds[1:], strict=True):
        offsets.extend(range(end + len(name), end + len(name) * (b - a) + 1, len(name)))
        strings.append(name * (b - a))
        end += len(name) * (b - a)
    return offsets.tobytes(), b"".join(strings)


def _read(path: Path, limit: int) -> bytes | None:
    """The file's (decompressed) content, or None if it is larger than ``limit`` or unreadable.

    Bounded as every whole-file input is (``formats.read_bounded``, which reads a ``.gz``
    here): a small ``.gz`` that inflates without end is declined after ``limit`` bytes, and the
    direct path names it; a plain file larger than ``limit`` is declined by its size.
    """
    if path.suffix != ".gz":
        try:
            with open(path, "rb") as handle:
                if os.fstat(handle.fileno()).st_size > limit:
                    return None
                data = handle.read(limit + 1)
        except (OSError, ValueError):
            return None
        return data if len(data) <= limit else None
    from evalwh.errors import IngestError
    from evalwh.io import formats

    try:
        return formats.read_bounded(path, limit, "this file")
    except (IngestError, OSError, EOFError, ValueError):
        return None


class _Topic:
    """One topic of one run, as trec_eval's ``res_rels`` sees it."""

    __slots__ = ("grades", "ideal", "num_nonrel", "num_rel", "num_ret", "ranks", "rel", "relevant")

    def __init__(
        self,
        num_ret: int,
        ranks: list[int],
        grades: list[int],
        num_rel: int,
        num_nonrel: int,
        ideal: list[int],
        rel: int,
    ) -> None:
        self.num_ret = num_ret
        self.ranks = ranks  # ranks of the judged documents retrieved, ascending
        self.grades = grades  # their grades
        self.num_rel = num_rel
        self.num_nonrel = num_nonrel  # judged with a grade below the relevance level
        self.ideal = ideal  # the topic's positive grades, highest first
        self.rel = rel
        self.relevant = [r for r, g in zip(ranks, grades, strict=True) if g >= rel]  # ascending


_DISCOUNTS: list[float] = []


def _discounts(n: int) -> list[float]:
    """``log2(i + 2)`` for ranks ``i + 1`` = 1 .. n (at least), with C's log2 (math.log2)."""
    while len(_DISCOUNTS) < n:
        _DISCOUNTS.append(math.log2(len(_DISCOUNTS) + 2))
    return _DISCOUNTS


def _total(terms: Any) -> float:
    """The terms summed one after another, as a C loop sums them."""
    total = 0.0
    for term in terms:
        total += term
    return total


def _ap(t: _Topic, k: int | None) -> float:
    ranks = t.relevant if k is None else t.relevant[: bisect_right(t.relevant, k)]
    if not t.num_rel:
        return 0.0
    return _total(i / r for i, r in enumerate(ranks, 1)) / t.num_rel


def _bpref(t: _Topic) -> float:
    denominator = float(min(t.num_nonrel, t.num_rel)) or 1.0
    nonrel_before, total = 0, 0.0
    for grade in t.grades:
        if grade < t.rel:
            nonrel_before += 1
        elif nonrel_before:
            total += 1.0 - min(nonrel_before, t.num_rel) / denominator
        else:
            total += 1.0
    return total / t.num_rel if t.num_rel else total


def _iprec(t: _Topic, recall: float, legacy: bool) -> float:
    ranks = t.relevant
    found = len(ranks)
    cut = math.floor(recall * t.num_rel + (0.9 if legacy else 0.5))
    if cut > found:
        return 0.0
    best = found / t.num_ret  # trec_eval starts from the precision at the end of the list
    return max([best, *(i / ranks[i - 1] for i in range(max(cut, 1), found + 1))])


def _ndcg(t: _Topic, k: int | None) -> float:
    gained = [
        (r, g) for r, g in zip(t.ranks, t.grades, strict=True) if g > 0 and (k is None or r <= k)
    ]
    ideal = t.ideal if k is None else t.ideal[:k]
    discounts = _discounts(max(gained[-1][0] if gained else 0, len(ideal)))
    dcg = _total(g / discounts[r - 1] for r, g in gained)
    best = _total(g / discounts[i] for i, g in enumerate(ideal))
    return dcg / best if best > 0.0 else dcg


def _count_rel(t: _Topic, k: int | None) -> int:
    return bisect_right(t.relevant, k) if k is not None else len(t.relevant)


def _rprec(t: _Topic) -> float:
    look = min(t.num_ret, t.num_rel)
    return _count_rel(t, look) / t.num_rel if look else 0.0


def _rr(t: _Topic) -> float:
    return 1.0 / float(t.relevant[0]) if t.relevant else 0.0


def _set_recall(t: _Topic) -> float:
    return _count_rel(t, None) / t.num_rel if t.num_rel else 0.0


def _set_f(t: _Topic, beta: float) -> float:
    """queries/metrics/set_f.sql's F, its operations in the same order (the same double)."""
    found = _count_rel(t, None)
    if found == 0:
        return 0.0
    set_p = found / t.num_ret if t.num_ret else 0.0
    set_r = found / t.num_rel if t.num_rel else 0.0
    return (beta + 1.0) * set_p * set_r / (beta * set_p + set_r)


# evalwh's metric -> (its parameters here, the value of one topic)
METRICS: dict[str, tuple[frozenset[str], Any]] = {
    "NumRet": (frozenset(), lambda t, p: float(t.num_ret)),
    "NumRel": (frozenset(), lambda t, p: float(t.num_rel)),
    "NumRelRet": (frozenset({"k"}), lambda t, p: float(_count_rel(t, p["k"]))),
    "AP": (frozenset({"k"}), lambda t, p: _ap(t, p["k"])),
    "gm_map": (frozenset(), lambda t, p: _ap(t, None)),
    "Rprec": (frozenset(), lambda t, p: _rprec(t)),
    "bpref": (frozenset({"k"}), lambda t, p: _bpref(t)),
    "gm_bpref": (frozenset(), lambda t, p: _bpref(t)),
    "RR": (frozenset({"k"}), lambda t, p: _rr(t)),
    "iprec_at_recall": (
        frozenset({"recall", "legacy"}),
        lambda t, p: _iprec(t, p["recall"], p["legacy"]),
    ),
    "P": (frozenset({"k"}), lambda t, p: _count_rel(t, p["k"]) / float(p["k"])),
    "R": (frozenset({"k"}), lambda t, p: _count_rel(t, p["k"]) / t.num_rel if t.num_rel else 0.0),
    "nDCG": (frozenset({"k"}), lambda t, p: _ndcg(t, p["k"])),
    "Success": (frozenset({"k"}), lambda t, p: 1.0 if _count_rel(t, p["k"]) else 0.0),
    "set_P": (frozenset(), lambda t, p: _count_rel(t, None) / t.num_ret if t.num_ret else 0.0),
    "set_recall": (frozenset(), lambda t, p: _set_recall(t)),
    "set_F": (frozenset({"beta"}), lambda t, p: _set_f(t, float(p["beta"]))),
    "num_nonrel_judged_ret": (frozenset(), lambda t, p: float(len(t.grades) - len(t.relevant))),
    # evalwh's own (``evalwh eval``): judged documents in the top k, divided by k
    "A_p": (frozenset({"k"}), lambda t, p: float(bisect_right(t.ranks, p["k"])) / p["k"]),
}
# parameters that must hold their default for the function above to be trec_eval's
_FIXED = {"NumRelRet": {"k": None}, "bpref": {"k": None}, "RR": {"k": None}}


def takes(measure: Any, rel: int | None = None) -> bool:
    """Whether ``measure`` (a catalog.Measure) is computed here (with ``rel``: also a measure
    whose only option is that relevance level, ``NumRelRet(rel=1)`` with rel 1)."""
    name = measure.metric.name
    if name not in METRICS:
        return False
    if measure.options and (rel is None or dict(measure.options) != {"rel": rel}):
        return False
    params = dict(measure.params)
    if set(params) != METRICS[name][0]:
        return False
    fixed = _FIXED.get(name, {})
    return all(params[key] == value for key, value in fixed.items())


def evaluate(
    qrels_path: Path,
    run_paths: list[Path],
    measures: list[Any],
    *,
    rel: int,
    depth_cap: int | None,
    float32: bool,
    every_topic: bool,
    relstring: int | None = None,
    other_order: bool = False,
) -> tuple[Qrels, list[RunValues]] | None:
    """Every run's values of ``measures`` (catalog.Measure) per qrels topic, or None if declined.

    ``every_topic``: trec_eval -c (declined when a run lacks a qrels topic).
    ``relstring``: also each topic's relstring of that length (trec_eval's ``relstring``).
    ``other_order``: also each run's values in the other order (``RunValues.other_order``:
    on float32 scores if ``float32`` is false, else on the scores as given).
    """
    module = reader()
    if module is None or depth_cap == 0 or not all(takes(m) for m in measures):
        return None
    if any(str(p) == "-" or not p.is_file() for p in run_paths):
        return None
    if len({p.resolve() for p in run_paths}) != len(run_paths):
        return None
    qrels = read_qrels(qrels_path)
    if qrels is None:
        return None
    judgments = qrels.capsule
    per_topic_ = per_topic(qrels, rel)
    computing = functions(measures)
    runs: list[RunValues] = []
    for path in run_paths:
        ranked = _rank(module, path, judgments, rel, float32, both=other_order)
        if ranked is None:
            return None
        run_id, result, other = ranked
        if run_id in {r.run_id for r in runs}:
            return None
        values = _run_values(
            qrels, per_topic_, result, computing, rel, depth_cap, every_topic, relstring
        )
        if values is None:
            return None
        runs.append(RunValues(run_id, *values))
        if other is not None:
            also = _run_values(
                qrels, per_topic_, other, computing, rel, depth_cap, every_topic, None
            )
            runs[-1].other_order = None if also is None else also[1]
    return qrels, runs


def per_topic(qrels: Qrels, rel: int) -> list[tuple[int, int, list[int]]]:
    """Each qrels topic's (num_rel, judged below ``rel``, positive grades highest first)."""
    out = []
    for grades in qrels.grades:  # (ascending)
        below = bisect_left(grades, rel)
        out.append((len(grades) - below, below, grades[bisect_right(grades, 0) :][::-1]))
    return out


_BLOCK = (b"#", b"\xef")  # how an ir_metadata block (or a byte order mark before one) opens


def _rank(
    module: Any, path: Path, judgments: Any, rel: int, float32: bool, both: bool = False
) -> tuple[str, tuple[Any, ...], tuple[Any, ...] | None] | None:
    """The run file ranked by the C reader: its tag and ``rank_file``'s result, or None;
    with ``both``, also its result in the other order (float32 scores or not)."""
    data = _read(path, _RUN_BYTES)
    if data is None:
        return None
    start = 0
    if data[:1] in _BLOCK:
        from evalwh.io.ir_metadata import skip_block

        start = skip_block(data)
    end = data.find(b"\n", start)
    first = data[start : end if end >= 0 else len(data)]
    fields = first.split()
    if len(fields) < 6:
        return None
    delimiter = "\t" if b"\t" in first else " "
    try:
        tag = fields[5].decode("ascii")
    except UnicodeDecodeError:
        return None
    if start:
        data = data[start:]
    # (rank_file's longest line is its own default, formats.MAX_LINE)
    result = module.rank_file(data, delimiter, tag, judgments, rel, float32, True)
    if isinstance(result, str):
        return None
    other = None
    if both:
        other = module.rank_file(data, delimiter, tag, judgments, rel, not float32, True)
        if isinstance(other, str):
            return None
    return tag, result, other


def _ints(buffer: bytes) -> list[int]:
    """The C reader's int32 column as a list."""
    return memoryview(buffer).cast("i").tolist()


def _run_values(
    qrels: Qrels,
    per_topic: list[tuple[int, int, list[int]]],
    result: tuple[Any, ...],
    functions: list[tuple[Any, dict[str, Any]]],
    rel: int,
    depth_cap: int | None,
    every_topic: bool,
    relstring: int | None,
) -> tuple[set[str], list[list[float]], dict[str, str]] | None:
    offsets = _ints(result[0])
    names = result[1]
    run_topics = [
        names[a:b].decode("ascii") for a, b in zip(offsets[:-1], offsets[1:], strict=True)
    ]
    present = set(run_topics)
    if every_topic and not present.issuperset(qrels.topics):
        return None  # trec_eval -c's stand-in ranking: the direct path's
    ranked = (run_topics, _ints(result[2]), *(_ints(result[i]) for i in (4, 5, 6)))
    values, relstrings = values_of(qrels, per_topic, *ranked, functions, rel, depth_cap, relstring)
    return present, values, relstrings


def values_of(
    qrels: Qrels,
    per_topic: list[tuple[int, int, list[int]]],
    run_topics: list[str],
    num_ret: list[int],
    topic: list[int],
    rank: list[int],
    grade: list[int],
    functions: list[tuple[Any, dict[str, Any]]],
    rel: int,
    depth_cap: int | None = None,
    relstring: int | None = None,
) -> tuple[list[list[float]], dict[str, str]]:
    """Values ``[function][qrels topic]`` of one ranked run (0 where the run lacks the topic).

    ``run_topics`` and ``num_ret``: the run's topics and the documents it retrieved for each;
    ``topic`` (an index into ``run_topics``), ``rank`` and ``grade``: its judged documents
    (grade >= 0), ranked in trec_eval's order. ``functions``: :func:`functions` of the measures.
    """
    # judged rows by topic, then rank
    rows: list[list[tuple[int, int]]] = [[] for _ in run_topics]
    for t, r, g in zip(topic, rank, grade, strict=True):
        if depth_cap is None or r <= depth_cap:
            rows[t].append((r, g))
    values = [[0.0] * len(qrels.topics) for _ in functions]
    relstrings: dict[str, str] = {}
    at = {name: i for i, name in enumerate(run_topics)}
    for q, name in enumerate(qrels.topics):
        i = at.get(name)
        if i is None:
            continue  # (not printed: trec_eval stops at such a topic, or -c was declined above)
        retrieved = num_ret[i] if depth_cap is None else min(num_ret[i], depth_cap)
        judged = sorted(rows[i])
        ranks, grades = [r for r, _ in judged], [g for _, g in judged]
        num_rel, num_nonrel, ideal = per_topic[q]
        t = _Topic(retrieved, ranks, grades, num_rel, num_nonrel, ideal, rel)
        for j, (function, params) in enumerate(functions):
            values[j][q] = function(t, params)
        if relstring is not None:
            chars = ["-"] * min(retrieved, relstring)
            for r, g in judged:
                if r <= len(chars):
                    chars[r - 1] = ">" if g > 9 else str(g)
            relstrings[name] = "".join(chars)
    return values, relstrings


def functions(measures: list[Any]) -> list[tuple[Any, dict[str, Any]]]:
    """The function computing each measure (one :func:`takes` takes), with its parameters."""
    return [(METRICS[m.metric.name][1], dict(m.params)) for m in measures]
