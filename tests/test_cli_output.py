"""Output that survives pipes: every command's default table, piped, shows every value whole.

typer's CliRunner gives the commands a stdout that is not a terminal, as ``| head`` or ``| cat``
do, with COLUMNS=80: rich used to fall back to 80 columns there and cut cells to ``run_…``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalwh import Warehouse
from evalwh.cli import app
from evalwh.io.demo_data import write_demo

LONG = "_a_rather_long_run_identifier_from_a_shared_task"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A small pooled collection whose run ids are longer than any terminal column."""
    directory = tmp_path_factory.mktemp("pipes")
    files = write_demo(directory / "files", topics=12, docs_per_topic=120, depth=60, pool_depth=10)
    db = directory / "wh.duckdb"
    names = []
    metadata = files.metadata.read_text().splitlines()
    with Warehouse(db) as wh:
        wh.ingest_qrels(files.qrels, collection="pipes")
        for path in files.runs:
            names.append(path.stem + LONG)
            wh.ingest_runs(path, collection="pipes", run_id=names[-1])
        renamed = [metadata[0]] + [
            line.replace(line.split("\t")[0], line.split("\t")[0] + LONG, 1) for line in metadata[1:]
        ]
        (directory / "runs.tsv").write_text("\n".join(renamed) + "\n")
        wh.ingest_run_metadata(directory / "runs.tsv", collection="pipes")
        unpooled = wh.con.execute("SELECT run_id FROM runs WHERE NOT pooled ORDER BY 1").fetchall()
    assert len(unpooled) == 2
    return db, names


def pipe(db: Path, *args: str) -> str:
    """The command's standard output in a pipe 80 columns wide (no --collection: the only one)."""
    result = CliRunner().invoke(app, ["--db", str(db), *args], env={"COLUMNS": "80", "EVALWH_DB": None})
    assert result.exit_code == 0, result.output
    assert "…" not in result.stdout
    return result.stdout


def words(text: str) -> set[str]:
    return {word for line in text.splitlines() for word in line.split()}


COMMANDS_WITH_EVERY_RUN = [
    ["runs"],
    ["eval"],
    ["eval", "-m", "all_trec"],
    ["eval", "-m", "P@10", "-m", "AP", "--per-query"],
    ["matrix", "--layout", "pairs", "--depths", "10,30", "--no-store"],
    ["kendall"],
    ["bounds", "--depths", "10,60"],
    ["experiment", "exclusions", "--all"],
]


@pytest.mark.parametrize("args", COMMANDS_WITH_EVERY_RUN, ids=" ".join)
def test_every_run_id_whole_in_a_pipe(demo, args):
    db, names = demo
    out = pipe(db, *args)
    if args[0] == "kendall":
        return  # one row of statistics: nothing to cut but numbers, checked by pipe()
    missing = [name for name in names if name not in words(out)]
    assert not missing


def test_many_measures_come_in_long_form(demo):
    """48 measures do not become 48 columns: one line per run and measure, every value present."""
    db, names = demo
    out = pipe(db, "eval", "-m", "all_trec")
    lines = [line.split() for line in out.splitlines()[1:]]
    assert lines[0] == ["run_id", "measure", "value"]
    rows = lines[1:]
    assert {len(row) for row in rows} == {3}
    measures = {row[1] for row in rows}
    assert len(measures) > 20
    assert len(rows) == len(measures) * len(names)
    assert all(float(row[2]) >= 0 for row in rows)


@pytest.mark.parametrize(
    "args",
    [
        ["collections"],
        ["compare", "bm25" + LONG, "tfidf" + LONG, "--depths", "10,30"],
        ["matrix", "--depths", "10,30", "--no-store"],
        ["matrix", "--layout", "paper", "--depths", "10,30", "--no-store"],
        ["unjudged", "--ranks", "1,10,60"],
        ["metrics"],
        ["schema"],
        ["pool", "list"],
    ],
    ids=" ".join,
)
def test_tables_whole_in_a_pipe(demo, args):
    db, names = demo
    out = pipe(db, *args)
    if args[0] == "compare":
        assert {"bm25" + LONG, "tfidf" + LONG} <= words(out)


def test_paper_layout_switches_to_the_long_form(demo):
    """The papers' table (C1..C4 per depth as columns) is printed one row per depth in a pipe."""
    db, _ = demo
    out = pipe(db, "matrix", "--layout", "paper", "--depths", "10,30", "--no-store")
    header = out.splitlines()[1].split()
    assert header[:2] == ["collection_id", "column"]
    assert {"C1", "C2", "C3", "C4"} <= set(header)
    assert [line.split()[1] for line in out.splitlines()[2:]] == ["@10", "@30", "MAP/MAA"]


def test_pool_and_experiment_commands_in_a_pipe(demo, tmp_path):
    db, names = demo
    copy = tmp_path / "w.duckdb"
    copy.write_bytes(db.read_bytes())
    pooled = ",".join(n for n in names if not n.startswith(("new_dense", "tfidf")))
    out = pipe(copy, "pool", "build", "--depth", "10", "--runs", pooled, "--pool-id", "p10")
    assert "p10" in words(out)
    out = pipe(copy, "pool", "contributions", "--pool", "p10")
    assert set(pooled.split(",")) <= words(out)
    out = pipe(copy, "adjust", "tfidf" + LONG, "--pool", "p10", "--resamples", "200")
    assert "tfidf" + LONG in out
    out = pipe(copy, "experiment", "swap-rates", "-m", "MAP", "-m", "P@10", "-B", "5", "--cap", "60")
    assert "P@10" in words(out)
    out = pipe(copy, "experiment", "reduced-qrels", "-m", "P@10", "--levels", "50,20", "--cap", "60")
    assert "P@10" in words(out)
    out = pipe(copy, "pool", "complete")
    out = pipe(copy, "experiment", "pool-bias", "--widths", "2,4", "-I", "2", "-J", "2", "--common-topics", "3,6")
    assert out.strip()


def test_table_to_a_file_is_plain_and_whole(demo, tmp_path):
    db, names = demo
    target = tmp_path / "runs.txt"
    pipe(db, "runs", "--output", str(target))
    assert set(names) <= words(target.read_text())
