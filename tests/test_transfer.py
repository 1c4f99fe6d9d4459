"""Parquet export and import: round trip, manifest, and each bad input refused cleanly."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from evalwh.cli import app
from small_collection import fill
from typer.testing import CliRunner

from evalwh import Warehouse
from evalwh.store import transfer
from evalwh.errors import EvalWhError, NotFoundError

runner = CliRunner(env={"COLUMNS": "120", "TERMINAL_WIDTH": "120"})


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("src") / "src.duckdb"
    with Warehouse(path) as wh:
        fill(wh, collection="small")
        fill(wh, collection="other/2", seed=11, runs=2, topics=4)  # a name that needs escaping
        wh.ingest_run_metadata(
            __import__("pandas").DataFrame(
                {"run_id": ["run0"], "group": ["g"], "type": ["manual"], "pooled": [1]}
            ),
            collection="small",
        )
        wh.evaluate(["P@5", "AP", "RankEff"], collection="small", store=True)
    return path


def _tables(wh: Warehouse) -> dict[str, list[tuple]]:
    """Every exported relation's rows, by name (keys are the warehouse's own, not data)."""
    out = {}
    for table, columns in transfer._tables(wh.con).items():
        names = ", ".join(f'"{c}"' for c, _ in columns)
        out[table] = sorted(wh.con.execute(f'SELECT {names} FROM "{table}"').fetchall(), key=repr)
    return out


def test_round_trip_every_table_equal(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    result = runner.invoke(app, ["export", str(out), "--format", "parquet", "--db", str(source)])
    assert result.exit_code == 0, result.output
    target = tmp_path / "copy.duckdb"
    result = runner.invoke(app, ["import", str(out), "--db", str(target)])
    assert result.exit_code == 0, result.output
    with Warehouse(source, read_only=True) as a, Warehouse(target, read_only=True) as b:
        before, after = _tables(a), _tables(b)
        assert sum(len(rows) for rows in before.values()) > 500
        assert before == after


def test_manifest_and_partitions(source: Path, tmp_path: Path) -> None:
    with Warehouse(source, read_only=True) as wh:
        manifest = transfer.export(
            wh, tmp_path / "e", collections=["other/2"], tables=["runs", "qrels"]
        )
        runs_in_db = wh.con.execute(
            "SELECT count(*) FROM runs WHERE collection_id = 'other/2'"
        ).fetchall()[0][0]
    written = json.loads((tmp_path / "e" / "manifest.json").read_text())
    assert written == manifest
    assert manifest["format"] == "evalwh-export" and manifest["collections"] == ["other/2"]
    assert "007_views" in manifest["migrations"]
    assert sorted(manifest["tables"]) == ["qrels", "runs"]
    runs = manifest["tables"]["runs"]
    assert runs["rows"] == runs_in_db == 2
    (file,) = runs["files"]
    assert file["path"] == "runs/collection_id=other%2F2/data_0.parquet"
    assert file["collection_id"] == "other/2"
    table = pq.read_table(tmp_path / "e" / file["path"])
    # the collection is in the folder name only (hive layout), not inside the file as well
    assert table.num_rows == 2 and "collection_id" not in table.column_names
    assert [c["name"] for c in runs["columns"] if c["name"] != "collection_id"] == table.column_names


def test_import_into_existing_warehouse_clash_and_replace(source: Path, tmp_path: Path) -> None:
    with Warehouse(source, read_only=True) as wh:
        transfer.export(wh, tmp_path / "e", collections=["small"])
    target = tmp_path / "t.duckdb"
    with Warehouse(target) as wh:
        fill(wh, collection="mine", seed=3, runs=1, topics=2)
        transfer.import_export(wh, tmp_path / "e")
        collections = wh.con.execute("SELECT collection_id FROM collections ORDER BY 1").fetchall()
        assert collections == [("mine",), ("small",)]
        before = _tables(wh)
        with pytest.raises(
            EvalWhError,
            match=r"table 'collections' already holds 1 rows of collections small; .*--replace",
        ):
            transfer.import_export(wh, tmp_path / "e")
        assert _tables(wh) == before
        transfer.import_export(wh, tmp_path / "e", replace=True)
        assert _tables(wh) == before


def test_export_into_non_empty_directory_refused(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "busy"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    result = runner.invoke(app, ["export", str(out), "--db", str(source)])
    assert result.exit_code == 1
    assert (
        result.stderr
        == f"Error: {out}: exists and is not an empty directory; export into a new or empty directory\n"
    )
    assert [p.name for p in out.iterdir()] == ["keep.txt"]
    assert not any(p.name.startswith(".busy.partial") for p in tmp_path.iterdir())


def test_export_unknown_names(source: Path, tmp_path: Path) -> None:
    with Warehouse(source, read_only=True) as wh:
        with pytest.raises(
            NotFoundError, match=r"no table 'qrel' in the warehouse; did you mean 'qrels'\?"
        ):
            transfer.export(wh, tmp_path / "a", tables=["qrel"])
        with pytest.raises(
            NotFoundError, match=r"no collection 'smal' in the warehouse; did you mean 'small'\?"
        ):
            transfer.export(wh, tmp_path / "b", collections=["smal"])
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_import_of_a_directory_that_is_not_an_export(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "x.parquet").write_bytes(b"")
    target = tmp_path / "t.duckdb"
    result = runner.invoke(app, ["import", str(tmp_path / "plain"), "--db", str(target)])
    assert result.exit_code == 1
    assert (
        result.stderr
        == f"Error: {tmp_path / 'plain'}: not an evalwh export (no manifest.json); make one with evalwh export\n"
    )
    (tmp_path / "plain" / "manifest.json").write_text('{"format": "something-else"}')
    result = runner.invoke(app, ["import", str(tmp_path / "plain"), "--db", str(target)])
    assert "not an evalwh export manifest" in result.stderr


def _export(source: Path, out: Path) -> dict:
    with Warehouse(source, read_only=True) as wh:
        return transfer.export(wh, out, collections=["small"])


def test_parquet_file_with_missing_columns_refused_nothing_written(
    source: Path, tmp_path: Path
) -> None:
    out = tmp_path / "e"
    manifest = _export(source, out)
    entry = manifest["tables"]["runs"]["files"][0]
    path = out / entry["path"]
    table = pq.read_table(path).drop_columns(["sha256"])
    pq.write_table(table, path)
    # keep the checksum consistent so that the column check is what refuses the file
    entry["sha256"] = transfer._sha256(path)
    (out / "manifest.json").write_text(json.dumps(manifest))
    target = tmp_path / "t.duckdb"
    with Warehouse(target) as wh:
        with pytest.raises(EvalWhError) as error:
            transfer.import_export(wh, out)
        assert str(error.value).startswith(
            f"{path}: missing columns ['sha256'] of table 'runs' (expected ['run_id'"
        )
        assert all(not rows for rows in _tables(wh).values())


def test_damaged_file_refused_nothing_written(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "e"
    manifest = _export(source, out)
    path = out / manifest["tables"]["qrels"]["files"][0]["path"]
    shutil.copy(out / manifest["tables"]["runs"]["files"][0]["path"], path)
    with Warehouse(tmp_path / "t.duckdb") as wh:
        with pytest.raises(EvalWhError, match="SHA-256 differs from the manifest"):
            transfer.import_export(wh, out)
        assert all(not rows for rows in _tables(wh).values())


def _expected_runs(source: Path) -> list[tuple[str, str, int]]:
    with Warehouse(source, read_only=True) as wh:
        return wh.con.execute("SELECT collection_id, run_id, line_count FROM runs ORDER BY ALL").fetchall()


def _rows(frame) -> list[tuple[str, str, int]]:  # type: ignore[no-untyped-def]
    return sorted((str(c), str(r), int(n)) for c, r, n in frame[["collection_id", "run_id", "line_count"]].itertuples(index=False))


@pytest.fixture(scope="module")
def exported(source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("readers") / "export"
    with Warehouse(source, read_only=True) as wh:
        transfer.export(wh, out)
    return out


def test_export_opens_in_pandas_and_pyarrow(source: Path, exported: Path) -> None:
    """A table folder reads whole with pandas.read_parquet(dir) and pyarrow.dataset."""
    import pandas as pd
    import pyarrow.dataset as ds

    expected = _expected_runs(source)
    assert {c for c, _, _ in expected} == {"small", "other/2"}
    assert _rows(pd.read_parquet(exported / "runs")) == expected
    table = ds.dataset(exported / "runs", format="parquet", partitioning="hive").to_table()
    assert _rows(table.to_pandas()) == expected
    # every table with rows, not only runs
    for name in ("qrels", "run_results", "results"):
        with Warehouse(source, read_only=True) as wh:
            count = wh.con.execute(f"SELECT count(*) FROM {name}").fetchall()[0][0]
        assert len(pd.read_parquet(exported / name)) == count > 0


def test_export_opens_in_duckdb_with_hive_partitioning(source: Path, exported: Path) -> None:
    import duckdb

    con = duckdb.connect()
    rows = con.execute(
        "SELECT collection_id, run_id, line_count FROM read_parquet($glob, hive_partitioning = true) ORDER BY ALL",
        {"glob": str(exported / "runs" / "*" / "*.parquet")},
    ).fetchall()
    assert rows == _expected_runs(source)


def test_export_opens_in_polars(source: Path, exported: Path) -> None:
    pl = pytest.importorskip("polars", reason="polars is optional")
    frame = pl.scan_parquet(str(exported / "runs" / "**" / "*.parquet"), hive_partitioning=True).collect()
    assert _rows(frame.to_pandas()) == _expected_runs(source)


@pytest.mark.filterwarnings("ignore::FutureWarning")  # pyspark's notice about pandas 3
def test_export_opens_in_spark(source: Path, exported: Path, spark_session) -> None:  # type: ignore[no-untyped-def]
    frame = spark_session.read.parquet(str(exported / "runs")).select("collection_id", "run_id", "line_count")
    assert sorted((str(c), r, int(n)) for c, r, n in frame.collect()) == _expected_runs(source)


def test_import_reads_format_1_exports(source: Path, tmp_path: Path) -> None:
    """Exports written before format 2 kept collection_id inside the files too: still imported."""
    import pyarrow as pa

    out = tmp_path / "e"
    with Warehouse(source, read_only=True) as wh:
        manifest = transfer.export(wh, out)
    for entry in manifest["tables"].values():
        for item in entry["files"]:
            if item["collection_id"] is None:
                continue
            path = out / item["path"]
            table = pq.read_table(path, partitioning=None)
            table = table.add_column(0, "collection_id", pa.array([item["collection_id"]] * table.num_rows))
            pq.write_table(table, path)
            item["sha256"] = transfer._sha256(path)
    manifest["format_version"] = 1
    (out / "manifest.json").write_text(json.dumps(manifest))
    target = tmp_path / "t.duckdb"
    with Warehouse(target) as wh:
        transfer.import_export(wh, out)
    with Warehouse(source, read_only=True) as a, Warehouse(target, read_only=True) as b:
        assert _tables(a) == _tables(b)
