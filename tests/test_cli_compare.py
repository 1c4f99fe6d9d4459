"""CLI: evalwh compare | matrix | kendall | plot compare | plot runs."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest
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
        "matrix", "-c", "toy", "-d", "4", "--db", str(db), "-f", "csv", "--layout", "paper"
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
