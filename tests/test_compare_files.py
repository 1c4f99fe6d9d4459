"""evalwh compare straight from run files (--qrels FILE), --qrels-id, and one layout per format
(issue #28, items 1 and 3)."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import evalwh
from evalwh import Warehouse
from evalwh.cli import app
from evalwh.io.demo_data import DemoFiles, write_demo
from conftest import TREC8

runner = CliRunner(env={"COLUMNS": "200", "TERMINAL_WIDTH": "200"})


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoFiles:
    return write_demo(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="module")
def demo_db(demo: DemoFiles, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("wh") / "demo.duckdb"
    with Warehouse(path) as wh:
        wh.ingest_qrels(demo.qrels, collection="demo")
        wh.ingest_runs(demo.runs, collection="demo")
    return path


def _run(demo: DemoFiles, name: str) -> str:
    return str(next(p for p in demo.runs if p.name == f"{name}.txt"))


def test_compare_from_files_equals_compare_in_the_warehouse(demo: DemoFiles, demo_db: Path) -> None:
    files = [_run(demo, n) for n in ("dense", "bm25", "splade")]
    options = ["-b", "bm25", "-m", "AP", "-m", "nDCG@10", "-t", "wilcoxon", "--correction", "bh", "-f", "csv"]
    code, direct, err = invoke("compare", "--qrels", str(demo.qrels), *files, *options)
    assert code == 0, err
    code, stored, err = invoke("compare", "dense", "splade", "-c", "demo", "--db", str(demo_db), *options)
    assert code == 0, err
    pd.testing.assert_frame_equal(pd.read_csv(io.StringIO(direct)), pd.read_csv(io.StringIO(stored)))


def test_compare_from_files_keeps_the_given_order(demo: DemoFiles) -> None:
    files = [_run(demo, n) for n in ("splade", "bm25", "dense")]
    code, out, err = invoke("compare", "--qrels", str(demo.qrels), *files, "-m", "AP", "-f", "csv")
    assert code == 0, err
    pairs = pd.read_csv(io.StringIO(out))[["run_a", "run_b"]].values.tolist()
    assert pairs == [["splade", "bm25"], ["splade", "dense"], ["bm25", "dense"]]
    result = evalwh.compare(demo.qrels, files, ["AP"])
    assert result.pairs[["run_a", "run_b"]].values.tolist() == pairs


@pytest.mark.parametrize("fmt", ["latex", "markdown", "json"])
def test_compare_from_files_takes_every_format(demo: DemoFiles, fmt: str) -> None:
    files = [_run(demo, n) for n in ("bm25", "dense")]
    code, out, err = invoke("compare", "--qrels", str(demo.qrels), *files, "-b", "bm25", "-f", fmt)
    assert code == 0, err
    assert "dense" in out


def test_qrels_naming_a_stored_set_says_qrels_id(demo: DemoFiles, demo_db: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # "default" is no file here
    code, out, err = invoke("compare", "--qrels", "default", "dense", "bm25", "--db", str(demo_db))
    assert code == 1
    assert err == (
        f"Error: --qrels takes a qrels file now; 'default' is a qrels set stored in {demo_db}: "
        "use --qrels-id default\n"
    )
    code, out, err = invoke("compare", "dense", "bm25", "-c", "demo", "--qrels-id", "default", "--db", str(demo_db))
    assert code == 0, err
    code, _, err = invoke("compare", "--qrels", "nothing", "x.txt", "--db", str(demo_db))
    assert (code, err) == (1, "Error: --qrels nothing: no such qrels file (a stored qrels set is --qrels-id NAME)\n")


@pytest.mark.parametrize("command", [["kendall"], ["plot", "runs", "-o", "x.png"]])
def test_warehouse_commands_refuse_a_qrels_file_in_one_line(demo: DemoFiles, command: list[str]) -> None:
    code, _, err = invoke(*command, "--qrels", str(demo.qrels), "--db", "absent.duckdb")
    assert code == 1
    assert err.startswith(f"Error: {command[-1] if command[0] != 'plot' else 'plot runs'} reads a warehouse")
    assert err.count("\n") == 1


def test_compare_with_qrels_refuses_warehouse_options(demo: DemoFiles) -> None:
    code, _, err = invoke("compare", "--qrels", str(demo.qrels), _run(demo, "bm25"), "-c", "demo")
    assert code == 1 and err.count("\n") == 1 and "no warehouse" in err


def test_piped_output_has_the_same_columns_for_2_and_12_pairs(demo: DemoFiles) -> None:
    two = [_run(demo, n) for n in ("bm25", "dense")]
    four = [_run(demo, n) for n in ("bm25", "dense", "splade", "hybrid")]
    headers = []
    for files, extra in ((two, []), (four, ["-m", "nDCG@10"])):
        code, out, err = invoke("compare", "--qrels", str(demo.qrels), *files, "-m", "AP", *extra)
        assert code == 0, err
        lines = out.splitlines()
        assert lines[0].startswith("# t, holm, alpha 0.05; 95% paired t interval")
        headers.append(lines[1].split())
        assert len(lines) == 2 + (1 if files is two else 12)
    assert headers[0] == headers[1]
    assert headers[0][:3] == ["measure", "run_a", "run_b"]


def test_layout_wide_is_one_column_per_comparison(demo: DemoFiles) -> None:
    files = [_run(demo, n) for n in ("bm25", "dense", "splade")]
    code, out, err = invoke("compare", "--qrels", str(demo.qrels), *files, "-m", "AP", "--layout", "wide", "-f", "csv")
    assert code == 0, err
    frame = pd.read_csv(io.StringIO(out))
    assert list(frame.columns)[1:] == ["bm25 vs dense", "bm25 vs splade", "dense vs splade"]
    code, out, err = invoke("compare", "--qrels", str(demo.qrels), *files, "-m", "AP", "--layout", "long", "-f", "csv")
    assert len(pd.read_csv(io.StringIO(out))) == 3


@pytest.mark.skipif(not TREC8.is_dir(), reason="TREC-8 data not beside the checkout")
def test_trec8_compare_from_files_prints_the_published_p() -> None:
    runs = [str(TREC8 / "runs" / f"input.{r}.gz") for r in ("INQ604", "ok8amxc")]
    code, out, err = invoke("compare", "--qrels", str(TREC8 / "trec8.qrels"), *runs, "-m", "AP")
    assert code == 0, err
    row = out.splitlines()[2].split()
    assert row[:3] == ["AP", "INQ604", "ok8amxc"]
    assert "0.005133" in row


@pytest.mark.skipif(not TREC8.is_dir(), reason="TREC-8 data not beside the checkout")
def test_trec8_paper_table_has_a_column_per_measure_a_bold_best_and_letters(tmp_path: Path) -> None:
    import shutil
    import subprocess

    runs = [str(TREC8 / "runs" / f"input.{r}.gz") for r in ("INQ604", "ok8amxc", "CL99SD")]
    table = tmp_path / "table.tex"
    code, _, err = invoke("compare", "--qrels", str(TREC8 / "trec8.qrels"), "-b", "INQ604", *runs,
                          "-m", "AP", "-m", "P@10", "-f", "latex", "-o", str(table))  # fmt: skip
    assert code == 0, err
    text = table.read_text()
    assert " & Run & AP & P@10 \\\\" in text.splitlines()
    rows = {line.split(" & ")[1]: line for line in text.splitlines() if line[:4] in ("a & ", "b & ", "c & ")}
    assert rows["CL99SD"] == r"c & CL99SD & \textbf{0.3537}$^{a}$ & \textbf{0.7020}$^{a}$ \\"
    assert rows["ok8amxc"] == r"b & ok8amxc & 0.3169$^{a}$ & 0.5500 \\"
    assert "Paired t-test, Holm correction over the comparisons of a measure, alpha 0.05." in text
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed (apt-get install -y texlive-latex-base texlive-latex-recommended)")
    (tmp_path / "paper.tex").write_text(
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n\\input{table.tex}\n\\end{document}\n"
    )
    result = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert result.returncode == 0, result.stdout[-2000:]


def test_compare_scores_reads_a_two_run_trec_eval_q_file(demo: DemoFiles, tmp_path: Path) -> None:
    files = [_run(demo, n) for n in ("bm25", "dense")]
    code, out, err = invoke("trec_eval", "-q", "-m", "runid", "-m", "map", str(demo.qrels), *files)
    assert code == 0, err
    scores = tmp_path / "pq.txt"
    scores.write_text(out)
    code, out, err = invoke("compare", "--scores", str(scores), "-b", "bm25", "-m", "map", "-f", "csv")
    assert code == 0, err
    row = pd.read_csv(io.StringIO(out)).iloc[0]
    direct = pd.read_csv(io.StringIO(invoke("compare", "--qrels", str(demo.qrels), *files, "-b", "bm25", "-f", "csv")[1])).iloc[0]
    assert (row["run_a"], row["run_b"]) == ("dense", "bm25")
    assert row["p_value"] == pytest.approx(direct["p_value"], abs=2e-3)  # trec_eval prints 4 decimals
    code, plain, err = invoke("trec_eval", "-q", "-m", "map", str(demo.qrels), *files)
    scores.write_text(plain)
    code, out, err = invoke("compare", "--scores", str(scores), "--names", "bm25,dense", "-b", "bm25", "-f", "csv")
    assert code == 0, err
    assert pd.read_csv(io.StringIO(out))[["run_a", "run_b"]].values.tolist() == [["dense", "bm25"]]


def test_compare_scores_bad_paths_are_one_line(tmp_path: Path) -> None:
    code, _, err = invoke("compare", "--scores", str(tmp_path))
    assert (code, err) == (1, f"Error: {tmp_path}: is a directory; give the score files in it\n")
    if Path("/dev/zero").exists():
        code, _, err = invoke("compare", "--scores", "/dev/zero")
        assert (code, err) == (1, "Error: /dev/zero: not a regular file (a device, pipe or socket); give a score file\n")
    nan = tmp_path / "s.csv"
    nan.write_text("run_id,query_id,measure,value\na,1,AP,0.5\na,2,AP,nan\nb,1,AP,0.2\nb,2,AP,0.1\n")
    code, out, err = invoke("compare", "--scores", str(nan))
    assert (code, out, err) == (1, "", f"Error: {nan}:3: value 'nan' is not a finite number\n")


def test_matrix_from_files_equals_matrix_in_the_warehouse(demo: DemoFiles, demo_db: Path) -> None:
    names = ("bm25", "dense", "splade")
    options = ["-m", "MAP", "-d", "5,10", "-t", "wilcoxon", "--correction", "holm", "-f", "csv", "--layout", "pairs"]
    code, direct, err = invoke("matrix", "--qrels", str(demo.qrels), *(_run(demo, n) for n in names), *options)
    assert code == 0, err
    code, stored, err = invoke("matrix", "-c", "demo", "--runs", ",".join(names), "--no-store", "--db", str(demo_db), *options)
    assert code == 0, err
    files, warehouse = pd.read_csv(io.StringIO(direct)), pd.read_csv(io.StringIO(stored))
    pd.testing.assert_frame_equal(files.drop(columns="collection_id"), warehouse.drop(columns="collection_id"))
    code, _, err = invoke("matrix", _run(demo, "bm25"), "--db", str(demo_db))
    assert code == 1 and "go with --qrels FILE" in err and err.count("\n") == 1


def test_an_unknown_baseline_names_the_runs_of_the_files(demo: DemoFiles) -> None:
    files = [_run(demo, n) for n in ("bm25", "dense")]
    code, _, err = invoke("compare", "--qrels", str(demo.qrels), *files, "-b", "bm25.txt")
    assert (code, err) == (1, "Error: baseline 'bm25.txt' is not one of the runs (bm25, dense); a run file is named by its tag\n")
