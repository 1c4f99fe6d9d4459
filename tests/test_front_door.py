"""The front door: ``evalwh.evaluate``, ``evalwh.compare``, ``paper_table`` and the Warehouse's jobs.

The direct functions give the numbers a warehouse gives after an ingest; every Warehouse job
method returns what its command prints (compared as the command's CSV, so value for value);
a collection argument may be left out when there is one collection, with the CLI's message
when there are several; ad-hoc SQL from Python is checked as ``evalwh sql`` checks it.
"""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import evalwh
from evalwh import Warehouse
from evalwh.cli import app
from evalwh.errors import EvalWhError, NotFoundError, QueryError
from evalwh.io.demo_data import DemoFiles, write_demo
from evalwh.stats.compare import compare as compare_scores
from evalwh.store.adhoc import ReadOnlyError

MEASURES = ["P@10", "AP", "nDCG@10", "A_p@10"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoFiles:
    """The demo collection's files: 30 topics, 8 runs (two not pooled)."""
    return write_demo(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="module")
def stored(demo: DemoFiles) -> Warehouse:
    """The demo collection ingested into an in-memory warehouse, as its only collection."""
    wh = Warehouse(":memory:")
    wh.ingest_qrels(demo.qrels, collection="demo")
    wh.ingest_runs(demo.runs)
    wh.ingest_run_metadata(demo.metadata)
    yield wh
    wh.close()


def _without_collection(frame: pd.DataFrame) -> pd.DataFrame:
    keys = [c for c in ("run_id", "query_id", "measure") if c in frame.columns]
    return frame.drop(columns="collection_id").sort_values(keys).reset_index(drop=True)


def _run_frames(demo: DemoFiles) -> dict[str, pd.DataFrame]:
    frames = {}
    for path in demo.runs:
        lines = pd.read_csv(path, sep=" ", header=None, names=["query_id", "q0", "doc_id", "rank", "score", "run_id"],
                            dtype={"query_id": str, "doc_id": str, "run_id": str})  # fmt: skip
        frames[lines["run_id"].iloc[0]] = lines[["query_id", "doc_id", "score"]]
    return frames


# -- evalwh.evaluate and evalwh.compare: files or DataFrames, no warehouse ---------------------


@pytest.mark.parametrize("per_query", [False, True])
def test_evaluate_files_equals_the_warehouse(demo: DemoFiles, stored: Warehouse, per_query: bool):
    direct = evalwh.evaluate(demo.qrels, demo.runs, MEASURES, per_query=per_query)
    assert set(direct["collection_id"]) == {"files"}
    warehouse = stored.evaluate(MEASURES, per_query=per_query)  # no collection=: the only one
    assert len(warehouse) == (8 * len(MEASURES) * (30 if per_query else 1))
    pd.testing.assert_frame_equal(_without_collection(direct), _without_collection(warehouse), rtol=1e-12)


def test_evaluate_dataframes_equals_the_warehouse(demo: DemoFiles, stored: Warehouse):
    frames = _run_frames(demo)
    qrels = pd.read_csv(demo.qrels, sep=" ", header=None, names=["query_id", "iteration", "doc_id", "relevance"],
                        dtype={"query_id": str, "doc_id": str})  # fmt: skip
    by_name = evalwh.evaluate(qrels, frames, MEASURES)
    one_frame = evalwh.evaluate(qrels, pd.concat([f.assign(run_id=n) for n, f in frames.items()]), MEASURES)
    warehouse = stored.evaluate(MEASURES)
    for direct in (by_name, one_frame):
        pd.testing.assert_frame_equal(_without_collection(direct), _without_collection(warehouse), rtol=1e-12)
    wide = evalwh.evaluate(qrels, frames, MEASURES, wide=True)
    assert list(wide.columns) == ["collection_id", "run_id", *MEASURES]
    assert wide.set_index("run_id").loc["bm25", "AP"] == pytest.approx(
        warehouse.query("run_id == 'bm25' and measure == 'AP'")["value"].item(), rel=1e-12
    )


def test_a_single_run_file_and_a_single_measure(demo: DemoFiles, stored: Warehouse):
    one = evalwh.evaluate(demo.qrels, str(demo.runs[0]), "AP")  # a path, not a list of them
    assert one[["run_id", "measure"]].values.tolist() == [["bm25", "AP"]]
    assert one["value"].item() == pytest.approx(stored.evaluate("AP", runs=["bm25"])["value"].item(), rel=1e-12)


@pytest.mark.parametrize(
    "options",
    [
        {"baseline": "bm25"},
        {"baseline": ["bm25", "dense"], "test": "wilcoxon", "correction": "bh"},
        {"test": "randomization", "seed": 3, "resamples": 500},
        {"test": "tukey"},
    ],
)
def test_compare_equals_the_statistics_on_the_same_scores(demo: DemoFiles, options: dict):
    measures = ["AP", "nDCG@10"]
    result = evalwh.compare(demo.qrels, demo.runs, measures, **options)
    scores = evalwh.evaluate(demo.qrels, demo.runs, measures, per_query=True)
    baselines = options.get("baseline")
    baselines = [baselines] if isinstance(baselines, str) else list(baselines or [])
    # the family: the baselines, then the runs in the order given (a file is named by its tag)
    runs = list(dict.fromkeys([*baselines, *(_tag(path) for path in demo.runs)]))
    expected = compare_scores(
        scores[["run_id", "query_id", "measure", "value"]], runs=runs, baselines=baselines,
        test=options.get("test", "t"), correction=options.get("correction"), alpha=0.05,
        n_resamples=options.get("resamples", 10_000), rng=options.get("seed"),
    )  # fmt: skip
    for field in ("pairs", "runs", "anova", "families"):
        pd.testing.assert_frame_equal(getattr(result, field), getattr(expected, field))
    assert result.baselines == baselines
    # the defaults are the command's: the paired t-test, Holm (none for the Tukey tests)
    chosen = result.families.iloc[0]
    assert chosen["test"] == options.get("test", "t")
    assert chosen["correction"] == options.get("correction", "none" if options.get("test") == "tukey" else "holm")


def test_compare_t_is_scipys_paired_t(demo: DemoFiles):
    """The front door's default test, checked outside evalwh: scipy's paired t on the same topics."""
    from scipy import stats

    result = evalwh.compare(demo.qrels, demo.runs[:2], ["AP"], baseline="bm25")
    per_topic = evalwh.evaluate(demo.qrels, demo.runs[:2], ["AP"], per_query=True)
    table = per_topic.pivot(index="query_id", columns="run_id", values="value")
    (other,) = [run for run in table.columns if run != "bm25"]
    expected = stats.ttest_rel(table[other], table["bm25"])
    (row,) = result.pairs.itertuples()
    assert (row.run_a, row.run_b, row.n_topics) == (other, "bm25", len(table))
    assert row.p_value == pytest.approx(expected.pvalue, rel=1e-10)
    assert row.mean_diff == pytest.approx((table[other] - table["bm25"]).mean(), rel=1e-12)


def _tag(path: Path) -> str:
    """The run id of a run file: its first line's tag."""
    return path.read_text().split("\n", 1)[0].split()[5]


def test_compare_on_files_equals_compare_in_the_warehouse(demo: DemoFiles, stored: Warehouse):
    in_order = sorted(demo.runs, key=_tag)  # the warehouse takes its runs sorted by id
    files = evalwh.compare(demo.qrels, in_order, ["AP", "P@10"], baseline="bm25")
    warehouse = stored.compare(["AP", "P@10"], baseline="bm25")  # every run of the only collection
    for field in ("pairs", "runs", "anova", "families"):
        pd.testing.assert_frame_equal(getattr(files, field), getattr(warehouse, field), rtol=1e-12)
    assert len(files.pairs) == 2 * 7 and set(files.pairs["run_b"]) == {"bm25"}


def test_paper_table(demo: DemoFiles):
    result = evalwh.compare(demo.qrels, demo.runs, ["AP"], baseline="bm25")
    latex = evalwh.paper_table(result)
    assert latex.startswith("% evalwh paper table; needs \\usepackage{booktabs}")
    assert "\\begin{table}" in latex and "\\toprule" in latex and "new\\_dense" in latex
    markdown = evalwh.paper_table(result, "markdown")
    assert markdown.startswith("|") and "new_dense" in markdown
    with pytest.raises(EvalWhError, match="give latex or markdown"):
        evalwh.paper_table(result, "html")


def test_the_examples_in_the_docstrings_run():
    import evalwh.api
    import evalwh.warehouse

    for module in (evalwh.api, evalwh.warehouse):
        failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert tried > 0 and failures == 0, module.__name__


# -- the only collection is the default; several are an error listing them ----------------------


def test_the_only_collection_is_the_default(tmp_path: Path, demo: DemoFiles):
    path = tmp_path / "w.duckdb"
    with Warehouse(path) as wh:
        with pytest.raises(NotFoundError) as empty:
            wh.ingest_qrels(demo.qrels)
        assert str(empty.value) == f"{path} holds no collection yet; give --collection NAME"
        wh.ingest_qrels(demo.qrels, collection="one")
        wh.ingest_runs(demo.runs[:2])  # into "one"
        means = wh.evaluate(["AP"])
        assert means[["collection_id", "run_id"]].values.tolist() == [["one", "bm25"], ["one", "bm25_rm3"]]
        assert wh.runs()["run_id"].tolist() == ["bm25", "bm25_rm3"]
        wh.ingest_qrels(demo.qrels, collection="another")
        message = f"{path} holds 2 collections (another, one); choose one with --collection"
        for job in (lambda: wh.evaluate(["AP"]), wh.runs, wh.pools, lambda: wh.compare(["AP"]), wh.kendall):
            with pytest.raises(NotFoundError) as several:
                job()
            assert str(several.value) == message
        assert wh.evaluate(["AP"], collection="one")["value"].tolist() == means["value"].tolist()
    # the same words as the command's
    result = CliRunner().invoke(app, ["eval", "--db", str(path)], env={"EVALWH_DB": None})
    assert result.exit_code == 1 and result.stderr == f"Error: {message}\n"


# -- SQL from Python ---------------------------------------------------------------------------


def test_sql_and_df_return_dataframes(stored: Warehouse):
    frame = stored.sql("SELECT run_id, count(*) AS topics FROM run_topics GROUP BY run_id ORDER BY run_id")
    assert isinstance(frame, pd.DataFrame) and len(frame) == 8 and set(frame["topics"]) == {30}
    assert stored.sql("SELECT $k + 1 AS n", {"k": 1})["n"].tolist() == [2]
    plain = stored.df("SELECT count(*) AS runs FROM runs")
    assert isinstance(plain, pd.DataFrame) and plain["runs"].tolist() == [8]
    assert stored.df("SELECT $x AS x", {"x": "a"})["x"].tolist() == ["a"]
    assert stored.arrow("SELECT 1 AS one").num_rows == 1
    with pytest.raises(QueryError, match="^SQL statement failed"):
        stored.df("SELECT * FROM no_such_table")


def test_sql_refuses_a_write_unless_asked(tmp_path: Path, demo: DemoFiles):
    path = tmp_path / "w.duckdb"
    with Warehouse(path) as wh:
        wh.ingest_qrels(demo.qrels, collection="demo")
        judged = len(wh.sql("SELECT * FROM qrels"))
        for statement in ("DELETE FROM qrels", "DROP TABLE qrels", "COPY qrels TO 'x.csv'", "SELECT 1; DELETE FROM qrels"):
            with pytest.raises(ReadOnlyError, match="would change the warehouse"):
                wh.sql(statement)
        with pytest.raises(QueryError, match="unknown table 'qrel'"):
            wh.sql("SELECT * FROM qrel")
        assert len(wh.sql("SELECT * FROM qrels")) == judged
        # the read runs in a transaction that is rolled back, also inside the caller's
        with wh.transaction():
            assert wh.sql("SELECT count(*) AS n FROM qrels")["n"].item() == judged
        wh.sql("DELETE FROM qrels WHERE relevance = 0", write=True)
        kept = len(wh.sql("SELECT * FROM qrels"))
        assert 0 < kept < judged
    with Warehouse.open_reader(path, sandbox=True) as reader:  # the command's connection
        assert len(reader.sql("SELECT * FROM qrels")) == kept
        with pytest.raises(QueryError, match="reaches outside the warehouse"):
            reader.sql(f"SELECT * FROM read_csv('{demo.qrels}')")


# -- every Warehouse job returns what its command prints -----------------------------------------


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A warehouse file made by ``evalwh demo``: the collection ``demo``, its only one."""
    folder = tmp_path_factory.mktemp("jobs")
    path = folder / "w.duckdb"
    _cli("demo", "--out", folder / "files", "--db", path)
    return path


def _cli(*args: object) -> str:
    result = CliRunner().invoke(app, [str(a) for a in args], env={"EVALWH_DB": None})
    assert result.exit_code == 0, result.output
    return result.stdout


def _csv(frame: pd.DataFrame) -> str:
    return frame.to_csv(index=False)  # what the command prints with --format csv


# (command arguments, the Warehouse call) in an order that builds on the steps before
JOBS = [
    (["collections"], lambda wh: wh.collections()),
    (["runs"], lambda wh: wh.runs()),
    (["eval", "-m", "P@10", "-m", "AP", "-m", "A_p@10"], lambda wh: wh.evaluate(["P@10", "AP", "A_p@10"], typed_names=True)),
    (["eval", "-m", "map", "-q", "--rel", "2"], lambda wh: wh.evaluate("map", per_query=True, rel=2, typed_names=True)),
    (["unjudged", "--ranks", "1,10,100"], lambda wh: wh.unjudged(ranks=[1, 10, 100])),
    (
        ["compare", "dense", "hybrid", "-b", "bm25", "-m", "AP", "-m", "nDCG@10", "--all-columns"],
        lambda wh: wh.compare(["AP", "nDCG@10"], ["dense", "hybrid"], baseline="bm25").pairs,
    ),
    (
        ["compare", "-b", "bm25", "--all-runs", "-t", "wilcoxon", "--correction", "bh", "--all-columns"],
        lambda wh: wh.compare(["AP"], baseline="bm25", test="wilcoxon", correction="bh").pairs,
    ),
    (["compare", "bm25", "dense", "--decision", "--all-columns"], lambda wh: wh.compare_decision("bm25", "dense").pairs),
    (["matrix", "--layout", "pairs"], lambda wh: wh.matrix().pairs),
    (["matrix", "--layout", "paper", "-t", "t"], lambda wh: wh.matrix(test="t").table),
    (["kendall"], lambda wh: wh.kendall()),
    (["pool", "build", "--depth", "10", "--pool-id", "p10"], lambda wh: wh.build_pool(depth=10, pool_id="p10", replace=True)),
    (["pool", "list"], lambda wh: wh.pools()),
    (["pool", "contributions", "--pool", "p10", "--by", "group"], lambda wh: wh.pool_contributions(pool="p10", by="group")),
    (["pool", "complete", "--completed-id", "done"], lambda wh: wh.complete_qrels(completed_id="done", replace=True)),
    (["adjust", "new_dense", "--pool", "p10"], lambda wh: wh.adjust("new_dense", "p10")),
    (["bounds", "--runs", "bm25,dense", "--depths", "10,100"], lambda wh: wh.bounds(["bm25", "dense"], depths=[10, 100])),
    (
        ["bounds", "bm25", "dense", "--depths", "10,100", "--compare", "-a", "dempster"],
        lambda wh: wh.bounds(["bm25", "dense"], depths=[10, 100], compare=True, aggregation="dempster"),
    ),
    (["experiment", "exclusions", "--all"], lambda wh: wh.exclusions()),
    (  # the demo's runs hold 200 documents per topic
        ["experiment", "swap-rates", "-m", "AP", "--samples", "20", "--cap", "200"],
        lambda wh: wh.swap_rates("AP", samples=20, cap=200)["summary"],
    ),
    (
        ["experiment", "reduced-qrels", "-m", "AP", "-m", "P@10", "--levels", "50,10", "--cap", "200"],
        lambda wh: wh.reduced_qrels(["AP", "P@10"], levels=[50, 10], cap=200)["levels"][
            ["measure", "level", "qrels_id", "n_runs", "mean_value", "change_pct", "tau"]
        ],
    ),
    (
        ["experiment", "pool-bias", "--widths", "2,4", "--repeats", "2", "--topic-samples", "2", "--common-topics", "5,10"],
        lambda wh: wh.pool_bias(widths=[2, 4], repeats=2, topic_samples=2, common_topics=[5, 10])["common_topics"],
    ),
    (["schema", "runs"], lambda wh: wh.schema("runs")),
    (["sql", "SELECT run_id, count(*) AS n FROM run_results GROUP BY ALL ORDER BY 1"],
     lambda wh: wh.sql("SELECT run_id, count(*) AS n FROM run_results GROUP BY ALL ORDER BY 1")),
]  # fmt: skip


def test_every_job_returns_what_its_command_prints(db: Path):
    for args, job in JOBS:
        printed = _cli(*args, "--format", "csv", "--db", db)
        with Warehouse(db) as wh:
            frame = job(wh)
        assert isinstance(frame, pd.DataFrame)
        assert _csv(frame) == printed, f"evalwh {' '.join(args)}"


def test_the_report_is_the_commands(db: Path, tmp_path: Path):
    printed = _cli("report", "--format", "md", "--baseline", "bm25", "--db", db)
    with Warehouse(db) as wh:
        text = wh.report(tmp_path / "report.md", format="md", baseline="bm25")
    assert (tmp_path / "report.md").read_text() == text

    def stable(markdown: str) -> str:  # the time it was made and how long its steps took differ
        return re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+(\+00:00|Z)?|\d+\.\d+ s\b", "#", markdown)

    assert stable(text) + "\n" == stable(printed)
    assert "bm25" in text and "| " in text


def test_export_and_import_are_the_commands(db: Path, tmp_path: Path):
    _cli("export", tmp_path / "by-cli", "--db", db)
    with Warehouse(db) as wh:
        manifest = wh.export(tmp_path / "by-python")
    cli_parquet = sorted(p.relative_to(tmp_path / "by-cli") for p in (tmp_path / "by-cli").rglob("*.parquet"))
    assert cli_parquet == sorted(p.relative_to(tmp_path / "by-python") for p in (tmp_path / "by-python").rglob("*.parquet"))
    assert manifest["collections"] == ["demo"] and manifest["tables"]["qrels"]["rows"] > 0
    _cli("import", tmp_path / "by-cli", "--db", tmp_path / "cli.duckdb")
    with Warehouse(tmp_path / "python.duckdb") as copy:
        imported = copy.import_export(tmp_path / "by-python")
        assert sum(imported.values()) == sum(t["rows"] for t in manifest["tables"].values())
        mine = copy.collections()
    assert _csv(mine) == _cli("collections", "--format", "csv", "--db", tmp_path / "cli.duckdb")


def test_import_evalwh_is_light():
    """``import evalwh`` loads neither DuckDB nor pandas: the front door's names are lazy."""
    import subprocess
    import sys

    code = "import sys, evalwh; evalwh.Warehouse; print(sorted(m for m in ('pandas', 'scipy') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    out = subprocess.run([sys.executable, "-c", "import sys, evalwh; print('duckdb' in sys.modules)"],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert out.strip() == "False"
