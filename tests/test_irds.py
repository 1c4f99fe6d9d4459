"""irds:DATASET_ID wherever a qrels file is taken (evalwh/io/irds.py), offline.

Two datasets without network: one registered from local files in ir_datasets' registry, and
msmarco-passage/trec-dl-2019 itself, whose qrels file the test puts into a fresh ir_datasets
home (``IR_DATASETS_HOME``, read when ir_datasets first loads the dataset, so that test runs
the CLI in a subprocess): ``../shared/data/anserini_qrels/qrels.dl19-passage.txt`` has the
MD5 ir_datasets expects of NIST's 2019qrels-pass.txt (2f4be390198da108f6845c822e5ada14).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from evalwh.cli import app
from typer.testing import CliRunner

from evalwh import Warehouse, evaluate
from evalwh.errors import EvalWhError
from evalwh.io import irds

ir_datasets = pytest.importorskip("ir_datasets")

DL19 = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "data"
    / "anserini_qrels"
    / "qrels.dl19-passage.txt"
)
QRELS = "1 0 a 2\n1 0 b 0\n1 0 c 1\n2 0 d 1\n2 0 e -1\n3 0 f 0\n"
RUN = "1 Q0 a 1 3.0 r\n1 Q0 c 2 2.0 r\n1 Q0 x 3 2.0 r\n2 Q0 e 1 5.0 r\n2 Q0 d 2 1.0 r\n3 Q0 f 1 1.0 r\n"
runner = CliRunner()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    """``evalwh-test/tiny``: TREC qrels, queries and documents from local files."""
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels, TsvDocs, TsvQueries
    from ir_datasets.util import LocalDownload

    folder = tmp_path_factory.mktemp("tiny")
    (folder / "qrels").write_text(QRELS)
    (folder / "queries.tsv").write_text("1\tfirst topic\n2\tsecond topic\n3\tthird topic\n")
    (folder / "docs.tsv").write_text("a\talpha\nb\tbeta\nc\tgamma\nd\tdelta\n")
    (folder / "run").write_text(RUN)
    defs = {-1: "pooled, not judged", 0: "not relevant", 1: "relevant", 2: "highly relevant"}
    for name, qrels in (("evalwh-test/tiny", TrecQrels(LocalDownload(folder / "qrels"), defs)),
                        ("evalwh-test/three-columns", TrecQrels(LocalDownload(folder / "qrels3"), defs, format_3col=True))):  # fmt: skip
        if name not in ir_datasets.registry:
            docs = TsvDocs(LocalDownload(folder / "docs.tsv"))
            ir_datasets.registry.register(
                name, Dataset(qrels, TsvQueries(LocalDownload(folder / "queries.tsv")), docs)
            )
    (folder / "qrels3").write_text(
        "".join(f"{q} {d} {g}\n" for q, _, d, g in (line.split() for line in QRELS.splitlines()))
    )
    if "evalwh-test/no-qrels" not in ir_datasets.registry:
        ir_datasets.registry.register(
            "evalwh-test/no-qrels", Dataset(TsvQueries(LocalDownload(folder / "queries.tsv")))
        )
    return folder


def test_eval_irds_equals_eval_file(tiny):
    """evalwh eval --qrels irds:ID RUN prints what --qrels FILE RUN prints."""
    args = [
        "eval",
        "-m",
        "AP",
        "-m",
        "nDCG@10",
        "-m",
        "P@2",
        "--per-query",
        "--format",
        "csv",
        str(tiny / "run"),
    ]
    by_id = runner.invoke(app, [*args, "--qrels", "irds:evalwh-test/tiny"])
    by_file = runner.invoke(app, [*args, "--qrels", str(tiny / "qrels")])
    assert by_id.exit_code == 0, by_id.output
    assert by_id.stdout == by_file.stdout
    assert "files,r,2,AP,0.5," in by_id.stdout  # topic 2: d (relevant) at rank 2, e unjudged


def test_provenance_and_defs_stored(tiny):
    with Warehouse(":memory:") as wh:
        result = wh.ingest_qrels("irds:evalwh-test/tiny", collection="c")
        assert (result.status, result.source, result.lines) == (
            "ingested",
            "irds:evalwh-test/tiny",
            6,
        )
        ((source_file, digest),) = wh.con.execute(
            "SELECT source_file, sha256 FROM qrels_sets"
        ).fetchall()
        ((origin, dataset, version, file_digest, defs),) = wh.con.execute(
            "SELECT origin, dataset_id, library_version, qrels_sha256, qrels_defs FROM qrels_external"
        ).fetchall()
        expected = hashlib.sha256(QRELS.encode()).hexdigest()
        assert (source_file, digest, file_digest) == ("irds:evalwh-test/tiny", expected, expected)
        assert (origin, dataset, version) == (
            "ir_datasets",
            "evalwh-test/tiny",
            ir_datasets.__version__,
        )
        assert (
            defs
            == '{"-1": "pooled, not judged", "0": "not relevant", "1": "relevant", "2": "highly relevant"}'
        )
        # the same again is unchanged; a file of other content in its place drops the provenance
        assert wh.ingest_qrels("irds:evalwh-test/tiny", collection="c").status == "unchanged"
        assert wh.con.execute("SELECT count(*) FROM qrels_external").fetchall() == [(1,)]
        other = tiny / "other.qrels"
        other.write_text("1 0 a 1\n")
        assert wh.ingest_qrels(other, collection="c", replace=True).status == "replaced"
        assert wh.con.execute("SELECT count(*) FROM qrels_external").fetchall() == [(0,)]


def test_other_qrels_formats_come_as_records(tiny):
    """Qrels ir_datasets reads in another format (three columns) come through qrels_iter."""
    resolved = irds.qrels("irds:evalwh-test/three-columns")
    assert isinstance(resolved.source, pd.DataFrame)
    assert resolved.source.to_numpy().tolist()[:2] == [["1", "Q0", "a", 2], ["1", "Q0", "b", 0]]
    assert resolved.qrels_sha256 == hashlib.sha256((tiny / "qrels3").read_bytes()).hexdigest()
    same = evaluate("irds:evalwh-test/three-columns", [tiny / "run"], ["AP", "nDCG"])
    assert (
        same["value"].tolist()
        == evaluate(tiny / "qrels", [tiny / "run"], ["AP", "nDCG"])["value"].tolist()
    )


def test_topics_and_docs(tiny):
    assert irds.topics("irds:evalwh-test/tiny").values.tolist() == [
        ["1", "first topic"], ["2", "second topic"], ["3", "third topic"]
    ]  # fmt: skip
    assert irds.docs("evalwh-test/tiny", ["d", "a", "zz", "d"]).values.tolist() == [
        ["d", "delta"],
        ["a", "alpha"],
    ]
    assert irds.text_map("irds:evalwh-test/tiny", "topics")["2"] == "second topic"
    assert irds.text_map("irds:evalwh-test/tiny", "documents", ["b", "zz"]) == {"b": "beta"}
    with pytest.raises(EvalWhError, match="with their ids"):
        irds.text_map("irds:evalwh-test/tiny", "documents")
    with pytest.raises(EvalWhError, match="its queries have no field 'body'"):
        irds.topics("evalwh-test/tiny", field="body")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "irds:evalwh-test/nope",
            "irds:evalwh-test/nope: ir_datasets has no dataset 'evalwh-test/nope'",
        ),
        ("irds:", "irds:: an ir_datasets name needs a dataset id"),
        ("irds:evalwh-test/no-qrels", "irds:evalwh-test/no-qrels: the dataset has no qrels"),
    ],
)
def test_errors_are_one_line(tiny, tmp_path, name, message):
    out = runner.invoke(
        app, ["--db", str(tmp_path / "w.duckdb"), "ingest", "qrels", name, "-c", "c"]
    )
    assert out.exit_code == 1
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: {message}"), out.output


def test_without_ir_datasets_one_line_names_the_extra(tiny, monkeypatch):
    monkeypatch.setitem(sys.modules, "ir_datasets", None)  # import ir_datasets raises ImportError
    with pytest.raises(EvalWhError) as error:
        irds.qrels("irds:evalwh-test/tiny")
    assert (
        str(error.value)
        == "irds: names need ir_datasets, an optional extra of evalwh: pip install 'evalwh[irds]'"
    )


def test_compare_accepts_irds(tiny, tmp_path):
    """compare --qrels irds:ID compares as compare --qrels FILE does."""
    other = tmp_path / "other"
    other.write_text(RUN.replace(" r\n", " s\n").replace("3.0", "0.5"))
    runs = [str(tiny / "run"), str(other)]
    by_id = runner.invoke(
        app, ["compare", "--qrels", "irds:evalwh-test/tiny", *runs, "-m", "AP", "--format", "csv"]
    )
    by_file = runner.invoke(
        app, ["compare", "--qrels", str(tiny / "qrels"), *runs, "-m", "AP", "--format", "csv"]
    )
    assert by_id.exit_code == 0, by_id.output
    assert by_id.stdout == by_file.stdout


@pytest.mark.skipif(not DL19.is_file(), reason="needs ../shared/data/anserini_qrels")
def test_trec_dl_2019_offline(tmp_path):
    """msmarco-passage/trec-dl-2019 from a prepared ir_datasets home equals the anserini file."""
    assert hashlib.md5(DL19.read_bytes()).hexdigest() == "2f4be390198da108f6845c822e5ada14"
    home = tmp_path / "irds"
    (home / "msmarco-passage" / "trec-dl-2019").mkdir(parents=True)
    shutil.copy(DL19, home / "msmarco-passage" / "trec-dl-2019" / "qrels")
    lines = DL19.read_text().splitlines()[::7]
    run = tmp_path / "run.txt"
    run.write_text(
        "".join(
            f"{q} Q0 {d} {i} {1000 - i % 89} r\n"
            for i, (q, _, d, _) in enumerate(s.split() for s in lines)
        )
    )
    script = (
        "import sys, evalwh\n"
        "from evalwh import Warehouse\n"
        "m = ['AP', 'nDCG@10', 'P@10']\n"
        "by_id = evalwh.evaluate('irds:msmarco-passage/trec-dl-2019', [sys.argv[1]], m, per_query=True)\n"
        "by_file = evalwh.evaluate(sys.argv[2], [sys.argv[1]], m, per_query=True)\n"
        "assert by_id.equals(by_file), (by_id, by_file)\n"
        "with Warehouse(':memory:') as wh:\n"
        "    wh.ingest_qrels('irds:msmarco-passage/trec-dl-2019', collection='dl19')\n"
        "    print(wh.con.execute('SELECT dataset_id, qrels_sha256, qrels_defs FROM qrels_external').fetchall()[0])\n"
        "    print(wh.con.execute('SELECT count(*), count(DISTINCT query_id) FROM qrels').fetchall()[0])\n"
    )
    env = {**os.environ, "IR_DATASETS_HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-c", script, str(run), str(DL19)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    provenance, counts = done.stdout.splitlines()
    digest = hashlib.sha256(DL19.read_bytes()).hexdigest()
    assert provenance.startswith(
        f"('msmarco-passage/trec-dl-2019', '{digest}', '{{\"0\": \"Irrelevant"
    )
    assert '"3": "Perfectly relevant' in provenance
    assert counts == "(9260, 43)"  # PROVENANCE.md of anserini_qrels


def test_pool_export_takes_texts_from_irds(tiny, tmp_path):
    """pool export --topics/--documents irds:ID: queries and only the pooled documents."""
    import json

    wh = Warehouse(":memory:")
    wh.ingest_qrels(tiny / "qrels", collection="c")
    wh.ingest_runs([tiny / "run"], collection="c")
    wh.build_pool(collection="c", depth=2, runs_from="all", pool_id="p")
    out = tmp_path / "tasks.jsonl"
    # the run's top 2: topic 1 a, x (x before c: equal scores, doc_id descending); topic 2
    # e, d; topic 3 f; the dataset's documents are a, b, c, d
    with pytest.raises(EvalWhError, match=r"no text for 3 pooled document\(s\), e.g. 'e'"):
        wh.export_pool("p", out, collection="c", topics="irds:evalwh-test/tiny", documents="irds:evalwh-test/tiny")
    assert not out.exists()
    wh.con.execute("DELETE FROM pool_order WHERE doc_id IN ('e', 'f', 'x')")
    written = wh.export_pool(
        "p", out, collection="c", topics="irds:evalwh-test/tiny", documents="irds:evalwh-test/tiny"
    )
    tasks = [json.loads(line) for line in out.read_text().splitlines()]
    assert written == len(tasks) == 2
    assert [(t["qid"], t["docid"], t["query"], t["passage"]) for t in tasks] == [
        ("1", "a", "first topic", "alpha"),
        ("2", "d", "second topic", "delta"),
    ]
    wh.close()
