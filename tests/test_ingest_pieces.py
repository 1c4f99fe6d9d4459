"""Large run files are ingested a piece of whole topics at a time, with the result of reading them whole.

``evalwh.store.ingest.keyed.PIECE_BYTES`` is made tiny here, so that every file of a few lines is read in
many pieces. On random runs (topics in blocks, or interleaved so that a topic falls into two
pieces and the file's lines are sorted into pieces by topic first), the warehouse holds the same lines, ranks, cache and keys
as an ingest that reads every file whole; a bad line in a later piece is named as ever.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalwh.store.ingest import keyed
from evalwh.errors import IngestError
from evalwh.warehouse import Warehouse

_LINES = st.lists(
    st.tuples(st.sampled_from(["401", "402", "7", "8"]), st.text(alphabet="abc09", min_size=1, max_size=3),
              st.sampled_from(["3", "2", "1.5", "1", "0"])),
    min_size=1,
    max_size=40,
)


def _text(rows: list[tuple[str, str, str]], tag: str, blocks: bool, seed: int) -> str:
    seen: set[tuple[str, str]] = set()
    lines = []
    for index, (topic, doc, score) in enumerate(rows):
        if (topic, doc) not in seen:
            seen.add((topic, doc))
            lines.append((topic, f"{topic} Q0 {doc} {index} {score} {tag}\n"))
    random.Random(seed).shuffle(lines)
    if blocks:  # topics one after another, as most run files are
        lines.sort(key=lambda line: line[0])
    return "".join(line for _, line in lines)


def _state(wh: Warehouse) -> tuple[list[tuple], list[tuple], list[tuple]]:
    lines = wh.con.execute("SELECT * FROM run_results ORDER BY ALL").fetchall()
    cache = wh.con.execute(
        "SELECT collection_id, qrels_id, run_id, query_id, rank, gain, judged_so_far, relevant_so_far"
        " FROM judged_cache ORDER BY ALL"
    ).fetchall()
    topics = wh.con.execute(
        "SELECT collection_id, run_id, query_id, num_ret FROM run_topics ORDER BY ALL"
    ).fetchall()
    return lines, cache, topics


# 10 examples (was 20; each ~1 CPU s, two warehouses) of 1-3 runs: blocks and scattered
# topics (1 in 2 each) in nearly every example (either missing from all 10 with probability
# under (1/2)^10); hypothesis draws new examples on every run.
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(runs=st.lists(st.tuples(_LINES, st.booleans()), min_size=1, max_size=3), seed=st.integers(0, 99))
def test_pieces_give_what_whole_files_give(tmp_path_factory, monkeypatch, runs, seed):
    folder = tmp_path_factory.mktemp("pieces", numbered=True)
    paths = []
    for index, (rows, blocks) in enumerate(runs):
        paths.append(folder / f"run{index}")
        paths[-1].write_text(_text(rows, f"r{index}", blocks, seed + index))
    (folder / "qrels").write_text("401 0 a 1\n401 0 b 0\n402 0 a 2\n7 0 c 1\n8 0 9 0\n")
    states = []
    for piece in (keyed.PIECE_BYTES, 40):
        monkeypatch.setattr(keyed, "PIECE_BYTES", piece)
        with Warehouse(":memory:") as wh:
            wh.ingest_qrels(folder / "qrels", collection="c")
            wh.ingest_runs(paths, collection="c")
            states.append(_state(wh))
            # every line's document is in documents, once
            assert wh.con.execute(
                "SELECT count(*) FROM run_rows AS r ANTI JOIN documents AS d USING (doc_key)"
            ).fetchall() == [(0,)]
            assert wh.con.execute(
                "SELECT count(*) = count(DISTINCT (collection_id, doc_id)) FROM documents"
            ).fetchall() == [(True,)]
    assert states[0] == states[1]


def test_a_bad_line_in_a_later_piece_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(keyed, "PIECE_BYTES", 30)
    lines = [f"{t} Q0 d{i} {i} {10 - i} r\n" for t in ("1", "2", "3") for i in range(4)]
    lines[9] = "3 Q0 d1 1 high r\n"  # line 10: a score that is not a number
    (tmp_path / "run").write_text("".join(lines))
    with Warehouse(":memory:") as wh, pytest.raises(IngestError) as error:
        wh.ingest_runs([tmp_path / "run"], collection="c")
    assert str(error.value).startswith(f"{tmp_path / 'run'}:10:")
    with Warehouse(":memory:") as wh:
        assert wh.con.execute("SELECT count(*) FROM documents").fetchall() == [(0,)]


def test_a_piece_with_nulls_its_file_lacked_starts_another_parquet_file(tmp_path, monkeypatch):
    """Staged as Parquet files (a large ingest), the pieces of a file join one file a kind, a
    row group each (keyed.Staging); a piece whose rank column holds text where the earlier
    pieces held each line's own rank (rank_given NULL there) starts another file of rows.
    The warehouse holds what reading the file whole does, ranks as written included."""
    from evalwh.store.ingest import runs

    monkeypatch.setattr(runs, "STAGE_BYTES", 0)  # (Parquet, however small the ingest)
    ranks = {"1": lambda i: str(i + 1), "2": lambda i: str(i + 1), "3": lambda i: "x", "4": lambda i: str(i + 7)}
    lines = [f"{t} Q0 d{i} {ranks[t](i)} {10 - i} r\n" for t in "1234" for i in range(4)]
    (tmp_path / "run").write_text("".join(lines))
    (tmp_path / "qrels").write_text("1 0 d0 1\n1 0 d2 0\n3 0 d1 2\n4 0 d3 1\n")
    made: list[str] = []
    new_name = keyed.Stored.new_name

    def spied(self):
        made.append(new_name(self))
        return made[-1]

    monkeypatch.setattr(keyed.Stored, "new_name", spied)
    states = []
    for piece, files in ((keyed.PIECE_BYTES, 8), (30, 10)):
        monkeypatch.setattr(keyed, "PIECE_BYTES", piece)
        with Warehouse(":memory:") as wh:
            wh.ingest_qrels(tmp_path / "qrels", collection="c")
            made.clear()
            wh.ingest_runs([tmp_path / "run"], collection="c")
            states.append(_state(wh))
            given = wh.con.execute(
                "SELECT query_id, list(rank_given ORDER BY rank) FROM run_results GROUP BY ALL ORDER BY ALL"
            ).fetchall()
        assert given == [
            ("1", ["1", "2", "3", "4"]),
            ("2", ["1", "2", "3", "4"]),
            ("3", ["x", "x", "x", "x"]),
            ("4", ["7", "8", "9", "10"]),
        ]
        # whole: a file a kind (rows, new documents, six parts of judged rows); in pieces (a
        # topic each): the rows start again at topic 3 (text where 1 and 2 had NULLs) and 4
        # (NULLs where 3 had text, and integers where it had NULLs)
        assert len(made) == files
    assert states[0] == states[1]
