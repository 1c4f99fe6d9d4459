"""Direct evaluation of run files (evalwh eval --qrels): the same numbers and errors as ingest + eval.

evalwh.direct ranks run files from their file order (evalwh.fastrank) instead of storing and
sorting them; everything it does not take goes through the ordinary ingest. These tests hold
it to the warehouse path: on random collections (ties, unsorted files, split topics,
duplicates, malformed lines, every option), on every bad-input case of the ingest, and on
all TREC-8 runs for every measure.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_ingest import BAD_RUNS, QRELS

from evalwh import fastrank
from evalwh.direct import evaluate_files
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


def _through_warehouse(qrels: Path, runs: list[Path], measures: list[str], **options: object) -> pd.DataFrame:
    with Warehouse(":memory:") as wh:
        wh.ingest_qrels(qrels, collection="files")
        wh.ingest_runs(runs, collection="files")
        return wh.evaluate(measures, collection="files", per_query=True, **options)


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


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
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
    try:
        stored = _through_warehouse(qrels, runs, measures, **options)
    except IngestError as error:
        with pytest.raises(IngestError) as raised:
            evaluate_files(qrels, runs, measures, per_query=True, **options)
        assert str(raised.value) == str(error)
        return
    _same(evaluate_files(qrels, runs, measures, per_query=True, **options), stored)


# -- the ranking itself -----------------------------------------------------------------------


_RANKING = Warehouse(":memory:")  # only its trec_ranked macro is used


@settings(max_examples=200, deadline=None)
@given(
    lists=st.lists(
        st.lists(st.tuples(st.sampled_from(_DOCS), st.sampled_from([3.0, 2.0, 2.0000001, 1.0, 0.5])), max_size=12),
        min_size=1,
        max_size=4,
    ),
    float32=st.booleans(),
)
def test_ranks_from_file_order_equal_trec_ranked(lists, float32):
    """Every line judged: fastrank's ranks against the SQL macro on the same lines."""
    rows = []
    for topic, items in enumerate(lists):
        seen = {}
        for doc, score in items:
            seen.setdefault(doc, score)  # one line per document
        block = sorted(seen.items(), key=lambda item: -np.float32(item[1]) if float32 else -item[1])
        rows += [(0, str(topic), doc, score) for doc, score in block]
    if not rows:
        return
    frame = pd.DataFrame(rows, columns=["file_index", "query_id", "doc_id", "score"])
    query_id, doc_id = pa.array(frame["query_id"]), pa.array(frame["doc_id"])
    key = fastrank.sort_keys(frame["score"].to_numpy(), float32)
    blocks = fastrank.find_blocks(frame["file_index"].to_numpy(), query_id)
    hashes = pd.util.hash_array(frame["doc_id"].to_numpy()).astype(np.uint64)
    assert not fastrank.refused_files(frame["file_index"].to_numpy(), query_id, doc_id, key, hashes, blocks)
    ranks = fastrank.judged_ranks(np.arange(len(frame)), doc_id, key, blocks)
    _RANKING.con.register("lines", frame.assign(collection_id="c", run_id="r"))
    try:
        expected = _RANKING.con.execute(
            "SELECT query_id, doc_id, rank FROM trec_ranked('lines', ?) ORDER BY query_id, rank", [float32]
        ).fetchall()
    finally:
        _RANKING.con.unregister("lines")
    got = sorted(zip(frame["query_id"], frame["doc_id"], ranks.tolist(), strict=True), key=lambda r: (r[0], r[2]))
    assert got == expected


def test_refusals_name_the_files_that_are_not_in_order():
    frame = pd.DataFrame(
        [
            (0, "1", "a", 2.0), (0, "1", "b", 1.0),                      # fine
            (1, "1", "a", 1.0), (1, "1", "b", 2.0),                      # score rises
            (2, "1", "a", 2.0), (2, "2", "b", 2.0), (2, "1", "c", 1.0),  # topic 1 split
            (3, "1", "a", 2.0), (3, "1", "b", 1.5), (3, "1", "a", 1.0),  # duplicate
            (4, "1", "a", 2.0), (4, "1", "b", 2.0),                      # a tie: fine
        ],
        columns=["file_index", "query_id", "doc_id", "score"],
    )  # fmt: skip
    query_id, doc_id = pa.array(frame["query_id"]), pa.array(frame["doc_id"])
    key = frame["score"].to_numpy()
    blocks = fastrank.find_blocks(frame["file_index"].to_numpy(), query_id)
    same_hash = np.zeros(len(frame), dtype=np.uint64)  # every line a candidate: compared exactly
    refused = fastrank.refused_files(frame["file_index"].to_numpy(), query_id, doc_id, key, same_hash, blocks)
    assert refused == {1, 2, 3}


# -- bad input: the ingest's messages ----------------------------------------------------------


@pytest.mark.parametrize("name", list(BAD_RUNS))
def test_bad_run_files_fail_as_in_the_ingest(tmp_path, name):
    content, message = BAD_RUNS[name]
    run = tmp_path / "bad.txt"
    run.write_bytes(content if isinstance(content, bytes) else content.encode())
    qrels = _write(tmp_path / "qrels", QRELS)
    with pytest.raises(IngestError) as raised:
        evaluate_files(qrels, [run], ["P@10"])
    assert str(raised.value) == f"{run}{message}"


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
