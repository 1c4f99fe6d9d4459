"""Where float32 scores reorder a run is found once, at ingest, and read back by the note (issue 38).

The ingest stores per run the lists where two adjacent rows trade places when scores are
rounded to float32 and the best rank where it happens (``runs.float32_lists``,
``float32_first_rank``; schema 021): counted by the reader (evalwh/io/_runlines.c) on the way
in, or by the reference query ``float32_order.sql`` for runs stored the general way or from a
DataFrame. On random runs built to collide in float32 and on TREC-8 runs, each way stores
what the reference query and a plain Python reading of the definition find; a warehouse from
before 021 still gets the note, from the query; an export carries the figures.
"""

from __future__ import annotations

import itertools
import json
import os
from contextlib import contextmanager
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from evalwh.cli import app
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from evalwh import Warehouse, sql
from evalwh.io import runreader
from evalwh.present.report.ties import float32_order
from evalwh.store import transfer

runner = CliRunner(env={"COLUMNS": "200", "TERMINAL_WIDTH": "200"})
TREC8 = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "trec8_adhoc"
# (base, step): scores base + k * step collide in float32 for small k; 1e39 and the last
# double below float32's overflow to infinity (3.4028235677973366e38) meet C's rounding
_SCORES = [(0.1, 1e-9), (1.0, 1e-8), (-0.5, 2e-8), (25.0, 3e-7), (1e39, 1e30), (3.4028235677973362e38, 3e22)]


@contextmanager
def _without_reader():
    """The ingest as it runs where the C reader was not built (runreader.reader() is None)."""
    os.environ["EVALWH_NO_READER"] = "1"
    try:
        yield
    finally:
        del os.environ["EVALWH_NO_READER"]


def _reference(wh: Warehouse, collection: str, runs: list[str] | None = None) -> list[list]:
    """float32_order.sql itself over the stored rows: run_id, lists, first_rank."""
    frame = wh.df(sql.query("evalwh.queries.reports", "float32_order"), {"collection_id": collection, "runs": runs})
    return frame.values.tolist()


def _stored(wh: Warehouse, collection: str, runs: list[str] | None = None) -> list[list]:
    """What the ingest stored, every run (or these): run_id, float32_lists, float32_first_rank."""
    rows = wh.con.execute(
        "SELECT run_id, float32_lists, float32_first_rank FROM runs"
        " WHERE collection_id = ? AND (? IS NULL OR list_contains(?, run_id)) ORDER BY run_id",
        [collection, runs, runs],
    ).fetchall()
    return [list(row) for row in rows]


def _by_definition(lines: pd.DataFrame) -> list[list]:
    """The definition read plainly: per list in trec_eval 10's order (score descending, then
    doc_id descending), adjacent rows with different doubles, equal float32s, doc_id ascending."""
    found = []
    for run_id, run in lines.groupby("run_id", sort=True):
        lists, first = 0, None
        for _, topic in run.groupby("query_id"):
            ordered = sorted(zip(topic["score"], topic["doc_id"], strict=True), reverse=True)
            with np.errstate(over="ignore"):
                as_float = [np.float32(score) for score, _ in ordered]
            ranks = [
                i + 1
                for i in range(1, len(ordered))
                if ordered[i - 1][0] != ordered[i][0] and as_float[i - 1] == as_float[i] and ordered[i - 1][1] < ordered[i][1]
            ]
            if ranks:
                lists += 1
                first = ranks[0] if first is None else min(first, ranks[0])
        found.append([run_id, lists, first])
    return found


def _text(run_id: str, run: pd.DataFrame) -> str:
    """A run file's text (scores written so that they read back exactly)."""
    rows = zip(run["query_id"], run["doc_id"], run["score"], strict=True)
    return "".join(f"{q} Q0 {d} {i + 1} {s!r} {run_id}\n" for i, (q, d, s) in enumerate(rows))


def _write(folder: Path, lines: pd.DataFrame) -> list[Path]:
    paths = []
    for run_id, run in lines.groupby("run_id", sort=True):
        path = folder / f"{run_id}.txt"
        path.write_text(_text(str(run_id), run))
        paths.append(path)
    return paths


_QRELS = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]})


@st.composite
def _runs(draw: st.DrawFn) -> pd.DataFrame:
    rows = []
    for run_id in draw(st.lists(st.sampled_from(["r1", "r2", "r3"]), min_size=1, max_size=3, unique=True)):
        for topic in draw(st.lists(st.sampled_from(["1", "2", "3"]), min_size=1, max_size=3, unique=True)):
            docs = draw(st.lists(st.text(alphabet="abXY9", min_size=1, max_size=2), min_size=1, max_size=12, unique=True))
            for doc in docs:
                base, step = draw(st.sampled_from(_SCORES))
                rows.append((run_id, topic, doc, base + draw(st.integers(0, 5)) * step))
    return pd.DataFrame(rows, columns=["run_id", "query_id", "doc_id", "score"])


_READER = runreader.reader()


@pytest.mark.skipif(_READER is None, reason="the C reader was not built")
@settings(max_examples=150, deadline=None)
@given(lines=_runs())
def test_the_reader_counts_what_the_definition_says(lines) -> None:  # type: ignore[no-untyped-def]
    """read_run's two figures, file by file (no warehouse: many examples cost little)."""
    for (run_id, lists, first), (_, run) in zip(_by_definition(lines), lines.groupby("run_id", sort=True), strict=True):
        text = _text(run_id, run).encode()
        ranked = runreader.read_run(_READER, text, delimiter=" ", tag=run_id, judged_by=None, ignore_extra_fields=False)
        assert not isinstance(ranked, str), ranked
        assert (ranked.float32_lists, ranked.float32_first) == (lists, first or 0)


_COUNTER = itertools.count()


@pytest.fixture(scope="module")
def warehouse():  # type: ignore[no-untyped-def]
    """One warehouse for the examples: a collection per way in, each example's runs named anew."""
    with Warehouse(":memory:") as wh:
        for way in _WAYS:
            wh.ingest_qrels(_QRELS, collection=way)
        yield wh


_WAYS = ("reader", "general", "frame")


@settings(max_examples=8, deadline=None)
@given(lines=_runs())
def test_stored_figures_are_the_querys_on_runs_that_collide(warehouse, tmp_path_factory, lines) -> None:  # type: ignore[no-untyped-def]
    """Files through the reader, files the general way, a DataFrame: each stores the
    reference query's figures (0 and NULL for a run nothing reorders), which are the definition's."""
    wh = warehouse
    lines = lines.assign(run_id=f"e{next(_COUNTER)}" + lines["run_id"])
    expected = _by_definition(lines)
    runs = [row[0] for row in expected]
    paths = _write(tmp_path_factory.mktemp("runs", numbered=True), lines)
    for way in _WAYS:
        if way == "reader":
            wh.ingest_runs(paths, collection=way)
        elif way == "general":
            with _without_reader():
                wh.ingest_runs(paths, collection=way)
        else:
            wh.ingest_runs(lines, collection=way)
        assert _stored(wh, way, runs) == expected, way
        assert _reference(wh, way, runs) == [row for row in expected if row[1]], way
        assert float32_order(wh, way, runs).values.tolist() == [row for row in expected if row[1]], way


def test_the_reader_counts_each_run_once_and_keeps_the_best_rank(tmp_path: Path) -> None:
    """Hand-made: two lists of x trade places (ranks 3 and 2), y's equal doubles do not, z's
    1e39 and 2e39 are both infinite as floats."""
    lines = pd.DataFrame(
        [
            ("x", "1", "d", 3.0), ("x", "1", "c", 2.0), ("x", "1", "a", 0.1 + 2e-9), ("x", "1", "b", 0.1),
            ("x", "2", "a", 1.00000001), ("x", "2", "b", 1.0),
            ("y", "1", "a", 1.0), ("y", "1", "b", 1.0),
            ("z", "1", "a", 2e39), ("z", "1", "b", 1e39),
        ],
        columns=["run_id", "query_id", "doc_id", "score"],
    )
    with Warehouse(":memory:") as wh:
        wh.ingest_qrels(_QRELS, collection="c")
        wh.ingest_runs(_write(tmp_path, lines), collection="c")
        assert _stored(wh, "c") == [["x", 2, 2], ["y", 0, None], ["z", 1, 2]]
        assert float32_order(wh, "c").values.tolist() == [["x", 2, 2], ["z", 1, 2]]
        assert float32_order(wh, "c", ["y", "z"]).values.tolist() == [["z", 1, 2]]
        # the note reads the stored figures, not the rows
        wh.con.execute("UPDATE runs SET float32_lists = 7, float32_first_rank = 40 WHERE run_id = 'y'")
        assert float32_order(wh, "c", ["y"]).values.tolist() == [["y", 7, 40]]


@pytest.mark.skipif(not TREC8.is_dir(), reason="needs ../shared/data/trec8_adhoc")
def test_trec8_runs_store_the_querys_figures(tmp_path: Path) -> None:
    """A few TREC-8 runs, with and without the reader: the stored figures are the query's."""
    names = ["input.uwmt8a0", "input.Dm8TFbn", "input.Flab8ax", "input.ok8alx"]
    paths = [TREC8 / "runs" / f"{name}.gz" for name in names]
    got = []
    for way in ("reader", "general"):
        with Warehouse(":memory:") as wh:
            wh.ingest_qrels(TREC8 / "trec8.qrels", collection="t8")
            if way == "reader":
                wh.ingest_runs(paths, collection="t8")
            else:
                with _without_reader():
                    wh.ingest_runs(paths, collection="t8")
            stored = _stored(wh, "t8")
            assert [row for row in stored if row[1]] == _reference(wh, "t8"), way
            got.append(stored)
    assert got[0] == got[1]
    assert got[0] == TREC8_FIGURES


# float32_order.sql's answer on these runs, as evalwh before schema 021 gave it for the 129
# (11 of them are reordered; uwmt8a0 most, from rank 2)
TREC8_FIGURES = [["Dm8TFbn", 1, 869], ["Flab8ax", 3, 393], ["ok8alx", 0, None], ["uwmt8a0", 47, 2]]


def _as_before_021(db: Path) -> None:
    """Make a warehouse file look as evalwh made it before schema 021: no columns, no macro,
    no record (nor 022's, which came after it)."""
    con = duckdb.connect(str(db))
    con.execute("ALTER TABLE runs DROP COLUMN float32_lists")
    con.execute("ALTER TABLE runs DROP COLUMN float32_first_rank")
    con.execute("DROP MACRO float32_score")
    con.execute("DELETE FROM schema_migrations WHERE name IN ('021_float32_order', '022_float32_ranking')")
    con.close()


def test_a_warehouse_from_before_021_gets_the_note_from_the_query(tmp_path: Path) -> None:
    """Runs stored before 021 have NULL figures after the upgrade: the query answers for them
    (only them), eval says so, and a run ingested after the upgrade is counted on the way in."""
    lines = pd.DataFrame(
        [("x", "1", "a", 1.00000001), ("x", "1", "b", 1.0), ("y", "1", "a", 2.0), ("y", "1", "b", 1.0)],
        columns=["run_id", "query_id", "doc_id", "score"],
    )
    db = tmp_path / "old.duckdb"
    with Warehouse(db) as wh:
        wh.ingest_qrels(_QRELS, collection="c")
        wh.ingest_runs(_write(tmp_path, lines), collection="c")
    _as_before_021(db)
    with pytest.raises(Exception, match="run `evalwh upgrade"):
        Warehouse.open_reader(db)
    result = runner.invoke(app, ["upgrade", "--db", str(db)])
    assert result.exit_code == 0, result.output
    more = pd.DataFrame({"run_id": "z", "query_id": "1", "doc_id": ["b", "a"], "score": [0.1 + 2e-9, 0.1]})
    with Warehouse(db) as wh:
        assert _stored(wh, "c") == [["x", None, None], ["y", None, None]]
        assert float32_order(wh, "c").values.tolist() == [["x", 1, 2]]
        (tmp_path / "z").mkdir()
        wh.ingest_runs(_write(tmp_path / "z", more), collection="c")
        assert _stored(wh, "c")[2] == ["z", 0, None]
        wh.con.execute("UPDATE runs SET float32_lists = 3, float32_first_rank = 9 WHERE run_id = 'z'")
        assert float32_order(wh, "c").values.tolist() == [["x", 1, 2], ["z", 3, 9]]
    result = runner.invoke(app, ["eval", "-c", "c", "--db", str(db), "-m", "P@1", "--run", "x"])
    assert result.exit_code == 0, result.output
    # (issue #54: the note names the runs whose printed values change, with how many)
    assert "1 run prints different values when scores are rounded to float32" in result.stderr
    assert ": x (1 value); --float32-ties" in result.stderr


def test_export_carries_the_figures_and_an_older_export_leaves_them_unknown(tmp_path: Path) -> None:
    lines = pd.DataFrame(
        [("x", "1", "a", 1.00000001), ("x", "1", "b", 1.0), ("y", "1", "a", 2.0), ("y", "1", "b", 1.0)],
        columns=["run_id", "query_id", "doc_id", "score"],
    )
    with Warehouse(tmp_path / "a.duckdb") as wh:
        wh.ingest_qrels(_QRELS, collection="c")
        wh.ingest_runs(_write(tmp_path, lines), collection="c")
        transfer.export(wh, tmp_path / "e")
    with Warehouse(tmp_path / "b.duckdb") as wh:
        transfer.import_export(wh, tmp_path / "e")
        assert _stored(wh, "c") == [["x", 1, 2], ["y", 0, None]]
    # an export made before 021 lists no such columns: the runs come in unknown
    manifest = json.loads((tmp_path / "e" / "manifest.json").read_text())
    columns = manifest["tables"]["runs"]["columns"]
    manifest["tables"]["runs"]["columns"] = [c for c in columns if not c["name"].startswith("float32_")]
    manifest["migrations"].remove("021_float32_order")
    (tmp_path / "e" / "manifest.json").write_text(json.dumps(manifest))
    with Warehouse(tmp_path / "c.duckdb") as wh:
        transfer.import_export(wh, tmp_path / "e")
        assert _stored(wh, "c") == [["x", None, None], ["y", None, None]]
        assert float32_order(wh, "c").values.tolist() == [["x", 1, 2]]


# -- scores at and beyond float32's range (schema 022) --------------------------------------
# trec_eval 9 read a score into a C float: from 3.4028235677973366e38 (2^128 - 2^103, half
# an ulp above float32's largest value) on, C rounds it to an infinity, so such scores tie
# (one sign) and fall back to doc_id descending; just below, they round to the largest
# float32 and tie with it. Scores drawn from these, around the boundary and ordinary ones:
_HUGE = [
    1e39, 2e39, -1e39, -2e39, 3.5e38, -3.5e38, 3.4028235677973366e38, -3.4028235677973366e38,
    3.4028235677973362e38, 3.4028234663852886e38, -3.4028234663852886e38,
    1.7976931348623157e308, -1.7976931348623157e308, 1.0, 1.00000001, 0.5, 0.0, -0.25,
]


def _trec_eval_9_ranks(docs: list[str], scores: list[float]) -> list[int]:
    """Each document's rank as trec_eval 9.0.8 gives it, from numpy alone: the score as a
    float32 (an infinity beyond its range), descending, then doc_id descending byte-wise."""
    with np.errstate(over="ignore"):  # the overflow to infinity is the point
        keys = np.asarray(scores, dtype=np.float64).astype(np.float32)
    order = np.lexsort((np.array([d.encode() for d in docs]), keys))[::-1]
    ranks = np.empty(len(docs), dtype=np.int64)
    ranks[order] = np.arange(1, len(docs) + 1)
    return ranks.tolist()


def _probe(folder: Path, docs: list[str], scores: list[float]) -> tuple[Path, Path]:
    """One list asked once per document: topic t<i> holds the whole list and judges only
    document i (relevant), so that its reciprocal rank is 1 / that document's rank."""
    folder.mkdir(parents=True, exist_ok=True)
    n = len(docs)
    listed = list(enumerate(zip(docs, scores, strict=True)))
    run = "".join(f"t{t} Q0 {d} {i + 1} {s!r} p\n" for t in range(n) for i, (d, s) in listed)
    qrels = "".join(f"t{t} 0 {docs[t]} 1\n" for t in range(n))
    (folder / "run.txt").write_text(run)
    (folder / "qrels.txt").write_text(qrels)
    return folder / "qrels.txt", folder / "run.txt"


def _probed_ranks(frame: pd.DataFrame, n: int) -> list[int]:
    """The ranks a per-topic RR frame of _probe's run gives, in the documents' order."""
    rr = dict(zip(frame["query_id"], frame["value"], strict=True))
    return [round(1 / rr[f"t{t}"]) for t in range(n)]


def _ranks_every_way(folder: Path, docs: list[str], scores: list[float]) -> dict[str, list[int]]:
    """With --float32-ties: the warehouse's evaluation (03_ranked_float32.sql, trec_ranked),
    the direct path through the C reader and without it (the same SQL), and trec_ranked itself."""
    from evalwh.measures.direct import evaluate_files

    qrels, run = _probe(folder, docs, scores)
    n, got = len(docs), {}
    with Warehouse(":memory:") as wh:
        wh.ingest_qrels(qrels, collection="c")
        wh.ingest_runs([run], collection="c")
        values = wh.evaluate(["RR"], collection="c", per_query=True, float32_ties=True)
        got["warehouse"] = _probed_ranks(values, n)
        wh.con.execute(
            "CREATE TEMP VIEW probe AS SELECT * EXCLUDE (rank) FROM run_results WHERE query_id = 't0'"
        )
        macro = dict(wh.con.execute("SELECT doc_id, rank FROM trec_ranked('probe', true)").fetchall())
        got["trec_ranked"] = [macro[d] for d in docs]
    direct = evaluate_files(qrels, [run], ["RR"], per_query=True, float32_ties=True)
    got["direct"] = _probed_ranks(direct, n)
    with _without_reader():
        direct = evaluate_files(qrels, [run], ["RR"], per_query=True, float32_ties=True)
        got["direct, no reader"] = _probed_ranks(direct, n)
    return got


def test_scores_beyond_float32_become_infinities_and_tie_as_in_trec_eval_9(tmp_path: Path) -> None:
    """The issue's run: 2e39, 1e39 and 3.5e38 are +inf as floats (doc_id descending: d, b,
    a), -3.5e38 and -1e39 are -inf (g, c) after every finite score; every way agrees."""
    docs = ["a", "b", "c", "d", "e", "f", "g"]
    scores = [1e39, 2e39, -1e39, 3.5e38, 0.5, 0.25, -3.5e38]
    expected = [3, 2, 7, 1, 4, 5, 6]
    assert _trec_eval_9_ranks(docs, scores) == expected
    assert _ranks_every_way(tmp_path, docs, scores) == dict.fromkeys(
        ["warehouse", "trec_ranked", "direct", "direct, no reader"], expected
    )


def test_eval_float32_ties_takes_scores_beyond_float32(tmp_path: Path) -> None:
    """The CLI, directly and stored with --into (evaluated from the warehouse), where DuckDB's
    FLOAT cast refused 1e39 before schema 022."""
    docs = ["a", "b", "c", "d", "e", "f", "g"]
    scores = [1e39, 2e39, -1e39, 3.5e38, 0.5, 0.25, -3.5e38]
    qrels, run = _probe(tmp_path, docs, scores)
    for extra in ([], ["--into", str(tmp_path / "w.duckdb"), "-c", "c"]):
        command = ["eval", "--qrels", str(qrels), str(run), *extra, "-m", "RR", "-q", "--float32-ties"]
        result = runner.invoke(app, [*command, "--format", "trec"])
        assert result.exit_code == 0, result.output
        rows = (line.split("\t") for line in result.stdout.splitlines())
        rr = {q: float(v) for name, q, v in rows if name.strip() == "recip_rank" and q != "all"}
        assert [round(1 / rr[f"t{t}"]) for t in range(len(docs))] == [3, 2, 7, 1, 4, 5, 6], extra


def _rank_file_ranks(docs: list[str], scores: list[float]) -> list[int]:
    """The C reader's ranks with float32 (rank_file, every line judged)."""
    text = "".join(f"1 Q0 {d} {i + 1} {s!r} r\n" for i, (d, s) in enumerate(zip(docs, scores, strict=True)))
    grades = pa.array(range(len(docs)), pa.int32())
    table = pa.table({"query_id": ["1"] * len(docs), "doc_id": docs, "grade": grades})
    judgments = runreader.judgments_from_arrow(_READER, table)
    result = _READER.rank_file(text.encode(), " ", "r", judgments, 1, True, False)
    assert not isinstance(result, str), result
    rank, grade = (np.frombuffer(result[i], np.int32) for i in (5, 6))
    ranks = np.empty(len(docs), dtype=np.int64)
    ranks[grade] = rank  # each line's grade is its position in docs
    return ranks.tolist()


@settings(max_examples=60, deadline=None)
@given(
    drawn=st.lists(
        st.tuples(st.text(alphabet="abXY9", min_size=1, max_size=2), st.sampled_from(_HUGE)),
        min_size=1, max_size=12, unique_by=lambda pair: pair[0],
    )
)
def test_huge_scores_rank_as_numpy_float32_says(warehouse, drawn) -> None:  # type: ignore[no-untyped-def]
    """Random lists over _HUGE: trec_ranked (which the warehouse's and Spark's evaluations
    run) and the C reader rank exactly as the numpy reference."""
    docs, scores = [d for d, _ in drawn], [s for _, s in drawn]
    expected = _trec_eval_9_ranks(docs, scores)
    frame = pd.DataFrame({"collection_id": "c", "run_id": "r", "query_id": "1", "doc_id": docs})
    warehouse.con.register("drawn", frame.assign(score=scores))
    try:
        query = "SELECT doc_id, rank FROM trec_ranked('drawn', true)"
        ranked = dict(warehouse.con.execute(query).fetchall())
    finally:
        warehouse.con.unregister("drawn")
    assert [ranked[d] for d in docs] == expected
    if _READER is not None:
        assert _rank_file_ranks(docs, scores) == expected
