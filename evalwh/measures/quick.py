"""trec_eval's common measures from plain files with numpy and the C reader: a shell loop's path.

``evalwh trec_eval QRELS RUN`` is often called once per run file, from a shell loop or a
Makefile, where the start-up of every call counts: pandas and DuckDB alone take most of a
CPU second and 200 MB to load. When every input is in its plainest form and every measure
asked for is one of those below, :func:`evaluate` computes the values here, per topic, with
the run-file reader of the direct path (``evalwh/io/_runlines.c``, which parses, checks and
ranks each file as the ingest does) and numpy; otherwise it answers None and the caller
takes the direct path (:mod:`evalwh.measures.direct`), which reads anything the ingest reads
and names the first bad line of what it refuses. So this path never refuses and never
differs: it only declines.

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
term after the other (numpy's cumulative sum, not a pairwise sum), the same divisions, and
C's ``log2`` (``math.log2``) for the discounts, so that the printed digits are trec_eval's.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

_QRELS_BYTES = 256 << 20  # a larger qrels file takes the direct path
_RUN_BYTES = 256 << 20  # so does a larger run file (read whole here)
_PRINTABLE = bytes(range(33, 127))


@dataclass
class Qrels:
    """A plain qrels file's judgments with a grade >= 0, topics in sorted (text) order."""

    topics: list[str]  # sorted
    topic_of: np.ndarray  # per judgment: the topic's index
    docs: list[bytes]
    grades: np.ndarray  # int64 per judgment
    # topics' and documents' Arrow string buffers (offsets, bytes), per judgment as in the file
    buffers: tuple[bytes, bytes, bytes, bytes] | None = None
    capsule: Any = None  # the C reader's judgments (made once)


@dataclass
class RunValues:
    """One run's values: ``values[measure, topic]`` over the qrels topics, and its own topics."""

    run_id: str
    present: set[str]
    values: np.ndarray
    relstrings: dict[str, str] = field(default_factory=dict)
    other_order: np.ndarray | None = None  # the values in the other tie order, when asked


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
    """The qrels file if it is in the plain form this path takes (see the module), else None."""

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
    if data.translate(None, _PRINTABLE).replace(sep, b"").replace(b"\n", b""):
        return None
    # no empty field: no separator or line break after a separator or line break, or first
    if data[:1] in (sep, b"\n") or sep + sep in data or sep + b"\n" in data or b"\n" + sep in data:
        return None
    if b"\n\n" in data:
        return None
    raw = np.frombuffer(data, np.uint8)
    ends = np.flatnonzero(raw == 10)
    seps = np.flatnonzero(raw == sep[0])
    lines = len(ends)
    # three separators on every line: the line of each separator, in order, is 0 0 0 1 1 1 ...
    if len(seps) != 3 * lines or not np.array_equal(
        np.searchsorted(ends, seps), np.repeat(np.arange(lines), 3)
    ):
        return None
    at = seps.reshape(lines, 3)
    starts = np.concatenate([[0], ends[:-1] + 1])
    topics = _Field.of(raw, starts, at[:, 0])
    docs = _Field.of(raw, at[:, 1] + 1, at[:, 2])
    grade_text = _Field.of(raw, at[:, 2] + 1, ends)
    if topics is None or docs is None or grade_text is None or grade_text.width > 9:
        return None  # (a grade of ten digits or more, an id of more than 256 characters)
    grades = grade_text.digits()
    if grades is None:
        return None  # (a sign, a fraction: the direct path reads them)
    names_array, topic_of = np.unique(topics.fixed, return_inverse=True)
    topic_of = topic_of.astype(np.int64).reshape(-1)
    if not _increasing(topic_of, docs.fixed):  # (most qrels files are sorted: no sort then)
        order = np.lexsort((docs.fixed, topic_of))
        if not _increasing(topic_of[order], docs.fixed[order]):
            return None  # a pair judged twice: the direct path says what it makes of it
    return Qrels(
        topics=[name.decode("ascii") for name in names_array.tolist()],
        topic_of=topic_of,
        docs=[],
        grades=grades,
        buffers=(*topics.buffers(), *docs.buffers()),
    )


class _Field:
    """One field of every line: as fixed-width bytes (NUL-padded) and as Arrow string buffers."""

    def __init__(self, block: np.ndarray, mask: np.ndarray, lengths: np.ndarray) -> None:
        self.block, self.mask, self.lengths = block, mask, lengths
        self.width = block.shape[1]
        self.fixed = np.ascontiguousarray(block).view(f"S{self.width}").reshape(-1)

    @classmethod
    def of(cls, raw: np.ndarray, begin: np.ndarray, end: np.ndarray) -> _Field | None:
        """The bytes ``raw[begin[i]:end[i]]`` of every line ``i``; None if one is over 256 long."""
        lengths = end - begin
        width = int(lengths.max()) if len(lengths) else 1
        if width > 256:
            return None
        offsets = np.arange(width, dtype=np.int64)
        mask = offsets[np.newaxis, :] < lengths[:, np.newaxis]
        block = raw[np.where(mask, begin[:, np.newaxis] + offsets[np.newaxis, :], 0)]
        block[~mask] = 0
        return cls(block, mask, lengths)

    def buffers(self) -> tuple[bytes, bytes]:
        """Arrow string buffers: int32 offsets and the bytes, one after another."""
        offsets = np.concatenate([[0], np.cumsum(self.lengths)]).astype(np.int32)
        return offsets.tobytes(), self.block[self.mask].tobytes()

    def digits(self) -> np.ndarray | None:
        """The field read as a whole number of digits only (int64), or None if one is not."""
        values = self.block.astype(np.int64) - 48
        if bool(((values < 0) | (values > 9))[self.mask].any()):
            return None
        power = self.lengths[:, np.newaxis] - 1 - np.arange(self.width)[np.newaxis, :]
        return (np.where(self.mask, values * 10 ** np.maximum(power, 0), 0)).sum(axis=1)


def _read(path: Path, limit: int) -> bytes | None:
    """The file's (decompressed) content, or None if it is larger than ``limit`` or unreadable.

    Bounded as every whole-file input is (``formats.read_bounded``): a small ``.gz`` that
    inflates without end is declined after ``limit`` bytes, and the direct path names it.
    """
    from evalwh.errors import IngestError
    from evalwh.io import formats

    try:
        return formats.read_bounded(path, limit, "this file")
    except (IngestError, OSError, EOFError, ValueError):
        return None


def _increasing(topics: np.ndarray, docs: np.ndarray) -> bool:
    """Whether the (topic, document) pairs strictly increase: sorted, none twice."""
    later = topics[1:] > topics[:-1]
    return bool((later | ((topics[1:] == topics[:-1]) & (docs[1:] > docs[:-1]))).all())


def _judgments(module: Any, qrels: Qrels) -> Any:
    """The C reader's judgments of ``qrels`` (made once)."""
    if qrels.capsule is None:
        buffers = qrels.buffers  # type: ignore[misc]
        qrels.capsule = module.judgments(*buffers, qrels.grades.astype(np.int32).tobytes())
    return qrels.capsule


@dataclass
class _Topic:
    """One topic of one run, as trec_eval's ``res_rels`` sees it."""

    num_ret: int
    ranks: np.ndarray  # ranks of the judged documents retrieved, ascending
    grades: np.ndarray  # their grades
    num_rel: int
    num_nonrel: int  # judged with a grade below the relevance level
    ideal: np.ndarray  # the topic's positive grades, highest first
    rel: int

    def relevant_ranks(self) -> np.ndarray:
        return self.ranks[self.grades >= self.rel]


_DISCOUNTS: list[float] = []


def _discounts(n: int) -> np.ndarray:
    """``log2(i + 2)`` for ranks ``i + 1`` = 1 .. n, with C's log2 (math.log2), not numpy's."""
    while len(_DISCOUNTS) < n:
        _DISCOUNTS.append(math.log2(len(_DISCOUNTS) + 2))
    return np.array(_DISCOUNTS[:n])


def _total(terms: np.ndarray) -> float:
    """The terms summed one after another, as a C loop sums them."""
    return float(np.cumsum(terms)[-1]) if len(terms) else 0.0


def _ap(t: _Topic, k: int | None) -> float:
    ranks = t.relevant_ranks()
    if k is not None:
        ranks = ranks[ranks <= k]
    if not t.num_rel:
        return 0.0
    return _total(np.arange(1, len(ranks) + 1) / ranks) / t.num_rel


def _bpref(t: _Topic) -> float:
    relevant = t.grades >= t.rel
    nonrel_before = np.cumsum(~relevant)[relevant]
    denominator = float(min(t.num_nonrel, t.num_rel))
    terms = np.where(
        nonrel_before > 0,
        1.0 - np.minimum(nonrel_before, t.num_rel) / (denominator if denominator else 1.0),
        1.0,
    )
    total = _total(terms)
    return total / t.num_rel if t.num_rel else total


def _iprec(t: _Topic, recall: float, legacy: bool) -> float:
    ranks = t.relevant_ranks()
    found = len(ranks)
    cut = math.floor(recall * t.num_rel + (0.9 if legacy else 0.5))
    if cut > found:
        return 0.0
    best = found / t.num_ret  # trec_eval starts from the precision at the end of the list
    if cut < 1:
        precisions = np.arange(1, found + 1) / ranks
        return float(max(best, precisions.max())) if found else best
    precisions = np.arange(cut, found + 1) / ranks[cut - 1 :]
    return float(max(best, precisions.max()))


def _ndcg(t: _Topic, k: int | None) -> float:
    keep = t.grades > 0
    if k is not None:
        keep &= t.ranks <= k
    ranks, gains = t.ranks[keep], t.grades[keep]
    dcg = _total(gains / _discounts(int(ranks[-1]))[ranks - 1]) if len(ranks) else 0.0
    ideal = t.ideal if k is None else t.ideal[:k]
    best = _total(ideal / _discounts(len(ideal))) if len(ideal) else 0.0
    return dcg / best if best > 0.0 else dcg


def _count_rel(t: _Topic, k: int | None) -> int:
    ranks = t.relevant_ranks()
    return int((ranks <= k).sum()) if k is not None else len(ranks)


def _rprec(t: _Topic) -> float:
    look = min(t.num_ret, t.num_rel)
    return _count_rel(t, look) / t.num_rel if look else 0.0


def _rr(t: _Topic) -> float:
    ranks = t.relevant_ranks()
    return 1.0 / float(ranks[0]) if len(ranks) else 0.0


def _set_recall(t: _Topic) -> float:
    return _count_rel(t, None) / t.num_rel if t.num_rel else 0.0


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
    "num_nonrel_judged_ret": (frozenset(), lambda t, p: float((t.grades < t.rel).sum())),
    # evalwh's own (``evalwh eval``): judged documents in the top k, divided by k
    "A_p": (frozenset({"k"}), lambda t, p: float((t.ranks <= p["k"]).sum()) / p["k"]),
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
    judgments = _judgments(module, qrels)
    per_topic = _per_topic(qrels, rel)
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
            qrels, per_topic, result, computing, rel, depth_cap, every_topic, relstring
        )
        if values is None:
            return None
        runs.append(RunValues(run_id, *values))
        if other is not None:
            also = _run_values(
                qrels, per_topic, other, computing, rel, depth_cap, every_topic, None
            )
            runs[-1].other_order = None if also is None else also[1]
    return qrels, runs


def _per_topic(qrels: Qrels, rel: int) -> list[tuple[int, int, np.ndarray]]:
    """Each qrels topic's (num_rel, judged below the level, positive grades highest first)."""
    order = np.argsort(qrels.topic_of, kind="stable")
    bounds = np.searchsorted(qrels.topic_of[order], np.arange(len(qrels.topics) + 1))
    out = []
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        grades = qrels.grades[order[a:b]]
        positive = np.sort(grades[grades > 0])[::-1].astype(np.float64)
        out.append((int((grades >= rel).sum()), int((grades < rel).sum()), positive))
    return out


def _rank(
    module: Any, path: Path, judgments: Any, rel: int, float32: bool, both: bool = False
) -> tuple[str, tuple[Any, ...], tuple[Any, ...] | None] | None:
    """The run file ranked by the C reader: its tag and ``rank_file``'s result, or None;
    with ``both``, also its result in the other order (float32 scores or not)."""
    from evalwh.io import formats
    from evalwh.io.ir_metadata import skip_block

    data = _read(path, _RUN_BYTES)
    if data is None:
        return None
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
    result = module.rank_file(
        data[start:], delimiter, tag, judgments, rel, float32, True, formats.MAX_LINE
    )
    if isinstance(result, str):
        return None
    other = None
    if both:
        other = module.rank_file(
            data[start:], delimiter, tag, judgments, rel, not float32, True, formats.MAX_LINE
        )
        if isinstance(other, str):
            return None
    return tag, result, other


def _run_values(
    qrels: Qrels,
    per_topic: list[tuple[int, int, np.ndarray]],
    result: tuple[Any, ...],
    functions: list[tuple[Any, dict[str, Any]]],
    rel: int,
    depth_cap: int | None,
    every_topic: bool,
    relstring: int | None,
) -> tuple[set[str], np.ndarray, dict[str, str]] | None:
    offsets = np.frombuffer(result[0], np.int32).tolist()
    names = result[1]
    run_topics = [
        names[a:b].decode("ascii") for a, b in zip(offsets[:-1], offsets[1:], strict=True)
    ]
    num_ret = np.frombuffer(result[2], np.int32)
    topic, rank, grade = (np.frombuffer(result[i], np.int32) for i in (4, 5, 6))
    present = set(run_topics)
    if every_topic and not present.issuperset(qrels.topics):
        return None  # trec_eval -c's stand-in ranking: the direct path's
    ranked = (run_topics, num_ret, topic, rank, grade)
    values, relstrings = values_of(qrels, per_topic, *ranked, functions, rel, depth_cap, relstring)
    return present, values, relstrings


def values_of(
    qrels: Qrels,
    per_topic: list[tuple[int, int, np.ndarray]],
    run_topics: list[str],
    num_ret: np.ndarray,
    topic: np.ndarray,
    rank: np.ndarray,
    grade: np.ndarray,
    functions: list[tuple[Any, dict[str, Any]]],
    rel: int,
    depth_cap: int | None = None,
    relstring: int | None = None,
) -> tuple[np.ndarray, dict[str, str]]:
    """Values ``[function, qrels topic]`` of one ranked run (0 where the run lacks the topic).

    ``run_topics`` and ``num_ret``: the run's topics and the documents it retrieved for each;
    ``topic`` (an index into ``run_topics``), ``rank`` and ``grade``: its judged documents
    (grade >= 0), ranked in trec_eval's order. ``functions``: :func:`functions` of the measures.
    """
    # judged rows by topic, then rank
    order = np.lexsort((rank, topic))
    topic, rank, grade = topic[order], rank[order], grade[order]
    if depth_cap is not None:
        keep = rank <= depth_cap
        topic, rank, grade = topic[keep], rank[keep], grade[keep]
    bounds = np.searchsorted(topic, np.arange(len(run_topics) + 1))
    values = np.zeros((len(functions), len(qrels.topics)))
    relstrings: dict[str, str] = {}
    empty = np.zeros(0, np.int32)
    rows_of = {
        name: (int(bounds[i]), int(bounds[i + 1]), int(num_ret[i]))
        for i, name in enumerate(run_topics)
    }
    for q, name in enumerate(qrels.topics):
        a, b, retrieved = rows_of.get(name, (0, 0, 0))
        if depth_cap is not None:
            retrieved = min(retrieved, depth_cap)
        if name not in rows_of:
            continue  # (not printed: trec_eval stops at such a topic, or -c was declined above)
        num_rel, num_nonrel, ideal = per_topic[q]
        t = _Topic(
            retrieved,
            rank[a:b] if b > a else empty,
            grade[a:b] if b > a else empty,
            num_rel,
            num_nonrel,
            ideal,
            rel,
        )
        for j, (function, params) in enumerate(functions):
            values[j, q] = function(t, params)
        if relstring is not None:
            chars = ["-"] * min(retrieved, relstring)
            for r, g in zip(t.ranks.tolist(), t.grades.tolist(), strict=True):
                if r <= len(chars):
                    chars[r - 1] = ">" if g > 9 else str(g)
            relstrings[name] = "".join(chars)
    return values, relstrings


def functions(measures: list[Any]) -> list[tuple[Any, dict[str, Any]]]:
    """The function computing each measure (one :func:`takes` takes), with its parameters."""
    return [(METRICS[m.metric.name][1], dict(m.params)) for m in measures]


def per_topic(qrels: Qrels, rel: int) -> list[tuple[int, int, np.ndarray]]:
    """Each qrels topic's (num_rel, judged below ``rel``, positive grades highest first)."""
    return _per_topic(qrels, rel)
