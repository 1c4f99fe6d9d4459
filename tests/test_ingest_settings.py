"""A bulk ingest puts DuckDB's settings back as they were (evalwh.store.ingest.session).

``bulk_session`` lets rows come in any order and, for a warehouse file, bounds DuckDB's
memory while it ingests. It used to put the memory limit back as DuckDB prints it, rounded
down ('2GB' prints '1.8 GiB', and '1.8 GiB' set prints '1.7 GiB'), so a long-lived
warehouse's limit fell by a tenth of a unit at every ingest, also in memory, where the
ingest never changes it. Now an in-memory warehouse's limit is not touched, and a file's
comes back as DuckDB's default (RESET) or as a limit that prints as before, ingest after
ingest.
"""

from __future__ import annotations

import pandas as pd
import pytest

from evalwh.store.ingest.session import INGEST_MEMORY, bulk_session
from evalwh.warehouse import Warehouse

TOPICS, DOCS = ["1", "1", "2"], ["a", "b", "a"]
QRELS = pd.DataFrame({"query_id": TOPICS, "doc_id": DOCS, "relevance": [1, 0, 2]})
RUN = pd.DataFrame({"query_id": TOPICS, "doc_id": DOCS, "score": [2.0, 1.0, 0.5]})


def _settings(wh: Warehouse) -> tuple:
    return wh.con.execute(
        "SELECT current_setting('memory_limit'), current_setting('preserve_insertion_order'),"
        " current_setting('max_vacuum_tasks')"
    ).fetchone()


def _ingest(wh: Warehouse, times: int, tmp_path) -> list[tuple]:
    """Ingest qrels and runs (a DataFrame and a file) ``times`` times; the settings after each."""
    run_file = tmp_path / "run.txt"
    run_file.write_text("1 Q0 a 1 2.0 filed\n1 Q0 b 2 1.0 filed\n2 Q0 c 1 3.5 filed\n")
    seen = []
    for i in range(times):
        wh.ingest_qrels(QRELS, collection=f"c{i}")
        wh.ingest_runs(RUN, collection=f"c{i}", run_id="frame")
        wh.ingest_runs(run_file, collection=f"c{i}")
        seen.append(_settings(wh))
    return seen


@pytest.mark.parametrize("limit", [None, "2GB"])
def test_an_in_memory_warehouse_keeps_its_memory_limit(tmp_path, limit):
    with Warehouse(":memory:") as wh:
        if limit is not None:
            wh.con.execute(f"SET memory_limit = '{limit}'")
        before = _settings(wh)
        assert _ingest(wh, 3, tmp_path) == [before] * 3
        if limit == "2GB":
            assert before[0] == "1.8 GiB"  # (as DuckDB prints 2 GB: what fell to 1.7, 1.6 ...)


@pytest.mark.parametrize("limit", [None, "2GB", "1500MB"])
def test_a_warehouse_file_gets_its_memory_limit_back_after_every_ingest(tmp_path, limit):
    with Warehouse(tmp_path / "w.duckdb") as wh:
        if limit is not None:
            wh.con.execute(f"SET memory_limit = '{limit}'")
        before = _settings(wh)
        with bulk_session(wh, vacuum=False):
            during = _settings(wh)
        assert during == ("256.0 MiB", False, 0) and INGEST_MEMORY == "256MiB"
        assert _settings(wh) == before
        assert _ingest(wh, 3, tmp_path) == [before] * 3
        wh.con.execute("RESET memory_limit")
        default = _settings(wh)[0]
        assert (before[0] == default) == (limit is None)


def test_a_failed_ingest_puts_the_settings_back_too(tmp_path):
    with Warehouse(tmp_path / "w.duckdb") as wh:
        wh.con.execute("SET memory_limit = '2GB'")
        before = _settings(wh)
        with pytest.raises(ZeroDivisionError), bulk_session(wh, vacuum=False):
            1 / 0  # noqa: B018
        assert _settings(wh) == before
        bad = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": ["high"]})
        with pytest.raises(Exception, match="relevance"):
            wh.ingest_qrels(bad, collection="c")
        assert _settings(wh) == before
