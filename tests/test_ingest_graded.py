"""The reader's judgments give the same grades when they are held within a budget.

For ``evalwh ingest runs`` the judgments the reader looks every line up in are a dictionary
whose key of a (topic, document) pair is its grade (``evalwh.io.runreader.graded``): the
dictionary's tables, so that past ``evalwh.store.ingest.cache.JUDGMENT_BYTES`` of them in
memory the topics wait in a temporary file, and come back (pinned while a file's lines are
looked up, two files at a time) when a file has lines of them. Here the budget is made zero
and small: on random judgments and runs, every judged row and count is that of the judgments
held whole (``_runlines.judgments``), also with two threads reading at once, and ingests with
the judgments spilled and loaded a few at a time leave the warehouse as ingests with them in
memory do.
"""

from __future__ import annotations

import random
import tempfile
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalwh.io import _runlines, runreader
from evalwh.store.ingest import cache
from evalwh.warehouse import Warehouse

_TOPIC = st.sampled_from(["401", "402", "7", "8", "10", "10a"])
_DOC = st.text(alphabet="abc09-", min_size=1, max_size=12)
_JUDGED = st.lists(st.tuples(_TOPIC, _DOC, st.integers(-1, 3)), max_size=60, unique_by=lambda j: j[:2])
_PAIRS = st.lists(st.tuples(_TOPIC, _DOC), min_size=1, max_size=60, unique=True)


def _whole(judged: list[tuple[str, str, int]]):
    """The judgments held whole (the direct path's), negative grades unjudged."""
    table = pa.table(
        {
            "query_id": pa.array([t for t, _, _ in judged], pa.string()),
            "doc_id": pa.array([d for _, d, _ in judged], pa.string()),
            "grade": pa.array([g for _, _, g in judged], pa.int32()),
        }
    )
    return runreader.judgments_from_arrow(_runlines, table)


def _graded(judged: list[tuple[str, str, int]], batch: int, spill, budget: int):
    """The judgments as the ingest holds them: grades >= 0, a batch at a time, within budget."""
    kept = [j for j in judged if j[2] >= 0]
    table = pa.table(
        {
            "query_id": pa.array([t for t, _, _ in kept], pa.string()),
            "doc_id": pa.array([d for _, d, _ in kept], pa.string()),
            "doc_key": pa.array([g for _, _, g in kept], pa.int64()),
        }
    )
    batches = [table.slice(at, batch) for at in range(0, len(kept), batch)]
    fd = spill.fileno() if spill is not None else -1
    return runreader.pairs(_runlines, batches, spill_fd=fd, budget=budget)


def _text(pairs: list[tuple[str, str]], seed: int, blocks: bool) -> str:
    lines = [(t, f"{t} Q0 {d} {i} {i % 7} r\n") for i, (t, d) in enumerate(pairs)]
    random.Random(seed).shuffle(lines)
    if blocks:
        lines.sort(key=lambda line: line[0])
    return "".join(line for _, line in lines)


def _judged_rows(judgments, text: str) -> tuple:
    """What read_run and rank_file give of a file's judged lines, looked up in ``judgments``."""
    ranked = runreader.read_run(
        _runlines, text.encode(), delimiter=" ", tag="r", judged_by=judgments, ignore_extra_fields=False
    )
    assert not isinstance(ranked, str), ranked
    direct = _runlines.rank_file(text.encode(), " ", "r", judgments, 1, False, False)
    return ranked.judged.to_pylist(), ranked.relevant, direct


@settings(max_examples=60, deadline=None)
@given(
    judged=_JUDGED,
    files=st.lists(st.tuples(_PAIRS, st.booleans()), min_size=1, max_size=4),
    batch=st.integers(1, 7),
    budget=st.sampled_from([0, 300, 5000]),
    seed=st.integers(0, 99),
)
def test_spilled_judgments_give_the_grades_of_whole_ones(judged, files, batch, budget, seed):
    whole = _whole(judged)
    with tempfile.TemporaryFile() as spill:
        spilled = _graded(judged, batch, spill, budget)
    in_memory = _graded(judged, batch, None, 0)
    for f, (pairs, blocks) in enumerate(files):
        text = _text(pairs, seed + f, blocks)
        expected = _judged_rows(whole, text)
        assert _judged_rows(spilled, text) == expected
        assert _judged_rows(in_memory, text) == expected
    judgments, topics, resident, held, _ = _runlines.documents_info(spilled)
    assert judgments == sum(g >= 0 for _, _, g in judged)
    assert topics == len({t for t, _, g in judged if g >= 0})
    if budget == 0:  # no file is being read: every topic waits in the file
        assert resident == 0 and held == 0
    assert held <= budget


def test_two_threads_look_grades_up_in_spilled_judgments_at_once():
    rng = random.Random(7)
    topics = [str(t) for t in range(40)]
    judged = [(t, f"d{d}", rng.randrange(-1, 4)) for t in topics for d in range(0, 300, 3)]
    texts = []
    for f in range(12):
        lines = [f"{t} Q0 d{d} {d} {rng.random():.4f} r\n" for t in topics for d in rng.sample(range(300), 80)]
        if f % 3 == 0:
            rng.shuffle(lines)  # a topic's lines apart
        texts.append("".join(lines))
    whole = _whole(judged)
    expected = [_judged_rows(whole, text) for text in texts]
    for budget in (0, 20_000):
        with tempfile.TemporaryFile() as spill:
            spilled = _graded(judged, 500, spill, budget)
        with ThreadPoolExecutor(max_workers=2) as pool:
            for _ in range(3):
                assert list(pool.map(lambda text: _judged_rows(spilled, text), texts)) == expected
        assert _runlines.documents_info(spilled)[3] <= budget


def _state(wh: Warehouse) -> tuple[list[tuple], ...]:
    lines = wh.con.execute("SELECT * FROM run_results ORDER BY ALL").fetchall()
    judged = wh.con.execute(
        "SELECT collection_id, qrels_id, run_id, query_id, rank, gain, judged_so_far,"
        " relevant_so_far FROM judged_cache ORDER BY ALL"
    ).fetchall()
    # the cache's rows as stored, but for their keys (given by two reader threads in either order)
    rows = wh.con.execute(
        "SELECT b.run_id, t.query_id, r.rank, r.gain, r.judged_so_far, r.relevant_so_far, r.span"
        " FROM judged_results r JOIN judged_builds b USING (build_key)"
        " JOIN run_topics t USING (list_key) ORDER BY ALL"
    ).fetchall()
    return lines, judged, rows


# 8 examples (was 12; each ~3 CPU s, three warehouses) of 1-3 commands of 1-3 files: general
# and reader files, blocks and scattered topics (1 in 2 each) in nearly every example (each
# missing from all 8 with probability under (1/2)^8); each is ingested under all three budgets.
@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    judged=_JUDGED.filter(lambda j: any(g >= 0 for _, _, g in j)),
    commands=st.lists(
        st.lists(st.tuples(_PAIRS, st.booleans(), st.booleans()), min_size=1, max_size=3),
        min_size=1,
        max_size=3,
    ),
    seed=st.integers(0, 99),
)
def test_ingests_with_the_judgments_spilled_store_what_in_memory_ones_do(
    tmp_path_factory, monkeypatch, judged, commands, seed
):
    folder = tmp_path_factory.mktemp("graded", numbered=True)
    qrels = "".join(f"{t} 0 {d} {g}\n" for t, d, g in judged)
    (folder / "qrels").write_text(qrels)
    paths = []
    for c, files in enumerate(commands):
        paths.append([])
        for f, (pairs, blocks, general) in enumerate(files):
            path = folder / f"run{c}-{f}"
            # a comment sends a file the general way (its cache rows are joined in SQL)
            text = _text(pairs, seed + f, blocks).replace(" r\n", f" r{c}{f}\n")
            path.write_text(("# general\n" if general else "") + text)
            paths[-1].append(path)
    states = []
    for budget, batch in ((cache.JUDGMENT_BYTES, cache.LOAD_JUDGMENTS), (0, 2), (200, 3)):
        monkeypatch.setattr(cache, "JUDGMENT_BYTES", budget)
        monkeypatch.setattr(cache, "LOAD_JUDGMENTS", batch)
        with Warehouse(":memory:") as wh:
            wh.ingest_qrels(folder / "qrels", collection="c")
            for command in paths:
                wh.ingest_runs(command, collection="c")
            states.append(_state(wh))
    assert states[1] == states[0]
    assert states[2] == states[0]


def test_a_file_of_judged_lines_gets_its_cache_from_spilled_judgments(tmp_path, monkeypatch):
    """The cache the reader fills with spilled judgments is the one the SQL join builds."""
    monkeypatch.setattr(cache, "JUDGMENT_BYTES", 0)
    monkeypatch.setattr(cache, "LOAD_JUDGMENTS", 5)
    qrels = "".join(f"{t} 0 d{d} {(d + t) % 4 - 1}\n" for t in range(1, 9) for d in range(0, 40, 2))
    (tmp_path / "qrels").write_text(qrels)
    run = "".join(f"{t} Q0 d{d} {d} {40 - d} r\n" for t in range(1, 9) for d in range(30))
    (tmp_path / "run").write_text(run)
    with Warehouse(":memory:") as wh:
        wh.ingest_qrels(tmp_path / "qrels", collection="c")
        wh.ingest_runs([tmp_path / "run"], collection="c")
        by_reader = _state(wh)
    with Warehouse(":memory:") as wh:  # runs first: the qrels ingest fills the cache in SQL
        wh.ingest_runs([tmp_path / "run"], collection="c")
        wh.ingest_qrels(tmp_path / "qrels", collection="c")
        by_join = _state(wh)
    assert by_reader[0] == by_join[0]
    assert by_reader[1] == by_join[1]
    assert len(by_reader[1]) == sum(1 for t in range(1, 9) for d in range(0, 30, 2) if (d + t) % 4 - 1 >= 0)


@pytest.mark.parametrize("budget", [0, 1 << 20])
def test_graded_judgments_from_a_warehouse(tmp_path, budget):
    """runreader.graded loads a qrels set's judgments of grade >= 0 from DuckDB, a batch at a time."""
    (tmp_path / "qrels").write_text("".join(f"{i % 13} 0 doc{i} {i % 5 - 1}\n" for i in range(5000)))
    with Warehouse(":memory:") as wh, tempfile.TemporaryFile() as spill:
        wh.ingest_qrels(tmp_path / "qrels", collection="c")
        graded = runreader.graded(_runlines, wh.con, "c", "default", spill_fd=spill.fileno(), budget=budget, batch=333)
        judgments, topics, *_ = _runlines.documents_info(graded)
        assert (judgments, topics) == (sum(i % 5 - 1 >= 0 for i in range(5000)), 13)
        text = "".join(f"{i % 13} Q0 doc{i} 1 {i} r\n" for i in range(0, 5000, 7))
        ranked = runreader.read_run(
            _runlines, text.encode(), delimiter=" ", tag="r", judged_by=graded, ignore_extra_fields=False
        )
        assert sorted(ranked.judged["gain"].to_pylist()) == sorted(
            i % 5 - 1 for i in range(0, 5000, 7) if i % 5 - 1 >= 0
        )


def test_a_run_ingest_checkpoints_without_vacuum_and_puts_the_setting_back(tmp_path):
    """The run ingest checkpoints inside its settings (no vacuum of the row groups it
    appended, session.bulk_session), and a replacing one lets DuckDB vacuum its deletions."""
    (tmp_path / "qrels").write_text("1 0 a 1\n1 0 b 0\n2 0 c 1\n")
    for name in ("r1", "r2"):
        (tmp_path / name).write_text("".join(f"{t} Q0 {d} 1 {9 - i} {name}\n" for t in "12" for i, d in enumerate("abc")))
    db = str(tmp_path / "wh.duckdb")
    with Warehouse(db) as wh:
        wh.con.execute("SET max_vacuum_tasks = 7")
        wh.ingest_qrels(tmp_path / "qrels", collection="c")
        wh.ingest_runs([tmp_path / "r1", tmp_path / "r2"], collection="c")
        # checkpointed: the write-ahead log holds nothing of the command
        wal = tmp_path / "wh.duckdb.wal"
        assert not wal.exists() or wal.stat().st_size == 0
        assert wh.con.execute("SELECT current_setting('max_vacuum_tasks')").fetchall() == [(7,)]
        (tmp_path / "r1").write_text("1 Q0 c 1 5 r1\n")
        wh.ingest_runs([tmp_path / "r1"], collection="c", replace=True)
        assert wh.con.execute("SELECT current_setting('max_vacuum_tasks')").fetchall() == [(7,)]
        lines = wh.con.execute("SELECT run_id, count(*) FROM run_results GROUP BY ALL ORDER BY ALL").fetchall()
    assert lines == [("r1", 1), ("r2", 6)]
    with Warehouse.open_reader(db) as wh:
        assert wh.con.execute("SELECT count(*) FROM run_results").fetchall() == [(7,)]
