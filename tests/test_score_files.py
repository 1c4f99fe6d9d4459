"""Score files for `evalwh compare --scores`: trec_eval -q output and long tables."""

from __future__ import annotations

import gzip
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalwh.errors import IngestError
from evalwh.io.score_files import read_scores

names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_.", min_size=1, max_size=8)
values = st.floats(0.0, 1.0, allow_nan=False).map(lambda v: round(v, 4))


@settings(max_examples=30, deadline=None)
@given(
    run=names.filter(lambda n: n != "all"),
    rows=st.dictionaries(
        st.tuples(names, names.filter(lambda n: n != "all")), values, min_size=1, max_size=20
    ),
    gz=st.booleans(),
)
def test_trec_eval_q_round_trip(tmp_path_factory: pytest.TempPathFactory, run: str,
                                rows: dict[tuple[str, str], float], gz: bool) -> None:  # fmt: skip
    rows = {k: v for k, v in rows.items() if k[0] not in ("runid", "relstring")}
    if not rows:
        return
    lines = [f"runid                 \tall\t{run}"]
    lines += [f"{m:<22}\t{q}\t{v:.4f}" for (m, q), v in rows.items()]
    lines.append(f"{next(iter(rows))[0]:<22}\tall\t0.5000")
    text = "\n".join(lines) + "\n"
    path = tmp_path_factory.mktemp("te") / ("run.txt.gz" if gz else "run.txt")
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    frame = read_scores([path])
    assert frame["run_id"].unique().tolist() == [run]
    got = {(m, q): v for m, q, v in frame[["measure", "query_id", "value"]].itertuples(index=False)}
    assert got == pytest.approx(rows)


@settings(max_examples=30, deadline=None)
@given(
    rows=st.dictionaries(st.tuples(names, names, names), values, min_size=1, max_size=20),
    sep=st.sampled_from([",", "\t"]),
)
def test_long_table_round_trip(tmp_path_factory: pytest.TempPathFactory,
                               rows: dict[tuple[str, str, str], float], sep: str) -> None:  # fmt: skip
    frame = pd.DataFrame(
        [(r, q, m, v) for (r, q, m), v in rows.items()],
        columns=["run_id", "query_id", "measure", "value"],
    ).assign(extra="ignored")
    path = tmp_path_factory.mktemp("long") / ("s.tsv" if sep == "\t" else "s.csv")
    frame.to_csv(path, sep=sep, index=False)
    out = read_scores([path])
    pd.testing.assert_frame_equal(out, frame.drop(columns="extra"), check_dtype=False)


def test_errors_name_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_text("run_id,query_id,measure,value\na,1,AP,0.5\na,2,AP,high\n")
    with pytest.raises(IngestError, match=r"s\.csv:3: value 'high' is not a number"):
        read_scores([path])
    path.write_text("map 401\n")
    with pytest.raises(IngestError, match=r"s\.csv:1: expected 'measure query_id value'"):
        read_scores([path])
    path.write_text("runid all x\nmap all 0.3\n")
    with pytest.raises(IngestError, match="no per-topic scores"):
        read_scores([path])
    parquet = tmp_path / "s.parquet"
    parquet.write_bytes(b"not parquet")
    with pytest.raises(IngestError, match="not a readable Parquet file"):
        read_scores([parquet])
    twice = tmp_path / "t.csv"
    twice.write_text("run_id,query_id,measure,value\na,1,AP,0.5\n")
    with pytest.raises(IngestError, match="more than one value for run 'a', topic '1'"):
        read_scores([twice, twice])


# -- several runs in one trec_eval -q file, other tools' per-query output (issue #28, item 4) --


def _trec_eval_q(blocks: dict[str, dict[tuple[str, str], float]], *, runid: bool) -> str:
    """trec_eval -q's layout: per run its topic lines, then its summary (runid, all lines)."""
    lines = []
    for run, rows in blocks.items():
        lines += [f"{m:<22}\t{q}\t{v:.4f}" for (m, q), v in rows.items()]
        if runid:
            lines.append(f"runid                 \tall\t{run}")
        lines += [f"{m:<22}\tall\t0.5000" for m in dict.fromkeys(m for m, _ in rows)]
    return "\n".join(lines) + "\n"


@settings(max_examples=30, deadline=None)
@given(
    blocks=st.dictionaries(
        names.filter(lambda n: n != "all"),
        st.dictionaries(st.tuples(names.filter(lambda n: n not in _TEXT), names.filter(lambda n: n != "all")),
                        values, min_size=1, max_size=8),
        min_size=1, max_size=4,
    ),
    runid=st.booleans(),
)  # fmt: skip
def test_trec_eval_q_with_several_runs_round_trip(tmp_path_factory: pytest.TempPathFactory, blocks, runid: bool) -> None:
    path = tmp_path_factory.mktemp("te") / "pq.txt"
    path.write_text(_trec_eval_q(blocks, runid=runid))
    frame = read_scores([path]) if runid else read_scores([path], names=list(blocks))
    assert frame["run_id"].unique().tolist() == list(blocks)
    for run, rows in blocks.items():
        got = frame[frame["run_id"] == run]
        assert {(m, q): v for q, m, v in got[["query_id", "measure", "value"]].itertuples(index=False)} == pytest.approx(rows)


_TEXT = {"runid", "relstring"}


def test_evalwh_trec_eval_q_output_of_two_runs(tmp_path: Path) -> None:
    """What `evalwh trec_eval -q -m runid -m map Q a b` prints is read back as two runs."""
    from typer.testing import CliRunner

    import evalwh
    from evalwh.cli import app
    from evalwh.io.demo_data import write_demo

    demo = write_demo(tmp_path / "demo")
    runs = [p for p in demo.runs if p.stem in ("bm25", "dense")]
    result = CliRunner().invoke(app, ["trec_eval", "-q", "-m", "runid", "-m", "map", str(demo.qrels), *map(str, runs)])
    assert result.exit_code == 0, result.stderr
    path = tmp_path / "pq.txt"
    path.write_text(result.stdout)
    frame = read_scores([path])
    assert frame["run_id"].unique().tolist() == ["bm25", "dense"]
    direct = evalwh.evaluate(demo.qrels, runs, ["AP"], per_query=True)
    merged = frame.merge(direct, on=["run_id", "query_id"], suffixes=("", "_direct"))
    assert len(merged) == len(frame) and (merged["value"] - merged["value_direct"]).abs().max() < 5e-5
    # without runid lines the blocks are named in order by --names
    plain = CliRunner().invoke(app, ["trec_eval", "-q", "-m", "map", str(demo.qrels), *map(str, runs)]).stdout
    path.write_text(plain)
    assert read_scores([path], names=["x", "y"])["run_id"].unique().tolist() == ["x", "y"]
    with pytest.raises(IngestError, match="2 runs without runid lines: name them in order with --names"):
        read_scores([path])
    with pytest.raises(IngestError, match="--names gives 3 names but only 2 runs lack one"):
        read_scores([path], names=["x", "y", "z"])


def test_ir_measures_per_query_outputs(tmp_path: Path) -> None:
    ir_measures = pytest.importorskip("ir_measures")
    import subprocess
    import sys

    from evalwh.io.demo_data import write_demo

    demo = write_demo(tmp_path / "demo")
    run = next(p for p in demo.runs if p.stem == "bm25")
    measures = [ir_measures.parse_measure("AP"), ir_measures.parse_measure("nDCG@10")]
    expected = pd.DataFrame(
        ir_measures.iter_calc(measures, ir_measures.read_trec_qrels(str(demo.qrels)), ir_measures.read_trec_run(str(run)))
    )
    expected["measure"] = expected["measure"].astype(str)
    # iter_calc as a DataFrame written to CSV (with pandas' index column)
    (tmp_path / "bm25.csv").write_text(expected.to_csv())
    # the command line's -q output, TSV and JSON lines
    for name, extra in (("bm25.tsv", []), ("bm25.jsonl", ["-o", "jsonl"])):
        out = subprocess.run([sys.executable, "-m", "ir_measures", str(demo.qrels), str(run), "AP", "nDCG@10", "-q", "-p", "6", *extra],
                             capture_output=True, text=True, check=True).stdout  # fmt: skip
        (tmp_path / name).write_text(out)
    for name in ("bm25.csv", "bm25.tsv", "bm25.jsonl"):
        frame = read_scores([tmp_path / name], names=["bm25"]).sort_values(["measure", "query_id"])
        want = expected.sort_values(["measure", "query_id"])
        assert frame["query_id"].tolist() == want["query_id"].astype(str).tolist(), name
        assert frame["value"].to_numpy() == pytest.approx(want["value"].to_numpy(), abs=1e-6), name
        assert set(frame["run_id"]) == {"bm25"}


def test_ranx_style_json_and_pyterrier_columns(tmp_path: Path) -> None:
    # ranx keeps a run's per-query scores as {metric: {query_id: score}} (run.scores)
    one = tmp_path / "bm25.json"
    one.write_text('{"map": {"1": 0.5, "2": 0.25}, "ndcg@10": {"1": 0.75, "2": 0.5}}')
    frame = read_scores([one])
    assert frame.values.tolist() == [
        ["bm25.json", "1", "map", 0.5], ["bm25.json", "2", "map", 0.25],
        ["bm25.json", "1", "ndcg@10", 0.75], ["bm25.json", "2", "ndcg@10", 0.5],
    ]  # fmt: skip
    several = tmp_path / "runs.json"
    several.write_text('{"bm25": {"map": {"1": 0.5, "2": 0.25}}, "dense": {"map": {"1": 0.6, "2": 0.35}}}')
    assert read_scores([several])["run_id"].tolist() == ["bm25", "bm25", "dense", "dense"]
    several.write_text('{"bm25": {"map": {"1": 0.5, "2": null}}}')
    with pytest.raises(IngestError, match=r"runs\.json: bm25/map/2: empty value"):
        read_scores([several])
    # PyTerrier's per-query frames: name, qid, measure, value
    pt = tmp_path / "pt.csv"
    pt.write_text("name,qid,measure,value\nBM25,1,map,0.5\nBM25,2,map,0.25\n")
    assert read_scores([pt])["run_id"].tolist() == ["BM25", "BM25"]


@pytest.mark.parametrize("bad", ["nan", "", "inf", "-inf", "NaN", " "])
@pytest.mark.parametrize("kind", ["csv", "tsv", "trec_eval"])
def test_a_non_finite_or_empty_value_is_an_error_naming_the_line(tmp_path: Path, bad: str, kind: str) -> None:
    if kind == "trec_eval":
        if not bad.strip():
            return  # an empty field is a line of two fields: its own error
        text = f"map 401 0.5\nmap 402 {bad}\nrunid all x\n"
    else:
        sep = "\t" if kind == "tsv" else ","
        text = sep.join(["run_id", "query_id", "measure", "value"]) + "\n"
        text += sep.join(["a", "1", "AP", "0.5"]) + "\n" + sep.join(["a", "2", "AP", bad]) + "\n"
    path = tmp_path / f"s.{'txt' if kind == 'trec_eval' else kind}"
    path.write_text(text)
    line = 2 if kind == "trec_eval" else 3
    with pytest.raises(IngestError, match=rf"s\.\w+:{line}: (empty value|value .* is not a finite number)"):
        read_scores([path])


def test_a_bom_in_a_csv_header_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_bytes(b"\xef\xbb\xbfrun_id,query_id,measure,value\na,1,AP,0.5\n")
    assert read_scores([path]).values.tolist() == [["a", "1", "AP", 0.5]]


def test_parquet_null_run_id_nan_value_directory_and_device(tmp_path: Path) -> None:
    frame = pd.DataFrame({"run_id": ["a", None], "query_id": ["1", "2"], "measure": "AP", "value": [0.5, 0.2]})
    frame.to_parquet(tmp_path / "s.parquet")
    with pytest.raises(IngestError, match=r"s\.parquet: row 2: empty run_id"):
        read_scores([tmp_path / "s.parquet"])
    frame.assign(run_id="a", value=[0.5, float("nan")]).to_parquet(tmp_path / "s.parquet")
    with pytest.raises(IngestError, match=r"s\.parquet: row 2: value nan is not a finite number"):
        read_scores([tmp_path / "s.parquet"])
    with pytest.raises(IngestError, match="is a directory"):
        read_scores([tmp_path])
    if Path("/dev/zero").exists():
        with pytest.raises(IngestError, match=r"^/dev/zero: not a regular file"):
            read_scores(["/dev/zero"])


def test_ranx_per_query_scores(tmp_path: Path) -> None:
    """ranx keeps each run's per-query scores in ``run.scores`` after ``ranx.evaluate``: dumped
    as JSON, one run's or several runs' (keyed by name), they are read as they are.

    ranx runs in a process of its own with numba's compiler off (``NUMBA_DISABLE_JIT``): its
    kernels then run as the Python they are written in, on the same data structures, so
    ``run.scores`` has the shape it always has, without the 40-odd CPU seconds of compiling
    them (the values may differ in the last digits; the test compares with ranx's own)."""
    import json
    import os
    import subprocess
    import sys

    pytest.importorskip("ranx")
    from evalwh.io.demo_data import write_demo

    demo = write_demo(tmp_path / "demo")
    script = """
import json, sys, warnings
import ranx
qrels_file, out, *run_files = sys.argv[1:]
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    qrels = ranx.Qrels.from_file(qrels_file, kind="trec")
    runs = {name: ranx.Run.from_file(path, kind="trec") for name, path in zip(("bm25", "dense"), run_files)}
    for run in runs.values():
        ranx.evaluate(qrels, run, ["map", "ndcg@10"])
with open(out, "w") as f:
    json.dump({name: run.scores for name, run in runs.items()}, f)
"""
    paths = {p.stem: str(p) for p in demo.runs}
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script, str(demo.qrels), str(tmp_path / "both.json"), paths["bm25"], paths["dense"]],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    scores = json.loads((tmp_path / "both.json").read_text())
    assert set(scores["dense"]) == {"map", "ndcg@10"} and len(scores["dense"]["map"]) == 30
    (tmp_path / "bm25.json").write_text(json.dumps(scores["bm25"]))
    one = read_scores([tmp_path / "bm25.json"], names=["bm25"])
    both = read_scores([tmp_path / "both.json"])
    assert both["run_id"].unique().tolist() == ["bm25", "dense"]
    pd.testing.assert_frame_equal(one, both[both["run_id"] == "bm25"].reset_index(drop=True))
    expected = {(m, q): v for m, topics in scores["dense"].items() for q, v in topics.items()}
    dense = both[both["run_id"] == "dense"]
    assert {(m, q): v for m, q, v in dense[["measure", "query_id", "value"]].itertuples(index=False)} == expected
