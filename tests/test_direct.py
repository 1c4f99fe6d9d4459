"""Direct evaluation of run files (evalwh eval --qrels): the same numbers and errors as ingest + eval.

evalwh.measures.direct reads run files with its C reader (evalwh.io._runlines, tested on its own in
tests/test_runlines.py) instead of storing them; every file the reader does not take goes
through the ordinary ingest. These tests hold it to the warehouse path: on random
collections (ties, unsorted files, split topics, duplicates, malformed lines, every option),
on every bad-input case of the ingest, with and without the reader, and on all TREC-8 runs
for every measure.
"""

from __future__ import annotations

import gzip
import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_ingest import BAD_RUNS, QRELS

from evalwh.measures.direct import evaluate_files
from evalwh.errors import IngestError
from evalwh.warehouse import Warehouse

# one measure per kind of context use: ranks, judged and relevant counts, m, R, N, gains
MEASURES = ["P@3", "AP", "nDCG@3", "bpref", "RR", "Rprec", "NumRet", "RBP_resid(p=0.5)@5", "A_p@3", "AA@5"]
CONDENSABLE = [m for m in MEASURES if not m.startswith(("A_", "AA", "U@"))]


def _write(path: Path, text: str, compressed: bool = False) -> Path:
    data = text.encode()
    if compressed:
        path = path.with_name(path.name + ".gz")
        data = gzip.compress(data)
    path.write_bytes(data)
    return path


# One in-memory warehouse for every call (its schema alone costs about 0.2 CPU s to apply, as
# much as a small example's ingest and evaluation): each call ingests into a collection of its
# own, as tests/test_ingest.py's property tests do, so no call sees another's rows.
_SHARED: list[Warehouse] = []
_CALLS = itertools.count()


def _through_warehouse(qrels: Path, runs: list[Path], measures: list[str], **options: object) -> pd.DataFrame:
    if not _SHARED:
        _SHARED.append(Warehouse(":memory:"))
    wh, collection = _SHARED[0], f"files{next(_CALLS)}"
    wh.ingest_qrels(qrels, collection=collection)
    wh.ingest_runs(runs, collection=collection)
    return wh.evaluate(measures, collection=collection, per_query=True, **options)


def _same(direct: pd.DataFrame, stored: pd.DataFrame) -> None:
    keys = ["run_id", "query_id", "measure"]
    assert len(direct) == len(stored)
    if not len(direct):
        return  # e.g. no topic with a relevant document
    merged = direct.merge(stored, on=keys, how="outer", suffixes=("_direct", "_stored"), indicator=True)
    assert (merged["_merge"] == "both").all(), merged[merged["_merge"] != "both"]
    a, b = merged["value_direct"].to_numpy(), merged["value_stored"].to_numpy()
    assert np.array_equal(np.isnan(a), np.isnan(b))
    assert np.allclose(a[~np.isnan(a)], b[~np.isnan(b)], rtol=0, atol=1e-12)


def _agree(qrels, runs, measures, **options) -> None:
    """The direct path gives what the warehouse gives: the same numbers, or the same refusal."""
    try:
        stored = _through_warehouse(qrels, runs, measures, **options)
    except IngestError as error:
        with pytest.raises(IngestError) as raised:
            evaluate_files(qrels, runs, measures, per_query=True, **options)
        assert str(raised.value) == str(error)
        return
    _same(evaluate_files(qrels, runs, measures, per_query=True, **options), stored)


# -- random collections ---------------------------------------------------------------------

_DOCS = [f"d{i}" for i in range(12)] + ["D1", "é", "d10x", "a" * 20]


@st.composite
def _run_text(draw: st.DrawFn, tag: str) -> str:
    """A run: mostly sorted by score, with ties; sometimes unsorted, split or duplicated."""
    separator = draw(st.sampled_from([" ", "\t"]))
    lines: list[list[str]] = []
    for topic in draw(st.lists(st.sampled_from(["401", "402", "403", "7"]), min_size=1, max_size=3, unique=True)):
        docs = draw(st.lists(st.sampled_from(_DOCS), min_size=1, max_size=10, unique=True))
        scores = draw(st.lists(st.sampled_from(["3", "2.5", "2.50", "1", "1e-3", "-1", "0.1", "0.30000000001"]), min_size=len(docs), max_size=len(docs)))
        block = [[topic, "Q0", doc, str(i), score, tag] for i, (doc, score) in enumerate(zip(docs, scores, strict=True))]
        if draw(st.integers(0, 9)) > 0:  # most files come in score order
            block.sort(key=lambda f: -float(f[4]))
        lines += block
    twist = draw(st.sampled_from(["none"] * 6 + ["split", "duplicate", "swap", "bad", "comment"]))
    if twist == "split" and len(lines) > 2:
        lines.append(lines.pop(0))
    elif twist == "duplicate":
        lines.append(list(lines[draw(st.integers(0, len(lines) - 1))]))
    elif twist == "swap" and len(lines) > 1:
        i = draw(st.integers(0, len(lines) - 2))
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    elif twist == "bad":
        lines[draw(st.integers(0, len(lines) - 1))][4] = draw(st.sampled_from(["x", "nan", "+-1"]))
    text = "\n".join(separator.join(f) for f in lines) + "\n"
    if twist == "comment":
        text = "# a comment\n" + text
    return text


@st.composite
def _collection(draw: st.DrawFn) -> tuple[str, list[str]]:
    qrels = []
    for topic in ["401", "402", "403", "7"]:
        for doc in draw(st.lists(st.sampled_from(_DOCS), max_size=8, unique=True)):
            qrels.append(f"{topic} 0 {doc} {draw(st.sampled_from(['0', '1', '2', '-1']))}")
    runs = [draw(_run_text(f"run{i}")) for i in range(draw(st.integers(1, 4)))]
    return "\n".join(qrels) + "\n", runs


# 20 examples (each ~1.2 CPU s): each option value (at worst 1 in 3) is drawn in 20 with
# probability 1 - (2/3)^20 > 0.9996, each twist of a run (1 in 11, 2.5 runs an example) in
# about 99 % (and again in tests/test_direct_pieces.py); hypothesis draws new examples on every run.
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    collection=_collection(),
    options=st.fixed_dictionaries(
        {
            "rel": st.sampled_from([1, 2]),
            "float32_ties": st.booleans(),
            "depth_cap": st.sampled_from([None, 2]),
            "averaging": st.sampled_from(["default", "trec_eval_c", "trec_eval_default"]),
            "unjudged": st.sampled_from(["nonrelevant", "nonrelevant", "condensed"]),
        }
    ),
    compressed=st.booleans(),
)
def test_random_collections_give_the_warehouse_numbers(tmp_path_factory, collection, options, compressed):
    folder = tmp_path_factory.mktemp("direct", numbered=True)
    qrels_text, run_texts = collection
    qrels = _write(folder / "qrels", qrels_text)
    runs = [_write(folder / f"run{i}", text, compressed) for i, text in enumerate(run_texts)]
    measures = CONDENSABLE if options["unjudged"] == "condensed" else MEASURES
    _agree(qrels, runs, measures, **options)


# -- without the compiled reader ---------------------------------------------------------------


@pytest.fixture
def no_reader(monkeypatch):
    """As where evalwh.io._runlines was not built: every file takes the ingest's path."""
    monkeypatch.setenv("EVALWH_NO_READER", "1")


# 6 examples (was 10; each ~1 CPU s): without the reader every file takes the ingest's path
# (no choice between paths left to draw); a twist of a run comes in 6 examples with
# probability about 3 in 4 each, and every twist is drawn with the reader above.
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(collection=_collection())
def test_without_the_reader_the_numbers_are_the_same(tmp_path_factory, no_reader, collection):
    folder = tmp_path_factory.mktemp("plain", numbered=True)
    qrels_text, run_texts = collection
    qrels = _write(folder / "qrels", qrels_text)
    runs = [_write(folder / f"run{i}", text) for i, text in enumerate(run_texts)]
    try:
        stored = _through_warehouse(qrels, runs, MEASURES)
    except IngestError as error:
        with pytest.raises(IngestError) as raised:
            evaluate_files(qrels, runs, MEASURES, per_query=True)
        assert str(raised.value) == str(error)
        return
    _same(evaluate_files(qrels, runs, MEASURES, per_query=True), stored)


def test_the_reader_is_built():
    """The wheel and the editable install compile it (it is optional only for pip's sake)."""
    from evalwh.io import runreader

    assert runreader.reader() is not None


# -- bad input: the ingest's messages ----------------------------------------------------------


@pytest.mark.parametrize("reader", [True, False])
@pytest.mark.parametrize("name", list(BAD_RUNS))
def test_bad_run_files_fail_as_in_the_ingest(tmp_path, monkeypatch, name, reader):
    if not reader:
        monkeypatch.setenv("EVALWH_NO_READER", "1")
    content, message = BAD_RUNS[name]
    run = tmp_path / "bad.txt"
    run.write_bytes(content if isinstance(content, bytes) else content.encode())
    qrels = _write(tmp_path / "qrels", QRELS)
    with pytest.raises(IngestError) as raised:
        evaluate_files(qrels, [run], ["P@10"])
    assert str(raised.value) == f"{run}{message}"


@pytest.mark.parametrize(
    "content",
    [
        gzip.compress(b"401 Q0 d1 1 2 r\n" * 50)[:-20],
        b"not gzip at all\n",
        (lambda d: d[:20] + b"\xff" * 10 + d[30:])(gzip.compress(b"401 Q0 d1 1 2 r\n" * 500)),
    ],
    ids=["truncated", "not gzip", "bad deflate block"],
)
def test_a_broken_gz_file_fails_as_in_the_ingest(tmp_path, content):
    """The reader inflates with ISA-L; whatever it cannot read, the ingest names."""
    qrels = _write(tmp_path / "qrels", QRELS)
    run = tmp_path / "run.gz"
    run.write_bytes(content)
    with Warehouse(":memory:") as wh, pytest.raises(IngestError) as expected:
        wh.ingest_runs([run], collection="files")
    with pytest.raises(IngestError) as raised:
        evaluate_files(qrels, [run], ["P@10"])
    assert str(raised.value) == str(expected.value)


def test_a_good_file_beside_a_bad_one_still_fails(tmp_path):
    qrels = _write(tmp_path / "qrels", QRELS)
    good = _write(tmp_path / "good", "401 Q0 d1 1 2 g\n")
    bad = _write(tmp_path / "bad", "401 Q0 d1 1 2 b\n401 Q0 d2 2 x b\n")
    with pytest.raises(IngestError, match="bad:2: score 'x' is not a finite number"):
        evaluate_files(qrels, [good, bad], ["P@10"])


def test_run_ids_come_from_the_tags_and_must_be_unique(tmp_path):
    qrels = _write(tmp_path / "qrels", QRELS)
    one = _write(tmp_path / "one", "401 Q0 d1 1 2 same\n")
    two = _write(tmp_path / "two", "401 Q0 d2 1 2 same\n")
    with pytest.raises(IngestError, match="run 'same' is also in"):
        evaluate_files(qrels, [one, two], ["P@10"])


# -- real runs -----------------------------------------------------------------------------------


def test_trec8_every_run_and_measure_as_the_warehouse(trec8_ingest):
    from conftest import TREC8

    runs = sorted((TREC8 / "runs").glob("input.*.gz"))
    measures = ["all_trec", "A_p@10", "A_p@100", "AA@1000", "A_r@100", "RBP(p=0.8)@20", "RBP_resid(p=0.8)@20", "bpref10", "RankEff"]
    direct = evaluate_files(TREC8 / "trec8.qrels", runs, measures, per_query=True)
    with Warehouse(trec8_ingest[0], read_only=True) as wh:
        stored = wh.evaluate(measures, collection="trec8", per_query=True)
    assert len(direct) == len(stored) > 300_000
    _same(direct, stored)
