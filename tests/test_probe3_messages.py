"""The third reliability probe (issue #37), items 4, 7, 8, 9a and 10: every message true, in one line.

Parameters outside their domain are refused (measure specs and numeric options); errors name
their problem (seeds, choices in the Python API, a name given as a string, a ``.sql`` that is
a device, a warehouse closed under a thread); click's usage errors are one line with exit 2;
Spark without Java says so before starting a JVM; compare notes runs that lack different
topics. The other items of the issue have their tests beside their code.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pandas as pd
import pytest

from evalwh import Warehouse
from evalwh.errors import ArgumentError, EvalWhError, MetricParamError, WarehouseClosedError
from evalwh.measures import catalog

from test_safety import QRELS, RUNS, invoke  # noqa: E402


def one_line(result, code: int, text: str) -> bool:
    """Exit ``code``, one line on standard error starting ``Error: `` and holding ``text``."""
    return (
        result.exit_code == code
        and result.stderr.startswith("Error: ")
        and result.stderr.count("\n") == 1
        and text in result.stderr
        and "Traceback" not in result.output
        and "╭" not in result.output
    )


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two qrels sets (human, llm) and two runs."""
    path = tmp_path_factory.mktemp("probe3") / "W.duckdb"
    with Warehouse(path) as wh:
        wh.ingest_qrels(QRELS, collection="c")
        wh.ingest_qrels(QRELS.assign(relevance=[1, 1, 0, 0, 1]), collection="c", qrels_id="llm", source="llm")
        wh.ingest_runs(RUNS, collection="c")
    return path


# -- 4. parameters outside their domain -------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("RBP(p=2)", "RBP(p=2): p=2 is outside the domain 0 < p < 1"),
        ("RBP(p=1)@10", "p=1 is outside the domain 0 < p < 1"),
        ("RBP(p=0)", "p=0 is outside the domain 0 < p < 1"),
        ("RBP_trunc(p=1.5)@10", "p=1.5 is outside the domain 0 < p < 1"),
        ("Compat(p=-0.1)", "p=-0.1 is outside the domain 0 < p < 1"),
        ("IPrec@1.5", "recall=1.5 is outside the domain 0 <= recall <= 1"),
        ("Rprec_mult(mult=0)", "mult=0 is outside the domain mult > 0"),
        ("set_F(beta=-1)", "beta=-1 is outside the domain beta >= 0"),
        ("ERR(max_rel=0)@10", "max_rel=0 is outside the domain max_rel > 0"),
        ("SDCG(max_rel=2, min_rel=2)@10", "max_rel=2 with min_rel=2 is outside the domain max_rel > min_rel"),
        ("utility(docs=-5)", "docs=-5 is outside the domain docs >= 0"),
        ("RBP(p=1e400)", "p='1e400' must be a finite number"),
        ("P(rel=1e400)@10", "rel='1e400' must be a finite number"),
        ("nDCG(gains={0:0,1:1e400})@10", "must be a gain map"),
        ("P@0", "k='0' must be a positive integer"),
    ],
)
def test_a_measure_parameter_outside_its_domain_is_refused(spec, message):
    with pytest.raises(MetricParamError) as raised:
        catalog.parse(spec)
    assert message in str(raised.value)


def test_values_on_the_domains_edge_are_accepted():
    assert catalog.parse("IPrec@1").params["recall"] == 1.0
    assert catalog.parse("IPrec@0").params["recall"] == 0.0
    assert catalog.parse("set_F(beta=0)").params["beta"] == 0.0
    assert catalog.parse("RBP(p=0.999)@10").params["p"] == 0.999
    assert catalog.parse("SDCG(max_rel=1, min_rel=0.5)@10").params["min_rel"] == 0.5
    # every declared domain is read, and every default lies in it
    declared = [p for m in catalog.metrics() for p in m.params if p.domain]
    assert len(declared) == 14 and all(p.bounds != (None, None) for p in declared)


def test_eval_refuses_rbp_with_p_2_instead_of_printing_a_negative_score(db):
    result = invoke("eval", "-m", "RBP(p=2)", "--db", db)
    assert one_line(result, 1, "RBP(p=2): p=2 is outside the domain 0 < p < 1"), result.output


def test_trec_eval_keeps_its_own_reading_of_parameters(tmp_path):
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text("1 0 a 1\n1 0 b 0\n")
    run.write_text("1 Q0 a 1 2 r\n1 Q0 b 2 1 r\n")
    result = invoke("trec_eval", "-m", "Rprec_mult.0", qrels, run)  # (trec_eval's grammar, not evalwh's)
    assert result.exit_code == 0 and "Rprec_mult_0.00" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["agreement", "--reference", "default", "--binary-at", "nan"], "--binary-at: 'nan' is not a finite number"),
        (["label-uncertainty", "--reference", "default", "--machine", "llm", "--prior", "inf"], "--prior: 'inf' is not a finite number"),
        (["label-uncertainty", "--reference", "default", "--machine", "llm", "--prior", "-1"], "--prior: -1.0 is not in the range x>=0"),
        (["label-uncertainty", "--reference", "default", "--machine", "llm", "--level", "1"], "--level: 1.0 is not in the range 0<x<1"),
        (["label-uncertainty", "--reference", "default", "--machine", "llm", "--samples", "0"], "--samples: 0 is not in the range x>=1"),
        (["sensitivity", "--qrels-id", "default", "--qrels-id", "llm", "--rbo-p", "1"], "--rbo-p: 1.0 is not in the range 0<x<1"),
        (["sensitivity", "--qrels-id", "default", "--qrels-id", "llm", "--confidence", "nan"], "--confidence: 'nan' is not a finite number"),
        (["experiment", "exclusions", "--share", "1.5"], "--share: 1.5 is not in the range 0<x<=1"),
        (["experiment", "exclusions", "--cap", "0"], "--cap: 0 is not in the range x>=1"),
        (["eval", "-m", "P@1", "-M", "-3"], "--depth-cap: -3 is not in the range x>=1"),
        (["compare", "r1", "r2", "--alpha", "1"], "--alpha: 1.0 is not in the range 0<x<1"),
        (["unjudged", "--max-rank", "0"], "--max-rank: 0 is not in the range x>=1"),
    ],
)
def test_a_numeric_option_outside_its_domain_is_a_usage_error(args, message, db):
    result = invoke(*args, "--db", db)
    assert one_line(result, 2, message), result.output


def test_the_python_api_refuses_an_infinite_prior(db):
    import warnings

    with Warehouse.open_reader(db) as wh, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (only 5 shared pairs: the small collection's warning)
        with pytest.raises(MetricParamError, match="prior inf must be a finite number >= 0"):
            wh.label_uncertainty("default", "llm", ["P@1"], prior=float("inf"))


# -- 7. errors that name the problem --------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["compare", "r1", "r2", "-t", "randomization"],
        ["sensitivity", "--qrels-id", "default", "--qrels-id", "llm"],
        ["label-uncertainty", "--reference", "default", "--machine", "llm"],
    ],
)
def test_a_negative_seed_is_named(args, db):
    result = invoke(*args, "--seed", "-1", "--db", db)
    assert one_line(result, 2, "--seed: -1 is not in the range x>=0"), result.output


def test_the_python_api_names_bad_seeds_and_choices(db):
    with Warehouse.open_reader(db) as wh:
        with pytest.raises(ArgumentError, match=r"seed -1: a seed is a whole number >= 0"):
            wh.compare(["AP"], seed=-1, test="randomization")
        with pytest.raises(ArgumentError, match=r"seed 1.5: a seed is a whole number"):
            wh.sensitivity(["default", "llm"], seed=1.5)
        with pytest.raises(ArgumentError, match=r"test 'ttest' is not one of anova, anova2, t, wilcoxon"):
            wh.compare(["AP"], test="ttest")
        with pytest.raises(ArgumentError, match=r"correction 'fdr' is not one of none, bonferroni, holm, bh, by"):
            wh.compare(["AP"], correction="fdr")
        with pytest.raises(ArgumentError, match=r"averaging 'all' is not one of default, trec_eval_c"):
            wh.evaluate(["AP"], averaging="all")
        with pytest.raises(ValueError):  # still a ValueError, for code written against the bare one
            wh.evaluate(["AP"], unjudged="dropped")
    import evalwh

    with pytest.raises(ArgumentError, match="seed -2"):
        evalwh.compare(QRELS, {"a": RUNS[RUNS.run_id == "r1"], "b": RUNS[RUNS.run_id == "r2"]}, ["AP"], seed=-2)


def test_a_string_is_one_name_where_names_are_asked_for(db):
    with Warehouse.open_reader(db) as wh:
        # one set: refused as one set (it used to read 'default' as the sets d, e, f, ...)
        with pytest.raises(MetricParamError, match="give at least two different label sets"):
            wh.sensitivity("default", ["P@1"])
        with pytest.raises(MetricParamError, match="'default' was given 2 times"):
            wh.sensitivity(["default", "default"], ["P@1"])
        assert wh.evaluate(["P@1"], runs="r1")["run_id"].tolist() == ["r1"]
        assert sorted(wh.bounds("r2", depths=[1])["run_id"].unique()) == ["r2"]
        assert wh.agreement("default", "llm")["qrels_id"].tolist() == ["llm"]


def test_a_sql_file_that_is_a_device_says_what_it_is(db, tmp_path):
    link = tmp_path / "x.sql"
    link.symlink_to("/dev/zero")
    folder = tmp_path / "d.sql"
    folder.mkdir()
    fifo = tmp_path / "f.sql"
    os.mkfifo(fifo)
    for path, kind in ((link, "a character device"), (folder, "a directory"), (fifo, "a named pipe")):
        result = invoke("sql", path, "--db", db)
        assert one_line(result, 1, f"{path}: not a regular file ({kind}), so not a SQL file"), result.output
    result = invoke("sql", tmp_path / "none.sql", "--db", db)
    assert one_line(result, 1, "none.sql: no such SQL file"), result.output


def test_jobs_after_close_say_the_warehouse_was_closed(db):
    wh = Warehouse.open_reader(db)
    started, errors = threading.Barrier(3), []

    def evaluate() -> None:
        started.wait()
        for _ in range(200):
            try:
                wh.evaluate(["AP"])
            except Exception as error:  # noqa: BLE001 (what the thread sees is the point)
                errors.append(error)
                return

    threads = [threading.Thread(target=evaluate) for _ in range(2)]
    for thread in threads:
        thread.start()
    started.wait()
    wh.close()
    for thread in threads:
        thread.join()
    assert len(errors) == 2
    assert all(isinstance(e, WarehouseClosedError) for e in errors), errors
    assert "the warehouse was closed (Warehouse.close()) before evaluate() could run" in str(errors[0])
    wh.close()  # (closing again is no error)
    with pytest.raises(WarehouseClosedError, match="before runs"):
        wh.runs()


# -- 8. click's usage errors are one line, exit 2 ---------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ingest", "qrels", "-c", "c", "--source", "bogus", "x"], "--source: 'bogus' is not one of human, llm, inferred"),
        (["ingest", "qrels", "-c", "c", "--round", "-1", "x"], "--round: -1 is not in the range x>=0"),
        (["ingest", "qrels", "-c", "c", "--round", "1.5", "x"], "--round: '1.5' is not a whole number"),
        (["agreement"], "--reference: missing; evalwh agreement needs this option"),
        (["sensitivity", "--qrels-id", "a", "--layout", "bogus"], "--layout: 'bogus' is not one of summary, runs, sets"),
        (["compare", "-t", "ttest"], "--test: 'ttest' is not one of anova, anova2, t, wilcoxon, sign"),
        (["compare", "--correction", "fdr"], "--correction: 'fdr' is not one of bonferroni, holm, bh, by, none"),
        (["compare", "--alpha", "1.5"], "--alpha: 1.5 is not in the range 0<x<1"),
        (["compare", "--resamples", "0"], "--resamples: 0 is not in the range x>=1"),
        (["export", "{db}"], "DIRECTORY: '{db}' is a file, not a directory"),
        (["eval", "-o", "{dir}"], "--output: '{dir}' is a directory, not a file"),
        (["eval", "--bogus"], "--bogus: evalwh eval has no such option"),
        (["eval", "-m"], "-m: requires an argument"),
        (["evl"], "evalwh: no such command 'evl'; did you mean 'eval'?"),
        (["ingest", "qrels"], "FILES: missing; evalwh ingest qrels needs this argument"),
        (["runs", "--db", "{dir}/other.duckdb"], "--db: given twice"),
    ],
)
def test_usage_errors_are_one_line_with_exit_2(args, message, db):
    fill = {"db": str(db), "dir": str(db.parent)}
    result = invoke("--db", db, *[a.format(**fill) for a in args])
    assert one_line(result, 2, message.format(**fill)), result.output


def test_no_arguments_still_print_the_help():
    for args in ([], ["ingest"]):
        result = invoke(*args)
        assert "Usage: evalwh" in result.output and "Error" not in result.output


# -- 9a. Spark without Java -----------------------------------------------------------------------


def test_java_runtime_looks_where_sparks_launcher_looks(monkeypatch, tmp_path):
    from evalwh.spark.session import java_runtime, java_version, require_java

    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "nonexistent"))
    assert java_runtime() is None  # a set JAVA_HOME wins over PATH, as in spark-class
    with pytest.raises(EvalWhError) as raised:
        require_java()
    assert str(raised.value) == (
        f"Spark needs a Java 17 runtime and found none: JAVA_HOME={tmp_path / 'nonexistent'} holds no bin/java "
        "(a set JAVA_HOME is used instead of PATH; unset it or fix it); install one "
        "(apt-get install openjdk-17-jre-headless, or any Java 17+ runtime)"
    )
    monkeypatch.delenv("JAVA_HOME")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert java_runtime() is None
    with pytest.raises(EvalWhError, match="JAVA_HOME is not set and there is no java on PATH"):
        require_java()
    old = tmp_path / "old" / "bin"
    old.mkdir(parents=True)
    (old.parent / "release").write_text('JAVA_VERSION="11.0.2"\n')
    (old / "java").write_text("#!/bin/sh\n")
    (old / "java").chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(old.parent))
    assert java_runtime() == str(old / "java") and java_version(str(old / "java")) == 11
    with pytest.raises(EvalWhError, match=r"Spark needs a Java 17 runtime or newer; .*old/bin/java is Java 11"):
        require_java()


def test_spark_eval_without_java_is_one_line(monkeypatch, tmp_path):
    pytest.importorskip("pyspark")
    (tmp_path / "q").write_text("1 0 a 1\n")
    (tmp_path / "r").write_text("1 Q0 a 1 1 r\n")
    monkeypatch.setenv("JAVA_HOME", "/nonexistent")
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    result = invoke("spark", "eval", "--qrels", tmp_path / "q", tmp_path / "r", "-m", "P@1", "--master", "local[1]")
    assert one_line(result, 1, "Spark needs a Java 17 runtime and found none: JAVA_HOME=/nonexistent"), result.output
    assert "spark-class" not in result.output and "JAVA_GATEWAY_EXITED" not in result.output


# -- 10. compare on runs that lack different topics -------------------------------------------------


QRELS6 = pd.DataFrame({"query_id": [str(t) for t in range(1, 7)], "doc_id": ["a"] * 6, "relevance": [1] * 6})
DISJOINT = {
    "x": pd.DataFrame({"query_id": ["1", "1", "2", "2", "3", "3"], "doc_id": ["a", "b"] * 3, "score": [2.0, 1.0] * 3}),
    "y": pd.DataFrame({"query_id": ["4", "4", "5", "5", "6", "6"], "doc_id": ["b", "a"] * 3, "score": [2.0, 1.0] * 3}),
}
NOTE = (
    "the runs' topic sets differ: x has no ranking for 3 of the 6 topics scored, y for 3; such a topic "
    "scores 0 for that run (an empty ranking), so part of a difference may be the topics a run lacks"
)


def test_compare_notes_runs_on_different_topics_from_files():
    import evalwh

    result = evalwh.compare(QRELS6, DISJOINT, ["AP"])
    assert result.notes == [NOTE]
    assert result.pairs["measure"].tolist() == ["AP"]  # (the topics' counts are not a measure of the result)
    same = evalwh.compare(QRELS6, {"x": DISJOINT["x"], "z": DISJOINT["x"]}, ["AP", "num_ret"])
    assert same.notes == [] and same.pairs["measure"].tolist() == ["AP", "NumRet"]


def test_compare_notes_runs_on_different_topics_in_a_warehouse(tmp_path):
    path = tmp_path / "W.duckdb"
    with Warehouse(path) as wh:
        wh.ingest_qrels(QRELS6, collection="c")
        for name, frame in DISJOINT.items():
            wh.ingest_runs(frame, collection="c", run_id=name)
    result = invoke("compare", "x", "y", "-m", "AP", "--db", path)
    assert result.exit_code == 0, result.output
    assert result.stderr == f"note: {NOTE}\n"
    with Warehouse.open_reader(path) as wh:
        assert wh.compare("AP", ["x", "y"]).notes == [NOTE]
