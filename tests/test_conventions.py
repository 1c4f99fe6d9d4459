"""A collection's conventions (``evalwh conventions``): stored, read back, reused.

Issue 52, class 1: a convention left NULL (a NULL list reaches pandas as ``pd.NA``) broke the
command that stored it and every later one; the NULLs are now read in one place
(:func:`evalwh.store.connection.frame`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalwh import Warehouse
from evalwh.cli import app
from evalwh.present.report import defaults

from test_safety import QRELS, RUNS  # noqa: E402

runner = CliRunner()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "W.duckdb"
    with Warehouse(path) as wh:
        wh.ingest_qrels(QRELS, collection="c")
        wh.ingest_runs(RUNS, collection="c")
    return path


def cli(db: Path, *args: str):
    return runner.invoke(app, [*args, "--db", str(db)])


@pytest.mark.parametrize(
    "setting",
    [["--measures", "P@10"], ["--baseline", "r1"], ["--pool-depth", "3"], ["--measures", "P@10", "-b", "r2"]],
)
def test_issue_52_class_1_one_convention_left_null(db: Path, tmp_path: Path, setting: list[str]) -> None:
    """Issue 52, class 1: one convention set, the others NULL: the command that sets it, and
    show, set, --clear, report and plot runs after it, all work."""
    result = cli(db, "conventions", "-c", "c", *setting)
    assert result.exit_code == 0, result.output
    shown = cli(db, "conventions", "-c", "c")
    assert shown.exit_code == 0, shown.output
    assert shown.stdout == result.stdout
    with Warehouse.open_reader(db) as wh:
        stored = defaults.read_conventions(wh, "c")
    expected = {
        "--measures": ("measures", ("P@10",)),
        "--baseline": ("baselines", ("r1",)),
        "-b": ("baselines", ("r2",)),
        "--pool-depth": ("judged_depth", 3),
    }
    for option in setting[::2]:
        field, value = expected[option]
        assert getattr(stored, field) == value
    unset = {"measures", "baselines", "judged_depth"} - {expected[o][0] for o in setting[::2]}
    for field in unset:
        assert getattr(stored, field) == getattr(defaults.Conventions(), field)
    report = cli(db, "report", "-c", "c", "-o", str(tmp_path / "r.html"))
    assert report.exit_code == 0, report.output
    plot = cli(db, "plot", "runs", "-c", "c", "-o", str(tmp_path / "r.png"))
    assert plot.exit_code == 0, plot.output
    more = cli(db, "conventions", "-c", "c", "--pool-depth", "4")
    assert more.exit_code == 0 and "judged depth  4" in more.stdout, more.output
    cleared = cli(db, "conventions", "-c", "c", "--clear")
    assert cleared.exit_code == 0, cleared.output
    assert "(from the collection)" in cleared.stdout and "(inferred)" in cleared.stdout


def test_issue_52_class_1_null_lists_arrive_as_none(db: Path) -> None:
    """Issue 52, class 1: every frame the store hands out has None, not pd.NA, for a NULL list
    or string (the one place: Store.df and Store.query); nullable integers stay readable."""
    import pandas as pd

    with Warehouse(db) as wh:
        sql = "SELECT NULL::VARCHAR[] AS a, ['x'] AS b, NULL::VARCHAR AS s, NULL::INTEGER AS i"
        for frame in (wh.df(sql), wh.query(sql)):
            assert frame["a"].iloc[0] is None and list(frame["b"].iloc[0]) == ["x"]
            assert frame["s"].iloc[0] is None and pd.isna(frame["i"].iloc[0])
