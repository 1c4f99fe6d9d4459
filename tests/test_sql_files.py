"""Static and contract checks over every shipped metric query (``queries/metrics/*.sql``).

One case per file: it parses with sqlglot's DuckDB dialect as one statement; the ``params``
declared in its header are exactly the ``$placeholders`` of the statement; run on a tiny
warehouse it returns exactly the columns ``run_id, query_id, value``, one row per evaluated
(run, topic), ordered by those keys; and its header gives the registry a name and a
description.
"""

from __future__ import annotations

import pandas as pd
import pytest
import sqlglot
from sqlglot import exp

from evalwh import Warehouse, sql
from evalwh.measures import catalog
from evalwh.store.context import Options, build_context

FILES = sql.load_package(catalog.METRICS_PACKAGE)
# a value for each parameter a spec must give (the others take their declared default)
REQUIRED = {"k": 5, "p": 0.8, "recall": 0.5, "max_rel": 3.0, "mult": 2.0}


@pytest.fixture(scope="module")
def wh() -> Warehouse:
    """Two runs over three topics: one run lacks topic 3, topic 2 has no relevant document."""
    wh = Warehouse(":memory:")
    qrels = pd.DataFrame(
        {
            "query_id": ["1", "1", "1", "2", "3", "3"],
            "doc_id": ["a", "b", "c", "a", "a", "d"],
            "relevance": [1, 0, 2, 0, 1, -1],
        }
    )
    wh.ingest_qrels(qrels, collection="tiny")
    runs = pd.DataFrame(
        {
            "run_id": ["r1", "r1", "r1", "r1", "r2", "r2", "r2"],
            "query_id": ["1", "1", "2", "3", "1", "2", "2"],
            "doc_id": ["a", "x", "a", "d", "c", "b", "a"],
            "score": [2.0, 1.0, 1.0, 1.0, 1.0, 3.0, 1.0],
        }
    )
    wh.ingest_runs(runs, collection="tiny")
    build_context(wh, "tiny", None, Options(averaging="trec_eval_c"))
    return wh


def _header_params(file: sql.SqlFile) -> set[str]:
    declared = filter(None, (p.strip() for p in file.header.get("params", "").split(",")))
    return {part.split()[0] for part in declared}


@pytest.mark.parametrize("name", list(FILES))
def test_parses_as_one_duckdb_statement(name: str) -> None:
    statements = sqlglot.parse(FILES[name].text, read="duckdb")
    assert len(statements) == 1
    assert isinstance(statements[0], exp.Query)


@pytest.mark.parametrize("name", list(FILES))
def test_header_params_equal_placeholders(name: str) -> None:
    file = FILES[name]
    tree = sqlglot.parse_one(file.text, read="duckdb")
    found = {p.name for p in tree.find_all(exp.Placeholder)}
    assert _header_params(file) == found
    assert file.placeholders == found  # the loader's own scan agrees with sqlglot


@pytest.mark.parametrize("name", list(FILES))
def test_output_contract(wh: Warehouse, name: str) -> None:
    metric = next(m for m in catalog.metrics() if m.key == name)
    params = {p.name: REQUIRED[p.name] if p.required else p.default for p in metric.params}
    result = wh.con.sql(FILES[name].text, params=params)
    assert result.columns == ["run_id", "query_id", "value"]
    frame = result.df()
    pairs = wh.con.sql("SELECT run_id, query_id FROM ev_pairs ORDER BY run_id, query_id").df()
    # one row per evaluated (run, topic) in key order: 2 runs x 3 topics (a missing topic and
    # one without relevant documents both stay under trec_eval_c)
    pd.testing.assert_frame_equal(frame[["run_id", "query_id"]], pairs)
    assert len(frame) == 2 * 3


@pytest.mark.parametrize("name", list(FILES))
def test_registry_has_name_and_description(name: str) -> None:
    metric = next(m for m in catalog.metrics() if m.key == name)
    assert metric.name.strip()
    assert metric.description.strip().endswith(".") or metric.description.strip().endswith(")")
    assert catalog.lookup(metric.name) is metric
