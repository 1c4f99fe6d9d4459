"""CLI: evalwh compare | matrix | kendall | plot compare | plot runs."""

from __future__ import annotations

import gzip
import io
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from evalwh.cli import app
from test_decision import CASES, build
from typer.testing import CliRunner

from evalwh import Warehouse

runner = CliRunner(env={"COLUMNS": "200", "TERMINAL_WIDTH": "200"})


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "wh.duckdb"
    with Warehouse(path) as wh:
        build(wh, "toy", {"a": CASES["3b"][0], "b": CASES["3b"][1], "c": CASES["4"][1]})
    return path


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_compare_csv(db: Path) -> None:
    code, out, _ = invoke(
        "compare", "a", "b", "-c", "toy", "--depths", "2,4", "--db", str(db), "-f", "csv"
    )
    assert code == 0
    frame = pd.read_csv(io.StringIO(out))
    assert frame["column"].tolist() == ["@2", "@4", "MAP/MAA"]
    assert frame[["run_a", "run_b"]].drop_duplicates().values.tolist() == [["a", "b"]]
    assert frame.loc[1, ["perf_outcome", "assess_outcome", "case", "strength"]].tolist() == [
        ">>",
        "<<",
        "3b",
        "strong",
    ]
    assert frame.loc[1, "perf_mean_a"] == pytest.approx(13 / 24)


def test_compare_table_prints_a_title(db: Path) -> None:
    code, out, _ = invoke(
        "compare", "a", "c", "-c", "toy", "--depths", "4", "--no-full", "--db", str(db)
    )
    assert code == 0
    assert "a vs c (anova, bonferroni, alpha 0.05)" in out
    assert any(line.split()[:3] == ["@4", "a", "c"] for line in out.splitlines())  # whole, in a pipe


def test_matrix_summary_and_paper_layouts(db: Path) -> None:
    code, out, _ = invoke(
        "matrix", "-c", "toy", "-d", "4", "--db", str(db), "-f", "csv", "--no-store"
    )
    assert code == 0
    summary = pd.read_csv(io.StringIO(out))
    assert summary["column"].tolist() == ["@4", "MAP/MAA"]
    assert summary.loc[0, ["runs", "pairs"]].tolist() == [3, 3]
    assert summary[["C1", "C2", "C3", "C4"]].sum(axis=1).tolist() == pytest.approx([1.0, 1.0])
    code, out, _ = invoke(
        "matrix", "-c", "toy", "-d", "4", "--db", str(db), "-f", "csv", "--layout", "paper", "--store"
    )
    assert code == 0
    paper = pd.read_csv(io.StringIO(out))
    assert list(paper.columns)[:4] == ["collection_id", "runs", "pairs", "@4 C1"]
    with Warehouse(db, read_only=True) as wh:
        stored = wh.query("SELECT count(*) AS n FROM decision_pairs WHERE collection_id = 'toy'")
    assert stored["n"].tolist() == [6]  # 3 pairs x (@4, MAP/MAA)


def test_matrix_pairs_with_wilcoxon_holm(db: Path) -> None:
    code, out, _ = invoke(
        "matrix", "-c", "toy", "-d", "4", "--no-full", "--test", "wilcoxon", "--correction", "holm",
        "--layout", "pairs", "--db", str(db), "-f", "json", "--no-store",
    )  # fmt: skip
    assert code == 0
    frame = pd.read_json(io.StringIO(out), lines=True)
    assert frame[["run_a", "run_b"]].values.tolist() == [["a", "b"], ["a", "c"], ["b", "c"]]
    # 6 topics: the smallest two-sided Wilcoxon p is 2/64 = 0.03125; Holm over 3 pairs keeps
    # nothing below 0.05
    assert frame["perf_p_value"].min() == pytest.approx(0.03125)
    assert set(frame["case"].astype(str)) == {"1"}


def test_kendall(db: Path) -> None:
    code, out, _ = invoke(
        "kendall", "-c", "toy", "--x", "P@4", "--y", "A_p@4", "--db", str(db), "-f", "csv"
    )
    assert code == 0
    frame = pd.read_csv(io.StringIO(out))
    assert frame[["x", "y", "n_runs"]].values.tolist() == [["P@4", "A_p@4", 3]]


def test_plots_write_png_files(db: Path, tmp_path: Path) -> None:
    pair = tmp_path / "pair.png"
    code, _, err = invoke(
        "plot", "compare", "a", "b", "-c", "toy", "-d", "1,2,4", "-o", str(pair), "--db", str(db)
    )
    assert code == 0, err
    assert err.strip() == f"wrote {pair}"
    assert pair.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    runs = tmp_path / "runs.pdf"
    code, _, err = invoke(
        "plot", "runs", "-c", "toy", "-m", "P", "-d", "1,4", "-o", str(runs), "--db", str(db)
    )
    assert code == 0, err
    assert runs.read_bytes()[:5] == b"%PDF-"


def test_unknown_run_is_one_error_line(db: Path) -> None:
    code, _, err = invoke("compare", "a", "zz", "-c", "toy", "--db", str(db))
    assert code == 1
    assert (
        err
        == "Error: compare: run 'zz' is not in collection 'toy'; evalwh runs -c toy lists them\n"
    )


def test_bad_depths_is_a_usage_error(db: Path) -> None:
    code, _, err = invoke("matrix", "-c", "toy", "-d", "10,x", "--db", str(db))
    assert code == 2
    assert "expected comma-separated integers, got '10,x'" in err


@pytest.mark.parametrize(
    "command",
    [["compare"], ["matrix"], ["kendall"], ["plot"], ["plot", "compare"], ["plot", "runs"]],
)
def test_help(command: list[str]) -> None:
    code, out, _ = invoke(*command, "--help")
    assert code == 0
    assert "Usage:" in out


# --- evalwh compare: any measures, baselines, score files, paper tables ------------------------


def test_compare_two_runs_is_the_paired_t_test(db: Path) -> None:
    code, out, err = invoke("compare", "a", "b", "-c", "toy", "-m", "P@4", "--db", str(db), "-f", "csv")
    assert code == 0, err
    frame = pd.read_csv(io.StringIO(out))
    with Warehouse(db, read_only=True) as wh:
        topics = wh.evaluate(["P@4"], collection="toy", runs=["a", "b"], per_query=True)
    wide = topics.pivot(index="query_id", columns="run_id", values="value")
    direct = stats.ttest_rel(wide["a"], wide["b"])
    assert frame[["measure", "run_a", "run_b"]].values.tolist() == [["P@4", "a", "b"]]
    assert abs(frame.loc[0, "p_value"] - direct.pvalue) <= 1e-12
    assert frame.loc[0, "p_adjusted"] == frame.loc[0, "p_value"]  # one comparison: Holm is raw


def test_compare_baselines_all_pairs_and_all_runs(db: Path) -> None:
    base = ["compare", "-c", "toy", "-m", "P@4", "-m", "AP", "--db", str(db), "-f", "csv"]
    code, out, err = invoke(*base, "-b", "a", "--all-runs")
    assert code == 0, err
    frame = pd.read_csv(io.StringIO(out))
    assert frame[["run_a", "run_b"]].drop_duplicates().values.tolist() == [["b", "a"], ["c", "a"]]
    assert frame["measure"].unique().tolist() == ["P@4", "AP"]
    code, out, err = invoke(*base, "-b", "a", "b", "c", "--all-pairs", "-t", "randomized_tukey", "--seed", "1")
    assert code == 0, err
    frame = pd.read_csv(io.StringIO(out))
    assert frame[["run_a", "run_b"]].drop_duplicates().values.tolist() == [
        ["b", "a"], ["c", "a"], ["b", "c"],
    ]  # fmt: skip
    code, _, err = invoke(*base, "a")
    assert code == 1
    assert err == "Error: compare: name at least two runs (or a baseline and a run, or --all-runs)\n"


def test_compare_a_tukey_test_with_a_correction_is_one_error_line(db: Path) -> None:
    code, _, err = invoke(
        "compare", "a", "b", "c", "-c", "toy", "-t", "tukey", "--correction", "bh", "--db", str(db)
    )
    assert code == 1
    assert err == (
        "Error: the tukey test's p-values hold for the whole family already; "
        "use correction none, not bh\n"
    )


TREC8 = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec8_adhoc"


def _trec_eval_q(path: Path, measure: str) -> dict[str, float]:
    """Per-topic values of one measure from a trec_eval -q file, read by plain Python."""
    with gzip.open(path, "rt") as handle:
        rows = [line.split() for line in handle]
    return {q: float(v) for m, q, v in rows if m == measure and q != "all"}


def test_compare_scores_from_trec_eval_q_files(tmp_path: Path) -> None:
    files = [TREC8 / "eval_all_trec" / f"eval.{run}.gz" for run in ("INQ604", "ok8amxc")]
    if not files[0].is_file():
        pytest.skip(f"{TREC8} is not there")
    code, out, err = invoke("compare", "--scores", str(files[0]), "--scores", str(files[1]),
                            "-m", "map", "-m", "P_10", "-b", "INQ604", "-f", "csv")  # fmt: skip
    assert code == 0, err
    frame = pd.read_csv(io.StringIO(out)).set_index("measure")
    for measure in ("map", "P_10"):
        a, b = (_trec_eval_q(f, measure) for f in files)
        topics = sorted(a)
        direct = stats.ttest_rel([b[t] for t in topics], [a[t] for t in topics])
        assert frame.loc[measure, "run_a"] == "ok8amxc"
        assert abs(frame.loc[measure, "p_value"] - direct.pvalue) <= 1e-12
    # trec_eval prints AP to 4 decimals; the p-value is still the published pair's 0.005
    assert round(frame.loc["map", "p_value"], 3) == 0.005


def _long_scores(path: Path, kind: str) -> Path:
    rng = np.random.default_rng(0)
    rows = [
        (run, f"q{t}", "nDCG@10", float(np.round(rng.uniform(0.2, 0.8) + shift, 3)))
        for run, shift in (("bm25", 0.0), ("dense", 0.1), ("splade", 0.12))
        for t in range(12)
        if not (run == "splade" and t == 3)  # one topic missing for one run
    ]
    frame = pd.DataFrame(rows, columns=["run_id", "query_id", "measure", "value"])
    if kind == "parquet":
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, index=False, sep="\t" if kind == "tsv" else ",")
    return path


@pytest.mark.parametrize("kind", ["csv", "tsv", "parquet"])
def test_compare_scores_from_long_tables_states_dropped_topics(tmp_path: Path, kind: str) -> None:
    path = _long_scores(tmp_path / f"scores.{kind}", kind)
    code, out, err = invoke("compare", "--scores", str(path), "-b", "bm25", "-f", "json")
    assert code == 0, err
    assert err == (
        "note: nDCG@10: 1 topic(s) without a score for every run were dropped from all runs "
        "(11 kept)\n"
    )
    frame = pd.read_json(io.StringIO(out), lines=True)
    assert frame[["run_a", "run_b", "n_topics"]].values.tolist() == [
        ["dense", "bm25", 11], ["splade", "bm25", 11],
    ]  # fmt: skip


def test_compare_bad_score_file_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("runid all x\nmap 401 0.5\nmap 402 oops\n")
    target = tmp_path / "out.tex"
    target.write_text("before")
    code, out, err = invoke("compare", "--scores", str(bad), "-f", "latex", "-o", str(target))
    assert code == 1
    assert err == f"Error: {bad}:3: value 'oops' is not a number\n"
    assert target.read_text() == "before"
    code, _, err = invoke("compare", "--scores", str(tmp_path / "absent.csv"))
    assert (code, err) == (1, f"Error: {tmp_path / 'absent.csv'}: no such file\n")


def test_compare_paper_table_markdown(tmp_path: Path) -> None:
    path = _long_scores(tmp_path / "scores.csv", "csv")
    code, out, err = invoke("compare", "--scores", str(path), "-b", "bm25", "-f", "markdown")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "|  | Run | nDCG@10 |"
    assert lines[2].startswith("| a | bm25 | ") and lines[2].count(" | ") == 2
    assert "Paired t-test, Holm correction over the comparisons of a measure, alpha 0.05." in out


def test_compare_latex_compiles(tmp_path: Path) -> None:
    path = _long_scores(tmp_path / "scores.csv", "csv")
    table = tmp_path / "table.tex"
    code, _, err = invoke("compare", "--scores", str(path), "-b", "bm25", "-b", "dense",
                          "-t", "wilcoxon", "--correction", "bh", "-f", "latex", "-o", str(table))  # fmt: skip
    assert code == 0, err
    text = table.read_text()
    assert r"\toprule" in text and r"\bottomrule" in text and r"\textbf{" in text
    assert text.startswith("% evalwh paper table; needs \\usepackage{booktabs}")
    pdflatex = shutil.which("pdflatex")
    if pdflatex is None:
        pytest.skip("pdflatex is not installed (apt-get install -y texlive-latex-base texlive-latex-recommended)")
    document = tmp_path / "paper.tex"
    document.write_text(
        "\\documentclass{article}\n\\usepackage[utf8]{inputenc}\n\\usepackage{booktabs}\n"
        "\\begin{document}\n\\input{table.tex}\n\\end{document}\n"
    )
    result = subprocess.run(
        [pdflatex, "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-2000:]
    assert (tmp_path / "paper.pdf").read_bytes()[:5] == b"%PDF-"


def test_matrix_any_measure_pair(db: Path) -> None:
    code, out, err = invoke(
        "matrix", "-c", "toy", "-m", "nDCG", "-d", "2,4", "--assessment", "RBP_resid(p=0.5)",
        "-t", "wilcoxon", "--layout", "pairs", "--no-store", "--db", str(db), "-f", "csv",
    )  # fmt: skip
    assert code == 0, err
    frame = pd.read_csv(io.StringIO(out))
    assert frame["performance"].unique().tolist() == ["nDCG@2", "nDCG@4", "AP"]
    assert frame["assessment"].unique().tolist() == [
        "RBP_resid(p=0.5)@2", "RBP_resid(p=0.5)@4", "RBP_resid(p=0.5)",
    ]  # fmt: skip


def test_trec8_compare_two_runs_without_flags(trec8_ingest) -> None:
    path = str(trec8_ingest[0])
    code, out, err = invoke("compare", "INQ604", "ok8amxc", "-c", "trec8", "-m", "AP", "--db", path)
    assert code == 0, err
    assert out.splitlines()[2].split()[:3] == ["AP", "INQ604", "ok8amxc"] and "0.005133" in out
    code, out, err = invoke("compare", "INQ604", "ok8amxc", "-c", "trec8", "-m", "AP", "--db", path, "-f", "csv")
    assert code == 0, err
    frame = pd.read_csv(io.StringIO(out))
    with Warehouse(path, read_only=True) as wh:
        topics = wh.evaluate(["AP"], collection="trec8", runs=["INQ604", "ok8amxc"], per_query=True)
    wide = topics.pivot(index="query_id", columns="run_id", values="value")
    direct = stats.ttest_rel(wide["INQ604"], wide["ok8amxc"])
    assert abs(frame.loc[0, "p_value"] - direct.pvalue) <= 1e-12
    assert round(direct.pvalue, 4) == 0.0051
    assert frame.loc[0, ["wins", "ties", "losses", "n_topics"]].tolist() == [20, 0, 30, 50]


def test_compare_decision_refuses_score_files(db: Path, tmp_path: Path) -> None:
    code, _, err = invoke("compare", "a", "b", "-c", "toy", "--decision", "-b", "a", "--db", str(db))
    assert code == 1
    assert err.startswith("Error: compare --decision compares two runs of a collection;")


def test_compare_reports_measures_as_typed(db: Path) -> None:
    """Two persistences of RBP stay apart, and MAP is not renamed AP (as `evalwh eval` prints)."""
    code, out, _ = invoke(
        "compare", "a", "b", "-c", "toy", "-m", "MAP", "-m", "RBP(p=0.8)@4", "-m", "RBP(p=0.5)@4",
        "--db", str(db), "-f", "csv",
    )
    assert code == 0, out
    frame = pd.read_csv(io.StringIO(out))
    assert frame["measure"].tolist() == ["MAP", "RBP(p=0.8)@4", "RBP(p=0.5)@4"]
    # the values are those `evalwh eval` gives under the same names
    with Warehouse(db) as wh:
        means = wh.evaluate(["MAP", "RBP(p=0.8)@4", "RBP(p=0.5)@4"], collection="toy", runs=["a"], typed_names=True)
    assert frame["mean_a"].tolist() == pytest.approx(means["value"].tolist(), abs=5e-5)
