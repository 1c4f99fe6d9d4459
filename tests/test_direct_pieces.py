"""The direct path reads a plain run file a piece of whole topics at a time (evalwh.io.runreader.pieces).

Ranking each piece apart must give what ranking the file whole gives: a piece ends where a
topic does, a file whose topics are not one after another has its lines sorted into pieces
by topic first (evalwh.io.runreader.topic_pieces), and a bad line in any piece sends it to
the general path, which names it as the ingest does. Checked on random texts, and with pieces of a few lines against the
warehouse on random collections (every twist of tests/test_direct.py).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_direct import CONDENSABLE, MEASURES, _agree, _collection, _same, _through_warehouse, _write

from evalwh.measures import direct
from evalwh.io import _runlines, runreader
from evalwh.measures.direct import evaluate_files
from evalwh.errors import IngestError


def _topic(line: bytes, delimiter: bytes) -> bytes:
    return line.split(delimiter, 1)[0]


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    topics=st.lists(st.sampled_from(["1", "2", "10", "401", "x" * 30]), min_size=0, max_size=12),
    lengths=st.lists(st.integers(1, 6), min_size=12, max_size=12),
    delimiter=st.sampled_from([" ", "\t"]),
    size=st.integers(1, 300),
    newline_at_end=st.booleans(),
)
def test_pieces_are_the_file_cut_where_topics_end(
    tmp_path, topics, lengths, delimiter, size, newline_at_end
):
    lines = [
        delimiter.join([topic, "Q0", f"d{i}", str(i), "1.5", "r"])
        for topic, count in zip(topics, lengths, strict=False)
        for i in range(count)
    ]
    text = "\n".join(lines).encode() + (b"\n" if newline_at_end and lines else b"")
    path = tmp_path / "run"
    path.write_bytes(text)
    with open(path, "rb", buffering=0) as handle:
        pieces = list(runreader.pieces(handle.fileno(), delimiter.encode(), size))
    assert b"".join(pieces) == text
    assert all(pieces)
    for piece, following in zip(pieces, pieces[1:], strict=False):
        assert piece.endswith(b"\n")
        last = piece[:-1].rsplit(b"\n", 1)[-1]
        assert _topic(last, delimiter.encode()) != _topic(following, delimiter.encode())


@pytest.fixture
def small_pieces(monkeypatch):
    """Pieces of a few lines, so that the random files below are cut into several."""
    monkeypatch.setattr(direct._Reader, "_PIECE", 40)


# 15 examples (each ~1.3 CPU s: a warehouse ingest and evaluation of 10 measures besides the
# direct one): each of the four (rel, condensed) combinations is drawn with probability
# 1 - (3/4)^15 > 0.98, files cut into several 40-byte pieces in every example; every twist of a
# run file is also drawn by tests/test_direct.py; hypothesis draws new examples on every run.
@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(collection=_collection(), rel=st.sampled_from([1, 2]), condensed=st.booleans())
def test_files_read_in_pieces_give_the_warehouse_numbers(
    tmp_path_factory, small_pieces, collection, rel, condensed
):
    folder = tmp_path_factory.mktemp("pieces", numbered=True)
    qrels_text, run_texts = collection
    qrels = _write(folder / "qrels", qrels_text)
    runs = [_write(folder / f"run{i}", text) for i, text in enumerate(run_texts)]
    options = {"rel": rel, "unjudged": "condensed" if condensed else "nonrelevant"}
    measures = CONDENSABLE if condensed else MEASURES
    _agree(qrels, runs, measures, **options)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lines=st.lists(
        st.tuples(st.sampled_from(["1", "2", "10", "401", "x" * 30, ""]), st.integers(0, 99)),
        min_size=0,
        max_size=40,
    ),
    delimiter=st.sampled_from([" ", "\t"]),
    size=st.integers(1, 300),
    newline_at_end=st.booleans(),
)
def test_topic_pieces_hold_whole_topics_in_their_order(tmp_path, lines, delimiter, size, newline_at_end):
    import hashlib

    rows = [delimiter.join([topic, "Q0", f"d{i}", "1", "1.5", "r"]).encode() for topic, i in lines]
    text = b"\n".join(rows) + (b"\n" if newline_at_end and rows else b"")
    path = tmp_path / "run"
    path.write_bytes(text)
    digest = hashlib.sha256()
    with open(path, "rb", buffering=0) as handle:
        pieces = list(runreader.topic_pieces(_runlines, handle.fileno(), delimiter.encode(), size, digest))
    assert digest.hexdigest() == hashlib.sha256(text).hexdigest()
    assert all(piece.endswith(b"\n") for piece in pieces)
    split = [piece[:-1].split(b"\n") for piece in pieces]
    assert sorted(line for part in split for line in part) == sorted(rows)
    where: dict[bytes, int] = {}
    for index, part in enumerate(split):
        for line in part:
            assert where.setdefault(_topic(line, delimiter.encode()), index) == index
    for topic in where:  # each topic's lines in the file's order
        assert [r for r in rows if _topic(r, delimiter.encode()) == topic] == [
            line for line in split[where[topic]] if _topic(line, delimiter.encode()) == topic
        ]


def test_a_topic_in_two_pieces_is_read_by_topic(tmp_path, small_pieces, monkeypatch):
    """Topic 2 comes back after topic 1: its lines are sorted into a piece with the others'."""
    qrels = _write(tmp_path / "qrels", "2 0 c 1\n2 0 z 1\n1 0 a 1\n")
    lines = ["2 Q0 c 1 5 r", "2 Q0 y 2 4 r", "1 Q0 a 1 3 r", "1 Q0 x 2 2.8 r", "2 Q0 z 3 1 r"]
    run = _write(tmp_path / "run", "\n".join(lines) + "\n")
    with open(run, "rb", buffering=0) as handle:  # (two pieces, topic 2 in both)
        assert len(list(runreader.pieces(handle.fileno(), b" ", direct._Reader._PIECE))) == 2
    whole = []
    read_bytes = direct.formats.read_bytes
    monkeypatch.setattr(
        direct.formats, "read_bytes", lambda path: whole.append(path) or read_bytes(path)
    )
    frame = evaluate_files(qrels, [run], ["AP", "NumRet"], per_query=True)
    assert whole.count(run) == 0  # never read whole
    _same(frame, _through_warehouse(qrels, [run], ["AP", "NumRet"]))
    # topic 2 ranked as one list: c (5), y (4), z (1); AP = (1/1 + 2/3) / 2
    values = frame.set_index(["query_id", "measure"])["value"]
    assert values[("2", "AP")] == pytest.approx((1 + 2 / 3) / 2, abs=1e-12)
    assert values[("2", "NumRet")] == 3


def test_a_bad_line_in_a_later_piece_is_named_as_the_ingest_names_it(tmp_path, small_pieces):
    qrels = _write(tmp_path / "qrels", "1 0 a 1\n2 0 c 1\n")
    lines = [f"1 Q0 d{i} {i} 1 r" for i in range(1, 8)] + ["2 Q0 c 1 5 r", "2 Q0 y 2 oops r"]
    run = _write(tmp_path / "run", "\n".join(lines) + "\n")
    with pytest.raises(IngestError) as stored:
        _through_warehouse(qrels, [run], ["AP"])
    with pytest.raises(IngestError) as raised:
        evaluate_files(qrels, [run], ["AP"])
    assert str(raised.value) == str(stored.value)
    assert os.path.basename(str(run)) in str(raised.value)
