"""Ad-hoc SQL: read-only checking, parameters, errors, output formats, README examples."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from evalwh.cli import app
from small_collection import fill
from typer.testing import CliRunner

from evalwh import Warehouse
from evalwh.store import adhoc
from evalwh.errors import NotFoundError, QueryError

README = Path(__file__).resolve().parents[1] / "docs" / "sql-export.md"  # the SQL guide page
runner = CliRunner(env={"COLUMNS": "120", "TERMINAL_WIDTH": "120"})


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("adhoc") / "wh.duckdb"
    with Warehouse(path) as wh:
        fill(wh)
        wh.evaluate(["P@5", "AP"], collection="small", store=True)
    return path


def _rows(db: Path) -> int:
    with Warehouse(db, read_only=True) as wh:
        return int(wh.con.execute("SELECT count(*) FROM run_results").fetchall()[0][0])


@pytest.mark.parametrize(
    "statement",
    [
        "DELETE FROM run_results",
        "DROP TABLE runs",
        "UPDATE runs SET tag = 'x'",
        "INSERT INTO collections (collection_id) VALUES ('x')",
        "CREATE TABLE t AS SELECT 1",
        "COPY runs TO '/tmp/evalwh-should-not-exist.csv'",
        "SELECT 1; DELETE FROM run_results",
        "EXPLAIN DELETE FROM run_results",
        "ATTACH 'other.duckdb'",
    ],
)
def test_write_statement_refused_and_data_unchanged(db: Path, statement: str) -> None:
    before = _rows(db)
    result = runner.invoke(app, ["sql", statement, "--db", str(db)])
    assert result.exit_code == 1
    assert re.fullmatch(
        r"Error: statement \d \(\w+\) would change the warehouse; only SELECT, WITH, DESCRIBE, SHOW, "
        r"SUMMARIZE and EXPLAIN run read-only \(pass --write to allow changes\)\n",
        result.stderr,
    ), result.stderr
    assert _rows(db) == before
    assert not Path("/tmp/evalwh-should-not-exist.csv").exists()


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT 1",
        "WITH a AS (SELECT 1 AS x) SELECT x FROM a",
        "SELECT 1 UNION ALL SELECT 2",
        "DESCRIBE runs",
        "SHOW TABLES",
        "SUMMARIZE runs",
        "EXPLAIN SELECT * FROM runs",
        "FROM runs SELECT run_id",
    ],
)
def test_read_only_statements_pass_the_check(statement: str) -> None:
    assert len(adhoc.check(statement)) == 1


def test_write_mode_changes_data_in_one_transaction(tmp_path: Path) -> None:
    path = tmp_path / "w.duckdb"
    with Warehouse(path) as wh:
        fill(wh)
    result = runner.invoke(
        app,
        [
            "sql",
            "DELETE FROM results; DELETE FROM run_topics WHERE run_id = 'run0'",
            "--write",
            "--db",
            str(path),
        ],
    )
    assert result.exit_code == 0, result.output
    with Warehouse(path, read_only=True) as wh:
        assert wh.con.execute(
            "SELECT count(*) FROM run_topics WHERE run_id = 'run0'"
        ).fetchall() == [(0,)]
        # a failing statement rolls back the ones before it
        topics = wh.con.execute("SELECT count(*) FROM run_topics").fetchall()
    failed = runner.invoke(
        app, ["sql", "DELETE FROM run_topics; SELECT * FROM nosuch", "--write", "--db", str(path)]
    )
    assert failed.exit_code == 1
    with Warehouse(path, read_only=True) as wh:
        assert wh.con.execute("SELECT count(*) FROM run_topics").fetchall() == topics


def test_parameters(db: Path) -> None:
    with Warehouse(db, read_only=True) as wh:
        frame = adhoc.run(
            wh,
            "SELECT run_id, count(*) AS n FROM ranked_results WHERE rank <= $k AND run_id = $run GROUP BY run_id",
            {"k": 3, "run": "run0"},
        )
        assert frame.to_dict("records") == [{"run_id": "run0", "n": 18}]
        with pytest.raises(
            QueryError, match=r"no value for parameter\(s\) \$k; give --param k=VALUE"
        ):
            adhoc.run(wh, "SELECT $k AS k")
        with pytest.raises(
            QueryError, match=r"parameter\(s\) \['j'\] are not used by the SQL \(it uses: \$k\)"
        ):
            adhoc.run(wh, "SELECT $k AS k", {"k": 1, "j": 2})
    assert adhoc.parse_param("k=10") == ("k", 10)
    assert adhoc.parse_param("p=0.8") == ("p", 0.8)
    assert adhoc.parse_param('q="401"') == ("q", "401")
    assert adhoc.parse_param('runs=["a","b"]') == ("runs", ["a", "b"])
    assert adhoc.parse_param("run=bm25") == ("run", "bm25")
    with pytest.raises(QueryError, match="expected name=value"):
        adhoc.parse_param("k10")
    result = runner.invoke(
        app,
        [
            "sql",
            "SELECT $k + 1 AS k1, $name AS name",
            "-p",
            "k=10",
            "-p",
            "name=x",
            "-f",
            "csv",
            "--db",
            str(db),
        ],
    )
    assert result.stdout == "k1,name\n11,x\n"


def test_errors_name_position_and_suggest(db: Path) -> None:
    cases = {
        "SELECT * FROM run_result": "Error: unknown table 'run_result'. Did you mean run_results or ranked_results or results? (evalwh schema lists them)\n",
        "SELECT run_idd FROM runs": "Error: unknown column 'run_idd'. Did you mean run_id?\n",
        "SELECT *\nFROM runs WHERE": (
            "Error: syntax error at line 2, column 11 near 'WHERE': incomplete WHERE expression\n"
        ),
    }
    for statement, message in cases.items():
        result = runner.invoke(app, ["sql", statement, "--db", str(db)])
        assert result.exit_code == 1
        assert result.stderr == message


def test_every_output_format(db: Path, tmp_path: Path) -> None:
    query = "SELECT run_id, count(*) AS topics FROM run_topics GROUP BY run_id ORDER BY run_id"
    expected = [
        {"run_id": "run0", "topics": 6},
        {"run_id": "run1", "topics": 5},
        {"run_id": "run2", "topics": 6},
    ]
    csv = runner.invoke(app, ["sql", query, "-f", "csv", "--db", str(db)])
    assert csv.stdout == "run_id,topics\nrun0,6\nrun1,5\nrun2,6\n"
    lines = runner.invoke(app, ["sql", query, "-f", "json", "--db", str(db)]).stdout.splitlines()
    assert [json.loads(line) for line in lines] == expected
    out = tmp_path / "t.parquet"
    result = runner.invoke(app, ["sql", query, "-f", "parquet", "-o", str(out), "--db", str(db)])
    assert result.exit_code == 0
    assert pd.read_parquet(out).to_dict("records") == expected
    table = runner.invoke(app, ["sql", query, "--db", str(db)]).stdout
    assert re.search(r"^run1\s+5$", table, re.MULTILINE)  # plain text off a terminal


def test_sql_from_file_and_stdin(db: Path, tmp_path: Path) -> None:
    file = tmp_path / "q.sql"
    file.write_text("-- comment\nSELECT count(*) AS runs FROM runs\n")
    assert (
        runner.invoke(app, ["sql", str(file), "-f", "csv", "--db", str(db)]).stdout == "runs\n3\n"
    )
    piped = runner.invoke(app, ["sql", "-", "-f", "csv", "--db", str(db)], input="SELECT 2 AS two")
    assert piped.stdout == "two\n2\n"
    missing = runner.invoke(app, ["sql", str(tmp_path / "none.sql"), "--db", str(db)])
    assert missing.stderr == f"Error: {tmp_path / 'none.sql'}: no such SQL file\n"


def test_transpile_user_sql() -> None:
    result = runner.invoke(
        app, ["sql", "SELECT list_contains(['a'], run_id) FROM runs", "--dialect", "spark"]
    )
    assert result.stdout == "SELECT\n  ARRAY_CONTAINS(ARRAY('a'), run_id)\nFROM runs;\n"
    bad = runner.invoke(app, ["sql", "SELECT 1", "--dialect", "sparc"])
    assert bad.stderr.startswith("Error: unknown SQL dialect 'sparc'. Did you mean spark?")


def test_schema_lists_documented_views(db: Path) -> None:
    with Warehouse(db, read_only=True) as wh:
        overview = adhoc.schema(wh)
        views = set(overview.loc[overview["kind"] == "view", "relation"])
        assert {
            "ranked_results",
            "ranked_judgments",
            "topic_judgments",
            "per_query_scores",
            "run_scores",
            "run_overview",
        } <= views
        assert (overview.loc[overview["kind"] == "view", "description"] != "").all()
        columns = adhoc.schema(wh, "ranked_judgments")
        assert columns["column"].tolist() == [
            "collection_id",
            "qrels_id",
            "run_id",
            "query_id",
            "doc_id",
            "score",
            "rank",
            "relevance",
            "judged",
        ]
        with pytest.raises(
            NotFoundError,
            match="no table or view 'ranked_judgment'. Did you mean ranked_judgments?",
        ):
            adhoc.schema(wh, "ranked_judgment")
    result = runner.invoke(app, ["schema", "run_scores", "-f", "csv", "--db", str(db)])
    assert "n_undefined,INTEGER,topics left out of the mean as undefined" in result.stdout


def test_views_agree_with_tables(db: Path) -> None:
    with Warehouse(db, read_only=True) as wh:
        judged = adhoc.run(
            wh,
            "SELECT count(*) FILTER (WHERE judged) AS j, count(*) FILTER (WHERE relevance < 0) AS neg, count(*) AS n "
            "FROM ranked_judgments WHERE qrels_id = 'default'",
        )
        direct = wh.con.execute(
            "SELECT count(q.doc_id) FILTER (WHERE q.relevance >= 0), count(*) FILTER (WHERE q.relevance < 0), count(*) "
            "FROM run_results r LEFT JOIN qrels q USING (collection_id, query_id, doc_id)"
        ).fetchall()[0]
        assert tuple(judged.iloc[0]) == direct
        stored = adhoc.run(
            wh, "SELECT run_id, value FROM run_scores WHERE measure = 'AP' ORDER BY run_id"
        )
        fresh = wh.evaluate(["AP"], collection="small")
        assert stored["value"].tolist() == pytest.approx(fresh["value"].tolist(), rel=1e-12)
        per_query = adhoc.run(
            wh, "SELECT count(*) AS n FROM per_query_scores WHERE measure = 'P@5'"
        )
        assert per_query["n"].iloc[0] == 3 * 5  # 3 runs x 5 topics with a relevant document


def _readme_queries() -> list[str]:
    return re.findall(r"```sql\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_example_queries() -> None:
    assert len(_readme_queries()) >= 4


@pytest.fixture(scope="module")
def readme_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # The README's examples name collection 'trec8'; the small collection stands in for it.
    path = tmp_path_factory.mktemp("readme") / "wh.duckdb"
    with Warehouse(path) as wh:
        fill(wh, collection="trec8")
        wh.evaluate(["AP", "nDCG@10", "P@10"], collection="trec8", store=True)
        wh.evaluate(["AP", "nDCG@10", "P@10"], collection="trec8", per_query=True, store=True)
    return path


@pytest.mark.parametrize("index", range(len(_readme_queries())))
def test_readme_example_query_runs(readme_db: Path, index: int) -> None:
    query = _readme_queries()[index]
    with Warehouse(readme_db, read_only=True) as wh:
        frame = adhoc.run(wh, query, {"k": 10} if "$k" in query else {})
    assert len(frame) > 0
