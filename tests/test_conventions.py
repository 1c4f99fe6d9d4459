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


# -- the default qrels set (issue 51, item 3) -----------------------------------------------

COMMANDS = [
    ["eval", "-m", "P@5", "-m", "AP"],
    ["compare", "r1", "r2", "-m", "AP"],
    ["matrix", "--depths", "2,3"],
    ["unjudged", "--max-rank", "3"],
    ["kendall"],
    ["bounds", "--depths", "2,3"],
    ["compare", "r1", "r2", "--decision", "--depths", "2,3"],
]


@pytest.fixture
def nist(tmp_path: Path) -> Path:
    """A collection whose only qrels set is named nist (README's quick start), two runs."""
    path = tmp_path / "N.duckdb"
    with Warehouse(path) as wh:
        wh.ingest_qrels(QRELS, collection="c", qrels_id="nist")
        wh.ingest_runs(RUNS, collection="c")
    return path


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_the_only_qrels_set_is_used_without_qrels_id(nist: Path, command: list[str]) -> None:
    """Issue 51, item 3: every command evaluates against a collection's only set, named nist,
    as it does with --qrels-id nist (the same output)."""
    implicit = cli(nist, *command)
    assert implicit.exit_code == 0, implicit.output
    explicit = cli(nist, *command, "--qrels-id", "nist")
    assert explicit.exit_code == 0, explicit.output
    assert implicit.stdout == explicit.stdout


def test_writers_and_report_use_the_only_set(nist: Path, tmp_path: Path) -> None:
    """Issue 51, item 3: report, plot runs, pool build and experiment budget use the only set
    (pool build's parent set is nist, and a derived pool set does not make it ambiguous)."""
    for command in (
        ["report", "-o", str(tmp_path / "r.html")],
        ["report", "-o", str(tmp_path / "r.md"), "--format", "md"],
        ["plot", "runs", "-o", str(tmp_path / "p.png")],
        ["pool", "build", "-d", "2", "--runs", "r1,r2"],
        ["experiment", "budget", "--budgets", "2", "-d", "2", "--runs-from", "all"],
        ["eval", "-m", "P@5"],
    ):
        result = cli(nist, *command)
        assert result.exit_code == 0, (command, result.output)
    assert "qrels set 'nist'" in (tmp_path / "r.md").read_text()
    with Warehouse.open_reader(nist) as wh:
        pools = wh.pools(collection="c")
        assert pools["parent_qrels_id"].tolist() == ["nist"]
        assert wh.qrels_set("c") == "nist"


def test_several_sets_need_a_choice_and_conventions_store_it(nist: Path) -> None:
    """Issue 51, item 3: with two ingested sets and none chosen, the error names the sets and
    the option; `conventions --qrels-id` stores the choice, which every command then takes;
    a set named default is the default without conventions."""
    with Warehouse(nist) as wh:
        wh.ingest_qrels(QRELS.assign(relevance=[1, 1, 0, 0, 1]), collection="c", qrels_id="llm", source="llm")
    result = cli(nist, "eval", "-m", "P@5")
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: collection 'c' has 2 qrels sets (llm, nist) and none is its default; choose one with "
        "--qrels-id (qrels_id=), or store one with evalwh conventions -c c --qrels-id NAME\n"
    )
    with Warehouse.open_reader(nist) as wh:
        with pytest.raises(Exception, match="choose one with --qrels-id"):
            wh.evaluate("P@5")
    wrong = cli(nist, "conventions", "--qrels-id", "nsit")
    assert wrong.exit_code == 1 and "Did you mean nist?" in wrong.stderr
    stored = cli(nist, "conventions", "--qrels-id", "llm")
    assert stored.exit_code == 0 and "qrels set     llm" in stored.stdout, stored.output
    implicit = cli(nist, "eval", "-m", "P@5", "-m", "AP", "-f", "csv")
    explicit = cli(nist, "eval", "-m", "P@5", "-m", "AP", "-f", "csv", "--qrels-id", "llm")
    other = cli(nist, "eval", "-m", "P@5", "-m", "AP", "-f", "csv", "--qrels-id", "nist")
    assert implicit.stdout == explicit.stdout != other.stdout
    with Warehouse.open_reader(nist) as wh:
        assert wh.evaluate("AP").equals(wh.evaluate("AP", qrels_id="llm"))
        assert defaults.read_conventions(wh, "c").qrels_id == "llm"
        assert wh.collections()["counted_set"].tolist() == ["llm"]  # (by name it would be nist)
    cleared = cli(nist, "conventions", "--clear")
    assert cleared.exit_code == 0 and "none chosen" in cleared.stdout
    with Warehouse(nist) as wh:
        wh.ingest_qrels(QRELS, collection="c")  # a set named default is the default
        assert wh.qrels_set("c") == "default"


def test_stored_measures_are_evals_and_compares_default(db: Path) -> None:
    """Issue 51, item 1: the conventions' measures are what eval and compare evaluate when
    no -m is given; -m still wins."""
    assert cli(db, "conventions", "--measures", "P@5,AP").exit_code == 0
    result = cli(db, "eval", "-f", "csv")
    assert result.exit_code == 0, result.output
    import io

    import pandas as pd

    assert pd.read_csv(io.StringIO(result.stdout))["measure"].tolist() == ["P@5", "AP"] * 2
    given = cli(db, "eval", "-f", "csv", "-m", "RR")
    assert set(pd.read_csv(io.StringIO(given.stdout))["measure"]) == {"RR"}
    compared = cli(db, "compare", "r1", "r2", "-f", "csv")
    assert compared.exit_code == 0, compared.output
    assert pd.read_csv(io.StringIO(compared.stdout))["measure"].tolist() == ["P@5", "AP"]


def test_python_jobs_take_the_default_set(nist: Path) -> None:
    """Issue 51, item 3, in Python: every Warehouse job that takes qrels_id takes it
    keyword-only (so the one rule in _one_at_a_time sees it) and, left None, reads the only set."""
    import inspect

    for name, job in vars(Warehouse).items():
        if callable(job) and not name.startswith("_") and "qrels_id" in inspect.signature(job).parameters:
            parameters = inspect.signature(job).parameters
            assert parameters["qrels_id"].kind is inspect.Parameter.KEYWORD_ONLY, name
            assert parameters["qrels_id"].default is None, name
    with Warehouse.open_reader(nist) as wh:
        assert wh.evaluate("AP").equals(wh.evaluate("AP", qrels_id="nist"))
        assert wh.unjudged(max_rank=3).equals(wh.unjudged(max_rank=3, qrels_id="nist"))
        assert wh.kendall().equals(wh.kendall(qrels_id="nist"))
        assert wh.compare("AP").pairs.equals(wh.compare("AP", qrels_id="nist").pairs)
        assert "qrels set 'nist'" in wh.report(format="md")
