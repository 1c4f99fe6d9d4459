"""Familiar inputs: PyTerrier's and ir_measures' DataFrame layouts, DataFrames in evaluate_files,
and wide results from Warehouse.evaluate."""

from __future__ import annotations

import ir_measures
import numpy as np
import pandas as pd
import pytest

from evalwh import Warehouse
from evalwh.measures.direct import evaluate_files
from evalwh.errors import IngestError
from evalwh.io.frames import standard_columns


def collection(seed: int = 3) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """ir_measures-layout qrels and two runs (graded judgments, unjudged documents, ties)."""
    rng = np.random.default_rng(seed)
    docs = [f"D{i}" for i in range(30)]
    qrels = pd.DataFrame(
        [(f"q{t}", d, int(g)) for t in range(4) for d, g in zip(docs[:18], rng.choice([0, 0, 1, 2], 18), strict=True)],
        columns=["query_id", "doc_id", "relevance"],
    )
    runs = {}
    for name in ("bm25", "dense"):
        rows = [
            (f"q{t}", d, float(s))
            for t in range(4)
            for d, s in zip(rng.choice(docs, 12, replace=False), np.round(rng.normal(size=12), 1), strict=True)
        ]
        runs[name] = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    return qrels, runs


MEASURES = {"P@5": ir_measures.P @ 5, "AP": ir_measures.AP, "nDCG@10": ir_measures.nDCG @ 10, "RR": ir_measures.RR}


def pyterrier(qrels: pd.DataFrame, run: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The same data in PyTerrier's layout: qid/docno/label, and qid/docid/docno/rank/score."""
    pt_qrels = qrels.rename(columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"})
    pt_run = run.rename(columns={"query_id": "qid", "doc_id": "docno"})
    pt_run.insert(1, "docid", np.arange(len(pt_run)))  # PyTerrier's internal number: ignored
    pt_run["rank"] = pt_run.groupby("qid").cumcount()
    return pt_qrels, pt_run


def reference(qrels: pd.DataFrame, run: pd.DataFrame) -> dict[str, float]:
    """ir_measures' means over the qrels topics with a relevant document (evalwh's default)."""
    relevant = set(qrels.loc[qrels["relevance"] > 0, "query_id"])
    per_query = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(list(MEASURES.values()), qrels, run)}
    return {
        name: sum(per_query.get((q, str(measure)), 0.0) for q in relevant) / len(relevant)
        for name, measure in MEASURES.items()
    }


@pytest.mark.parametrize("layout", ["ir_measures", "pyterrier"])
def test_layouts_give_ir_measures_values(wh, layout):
    qrels, runs = collection()
    run = runs["bm25"]
    given_qrels, given_run = (qrels, run) if layout == "ir_measures" else pyterrier(qrels, run)
    wh.ingest_qrels(given_qrels, collection="c")
    wh.ingest_runs(given_run, collection="c", run_id="bm25")
    got = wh.evaluate(list(MEASURES), collection="c").set_index("measure")["value"].to_dict()
    assert got == pytest.approx(reference(qrels, run), abs=1e-12)


def test_missing_column_names_what_was_found_and_what_is_accepted(wh):
    frame = pd.DataFrame({"qid": ["1"], "docid": [4], "score": [1.0]})
    with pytest.raises(IngestError) as error:
        wh.ingest_runs(frame, collection="c", run_id="r")
    assert str(error.value) == (
        "DataFrame: a run DataFrame needs query_id, doc_id, score (or another layout: evalwh and "
        "ir_measures: query_id, doc_id, score; PyTerrier: qid, docno, score); found columns "
        "[qid, docid, score], missing doc_id"
    )


def test_mapping_renames_only():
    frame = pd.DataFrame({"qid": ["1"], "docno": ["a"], "label": [2], "extra": [None]})
    mapped = standard_columns(frame, "qrels")
    assert list(mapped.columns) == ["query_id", "doc_id", "relevance", "extra"]
    assert mapped["relevance"].tolist() == [2]
    both = pd.DataFrame({"query_id": ["1"], "qid": ["9"], "doc_id": ["a"], "relevance": [1]})
    assert standard_columns(both, "qrels")["query_id"].tolist() == ["1"]  # evalwh's name wins


def test_evaluate_files_takes_dataframes(tmp_path):
    qrels, runs = collection()
    files = []
    for name, run in runs.items():
        path = tmp_path / f"{name}.txt"
        lines = run.assign(q0="Q0", rank=run.groupby("query_id").cumcount() + 1, tag=name)
        lines[["query_id", "q0", "doc_id", "rank", "score", "tag"]].to_csv(path, sep=" ", header=False, index=False)
        files.append(path)
    qrels_file = tmp_path / "qrels.txt"
    qrels.assign(it="0")[["query_id", "it", "doc_id", "relevance"]].to_csv(qrels_file, sep=" ", header=False, index=False)
    from_files = evaluate_files(qrels_file, files, list(MEASURES))
    pt_qrels, pt_bm25 = pyterrier(qrels, runs["bm25"])
    for given in ({"bm25": pt_bm25, "dense": runs["dense"]}, [runs["bm25"].assign(run_id="bm25"), runs["dense"].assign(run_id="dense")]):
        from_frames = evaluate_files(pt_qrels, given, list(MEASURES))
        pd.testing.assert_frame_equal(
            from_frames[["run_id", "measure", "value", "n_topics"]], from_files[["run_id", "measure", "value", "n_topics"]]
        )
    for name, run in runs.items():
        values = from_files[from_files["run_id"] == name].set_index("measure")["value"].to_dict()
        assert values == pytest.approx(reference(qrels, run), abs=1e-12)
    single = evaluate_files(qrels, runs["bm25"], ["AP"])
    assert single["run_id"].tolist() == ["run"]


def test_wide_results(wh):
    qrels, runs = collection()
    wh.ingest_qrels(qrels, collection="c")
    for name, run in runs.items():
        wh.ingest_runs(run, collection="c", run_id=name)
    measures = ["nDCG@10", "P@5", "AP"]
    long = wh.evaluate(measures, collection="c")
    wide = wh.evaluate(measures, collection="c", wide=True)
    assert list(wide.columns) == ["collection_id", "run_id", *measures]
    assert wide["run_id"].tolist() == ["bm25", "dense"]
    for _, row in wide.iterrows():
        for measure in measures:
            expected = long[(long.run_id == row["run_id"]) & (long.measure == measure)]["value"].item()
            assert row[measure] == expected
    per_topic = wh.evaluate(measures, collection="c", per_query=True, wide=True)
    assert list(per_topic.columns) == ["collection_id", "run_id", "query_id", *measures]
    assert len(per_topic) == per_topic[["run_id", "query_id"]].drop_duplicates().shape[0]
    reference_ap = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.AP], qrels, runs["dense"])}
    dense = per_topic[per_topic.run_id == "dense"].set_index("query_id")["AP"]
    assert dense.to_dict() == pytest.approx({q: reference_ap.get(q, 0.0) for q in dense.index}, abs=1e-12)


def test_cli_takes_parquet_files_in_pyterrier_layout(tmp_path):
    """evalwh ingest and evalwh eval --qrels read .parquet files through the same mapping."""
    from typer.testing import CliRunner

    from evalwh.cli import app

    qrels, runs = collection()
    pt_qrels, pt_run = pyterrier(qrels, runs["bm25"])
    pt_qrels.to_parquet(tmp_path / "qrels.parquet")
    pt_run.to_parquet(tmp_path / "bm25.parquet")
    db = tmp_path / "w.duckdb"
    runner = CliRunner(env={"EVALWH_DB": None})
    for args in (["ingest", "qrels", "qrels.parquet", "-c", "c"], ["ingest", "runs", "bm25.parquet"]):
        result = runner.invoke(app, [*args[:2], str(tmp_path / args[2]), *args[3:], "--db", str(db)])
        assert result.exit_code == 0, result.output
    expected = reference(qrels, runs["bm25"])
    stored = runner.invoke(app, ["eval", "--db", str(db), *[a for m in MEASURES for a in ("-m", m)], "-f", "csv"])
    direct = runner.invoke(
        app,
        ["eval", "--qrels", str(tmp_path / "qrels.parquet"), str(tmp_path / "bm25.parquet"),
         *[a for m in MEASURES for a in ("-m", m)], "-f", "csv"],
    )  # fmt: skip
    for result in (stored, direct):
        assert result.exit_code == 0, result.output
        frame = pd.read_csv(pd.io.common.StringIO(result.stdout))
        assert frame["run_id"].unique().tolist() == ["bm25"]
        assert frame.set_index("measure")["value"].to_dict() == pytest.approx(expected, abs=1e-12)
