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

from evalwh import Warehouse, transfer
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
    return {
        t: sorted(wh.con.execute(f'SELECT * FROM "{t}"').fetchall(), key=repr)
        for t in transfer._tables(wh.con)
    }


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
    assert table.num_rows == 2 and set(table.column("collection_id").to_pylist()) == {"other/2"}
    assert [c["name"] for c in runs["columns"]] == table.column_names


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
            f"{path}: missing columns ['sha256'] of table 'runs' (expected ['collection_id', 'run_id'"
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
