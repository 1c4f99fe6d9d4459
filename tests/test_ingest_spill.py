"""The reader's dictionary of a collection's documents gives the same keys when it spills.

The dictionary (``_runlines.documents``, keyed by document: schema/026_document_keys.sql)
spreads its ids over buckets; past ``evalwh.store.ingest.keyed.DICTIONARY_BYTES`` of tables
in memory, it writes the buckets it used longest ago to a temporary file and reads them back
when a file has lines of them again, so that memory does not grow with the collection's
documents. Here the budget is made zero (every bucket but the one being keyed waits in the
file): on random stored documents and runs, the keys and new documents are those of a
dictionary wholly in memory (and of a Python dict), and ingests over several commands (stored
documents loaded a few at a time, a general-path file in between, large files read in pieces)
leave the warehouse as the ingest with the dictionary in memory does.
"""

from __future__ import annotations

import random
import tempfile

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalwh.errors import IngestError
from evalwh.io import _runlines, runreader
from evalwh.store.ingest import keyed
from evalwh.warehouse import Warehouse

_TOPIC = st.sampled_from(["401", "402", "7", "8", "10"])
_DOC = st.text(alphabet="abc09-", min_size=1, max_size=12)
_PAIRS = st.lists(st.tuples(_TOPIC, _DOC), max_size=60, unique=True)
_DOCS = st.lists(_DOC, max_size=60, unique=True)


def _stored(documents: list[str], batch: int) -> list[pa.Table]:
    """Stored documents with keys 1, 2, ..., in batches of ``batch`` rows."""
    table = pa.table(
        {
            "doc_id": pa.array(documents, pa.string()),
            "doc_key": pa.array(range(1, len(documents) + 1), pa.int64()),
        }
    )
    return [table.slice(at, batch) for at in range(0, len(documents), batch)]


def _keyed(documents, pairs: list[tuple[str, str]]) -> tuple[list[int], list[tuple]]:
    """The keys read_run gives a file of these pairs, and the documents it added."""
    text = "".join(f"{t} Q0 {d} {i} {i} r\n" for i, (t, d) in enumerate(pairs))
    ranked = runreader.read_run(
        _runlines,
        text.encode(),
        delimiter=" ",
        tag="r",
        judged_by=None,
        ignore_extra_fields=False,
        documents=documents,
    )
    assert not isinstance(ranked, str), ranked
    rows = ranked.rows.select(["query_id", "doc_key"]).to_pylist()
    return rows, sorted(tuple(row.values()) for row in ranked.added.to_pylist())


@settings(max_examples=60, deadline=None)
@given(
    stored=_DOCS,
    files=st.lists(_PAIRS.filter(bool), min_size=1, max_size=4),
    batch=st.integers(1, 7),
    budget=st.sampled_from([0, 300, 5000]),
)
def test_a_spilled_dictionary_gives_the_keys_of_one_in_memory(stored, files, batch, budget):
    whole = runreader.documents(_runlines, _stored(stored, batch), len(stored) + 1)
    with tempfile.TemporaryFile() as spill:
        spilled = runreader.documents(
            _runlines,
            _stored(stored, batch),
            len(stored) + 1,
            spill_fd=spill.fileno(),
            budget=budget,
        )
    # each dictionary's documents by key: new documents may take the same keys in another
    # order (one wholly in memory keys rows in their order, a spilled one bucket by bucket)
    doc_of = [dict(enumerate(stored, start=1)), dict(enumerate(stored, start=1))]
    for pairs in files:
        keyed_as = []
        for known, dictionary in zip(doc_of, (spilled, whole), strict=True):
            rows, added = _keyed(dictionary, pairs)
            assert not known.keys() & {key for _, key in added}  # new keys, each for one document
            known.update({key: doc for doc, key in added})
            keyed_as.append(
                (
                    [(row["query_id"], known[row["doc_key"]]) for row in rows],
                    sorted(doc for doc, _ in added),
                    sorted(key for _, key in added),
                )
            )
        assert keyed_as[0] == keyed_as[1]
        documents_whole, buckets, *_ = _runlines.documents_info(whole)
        documents_spilled, buckets_spilled, in_memory, held, _ = _runlines.documents_info(spilled)
        assert (documents_spilled, buckets_spilled) == (documents_whole, buckets)
        if budget == 0:  # every bucket but at most the last one used waits in the file
            assert in_memory <= 1
        assert held <= budget or in_memory <= 1


def test_a_document_stored_twice_is_refused():
    with tempfile.TemporaryFile() as spill, pytest.raises(ValueError, match="stored twice"):
        stored = _stored(["a", "b", "a"], 1)
        runreader.documents(_runlines, stored, 9, spill_fd=spill.fileno(), budget=0)


def test_a_dictionary_of_pairs_does_not_key_run_lines():
    """read_run keys lines by document only: a dictionary of pairs (the graded judgments') is refused."""
    with pytest.raises(ValueError, match="dictionary of documents"):
        _keyed(runreader.pairs(_runlines, []), [("1", "a")])


def _text(rows: list[tuple[str, str]], tag: str, seed: int, blocks: bool) -> str:
    lines = [(t, f"{t} Q0 {d} {i} {i % 5} {tag}\n") for i, (t, d) in enumerate(rows)]
    random.Random(seed).shuffle(lines)
    if blocks:
        lines.sort(key=lambda line: line[0])
    return "".join(line for _, line in lines)


def _state(wh: Warehouse) -> tuple[list[tuple], ...]:
    lines = wh.con.execute("SELECT * FROM run_results ORDER BY ALL").fetchall()
    cache = wh.con.execute(
        "SELECT collection_id, qrels_id, run_id, query_id, rank, gain, judged_so_far,"
        " relevant_so_far FROM judged_cache ORDER BY ALL"
    ).fetchall()
    documents = wh.con.execute("SELECT collection_id, doc_id FROM documents ORDER BY ALL").fetchall()
    # every line's document is in documents, once, and every key is one document's
    assert wh.con.execute(
        "SELECT count(*) FROM run_rows ANTI JOIN documents USING (doc_key)"
    ).fetchall() == [(0,)]
    assert wh.con.execute(
        "SELECT count(*) = count(DISTINCT (collection_id, doc_id)),"
        " count(*) = count(DISTINCT doc_key) FROM documents"
    ).fetchall() == [(True, True)]
    return lines, cache, documents


# 8 examples (was 12; each ~1.5 CPU s, two warehouses) of 1-3 commands of 1-3 files: both
# booleans of a file (1 in 2 each) come in nearly every example (each value missing from all
# 8 examples with probability under (1/2)^8); hypothesis draws new examples on every run.
@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    commands=st.lists(
        st.lists(
            st.tuples(_PAIRS.filter(bool), st.booleans(), st.booleans()), min_size=1, max_size=3
        ),
        min_size=1,
        max_size=3,
    ),
    seed=st.integers(0, 99),
)
def test_ingests_with_the_dictionary_spilled_store_what_in_memory_ones_do(
    tmp_path_factory, monkeypatch, commands, seed
):
    folder = tmp_path_factory.mktemp("spill", numbered=True)
    (folder / "qrels").write_text("401 0 a 1\n401 0 b 0\n402 0 a 2\n7 0 c 1\n8 0 9 0\n")
    paths = []
    for c, files in enumerate(commands):
        paths.append([])
        for f, (pairs, blocks, general) in enumerate(files):
            path = folder / f"run{c}-{f}"
            # a comment sends a file the general way (the dictionary is loaded again after it)
            text = _text(pairs, f"r{c}{f}", seed + f, blocks)
            path.write_text(("# general\n" if general else "") + text)
            paths[-1].append(path)
    states = []
    settings_in_memory = (keyed.DICTIONARY_BYTES, keyed.PIECE_BYTES, keyed.LOAD_DOCUMENTS)
    for budget, piece, batch in (settings_in_memory, (0, 60, 2)):
        monkeypatch.setattr(keyed, "DICTIONARY_BYTES", budget)
        monkeypatch.setattr(keyed, "PIECE_BYTES", piece)
        monkeypatch.setattr(keyed, "LOAD_DOCUMENTS", batch)
        with Warehouse(":memory:") as wh:
            wh.ingest_qrels(folder / "qrels", collection="c")
            for command in paths:
                wh.ingest_runs(command, collection="c")
            states.append(_state(wh))
    assert states[0] == states[1]


def test_a_bad_file_with_the_dictionary_spilled_leaves_the_warehouse_as_it_was(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(keyed, "DICTIONARY_BYTES", 0)
    monkeypatch.setattr(keyed, "LOAD_DOCUMENTS", 3)
    for name, doc in (("a", "d"), ("b", "e")):
        lines = [f"{t} Q0 {doc}{i} {i} {9 - i} {name}\n" for t in "123" for i in range(5)]
        (tmp_path / name).write_text("".join(lines))
    lines = [f"{t} Q0 d{i} {i} {9 - i} c\n" for t in "1234" for i in range(5)]
    lines[12] = "3 Q0 d2 2 high c\n"  # line 13: a score that is not a number
    (tmp_path / "c").write_text("".join(lines))
    with Warehouse(str(tmp_path / "wh.duckdb")) as wh:
        wh.ingest_runs([tmp_path / "a"], collection="c")
        before = _state(wh)
        with pytest.raises(IngestError) as error:
            wh.ingest_runs([tmp_path / "b", tmp_path / "c"], collection="c")
        assert str(error.value).startswith(f"{tmp_path / 'c'}:13:")
        assert _state(wh) == before
        wh.ingest_runs([tmp_path / "b"], collection="c")  # the keys go on after the stored ones
        assert len(_state(wh)[2]) == 10  # d0-d4 and e0-e4, each once for its three topics


# ids around the record's one-byte length (255 and more take a length of four bytes more)
_ANY_DOC = st.one_of(
    _DOC,
    st.builds(lambda c, n: c * n, st.sampled_from("ab"), st.sampled_from([254, 255, 256, 300, 1000])),
)
_ANY_PAIRS = st.lists(st.tuples(_TOPIC, _ANY_DOC), max_size=40, unique=True)
_ANY_DOCS = st.lists(_ANY_DOC, max_size=40, unique=True)


@settings(max_examples=30, deadline=None)
@given(stored=_ANY_DOCS, file=_ANY_PAIRS.filter(bool), budget=st.sampled_from([0, 1 << 30]))
def test_the_dictionary_gives_stored_documents_their_keys_and_new_ones_new_ones(stored, file, budget):
    """Held to a dict: every line gets its document's key, whatever its topic; a stored
    document's key is its own, new documents get keys from next_key, one each."""
    next_key = len(stored) + 1
    with tempfile.TemporaryFile() as spill:
        documents = runreader.documents(
            _runlines, _stored(stored, 3), next_key, spill_fd=spill.fileno(), budget=budget
        )
    known = {doc: key for key, doc in enumerate(stored, start=1)}
    rows, added = _keyed(documents, file)
    new = sorted({doc for _, doc in file} - known.keys())
    assert sorted(doc for doc, _ in added) == new
    assert sorted(key for _, key in added) == list(range(next_key, next_key + len(new)))
    key_of = {**known, **dict(added)}
    # the rows come topic by topic (first seen first), each by score descending (line i scores i)
    topics = list(dict.fromkeys(topic for topic, _ in file))
    expected = [
        (topic, key_of[doc])
        for topic in topics
        for _, doc in sorted(((i, d) for i, (t, d) in enumerate(file) if t == topic), reverse=True)
    ]
    assert [(row["query_id"], row["doc_key"]) for row in rows] == expected
