"""The one run-file reader at ingest: ranks as trec_ranked, the cache ready, atomic, faults.

* Ingested ranks (from evalwh/io/_runlines.c) equal the ``trec_ranked`` macro's over the same
  rows, on random files; the evaluation cache filled at ingest equals the one the
  evaluation's own SQL builds (runs before qrels, or qrels before runs).
* After an ingest, nothing of the cache is missing or stale: the first evaluation writes
  nothing (checked on a warehouse opened read-only, and in the build records).
* A process killed (SIGKILL) at staged moments of a multi-file ingest leaves all of that
  command or none of it.
* Reader faults: ``-`` and pipes read once, ``/dev/zero`` and over-long lines refused in one
  line by both paths, temporary folders of killed ingests removed.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalwh.io import formats
from evalwh.store import ingest
from evalwh.measures.direct import evaluate_files
from evalwh.errors import IngestError
from evalwh.warehouse import Warehouse

_IDS = st.text(alphabet="abAB09-.", min_size=1, max_size=4)
_SCORES = st.sampled_from(["3", "2", "2.0", "2.0000001", "1", "-0", "0", "0.5", "1e-3", "-1"])


def _run_text(rows: list[tuple[str, str, str]], tag: str, shuffle_seed: int) -> str:
    """A plain run file (the reader's form) of unique (topic, doc) rows, in a random order."""
    seen: set[tuple[str, str]] = set()
    lines = []
    for index, (topic, doc, score) in enumerate(rows):
        if (topic, doc) in seen:
            continue
        seen.add((topic, doc))
        lines.append(f"{topic} Q0 {doc} {index} {score} {tag}\n")
    random.Random(shuffle_seed).shuffle(lines)
    return "".join(lines)


_ROWS = st.lists(st.tuples(st.sampled_from(["401", "402", "7"]), _IDS, _SCORES), min_size=1, max_size=40)
_QRELS = st.lists(st.tuples(st.sampled_from(["401", "402", "7"]), _IDS, st.integers(-1, 3)), max_size=30)


def _qrels_text(rows: list[tuple[str, str, int]]) -> str:
    seen: set[tuple[str, str]] = set()
    lines = []
    for topic, doc, grade in rows:
        if (topic, doc) not in seen:
            seen.add((topic, doc))
            lines.append(f"{topic} 0 {doc} {grade}\n")
    return "".join(lines) or "401 0 zz 1\n"


def _cache(wh: Warehouse, collection: str | None = None) -> list[tuple[object, ...]]:
    """The cache's rows (of one collection, if named)."""
    return wh.con.execute(
        "SELECT qrels_id, run_id, query_id, rank, gain, judged_so_far, relevant_so_far"
        " FROM judged_cache WHERE collection_id = coalesce($c, collection_id) ORDER BY ALL",
        {"c": collection},
    ).fetchall()


def _judged_by_definition(wh: Warehouse, collection: str | None = None) -> list[tuple[object, ...]]:
    """What the cache must hold, from the stored run lines and qrels: every judged line
    (grade >= 0) with the judged and relevant (grade >= 1) lines at or above it (of one
    collection, if named)."""
    return wh.con.execute(
        "SELECT q.qrels_id, r.run_id, r.query_id, r.rank, q.relevance,"
        " row_number() OVER w, sum(CASE WHEN q.relevance >= 1 THEN 1 ELSE 0 END) OVER w"
        " FROM run_results AS r JOIN qrels AS q USING (collection_id, query_id, doc_id)"
        " WHERE q.relevance >= 0 AND r.collection_id = coalesce($c, r.collection_id)"
        " WINDOW w AS (PARTITION BY q.qrels_id, r.run_id, r.query_id ORDER BY r.rank)"
        " ORDER BY ALL",
        {"c": collection},
    ).fetchall()


def _stale(wh: Warehouse, collection: str = "c") -> list[tuple[object, ...]]:
    """Runs x ingested qrels sets whose cache entry is missing or stale (04_join_stale's rule)."""
    rows = []
    sets = wh.con.execute(
        "SELECT qrels_id FROM qrels_sets WHERE collection_id = ? AND kind = 'ingested'", [collection]
    ).fetchall()
    for (qrels_id,) in sets:
        fingerprint = ingest.fingerprint(wh, collection, qrels_id)
        rows += wh.con.execute(
            "SELECT r.run_id FROM runs AS r LEFT JOIN judged_builds AS b"
            " ON b.collection_id = r.collection_id AND b.run_id = r.run_id AND b.qrels_id = ?"
            " WHERE r.collection_id = ? AND (b.run_id IS NULL OR b.run_sha256 <> r.sha256"
            " OR b.qrels_fingerprint <> ?)",
            [qrels_id, collection, fingerprint],
        ).fetchall()
    return rows


# Two in-memory warehouses for every example of the property tests below (a schema costs
# about 0.2 CPU s to apply, more than a small example's ingests): each example ingests into a
# collection of its own, and every check above is of that collection's rows.
_SHARED: list[Warehouse] = []


def _shared_warehouses() -> tuple[Warehouse, Warehouse]:
    if not _SHARED:
        _SHARED.extend([Warehouse(":memory:"), Warehouse(":memory:")])
    return _SHARED[0], _SHARED[1]


# 30 examples of 1-3 runs: ties, unjudged and negative grades come in nearly every one;
# hypothesis draws new examples on every run.
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(runs=st.lists(_ROWS, min_size=1, max_size=3), qrels=_QRELS, seed=st.integers(0, 99))
def test_ingested_ranks_and_cache_equal_trec_ranked_and_the_sql_join(tmp_path_factory, runs, qrels, seed):
    folder = tmp_path_factory.mktemp("reader", numbered=True)
    paths = []
    for index, rows in enumerate(runs):
        paths.append(folder / f"run{index}")
        paths[-1].write_text(_run_text(rows, f"r{index}", seed + index))
    (folder / "qrels").write_text(_qrels_text(qrels))

    first, second = _shared_warehouses()
    c = folder.name  # a collection of this example's own
    # qrels first: the reader ranks and fills the cache
    first.ingest_qrels(folder / "qrels", collection=c)
    first.ingest_runs(paths, collection=c)
    # ranks: trec_ranked over the stored rows gives the stored ranks
    differing = first.con.execute(
        "SELECT count(*) FROM run_results AS r JOIN trec_ranked('run_results', false) AS t"
        " USING (collection_id, run_id, query_id, doc_id) WHERE r.rank <> t.rank"
    ).fetchall()[0][0]
    assert differing == 0
    stored = first.con.execute("SELECT count(*) FROM run_results WHERE collection_id = ?", [c])
    assert stored.fetchall()[0][0] == sum(len(p.read_text().splitlines()) for p in paths)
    # runs first, qrels second: the evaluation's SQL join fills the cache
    second.ingest_runs(paths, collection=c)
    second.ingest_qrels(folder / "qrels", collection=c)
    assert _cache(first, c) == _cache(second, c) == _judged_by_definition(first, c)
    assert _stale(first, c) == [] and _stale(second, c) == []
    for wh in (first, second):
        # stretches of grade 0 share a row, and nothing else does (schema/014)
        assert wh.con.execute("SELECT count(*) FROM judged_results WHERE span > 1 AND gain <> 0").fetchall() == [(0,)]


def test_the_general_path_ranks_and_caches_the_same(tmp_path):
    """A file the reader leaves (a comment) is ranked by trec_ranked and cached by the SQL join."""
    plain = "401 Q0 a 1 2 r\n401 Q0 b 2 2 r\n401 Q0 c 3 1 r\n402 Q0 a 1 5 r\n"
    (tmp_path / "plain").write_text(plain)
    (tmp_path / "commented").write_text("# a comment\n" + plain.replace(" r\n", " s\n"))
    (tmp_path / "qrels").write_text("401 0 a 1\n401 0 c 0\n402 0 a 2\n")
    with Warehouse(":memory:") as wh:
        wh.ingest_qrels(tmp_path / "qrels", collection="c")
        wh.ingest_runs([tmp_path / "plain", tmp_path / "commented"], collection="c")
        rows = wh.con.execute(
            "SELECT run_id, query_id, doc_id, rank FROM run_results ORDER BY run_id, query_id, rank"
        ).fetchall()
        assert [r[2:] for r in rows if r[0] == "r"] == [r[2:] for r in rows if r[0] == "s"]
        cache = _cache(wh)
        assert [r[2:] for r in cache if r[1] == "r"] == [r[2:] for r in cache if r[1] == "s"]
        assert _stale(wh) == []


def test_the_first_evaluation_writes_nothing(tmp_path):
    """After ingest the cache is complete: a read-only warehouse evaluates from it alone."""
    db = tmp_path / "w.duckdb"
    (tmp_path / "run").write_text("401 Q0 a 1 2 r\n401 Q0 b 2 1 r\n")
    (tmp_path / "run2").write_text("401 Q0 b 1 2 s\n401 Q0 a 2 1 s\n")
    (tmp_path / "qrels").write_text("401 0 a 1\n401 0 b 0\n")
    (tmp_path / "qrels2").write_text("401 0 a 0\n401 0 b 1\n")
    with Warehouse(db) as wh:
        wh.ingest_runs([tmp_path / "run"], collection="c")  # runs before qrels
        wh.ingest_qrels(tmp_path / "qrels", collection="c")
        wh.ingest_runs([tmp_path / "run2"], collection="c")  # and after
        wh.ingest_qrels(tmp_path / "qrels2", collection="c", qrels_id="other")
        (tmp_path / "run2").write_text("401 Q0 b 1 2 s\n401 Q0 a 2 3 s\n")
        wh.ingest_runs([tmp_path / "run2"], collection="c", replace=True)
        assert _stale(wh) == []
        before = _cache(wh)
    with Warehouse(db, read_only=True) as wh:
        frame = wh.evaluate(["AP"], collection="c")
        assert dict(zip(frame["run_id"], frame["value"], strict=True)) == {"r": 1.0, "s": 1.0}
        other = wh.evaluate(["AP"], collection="c", qrels_id="other")
        assert dict(zip(other["run_id"], other["value"], strict=True)) == {"r": 0.5, "s": 0.5}
        assert _cache(wh) == before


def test_without_the_reader_the_cache_is_filled_by_the_sql_join(tmp_path, monkeypatch):
    (tmp_path / "run").write_text("401 Q0 a 1 2 r\n401 Q0 b 2 1 r\n")
    (tmp_path / "qrels").write_text("401 0 a 1\n401 0 b 0\n")
    with Warehouse(":memory:") as wh:
        wh.ingest_qrels(tmp_path / "qrels", collection="c")
        wh.ingest_runs([tmp_path / "run"], collection="c")
        expected = _cache(wh)
    monkeypatch.setenv("EVALWH_NO_READER", "1")
    with Warehouse(":memory:") as wh:
        wh.ingest_qrels(tmp_path / "qrels", collection="c")
        wh.ingest_runs([tmp_path / "run"], collection="c")
        assert _stale(wh) == []
        assert _cache(wh) == expected == [("default", "r", "401", 1, 1, 1, 1), ("default", "r", "401", 2, 0, 2, 1)]


# Topic 401: 100 documents judged 0 (f0 ... f99), then at ranks 101-112 a b c ... k, where u
# is unjudged and c and h are relevant; topic 402: 103 documents judged 0 (g0 ... g102).
_FILLER = {"401": [f"f{i}" for i in range(100)], "402": [f"g{i}" for i in range(103)]}
_STRETCH_RUN = "".join(
    f"{topic} Q0 {doc} {rank} {1000 - rank} r\n"
    for topic, docs in (("401", _FILLER["401"] + "a b c d e u f g h i j k".split()), ("402", _FILLER["402"]))
    for rank, doc in enumerate(docs, start=1)
)
_STRETCH_QRELS = "".join(
    f"{topic} 0 {doc} {grade}\n"
    for topic, graded in (
        ("401", [(d, 0) for d in _FILLER["401"]] + [(d, 1 if d == "c" else 2 if d == "h" else 0) for d in "abcdefghijk"]),
        ("402", [(d, 0) for d in _FILLER["402"]] + [("z", 1)]),
    )
    for doc, grade in graded
)


@pytest.mark.parametrize("reader", [True, False])
def test_deep_stretches_of_grade_0_share_a_row(tmp_path, monkeypatch, reader):
    """Consecutive ranks below judged_spans_from() (100) judged 0, with no other judged or
    unjudged document between them, are one row of the cache (span); the ranks above keep a
    row each; the evaluation reads every rank back."""
    if not reader:
        monkeypatch.setenv("EVALWH_NO_READER", "1")
    (tmp_path / "run").write_text(_STRETCH_RUN)
    (tmp_path / "qrels").write_text(_STRETCH_QRELS)
    with Warehouse(":memory:") as wh:
        wh.ingest_qrels(tmp_path / "qrels", collection="c")
        wh.ingest_runs([tmp_path / "run"], collection="c")
        stored = wh.con.execute(
            "SELECT t.query_id, c.rank, c.gain, c.judged_so_far, c.relevant_so_far, c.span"
            " FROM judged_results AS c JOIN run_topics AS t USING (list_key) ORDER BY ALL"
        ).fetchall()
        assert stored == [
            *[("401", rank, 0, rank, 0, 1) for rank in range(1, 101)],
            ("401", 101, 0, 101, 0, 2),  # a b
            ("401", 103, 1, 103, 1, 1),  # c: relevant
            ("401", 104, 0, 104, 1, 2),  # d e, then u is unjudged
            ("401", 107, 0, 106, 1, 2),  # f g
            ("401", 109, 2, 108, 2, 1),  # h: relevant
            ("401", 110, 0, 109, 2, 3),  # i j k
            *[("402", rank, 0, rank, 0, 1) for rank in range(1, 101)],
            ("402", 101, 0, 101, 0, 3),  # g100 g101 g102: a stretch begins below rank 100
        ]
        assert _cache(wh) == _judged_by_definition(wh)
        measures = ["A_p@5", "A_p@110", "A_p@112", "Judged", "Judged@102", "bpref", "AP", "RBP(p=0.99)", "num_nonrel_judged_ret"]
        values = wh.evaluate(measures, collection="c", per_query=True)
    got = {(row.query_id, row.measure): row.value for row in values.itertuples()}
    assert got[("401", "A_p@5")] == 1.0 and got[("401", "A_p@110")] == 109 / 110
    assert got[("401", "A_p@112")] == 111 / 112 and got[("401", "Judged")] == 111 / 112
    assert got[("402", "A_p@5")] == 1.0 and got[("402", "Judged@102")] == 1.0
    assert got[("401", "num_nonrel_judged_ret")] == 109 and got[("402", "num_nonrel_judged_ret")] == 103
    assert got[("401", "AP")] == pytest.approx((1 / 103 + 2 / 109) / 2)
    # bpref: c has 102 judged non-relevant above it, h has 106; R = 2: each term 1 - 2/2
    assert got[("401", "bpref")] == 0.0
    # RBP(p): (1 - p) * sum over relevant of p^(rank - 1); the residual needs every judged rank
    assert got[("401", "RBP(p=0.99)")] == pytest.approx(0.01 * (0.99**102 + 0.99**108))


_DEEP_GRADES = st.lists(st.sampled_from([None, 0, 0, 0, 0, 1, 2]), min_size=95, max_size=130)
_DEEP_MEASURES = [
    "AP", "bpref", "infAP", "nDCG", "ERR", "P@100", "A_p@99", "A_p@105", "A_p@130", "Judged",
    "AA", "U@110", "unj@120", "num_nonrel_judged_ret", "RBP_resid(p=0.95)", "trec_rbp_resid",
]


# 12 examples: each of the three option sets is drawn with probability 1 - (2/3)^12 > 0.99;
# every list is 95-130 ranks long, so stretches below rank 100 come in each.
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(topics=st.lists(_DEEP_GRADES, min_size=1, max_size=2), options=st.sampled_from([{}, {"unjudged": "condensed"}, {"depth_cap": 104}]))
def test_deep_stretches_evaluate_as_the_direct_path(tmp_path_factory, topics, options):
    """Lists long enough for stretches below rank 100: the cache (from the reader or the SQL
    join) holds every judged row, and every measure that reads judged documents scores as
    the direct evaluation of the same files, which caches nothing."""
    folder = tmp_path_factory.mktemp("deep", numbered=True)
    run, qrels = [], []
    for topic, grades in enumerate(topics, start=1):
        for rank, grade in enumerate(grades, start=1):
            run.append(f"{topic} Q0 d{rank} {rank} {1000 - rank} r\n")
            if grade is not None:
                qrels.append(f"{topic} 0 d{rank} {grade}\n")
        qrels.append(f"{topic} 0 missing 1\n")
    (folder / "run").write_text("".join(run))
    (folder / "qrels").write_text("".join(qrels))
    # assessment measures are undefined on condensed lists (every document there is judged)
    condensed_only = ("AP", "bpref", "infAP", "nDCG", "ERR", "P@100", "num_nonrel_judged_ret")
    measures = list(condensed_only) if options.get("unjudged") else _DEEP_MEASURES
    expected = evaluate_files(folder / "qrels", [folder / "run"], measures, per_query=True, **options)
    first, second = _shared_warehouses()
    c = folder.name  # a collection of this example's own
    first.ingest_qrels(folder / "qrels", collection=c)
    first.ingest_runs([folder / "run"], collection=c)
    second.ingest_runs([folder / "run"], collection=c)
    second.ingest_qrels(folder / "qrels", collection=c)
    assert _cache(first, c) == _cache(second, c) == _judged_by_definition(first, c)
    for wh in (first, second):
        got = wh.evaluate(measures, collection=c, per_query=True, **options)
        assert got[["query_id", "measure"]].values.tolist() == expected[["query_id", "measure"]].values.tolist()
        # (sums of the same terms in another order: the last bit may differ)
        assert got["value"].tolist() == pytest.approx(expected["value"].tolist(), rel=1e-13, abs=1e-15)


def test_a_fractional_grade_ends_a_stretch(tmp_path):
    """A judged document of a grade between 0 and 1 (not relevant) ends a stretch of 0s too:
    fractional grades go through the evaluation's SQL join (05_cache_refresh.sql)."""
    docs = [f"f{i}" for i in range(100)] + ["a", "b", "c", "d"]
    (tmp_path / "run").write_text("".join(f"1 Q0 {d} {r} {1000 - r} r\n" for r, d in enumerate(docs, start=1)))
    grades = {"b": "0.5", "z": "1"}
    (tmp_path / "qrels").write_text("".join(f"1 0 {d} {grades.get(d, 0)}\n" for d in [*docs, "z"]))
    with Warehouse(":memory:") as wh:
        wh.ingest_qrels(tmp_path / "qrels", collection="c")
        wh.ingest_runs([tmp_path / "run"], collection="c")
        stored = wh.con.execute(
            "SELECT rank, gain, judged_so_far, relevant_so_far, span FROM judged_results WHERE rank > 100 ORDER BY rank"
        ).fetchall()
        assert stored == [(101, 0, 101, 0, 1), (102, 0.5, 102, 0, 1), (103, 0, 103, 0, 2)]
        assert _cache(wh) == _judged_by_definition(wh)


def test_runs_from_a_data_frame_are_cached_at_ingest_too():
    import pandas as pd

    with Warehouse(":memory:") as wh:
        wh.ingest_qrels(pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1, 0]}), collection="c")
        frame = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["b", "a"], "score": [2.0, 1.0], "run_id": "r"})
        wh.ingest_runs(frame, collection="c")
        assert _stale(wh) == []
        assert _cache(wh) == [("default", "r", "1", 1, 0, 1, 0), ("default", "r", "1", 2, 1, 2, 1)]


# -- SIGKILL during a multi-file ingest -------------------------------------------------------

_KILLED = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from evalwh.warehouse import Warehouse

    db, folder = sys.argv[1], Path(sys.argv[2])
    def progress(done, total):
        print(done, flush=True)
        sys.stdin.readline()  # wait until the test has decided whether to kill
    with Warehouse(db) as wh:
        wh.ingest_runs(sorted(folder.glob("run*")), collection="c", progress=progress)
    print("committed", flush=True)
    """
)


def _collection(folder: Path, runs: int) -> None:
    folder.mkdir()
    rng = random.Random(7)
    lines = []
    for topic in range(1, 31):
        lines += [f"{topic} 0 d{d} {rng.randint(0, 2)}\n" for d in range(0, 200, 3)]
    (folder / "qrels").write_text("".join(lines))
    for run in range(runs):
        text = "".join(
            f"{topic} Q0 d{d} {d} {rng.random():.4f} run{run}\n" for topic in range(1, 31) for d in range(200)
        )
        (folder / f"run{run:02d}").write_text(text if run % 3 else "# commented\n" + text)


@pytest.mark.parametrize("kill_after", [0, 1, 4, 6])
def test_a_killed_multi_file_ingest_leaves_all_or_nothing(tmp_path, kill_after):
    """Killed after 0, 1, 4 or all 6 files were stored (before the commit): nothing is there."""
    folder = tmp_path / "files"
    _collection(folder, 6)
    db = tmp_path / "w.duckdb"
    with Warehouse(db) as wh:
        wh.ingest_qrels(folder / "qrels", collection="c")
        before = wh.con.execute("SELECT count(*) FROM judged_results").fetchall()
    with subprocess.Popen(
        [sys.executable, "-c", _KILLED, str(db), str(folder)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as child:
        assert child.stdin is not None and child.stdout is not None
        for line in child.stdout:
            if int(line) == kill_after:
                break
            child.stdin.write("\n")
            child.stdin.flush()
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=60)
    with Warehouse(db) as wh:  # a fresh connection, which replays the WAL if there is one
        assert wh.con.execute("SELECT count(*) FROM runs").fetchall() == [(0,)]
        assert wh.con.execute("SELECT count(*) FROM run_results").fetchall() == [(0,)]
        assert wh.con.execute("SELECT count(*) FROM judged_results").fetchall() == before
    # and run to its end, the same command commits everything
    done = subprocess.run(
        [sys.executable, "-c", _KILLED, str(db), str(folder)],
        input="\n" * 10,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.split()[-1] == "committed"
    with Warehouse(db, read_only=True) as wh:
        assert wh.con.execute("SELECT count(*) FROM runs").fetchall() == [(6,)]
        assert wh.con.execute("SELECT count(*) FROM run_results").fetchall() == [(6 * 30 * 200,)]
        assert _stale(wh) == []


# -- reader faults ------------------------------------------------------------------------------

RUN = "401 Q0 d1 1 2.5 r\n401 Q0 d2 2 1.5 r\n402 Q0 d1 1 0.5 r\n"
QRELS = "401 0 d1 1\n401 0 d2 0\n402 0 d1 2\n"


def _evalwh(*args: str, stdin: str | None = None, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from evalwh.__main__ import main; main()", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        **kwargs,
    )


def test_standard_input_is_read_once_by_every_command(tmp_path):
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    db = str(tmp_path / "w.duckdb")
    qrels = _evalwh("ingest", "qrels", "-", "-c", "c", "--db", db, stdin=QRELS)
    assert qrels.returncode == 0, qrels.stderr
    runs = _evalwh("ingest", "runs", "-", "-c", "c", "--db", db, stdin=RUN)
    assert runs.returncode == 0, runs.stderr
    with Warehouse(db, read_only=True) as wh:
        assert wh.con.execute("SELECT run_id, source_file, line_count FROM runs").fetchall() == [
            ("r", "<stdin>", 3)
        ]
        assert wh.con.execute("SELECT count(*) FROM qrels").fetchall() == [(3,)]
    direct = _evalwh("eval", "--qrels", str(tmp_path / "qrels"), "-", "-m", "P@1", "--format", "trec", stdin=RUN)
    assert direct.returncode == 0, direct.stderr
    from_file = _evalwh("eval", "--qrels", str(tmp_path / "qrels"), str(tmp_path / "run"), "-m", "P@1", "--format", "trec")
    assert direct.stdout == from_file.stdout
    # /dev/stdin is a pipe here: read once too
    devstdin = _evalwh("eval", "--qrels", "/dev/stdin", str(tmp_path / "run"), "-m", "P@1", "--format", "trec", stdin=QRELS)
    assert devstdin.returncode == 0, devstdin.stderr
    assert devstdin.stdout == from_file.stdout


def test_a_pipe_is_read_once(tmp_path):
    """A named pipe (as bash's <(cat run) gives) holds its lines once; they are all ingested."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text(RUN))
    writer.start()
    with Warehouse(":memory:") as wh:
        (result,) = wh.ingest_runs([fifo], collection="c")
    writer.join()
    assert (result.name, result.lines) == ("r", 3)


def test_dev_zero_ends_in_one_line(tmp_path):
    expected = f"/dev/zero:1: {formats.TOO_LONG}"
    with Warehouse(":memory:") as wh, pytest.raises(IngestError) as caught:
        wh.ingest_runs([Path("/dev/zero")], collection="c")
    assert str(caught.value) == expected
    (tmp_path / "qrels").write_text(QRELS)
    cli = _evalwh("eval", "--qrels", str(tmp_path / "qrels"), "/dev/zero", "-m", "P@1")
    assert cli.returncode == 1
    assert cli.stderr.strip().splitlines() == [f"Error: {expected}"]


@pytest.mark.parametrize("length", [formats.MAX_LINE - 20, formats.MAX_LINE + 20])
def test_a_long_document_id_gets_one_verdict_from_both_paths(tmp_path, length):
    doc = "d" * length
    (tmp_path / "run").write_text(f"401 Q0 a 1 2 r\n401 Q0 {doc} 2 1 r\n")
    judged = f"401 0 {doc} 1\n" if length < formats.MAX_LINE else ""  # (a qrels line has a limit too)
    (tmp_path / "qrels").write_text("401 0 a 0\n" + judged)
    line = f"401 Q0 {doc} 2 1 r"
    with Warehouse(":memory:") as wh:
        try:
            wh.ingest_runs([tmp_path / "run"], collection="c")
            ingested = None
        except IngestError as error:
            ingested = str(error)
    try:
        frame = evaluate_files(tmp_path / "qrels", [tmp_path / "run"], ["P@2"])
        direct = None
    except IngestError as error:
        direct = str(error)
    assert ingested == direct
    if len(line) > formats.MAX_LINE:
        assert ingested == f"{tmp_path / 'run'}:2: {formats.TOO_LONG}"
    else:
        assert ingested is None and frame["value"].tolist() == [0.5]


def test_a_long_line_in_a_file_the_reader_leaves_is_refused_alike(tmp_path):
    """A comment sends the file to the general path, which refuses the long line the same way."""
    # lines just over the limit: the refusal is the same for any length past it
    (tmp_path / "run").write_text(f"# x\n401 Q0 a 1 2 r\n401 Q0 {'d' * formats.MAX_LINE} 2 1 r\n")
    with Warehouse(":memory:") as wh, pytest.raises(IngestError) as caught:
        wh.ingest_runs([tmp_path / "run"], collection="c")
    assert str(caught.value) == f"{tmp_path / 'run'}:3: {formats.TOO_LONG}"
    (tmp_path / "qrels").write_text(f"401 0 a 1\n401 0 {'q' * formats.MAX_LINE} 1\n")
    with Warehouse(":memory:") as wh, pytest.raises(IngestError) as caught:
        wh.ingest_qrels(tmp_path / "qrels", collection="c")
    assert str(caught.value) == f"{tmp_path / 'qrels'}:2: {formats.TOO_LONG}"


def test_temporary_folders_of_killed_ingests_are_removed(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = tmp_path / f"evalwh-ingest-{int(gone.stdout)}-abc"
    dead.mkdir()
    (dead / "1.txt").write_text("x" * 1000)
    alive = tmp_path / f"evalwh-ingest-{os.getppid()}-def"
    alive.mkdir()
    with Warehouse(":memory:") as wh:
        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)
        writer = threading.Thread(target=lambda: fifo.write_text(RUN))
        writer.start()
        wh.ingest_runs([fifo], collection="c")  # a pipe needs a temporary copy
        writer.join()
    assert not dead.exists()
    assert alive.exists()  # its process still runs
    assert sorted(p.name for p in tmp_path.glob("evalwh-ingest-*")) == [alive.name]
