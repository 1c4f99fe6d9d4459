"""Run and qrels files straight into Spark: the warehouse's checks, messages, ranks and values.

Every test runs on the one local Spark session of the test session (``spark_session`` in
conftest.py). Rejected files must get exactly the message the warehouse's ingest gives (the
bad-file classes of test_ingest.py); accepted files must rank as the warehouse ranks them;
what Spark ranked, written back as an export, must import into a warehouse that evaluates
exactly as one that ingested the files; every measure of the catalog keeps the name typed.
All 129 TREC-8 runs read as text are scored on the standalone cluster of
test_spark_cluster.py (one TREC-8 run of Spark per test session).
"""

from __future__ import annotations

import io
import json
import math
import os
import random
from contextlib import contextmanager
from urllib.parse import unquote

import numpy as np
import pandas as pd
import pytest
from test_ingest import BAD_QRELS, BAD_RUNS, QRELS, RUN, write

from evalwh.io import formats
from evalwh import spark
from evalwh.errors import IngestError, MetricParamError
from evalwh.spark import exclusions, files
from evalwh.warehouse import Warehouse

pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::FutureWarning"),  # pyspark's notice about pandas 3
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
]

from conftest import TREC8
# the measures the issue names: evalwh eval's defaults, then RBP with its residual and A_p@100
MEASURES = ["P@10", "AP", "nDCG@10", "bpref", "A_p@10", "RBP(p=0.8)@10", "RBP_resid(p=0.8)@10", "A_p@100"]


@pytest.fixture(scope="module")
def session(spark_session):  # type: ignore[no-untyped-def]
    """The shared session, without code generation for these small inputs."""
    settings = {"spark.sql.codegen.wholeStage": "false", "spark.sql.codegen.factoryMode": "NO_CODEGEN"}
    before = {key: spark_session.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark_session.conf.set(key, value)
    yield spark_session
    for key, value in before.items():
        if value is None:
            spark_session.conf.unset(key)
        else:
            spark_session.conf.set(key, value)


# -- rejected files -------------------------------------------------------------------------


def test_every_bad_run_file_class_gets_the_ingest_message(session, tmp_path):  # type: ignore[no-untyped-def]
    """All classes of test_ingest.BAD_RUNS, plain and gzipped, checked in one Spark pass."""
    paths = {}
    for i, (name, (content, problem)) in enumerate(BAD_RUNS.items()):
        for suffix in ("txt", "txt.gz"):
            paths[write(tmp_path, f"bad{i}.{suffix}", content)] = problem
    good = write(tmp_path, "good.txt", RUN)
    errors = files.check_run_files(session, [good, *paths])
    assert str(good) not in errors
    assert {label: str(error) for label, error in errors.items()} == {
        str(path): f"{path}{problem}" for path, problem in paths.items()
    }


def test_control_characters_in_ids_are_refused_as_the_ingest_refuses_them(session, tmp_path):  # type: ignore[no-untyped-def]
    """Issue 52, class 6: Spark's own text reader let an ESC, DEL, C1 character or direction
    override into topic, document and run ids, which evalwh ingest refuses; now each file gets
    the ingest's line (file, line, the field and its escaped value), a comment may still hold one."""
    cases = {
        "esc_doc.txt": "401 Q0 d1 1 2.5 r\n401 Q0 d\x1b[31m2 2 1.5 r\n",
        "del_topic.txt": "40\x7f1 Q0 d1 1 2.5 r\n",
        "c1_doc.txt": "401 Q0 d1 1 2.5 r\n401 Q0 d\u00852 2 1.5 r\n",  # (two UTF-8 bytes)
        "override_tag.txt": "401 Q0 d1 1 2.5 r\u202e\n",
        "count_first.txt": "401 Q0 d\x1b1 1 2.5\n",  # (the field count is named first, as ingest does)
        "topic_and_tag.txt": "40\x1b1 Q0 d1 1 2.5 r\x1b\n",  # (the first line's tag, which names the run)
    }
    paths = {write(tmp_path, name, text): name for name, text in cases.items()}
    comment = write(tmp_path, "comment.txt", "# a comment may hold \x1b and \u202e\n" + RUN)
    errors = files.check_run_files(session, [*paths, comment])
    expected = {}
    for path in paths:
        with pytest.raises(IngestError) as local, Warehouse(":memory:") as wh:
            wh.ingest_runs([path], collection="c")
        expected[str(path)] = str(local.value)
    assert {label: str(error) for label, error in errors.items()} == expected
    assert "holds a control character, which an id may not hold" in expected[str(tmp_path / "esc_doc.txt")]
    assert "\x1b" not in "".join(expected.values())  # (shown escaped, never sent to a terminal)
    qrels = write(tmp_path, "esc.qrels", "401 0 d1 1\n401 0 d\x1b2 0\n")
    with pytest.raises(IngestError) as caught:
        files.load_qrels(session, qrels)
    with pytest.raises(IngestError) as local, Warehouse(":memory:") as wh:
        wh.ingest_qrels(qrels, collection="c")
    assert str(caught.value) == str(local.value) == (
        f"{qrels}:2: document id 'd\\x1b2' holds a control character, which an id may not hold"
    )


# the cases that reach the files' contents, read by each reader; the others fail while the
# files are listed, before either reader (once: each evalwh case reads the qrels first)
_READ_CASES = [
    ("bad among good", "{bad}:2: score 'high' is not a finite number"),
    ("bad first line first", "{first}:1: expected 6 fields, found 5"),
    ("same tag", "{b}: run 'r' is also in {a}; run ids must be unique (the tag of the first line names the run)"),
]
_LIST_CASES = [
    ("missing", "{missing}: no such file"),
    ("directory", "{directory}: is a directory, not a file"),
    ("pipe", "{pipe}: is not a regular file (a device, pipe or socket); Spark reads regular files"),
    ("device", "/dev/zero: is not a regular file (a device, pipe or socket); Spark reads regular files"),
    ("twice", "{a}: the file is given twice"),
    ("glob without match", "{nothing}: no such file"),
    ("nothing", "runs: no run files given"),
]


@pytest.mark.parametrize(
    ("case", "message", "reader"),
    [(*case, reader) for case in _READ_CASES for reader in files.READERS]
    + [(*case, "evalwh") for case in _LIST_CASES],
)
def test_run_file_lists_fail_as_ingest_does(session, tmp_path, case, message, reader):  # type: ignore[no-untyped-def]
    a = write(tmp_path, "a.txt", RUN)
    b = write(tmp_path, "b.txt", RUN.replace("2.5", "3.5"))
    other = write(tmp_path, "c.txt", RUN.replace(" r\n", " other\n"))
    bad = write(tmp_path, "bad.txt", RUN.replace(" r\n", " bad\n").replace("1.5", "high"))
    first = write(tmp_path, "first.txt", "401 Q0 d1 1 2.5\n")
    names = {
        "a": a, "b": b, "bad": bad, "first": first, "missing": tmp_path / "missing.txt",
        "directory": tmp_path, "nothing": tmp_path / "none*.txt", "pipe": tmp_path / "fifo.txt",
    }
    os.mkfifo(names["pipe"])  # (never opened: listing it must not wait for a writer)
    calls = {
        "bad among good": [a, bad, other],
        # a file whose first line is bad is refused before run names are compared
        "bad first line first": [a, b, first],
        "same tag": [a, other, b],
        "missing": [a, names["missing"]],
        "directory": [tmp_path],
        "pipe": [a, names["pipe"]],
        "device": ["/dev/zero"],
        "twice": [a, tmp_path / "." / "a.txt"],
        "glob without match": [names["nothing"]],
        "nothing": [],
    }
    if reader == "evalwh" and case not in dict(_LIST_CASES):
        files.load_qrels(session, write(tmp_path, "qrels.txt", QRELS))
    with pytest.raises(IngestError) as caught:
        files.load_runs(session, calls[case], reader=reader)
    assert str(caught.value) == message.format(**names)


@pytest.mark.parametrize("name", list(BAD_QRELS))
def test_bad_qrels_file_gets_the_ingest_message(session, tmp_path, name):  # type: ignore[no-untyped-def]
    content, problem = BAD_QRELS[name]
    path = write(tmp_path, "bad.qrels", content)
    with pytest.raises(IngestError) as caught:
        files.load_qrels(session, path)
    assert str(caught.value) == f"{path}{problem}"


def test_qrels_grades_are_the_warehouse_grades(session, tmp_path):  # type: ignore[no-untyped-def]
    text = "# c\r\n401\t0\td1\t1\r\n401  Q0 d2   -1\r\n\r\n402 4.5 d#3 +2.5\n402 0 d4 123456789\n"
    assert files.load_qrels(session, write(tmp_path, "q.txt.gz", text)) == 4
    rows = session.sql("SELECT query_id, iteration, doc_id, relevance FROM qrels ORDER BY query_id, doc_id").collect()
    assert [tuple(r) for r in rows] == [
        ("401", "0", "d1", 1.0),
        ("401", "Q0", "d2", -1.0),
        ("402", "4.5", "d#3", 2.5),
        ("402", "0", "d4", 123456789.0),
    ]
    for grade in ("yes", "nan", "1e3", "0x1", "1234567890"):
        path = write(tmp_path, "bad.qrels", f"401 0 d1 1\n401 0 d2 {grade}\n")
        with pytest.raises(IngestError) as caught:
            files.load_qrels(session, path)
        assert str(caught.value) == f"{path}:2: relevance {grade!r} is not a number"


def test_score_grammar_is_the_warehouse_one(session):  # type: ignore[no-untyped-def]
    """run_fields.sql reads a score exactly when evalwh.io.formats.is_score takes it, as float does."""
    rng = random.Random(19)
    alphabet = "0123456789" * 3 + "+-._eE" * 2 + "xXinfaINFdD ,١"
    texts = [
        "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8))).strip() or "0"
        for _ in range(3000)
    ]
    texts += ["1_0", "1__0", "_1", "1.5d", "1f", "0x10", ".5", "5.", "+.5", "-.5e-3", "1e400",
              "1e-400", "inf", "-Infinity", "NaN", "+-5", "1_0.0_1", "1e1_0", "1._5", "00.1",
              "4.9e-324", "1.7976931348623157e308", "1.7976931348623159e308"]
    texts = [t for t in texts if " " not in t]
    bodies = [(0, i + 1, f"1 Q0 d{i} 1 {t} r", None, False, f"1 Q0 d{i} 1 {t} r") for i, t in enumerate(texts)]
    session.createDataFrame(
        bodies, "file_index INT, line_number INT, body STRING, problem STRING, skipped BOOLEAN, spaced STRING"
    ).createOrReplaceTempView("spark_lines")
    rows = session.sql(files._spark_sql("run_fields")).collect()
    read = {r["line_number"]: r["score"] for r in rows}
    for i, text in enumerate(texts):
        value = read[i + 1]
        finite = value is not None and math.isfinite(value)
        assert finite == formats.is_score(text), text
        if finite:
            assert value == float(text), text


# -- accepted files -------------------------------------------------------------------------


def test_ranks_and_values_equal_the_warehouse_with_ties_bytes_and_float32(session, tmp_path):  # type: ignore[no-untyped-def]
    """Heavy ties, doc ids that sort differently as bytes and as text, float32-only ties."""
    rng = random.Random(7)
    docs = ["a", "B", "b", "é", "z", "Z", "ü", "a b"[:1] + "é", "d10", "d9", "ß", "日本"]
    qrels_lines, runs = [], []
    for q in range(1, 6):
        for d in docs:
            qrels_lines.append(f"{q} 0 {d} {rng.choice([0, 1, 1, 2])}\n")
    for r in range(3):
        lines = []
        for q in range(1, 6):
            for j, d in enumerate(rng.sample(docs, 9)):
                score = rng.choice(["1", "1.0", "2", "0.5", "0.30000001", "0.3", "0.30000000000000004"])
                lines.append(f"{q}\tQ0\t{d}\t{j}\t{score}\trun{r}\n")
        runs.append(write(tmp_path, f"run{r}.txt", "".join(rng.sample(lines, len(lines)))))
    qrels = write(tmp_path, "qrels.txt", "".join(qrels_lines))
    wh = Warehouse(":memory:")
    wh.ingest_qrels(qrels, collection="c")
    wh.ingest_runs(runs, collection="c")
    files.load_qrels(session, qrels, collection="c")
    files.load_runs(session, runs, collection="c")
    ranked = lambda rows: sorted(tuple(r) for r in rows)  # noqa: E731
    assert ranked(
        session.sql("SELECT run_id, query_id, doc_id, score, rank FROM run_results").collect()
    ) == ranked(wh.con.execute("SELECT run_id, query_id, doc_id, score, rank FROM run_results").fetchall())
    for float32 in (False, True):
        duck = wh.evaluate(MEASURES, collection="c", per_query=True, float32_ties=float32)
        other = spark.evaluate(session, MEASURES, collection="c", float32_ties=float32)
        assert_same_values(duck, other)
    wh.close()


def test_scores_beyond_float32_rank_as_trec_eval_9_on_spark(session, tmp_path):  # type: ignore[no-untyped-def]
    """Float32 ties with scores beyond float32's range (schema 022), read by Spark SQL: the
    trec_ranked and float32_score macros expanded, Spark's own FLOAT cast below the boundary,
    rank as the numpy reference of test_float32_order.py (evalwh's reader on the executors
    ranks with C's cast, as the direct path, which that file tests)."""
    from test_float32_order import _probe, _probed_ranks, _trec_eval_9_ranks

    docs = ["a", "b", "c", "d", "e", "f", "g", "h"]
    scores = [1e39, 2e39, -1e39, 3.5e38, 0.5, 3.4028235677973362e38, -3.5e38, 3.4028234663852886e38]
    expected = _trec_eval_9_ranks(docs, scores)
    assert expected == [3, 2, 8, 1, 6, 5, 7, 4]  # d b a (+inf), h f (the largest float32), e, g c (-inf)
    qrels, run = _probe(tmp_path, docs, scores)
    files.load_qrels(session, qrels, collection="c")
    files.load_runs(session, [run], collection="c")
    values = spark.evaluate(session, ["RR"], collection="c", float32_ties=True)
    assert _probed_ranks(values, len(docs)) == expected


def test_the_executors_reader_gives_the_values_and_judged_rows_of_spark_sql(session, tmp_path):  # type: ignore[no-untyped-def]
    """reader="evalwh": the plain files read on the executors, the others by Spark SQL; one result.

    Ties, a .gz file, a file the reader leaves (a comment line), grades 0-2. Two passes cover
    the reader's branches: the threshold it counted with (rel 1, reader_judged.sql) without
    float32 ties, and another threshold (rel 2: the relevant lines counted again over the
    judged rows, reader_judged_recounted.sql) with float32 ties (the files read again). In
    each, the judged rows equal Spark SQL's for the same options and the values the warehouse's.
    """
    rng = random.Random(11)
    docs = [f"d{i}" for i in range(14)]
    qrels_text = "".join(f"{q} 0 {d} {rng.choice([0, 1, 1, 2])}\n" for q in range(1, 5) for d in docs[:10])
    qrels = write(tmp_path, "qrels.txt", qrels_text)
    runs = []
    for r, name in enumerate(["a.txt", "b.txt.gz", "c.txt", "comment.txt"]):
        lines = [
            f"{q} Q0 {d} {j} {rng.choice(['1', '2', '0.5', '0.30000001', '0.3'])} run{r}\n"
            for q in range(1, 5) for j, d in enumerate(rng.sample(docs, 8))
        ]
        text = "".join(lines) if name != "comment.txt" else "# made by hand\n" + "".join(lines)
        runs.append(write(tmp_path, name, text))
    wh = Warehouse(":memory:")
    wh.ingest_qrels(qrels, collection="c")
    wh.ingest_runs(runs, collection="c")
    judged = "SELECT run_id, query_id, rank, gain, judged_so_far, relevant_so_far FROM ev_judged_source"
    files.load_qrels(session, qrels, collection="c")  # (the runs, read again, leave it as it is)
    for float32, rel in ((False, 1), (True, 2)):
        options = spark.context_options({"float32_ties": float32, "rel": rel})
        files.load_runs(session, runs, collection="c", float32_ties=float32)
        spark.build_context(session, "c", None, options)  # (Spark SQL's judged rows, no measure)
        expected = sorted(tuple(r) for r in session.sql(judged).collect())
        loaded = files.load_runs(session, runs, collection="c", reader="evalwh", float32_ties=float32)
        assert (loaded.by_reader, loaded.without_reader) == (3, 0)  # comment.txt: Spark SQL's
        other = spark.evaluate(session, MEASURES, collection="c", float32_ties=float32, rel=rel)
        assert sorted(tuple(r) for r in session.sql(judged).collect()) == expected
        duck = wh.evaluate(MEASURES, collection="c", per_query=True, float32_ties=float32, rel=rel)
        assert_same_values(duck, other)
        with pytest.raises(MetricParamError, match="float32 ties"):
            spark.evaluate(session, ["AP"], collection="c", float32_ties=not float32)
    wh.close()


def assert_same_values(duck: pd.DataFrame, other: pd.DataFrame) -> None:
    """Every (run, topic, measure) in both frames, values equal to 1e-12 (NaN equal to NaN)."""
    merged = duck[["run_id", "query_id", "measure", "value"]].merge(
        other, on=["run_id", "query_id", "measure"], how="outer", suffixes=("_duckdb", "_spark"),
        indicator=True,
    )
    assert (merged["_merge"] == "both").all(), merged[merged["_merge"] != "both"]
    a, b = merged["value_duckdb"].to_numpy(), merged["value_spark"].to_numpy()
    agree = np.isclose(a, b, rtol=0, atol=1e-12) | (np.isnan(a) & np.isnan(b))
    assert agree.all(), merged.loc[~agree]


# -- the command ----------------------------------------------------------------------------


def test_spark_eval_command_prints_what_evalwh_eval_prints(session, tmp_path):  # type: ignore[no-untyped-def]
    """trec_eval's layout, per topic and means, from Spark and from the direct evaluation.

    The default reader (evalwh's on the executors) where it cannot be used: executors whose
    Python cannot import pyarrow fail its job, and Spark SQL reads every file (one line says
    so); executors without evalwh's reader (EVALWH_NO_READER in their environment, as
    spark.executorEnv gives it) hand every file back, and Spark SQL reads them. The values
    are the direct evaluation's all the same; a bad file gets its message from either reader.
    """
    from typer.testing import CliRunner

    from evalwh.cli import app

    qrels = write(tmp_path, "qrels.txt", QRELS + "403 0 d9 1\n")
    runs = [
        write(tmp_path, "a.txt.gz", RUN.replace(" r\n", " a\n")),
        write(tmp_path, "b.txt", RUN.replace(" r\n", " b\n").replace("2.5", "0.1")),
    ]
    runner = CliRunner()
    common = ["--qrels", str(qrels), "-m", "P@2", "-m", "AP", "-m", "nDCG@10", "--format", "trec", "--per-query"]
    direct = runner.invoke(app, ["eval", *common, *map(str, runs)])
    assert direct.exit_code == 0, direct.output
    broken = tmp_path / "no-pyarrow" / "pyarrow"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise ImportError('no pyarrow on this executor')\n")
    with executor_environment(session, PYTHONPATH=str(broken.parent)):
        result = runner.invoke(app, ["spark", "eval", *common, str(tmp_path / "[ab].txt*")])
    assert result.exit_code == 0, result.output
    assert result.stdout == direct.stdout
    assert "runid                 \tall\ta" in result.stdout
    said = result.stderr.strip()
    assert said.startswith("Spark SQL read the 2 run files: evalwh's reader failed on the executors ("), said
    assert "no pyarrow on this executor" in said and "\n" not in said
    # (the qrels the command read are still the session's)
    with executor_environment(session, EVALWH_NO_READER="1"):
        loaded = files.load_runs(session, runs, reader="evalwh")
    assert (loaded.by_reader, loaded.without_reader) == (0, 2)
    assert loaded.reader_line == (
        "evalwh's reader read 0 of 2 run files on the executors; 2 went to Spark SQL because their executor "
        "has no evalwh reader (not installed there, or EVALWH_NO_READER set; docs/spark.md: --archives)"
    )

    bad = write(tmp_path, "bad.run", "401 Q0 d1 1 2 x\n401 Q0 d1 2 1 x\n")
    failed = runner.invoke(app, ["spark", "eval", "--qrels", str(qrels), str(bad)])
    assert failed.exit_code == 1
    assert failed.stderr.strip() == f"Error: {bad}:2: document 'd1' appears twice for topic '401' (first on line 1)"


@contextmanager
def executor_environment(session, **variables: str):  # type: ignore[no-untyped-def]
    """Environment variables of the executors' Python workers for one block (as a cluster's
    spark.executorEnv.* gives them): pyspark hands SparkContext.environment to each Python
    function, and starts its workers' daemon anew for another environment."""
    environment = session.sparkContext.environment
    before = {key: environment.get(key) for key in variables}
    environment.update(variables)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                environment.pop(key, None)
            else:
                environment[key] = value


# -- Parquet run tables ---------------------------------------------------------------------


def test_parquet_run_tables_rank_as_the_warehouse_and_fail_as_frames_do(session, tmp_path):  # type: ignore[no-untyped-def]
    """Runs as Parquet in the warehouse's DataFrame layout: same ranks and checks as ingest."""
    rng = random.Random(3)
    frame = pd.DataFrame(
        [
            {"run_id": f"r{r}", "query_id": str(q), "doc_id": d, "score": rng.choice([1.0, 2.0, 0.5])}
            for r in range(2) for q in (1, 2) for d in rng.sample(["a", "B", "é", "z", "d1"], 4)
        ]
    )
    frame.iloc[:10].to_parquet(tmp_path / "part0.parquet", index=False)
    frame.iloc[10:].to_parquet(tmp_path / "part1.parquet", index=False)
    wh = Warehouse(":memory:")
    wh.ingest_runs(frame, collection="c")
    assert files.load_run_tables(session, [str(tmp_path / "part*.parquet")], collection="c") == ["r0", "r1"]
    ranked = lambda rows: sorted(tuple(r) for r in rows)  # noqa: E731
    columns = "run_id, query_id, doc_id, score, rank_given, rank"
    assert ranked(session.sql(f"SELECT {columns} FROM run_results").collect()) == ranked(
        wh.con.execute(f"SELECT {columns} FROM run_results").fetchall()
    )
    wh.close()
    bad = frame.iloc[:4].copy()
    bad.loc[2, "score"] = float("nan")
    bad.to_parquet(tmp_path / "nan.parquet", index=False)
    with pytest.raises(IngestError) as caught:
        files.load_run_tables(session, [tmp_path / "nan.parquet"])
    assert str(caught.value) == f"{tmp_path / 'nan.parquet'}:3: score nan is not a finite number"
    twice = pd.concat([frame.iloc[:3], frame.iloc[1:2]])
    twice.to_parquet(tmp_path / "twice.parquet", index=False)
    row = frame.iloc[1]
    with pytest.raises(IngestError) as caught:
        files.load_run_tables(session, [tmp_path / "twice.parquet"])
    assert str(caught.value) == (
        f"{tmp_path / 'twice.parquet'}:4: document {row['doc_id']!r} appears twice for topic "
        f"{row['query_id']!r} in run {row['run_id']!r} (first on row 2)"
    )


# -- write-back ------------------------------------------------------------------------------


def test_write_back_imports_into_a_warehouse_that_evaluates_as_one_from_the_files(session, tmp_path):  # type: ignore[no-untyped-def]
    """evalwh spark ingest: TREC-8's qrels and three runs, cut to five topics (tests/
    test_spark_cluster.py's TOPICS), ranked by Spark, through evalwh import."""
    from typer.testing import CliRunner

    from evalwh.cli import app

    if not TREC8.is_dir():
        pytest.skip(f"{TREC8} is not there")
    from test_spark_cluster import TOPICS, _cut

    runs = [_cut(run, tmp_path / run.name) for run in sorted((TREC8 / "runs").glob("input.*.gz"))[:3]]
    qrels = _cut(TREC8 / "trec8.qrels", tmp_path / "trec8.qrels")
    out = tmp_path / "export"
    result = CliRunner().invoke(
        app, ["spark", "ingest", "--qrels", str(qrels), *map(str, runs), "--collection", "t8", "--output", str(out)]
    )
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["format_version"] == 2
    assert set(manifest["tables"]) == {"collections", "qrels_sets", "qrels", "topics", "runs", "run_results", "run_topics"}
    imported = Warehouse(tmp_path / "imported.duckdb")
    counts = imported.import_export(out)
    direct = Warehouse(tmp_path / "direct.duckdb")
    direct.ingest_qrels(qrels, collection="t8")
    results = direct.ingest_runs(runs, collection="t8")
    assert counts["run_results"] == sum(r.lines for r in results)
    for table, columns in {
        "run_results": "run_id, query_id, doc_id, score, rank_given, rank",
        "run_topics": "run_id, query_id, num_ret",
        "qrels": "qrels_id, query_id, iteration, doc_id, relevance",
        "topics": "query_id",
        "runs": "run_id, tag, source_file, sha256, line_count",
        "qrels_sets": "qrels_id, kind, sha256, line_count",
    }.items():
        query = f"SELECT {columns} FROM {table} WHERE collection_id = 't8' ORDER BY ALL"
        assert imported.con.execute(query).fetchall() == direct.con.execute(query).fetchall(), table
    for options in ({}, {"rel": 2, "depth_cap": 100, "averaging": "trec_eval_c"}):
        pd.testing.assert_frame_equal(
            imported.evaluate(MEASURES, collection="t8", per_query=True, **options),
            direct.evaluate(MEASURES, collection="t8", per_query=True, **options),
        )
    imported.close()
    direct.close()
    # the same export evaluated on Spark, read as Parquet: what evalwh eval --qrels prints
    common = [*[a for m in MEASURES for a in ("-m", m)], "--per-query", "--format", "csv"]
    parquet = CliRunner().invoke(app, ["spark", "eval", "--runs-parquet", str(out), *common])
    assert parquet.exit_code == 0, parquet.output
    text = CliRunner().invoke(app, ["eval", "--qrels", str(qrels), *map(str, runs), *common])
    key = ["run_id", "query_id", "measure"]
    a = pd.read_csv(io.StringIO(text.stdout), dtype={"query_id": str}).drop(columns="collection_id")
    b = pd.read_csv(io.StringIO(parquet.stdout), dtype={"query_id": str}).drop(columns="collection_id")
    assert list(a.columns) == list(b.columns)
    assert_same_values(a[[*key, "value"]], b[[*key, "value"]])
    assert len(b) == 3 * len(TOPICS) * len(MEASURES)
    both = CliRunner().invoke(app, ["spark", "eval", "--runs-parquet", str(out), str(runs[0])])
    assert both.exit_code == 2 and "not both" in both.output
    other = CliRunner().invoke(app, ["spark", "eval", "--runs-parquet", str(out), "--collection", "t9"])
    assert other.exit_code == 1
    assert other.stderr.strip() == f"Error: {out}: the export holds no collection 't9' (it has: t8)"


def test_eval_output_directory_holds_the_per_topic_values_by_measure(session, tmp_path):  # type: ignore[no-untyped-def]
    """--format parquet --output DIR: Spark writes every per-topic value, partitioned by measure."""
    from typer.testing import CliRunner

    from evalwh.cli import app

    qrels = write(tmp_path, "qrels.txt", QRELS)
    run = write(tmp_path, "a.txt", RUN)
    specs = ["AP", "RBP(p=0.8)@10", "nDCG@10"]
    args = ["--qrels", str(qrels), str(run), *[a for m in specs for a in ("-m", m)]]
    out = tmp_path / "values"
    result = CliRunner().invoke(app, ["spark", "eval", *args, "--format", "parquet", "--output", str(out)])
    assert result.exit_code == 0, result.output
    # hive-style folders; Spark escapes '=' and the like in a value, as readers expect
    assert sorted(unquote(p.name) for p in out.iterdir()) == sorted(f"measure={m}" for m in specs)
    import pyarrow.dataset as ds

    written = ds.dataset(out, partitioning="hive").to_table().to_pandas()
    written["measure"] = written["measure"].astype(str)
    direct = CliRunner().invoke(app, ["eval", *args, "--per-query", "--format", "csv"])
    expected = pd.read_csv(io.StringIO(direct.stdout), dtype={"query_id": str})
    key = ["run_id", "query_id", "measure"]
    merged = expected.merge(written, on=key, suffixes=("", "_spark"))
    assert len(merged) == len(expected) == len(written)
    assert np.allclose(merged["value"], merged["value_spark"], rtol=0, atol=1e-12)


# -- names as typed ----------------------------------------------------------------------------


def _catalog_specs() -> list[str]:
    """One spec per metric of the catalog, typed with spaces and every parameter Spark computes.

    The metric's own options (rel=, judged_only=) and gain maps are refused on Spark, so they
    are left out; numbers are written as a user types them (``p = 0.80``).
    """
    from evalwh.measures import catalog

    values = {"INTEGER": "3", "DOUBLE": "0.80", "BOOLEAN": "true"}
    out = []
    for metric in catalog.metrics():
        if "ev_judged_sources" in metric.file.text:
            continue  # the judged share by label source: refused on Spark (no provenance there)
        parts = []
        for param in metric.params:
            if param.name == "k" or param.type == "GAINS" or (param.type == "VARCHAR" and not param.choices):
                continue
            value = param.choices[0] if param.choices else values.get(param.type)
            # values that leave every measure defined (Spark stops on a division by zero
            # where DuckDB gives infinity: degenerate parameters are not what this tests)
            value = {"recall": "0.50", "max_rel": "2", "min_rel": "0"}.get(param.name, value)
            if value is not None:
                parts.append(f"{param.name} = {value}")
        spec = metric.name + (f"({', '.join(parts)})" if parts else "")
        k = metric.param("k")
        out.append(spec + ("@10" if k is not None else ""))
    return out


def test_every_catalog_measure_keeps_the_name_evalwh_eval_gives_it(session, tmp_path):  # type: ignore[no-untyped-def]
    """evalwh spark eval and evalwh eval --qrels: the same measure names (as typed), the same values."""
    from typer.testing import CliRunner

    from evalwh.cli import app

    qrels = write(tmp_path, "qrels.txt", "1 0 a 2\n1 0 b 1\n1 0 c 0\n2 0 a 1\n2 0 d 0\n")
    run = write(tmp_path, "run.txt", "1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 x 3 1 r\n2 Q0 d 1 2 r\n2 Q0 a 2 1 r\n")
    specs = _catalog_specs()
    args = ["--qrels", str(qrels), str(run), *[a for m in specs for a in ("-m", m)], "--per-query", "--format", "csv"]
    direct = CliRunner().invoke(app, ["eval", *args])
    assert direct.exit_code == 0, direct.output
    # (the default reader, evalwh's on the executors: every measure from the judged rows it gives)
    other = CliRunner().invoke(app, ["spark", "eval", *args])
    assert other.exit_code == 0, other.output
    assert other.stderr.strip() == "evalwh's reader read 1 of 1 run files on the executors"
    a = pd.read_csv(io.StringIO(direct.stdout), dtype={"query_id": str})
    b = pd.read_csv(io.StringIO(other.stdout), dtype={"query_id": str})
    assert list(dict.fromkeys(b["measure"])) == list(dict.fromkeys(a["measure"])) == specs
    assert_same_values(a, b[["run_id", "query_id", "measure", "value"]])


# -- excluded documents (methods §17) ------------------------------------------------------


@pytest.mark.parametrize("reader", ["spark", "evalwh"])
def test_excluded_documents_leave_the_runs_before_ranking(session, tmp_path, reader):  # type: ignore[no-untyped-def]
    """Issue 55 item 1: -100 labels, an exclusion file and identical ids, on Spark, equal
    pytrec_eval on the run files filtered by hand (tests/test_exclusions.py's collection)."""
    from test_exclusions import MEASURES, RUNS, _pytrec, _same, make_collection

    made = make_collection(tmp_path)
    folder = made["folder"]
    try:
        frame = files.evaluate_files(
            session, str(folder / "qrels"), [str(folder / n) for n in RUNS], list(MEASURES.values()),
            exclusions=[folder / "excluded.txt"], identical_ids=True, reader=reader,
        )  # fmt: skip
        _same(frame, _pytrec(made["ref"], RUNS))
        loaded = files.load_runs(session, [str(folder / n) for n in RUNS], identical_ids=True, reader=reader)
        assert sum(loaded.excluded.values()) == sum(made["lost"].values())
        assert loaded.by_reader == 0  # (evalwh's reader ranks what it reads: it cannot drop lines first)
        if reader == "evalwh":
            assert loaded.reader_line == (
                f"Spark SQL read the {len(RUNS)} run files: excluded documents leave the runs before ranking, "
                "which evalwh's reader cannot do (methods §17)"
            )
    finally:  # (the shared session's later tests read runs without these exclusions)
        session.catalog.dropTempView("spark_excluded")


def test_spark_ingest_exports_the_exclusions_an_ingest_stores(session, tmp_path):  # type: ignore[no-untyped-def]
    """Issue 55 item 1 on evalwh spark ingest: -100 labels, an exclusion file and identical
    ids; the export imports into the tables (exclusions, their sources, each run's losses,
    the filtered runs) and values that evalwh ingest and evalwh exclusions give, and those
    values are pytrec_eval's on the files filtered by hand."""
    from test_exclusions import MEASURES as EX_MEASURES
    from test_exclusions import RUNS, _pytrec, _same, make_collection
    from typer.testing import CliRunner

    from evalwh.cli import app

    made = make_collection(tmp_path)
    folder = made["folder"]
    out = tmp_path / "export"
    runs = [str(folder / n) for n in RUNS]
    try:
        result = CliRunner().invoke(
            app,
            ["spark", "ingest", "--qrels", str(folder / "qrels"), *runs, "--collection", "beir", "--output", str(out),
             "--exclude", str(folder / "excluded.txt"), "--exclude-identical-ids"],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
    finally:
        for view in (*exclusions.VIEWS, "run_exclusions"):
            if session.catalog.tableExists(view):
                session.catalog.dropTempView(view)
    assert "note: 24 lines labelled -100 are excluded documents, not grades" in result.stderr
    lost = {}
    for (run, _), n in made["lost"].items():
        lost[run] = lost.get(run, 0) + n
    for run, n in lost.items():
        assert f"note: exclusions removed {n:,} lines from run {run}\n" in result.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert {"excluded_documents", "exclusion_sources", "run_exclusions"} <= set(manifest["tables"])
    assert manifest["tables"]["run_exclusions"]["rows"] == sum(lost.values())
    imported = Warehouse(tmp_path / "imported.duckdb")
    imported.import_export(out)
    direct = Warehouse(tmp_path / "direct.duckdb")
    direct.ingest_qrels(folder / "qrels", collection="beir")
    direct.add_exclusions(folder / "excluded.txt", collection="beir")
    direct.exclude_identical_ids(collection="beir")
    direct.ingest_runs([folder / n for n in RUNS], collection="beir")
    for table, columns in {
        "run_results": "run_id, query_id, doc_id, score, rank_given, rank",
        "run_topics": "run_id, query_id, num_ret",
        "qrels": "qrels_id, query_id, iteration, doc_id, relevance",
        "topics": "query_id",
        "runs": "run_id, tag, source_file, sha256, line_count",
        "qrels_sets": "qrels_id, kind, source_file, sha256, line_count",
        "excluded_documents": "*",
        "exclusion_sources": "* EXCLUDE (created_at)",
        "run_exclusions": "*",
    }.items():
        query = f"SELECT {columns} FROM {table} WHERE collection_id = 'beir' ORDER BY ALL"
        got, want = imported.con.execute(query).fetchall(), direct.con.execute(query).fetchall()
        assert got and got == want, table
    # a list the exclusions emptied is there, with nothing returned (sys5's last topic)
    assert imported.con.execute("SELECT count(*) FROM run_topics WHERE num_ret = 0").fetchall() == [(1,)]
    values = imported.evaluate(list(EX_MEASURES.values()), collection="beir", per_query=True)
    pd.testing.assert_frame_equal(values, direct.evaluate(list(EX_MEASURES.values()), collection="beir", per_query=True))
    _same(values, _pytrec(made["ref"], RUNS))
    # the imported losses give their rows back: the file removed, as on the direct warehouse
    imported.remove_exclusions(str(folder / "excluded.txt"), collection="beir")
    direct.remove_exclusions(str(folder / "excluded.txt"), collection="beir")
    query = "SELECT run_id, query_id, doc_id, score, rank_given, rank FROM run_results ORDER BY ALL"
    assert imported.con.execute(query).fetchall() == direct.con.execute(query).fetchall()
    imported.close()
    direct.close()


def test_spark_ingest_with_a_bad_exclusion_file_writes_nothing(session, tmp_path):  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from evalwh.cli import app

    qrels = write(tmp_path, "qrels.txt", QRELS)
    run = write(tmp_path, "run.txt", RUN)
    bad = write(tmp_path, "excluded.txt", "401 d1\n401 d2 x\n")
    out = tmp_path / "export"
    try:
        result = CliRunner().invoke(
            app, ["spark", "ingest", "--qrels", str(qrels), str(run), "-c", "c", "--output", str(out), "--exclude", str(bad)]
        )
    finally:
        for view in (*exclusions.VIEWS, "run_exclusions"):
            if session.catalog.tableExists(view):
                session.catalog.dropTempView(view)
    assert result.exit_code == 1
    assert result.stderr.strip() == f"Error: {bad}:2: expected 2 fields (topic docid), found 3"
    assert not out.exists()
