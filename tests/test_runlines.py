"""evalwh.io._runlines, the direct evaluation's run-file reader (C), held to DuckDB.

It must rank as the ``trec_ranked`` macro does, read every score it accepts as DuckDB's DOUBLE
cast does, and refuse (hand to the ingest) every file that is not in its plain form. That
the numbers of whole evaluations agree with the warehouse is tests/test_direct.py's part.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalwh.io import _runlines
from evalwh.io.runreader import judgments_from_arrow
from evalwh.warehouse import Warehouse

_RANKING = Warehouse(":memory:")  # its trec_ranked macro, and DuckDB's casts


def _judgments(rows: list[tuple[str, str, int]]):
    table = pa.table(
        {
            "query_id": pa.array([r[0] for r in rows], pa.string()),
            "doc_id": pa.array([r[1] for r in rows], pa.string()),
            "grade": pa.array([r[2] for r in rows], pa.int32()),
        }
    )
    return judgments_from_arrow(_runlines, table)


def _rank(
    text: str,
    judgments,
    *,
    tag: str = "r",
    delimiter: str = " ",
    rel: int = 1,
    float32: bool = False,
    extra: bool = False,
):
    return _runlines.rank_file(text.encode(), delimiter, tag, judgments, rel, float32, extra)


def _names(offsets: bytes, data: bytes) -> list[str]:
    """The topic ids from their Arrow buffers."""
    at = np.frombuffer(offsets, np.int32)
    return [data[a:b].decode() for a, b in zip(at[:-1], at[1:], strict=True)]


def _rows(result) -> list[tuple[str, int, int, int, int]]:
    """(topic, rank, grade, judged_so_far, relevant_so_far) of each judged line."""
    offsets, data, _, _, topic, rank, grade, judged, relevant = result
    names = _names(offsets, data)
    columns = [np.frombuffer(b, np.int32).tolist() for b in (topic, rank, grade, judged, relevant)]
    return [(names[t], r, g, j, v) for t, r, g, j, v in zip(*columns, strict=True)]


# -- ranking ---------------------------------------------------------------------------------

_IDS = st.text(alphabet="abAB09-.", min_size=1, max_size=4)  # prefixes of one another, mixed case
_SCORES = st.sampled_from(
    ["3", "2", "2.0", "2.0000001", "2.00000001", "1", "-0", "0", "0.5", "1e-3", "-1"]
    # beyond float32's range: +-inf as floats, tied (schema 022)
    + ["1e39", "2e39", "-1e39", "3.5e38"]
)


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(
        st.tuples(st.sampled_from(["401", "402", "7"]), _IDS, _SCORES), min_size=1, max_size=40
    ),
    judged=st.sets(st.integers(0, 39)),
    grades=st.lists(st.integers(-1, 3), min_size=40, max_size=40),
    float32=st.booleans(),
    rel=st.sampled_from([1, 2]),
)
def test_ranks_and_running_counts_are_trec_rankeds(lines, judged, grades, float32, rel):
    """Any order (sorted or not, topics interleaved), ties, some lines judged."""
    seen: set[tuple[str, str]] = set()
    lines = [
        line
        for line in lines
        if (line[0], line[1]) not in seen and not seen.add((line[0], line[1]))
    ]
    qrels = [(lines[i][0], lines[i][1], grades[i]) for i in sorted(judged) if i < len(lines)]
    text = "".join(f"{q} Q0 {d} {i} {s} r\n" for i, (q, d, s) in enumerate(lines))
    result = _rank(text, _judgments(qrels), rel=rel, float32=float32)
    got = _rows(result)

    frame = pd.DataFrame(lines, columns=["query_id", "doc_id", "score"]).assign(
        score=lambda f: f["score"].astype(float), collection_id="c", run_id="r"
    )
    _RANKING.con.register("lines", frame)
    _RANKING.con.register(
        "judged",
        pd.DataFrame(qrels, columns=["query_id", "doc_id", "grade"]).astype({"grade": "int64"}),
    )
    try:
        expected = _RANKING.con.execute(
            """
            SELECT query_id, rank, grade,
                   count(*) OVER w AS judged_so_far,
                   count(*) FILTER (WHERE grade >= $rel) OVER w AS relevant_so_far
            FROM trec_ranked('lines', $float32) JOIN judged USING (query_id, doc_id)
            WHERE grade >= 0
            WINDOW w AS (PARTITION BY query_id ORDER BY rank)
            """,
            {"rel": rel, "float32": float32},
        ).fetchall()
    finally:
        _RANKING.con.unregister("lines")
        _RANKING.con.unregister("judged")
    assert sorted(got) == sorted(expected)
    # relevant rows first, then the others, each part in (topic, rank) order: topics as
    # they first appear, ranks rising within each
    relevant = result[3]
    assert all(row[2] >= rel for row in got[:relevant]) and all(row[2] < rel for row in got[relevant:])
    topics_in_order = list(dict.fromkeys(q for q, *_ in lines))
    for part in (got[:relevant], got[relevant:]):
        assert part == sorted(part, key=lambda row: (topics_in_order.index(row[0]), row[1]))


def test_num_ret_counts_every_line_of_a_topic():
    result = _rank("2 Q0 a 1 1 r\n1 Q0 b 1 1 r\n2 Q0 c 2 0 r\n", _judgments([]))
    offsets, data, num_ret, *_ = result
    assert _names(offsets, data) == ["2", "1"]
    assert np.frombuffer(num_ret, np.int32).tolist() == [2, 1]


def test_a_large_tie_of_judged_documents_orders_by_doc_descending():
    docs = [f"d{i:04d}" for i in range(3000)]
    text = "".join(f"1 Q0 {d} 1 0.5 r\n" for d in docs)
    rows = _rows(_rank(text, _judgments([("1", d, 1) for d in docs[::3]])))
    assert [r[1] for r in rows] == [3000 - i for i in range(0, 3000, 3)][::-1]


# -- scores ----------------------------------------------------------------------------------

_PLAIN_SCORES = st.from_regex(r"\A-?[0-9]{0,25}(\.[0-9]{0,25})?([eE][+-]?[0-9]{1,4})?\Z")


@settings(max_examples=1000, deadline=None)
@given(
    text=st.one_of(
        _PLAIN_SCORES, st.floats(allow_nan=False).map(repr), st.floats(width=32).map(str)
    )
)
def test_every_score_it_reads_is_duckdbs_double(text):
    ours = _runlines.parse_score(text)
    ((theirs,),) = _RANKING.con.execute("SELECT TRY_CAST($s AS DOUBLE)", {"s": text}).fetchall()
    if ours is None:
        # refused: not of the plain form (the ingest decides), or not finite (the ingest refuses)
        assert theirs is None or not math.isfinite(theirs) or not _is_plain(text)
    else:
        assert theirs is not None and math.isfinite(theirs)
        assert ours == theirs and math.copysign(1, ours) == math.copysign(1, theirs), (
            text,
            ours,
            theirs,
        )


def _is_plain(text: str) -> bool:
    return re.fullmatch(r"-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", text) is not None


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("15.927", 15.927),
        ("-0.001", -0.001),
        ("0.12345678901234567", 0.12345678901234566),  # 17 digits: the slow path
        ("1e22", 1e22),
        ("1e23", 1e23),
        ("123456789012345678901234567890", 1.2345678901234568e29),
        ("1.", 1.0),
        (".5", 0.5),
        ("1e-400", 0.0),
        ("+1", None),  # a plus sign: the ingest decides
        ("1e400", None),  # not finite
        ("nan", None),
        ("inf", None),
        ("0x10", None),
        ("", None),
        ("-", None),
        (".", None),
        ("1e", None),
    ],
)
def test_scores(text, value):
    assert _runlines.parse_score(text) == value


# -- refusals: files the ingest decides ----------------------------------------------------------

GOOD = "1 Q0 a 1 2 r\n1 Q0 b 2 1 r\n"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("# comment\n" + GOOD, "a comment"),
        (GOOD + "\n", "an empty line"),
        ("1 Q0 a 1 2 r\n\n1 Q0 b 2 1 r\n", "an empty line"),
        ("1 Q0 a 1 2 r \n", "an empty field"),
        ("1  Q0 a 1 2 r\n", "an empty field"),
        (" 1 Q0 a 1 2 r\n", "an empty field"),
        ("1 Q0 a 1 2 r\r\n", "a byte other than printable ASCII and the delimiter"),
        ("1 Q0 a\t1 2 r\n", "a byte other than printable ASCII and the delimiter"),
        ("1 Q0 é 1 2 r\n", "a byte other than printable ASCII and the delimiter"),
        ("\ufeff1 Q0 a 1 2 r\n", "a byte other than printable ASCII and the delimiter"),
        ("1 Q0 a 1 2 r\x00\n", "a byte other than printable ASCII and the delimiter"),
        ("1 Q0 a 1 2\n", "a line of other than six fields"),
        ("1 Q0 a 1 2 r x\n", "a line of other than six fields"),
        ("1 Q0 a 1 2 s\n", "another tag"),
        ("1 Q0 a 1 +2 r\n", "a score of another form"),
        ("1 Q0 a 1 nan r\n", "a score of another form"),
        ("1 Q0 a 1 1e999 r\n", "a score of another form"),
        ("1 Q0 a 1 2 r\n1 Q0 a 2 1 r\n", "a document twice in a topic"),
        ("1 Q0 a 1 2 r\n2 Q0 b 1 2 r\n1 Q0 a 2 1 r\n", "a document twice in a topic"),
        ("", "no lines"),
    ],
)
def test_what_it_leaves_to_the_ingest(text, reason):
    assert _rank(text, _judgments([])) == reason


def test_tabs_extra_fields_and_a_last_line_without_newline_are_read():
    judgments = _judgments([("1", "a", 1), ("1", "b", 0)])
    assert _rows(_rank(GOOD.replace(" ", "\t"), judgments, delimiter="\t")) == [
        ("1", 1, 1, 1, 1),
        ("1", 2, 0, 2, 1),
    ]
    assert _rows(_rank("1 Q0 a 1 2 r x y\n1 Q0 b 2 1 r z", judgments, extra=True)) == [
        ("1", 1, 1, 1, 1),
        ("1", 2, 0, 2, 1),
    ]


def test_negative_grades_are_unjudged_and_judgments_must_be_unique():
    assert _rows(_rank(GOOD, _judgments([("1", "a", -1), ("1", "b", 2)]))) == [("1", 2, 2, 1, 1)]
    with pytest.raises(ValueError, match="topic 1, document a is judged twice"):
        _judgments([("1", "a", 1), ("1", "a", 0)])


def test_many_topics_and_full_tables_find_every_judgment():
    """3,000 topics (the table of topics grows from 1,024 slots three times), judgments of topics
    interleaved, a topic of 1,000 judgments (its table 2/3 full): every judged line gets its
    grade from the qrels, no unjudged line is kept, and a duplicate is still found."""
    rng = np.random.default_rng(5)
    qrels = {(str(t), f"d{t}-{k}"): int(rng.integers(0, 3)) for t in range(3000) for k in range(3)}
    qrels |= {("big", f"b{k}"): int(rng.integers(0, 3)) for k in range(1000)}
    rows = [(t, d, g) for (t, d), g in qrels.items()]
    order = rng.permutation(len(rows))
    judgments = _judgments([rows[i] for i in order])
    lines = [
        f"{t} Q0 {d} 1 {3 - k} r" for t in range(3000) for k, d in enumerate([f"d{t}-1", f"x{t}"])
    ]
    lines += [f"big Q0 b{k} 1 {2000 - k} r" for k in range(0, 1000, 3)] + ["big Q0 nope 1 0 r"]
    ranked = _rows(_rank("\n".join(lines) + "\n", judgments))
    assert sorted((t, g) for t, _, g, _, _ in ranked if t != "big") == sorted(
        (str(t), qrels[(str(t), f"d{t}-1")]) for t in range(3000)
    )
    assert sorted(g for t, _, g, _, _ in ranked if t == "big") == sorted(
        qrels[("big", f"b{k}")] for k in range(0, 1000, 3)
    )
    with pytest.raises(ValueError, match="topic 2999, document d2999-2 is judged twice"):
        _judgments([*rows, ("2999", "d2999-2", 1)])


@settings(max_examples=500, deadline=None)
@given(
    data=st.one_of(
        st.binary(max_size=80), st.text(alphabet="ab1 Q0.-e\n\t#r", max_size=80).map(str.encode)
    ),
    delimiter=st.sampled_from([" ", "\t"]),
)
def test_any_bytes_give_a_result_or_a_reason(data, delimiter):
    """Bytes never crash it; what it accepts has its lines counted once each."""
    result = _runlines.rank_file(data, delimiter, "r", _judgments([("1", "a", 1)]), 1, False, False)
    if isinstance(result, str):
        return
    offsets, data, num_ret, *_ = result
    names = _names(offsets, data)
    assert sum(np.frombuffer(num_ret, np.int32)) == data.rstrip(b"\n").count(b"\n") + 1
    assert len(names) == len(set(names))
