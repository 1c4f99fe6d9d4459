"""Export a warehouse to Parquet (partitioned by collection, with a manifest) and import it back.

Layout of an export directory::

    manifest.json                                 what is here, and how to check it
    <table>/collection_id=<id>/data_0.parquet     one folder per collection (hive style)
    <table>/data_0.parquet                        tables without collection_id

The ``collection_id`` of a partitioned table is in the folder names only, not inside the
files: that is the layout every hive-partitioned Parquet reader expects (pandas'
``read_parquet(dir)``, ``pyarrow.dataset``, polars, DuckDB's ``hive_partitioning``, Spark),
and a column in both places makes some of them refuse to merge the two types. The manifest
records the evalwh version, the schema migrations of the source, every table's columns and
types, and each file's collection, rows and SHA-256. Exports of format 1 (evalwh before the
change) kept the column inside the files as well; import reads both.

Export writes into a temporary sibling directory and renames it into place at the end;
import checks every file (checksum and columns) before it starts its one transaction. Either
operation leaves nothing half-written when it fails.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from evalwh import sql
from evalwh._version import __version__
from evalwh.errors import EvalWhError, NotFoundError, SchemaError
from evalwh.io.files import fsync_tree, partial_name, refuse_database, remove_leftovers
from evalwh.store.import_rules import LATER_KEYS, LATER_RULES, NOT_AN_ID, NULLABLE_IDS, id_problem

if TYPE_CHECKING:
    from evalwh.store.connection import Store

MANIFEST = "manifest.json"
FORMAT = "evalwh-export"
FORMAT_VERSION = 2  # 2: partition column in the folder names only (1: in the files too)
PARTITION = "collection_id"
# The migrations table describes the schema, not data: it goes into the manifest. Run
# results are stored by key (schema/013_keyed_results.sql); an export holds them by name,
# as the run_results view gives them, and run_topics without its key, so that any tool
# reads them and an import gives them keys of its own warehouse. The judged-rows cache is
# rebuilt by the import, not carried.
_NOT_DATA = frozenset(
    {"schema_migrations", "run_rows", "documents", "judged_results", "judged_builds"}
)
_VIEWS = ("run_results",)
_KEYS = frozenset({"list_key"})
_BY_KEY = ("run_results", "run_topics")  # imported through store_ranked.sql


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _tables(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple[str, str]]]:
    """The warehouse's data relations with their (column, type) lists, in name order.

    Its base tables but for the schema's bookkeeping, the storage by key and the cache, and
    the run_results view in their place; no key columns.
    """
    rows = con.execute(
        "SELECT c.table_name, c.column_name, c.data_type FROM duckdb_columns() AS c "
        "LEFT JOIN duckdb_tables() AS t ON t.table_oid = c.table_oid "
        "LEFT JOIN duckdb_views() AS v ON v.view_oid = c.table_oid "
        "WHERE c.schema_name = 'main' AND NOT c.internal "
        "AND ((t.table_oid IS NOT NULL AND NOT t.temporary)"
        " OR (v.view_oid IS NOT NULL AND NOT v.temporary AND list_contains($views, c.table_name))) "
        "ORDER BY c.table_name, c.column_index",
        {"views": list(_VIEWS)},
    ).fetchall()
    out: dict[str, list[tuple[str, str]]] = {}
    for table, column, data_type in rows:
        if table not in _NOT_DATA and column not in _KEYS:
            out.setdefault(table, []).append((column, data_type))
    return out


def _choose(given: Sequence[str] | None, known: Sequence[str], what: str) -> list[str]:
    if given is None:
        return list(known)
    import difflib

    for name in given:
        if name not in known:
            close = difflib.get_close_matches(name, list(known), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise NotFoundError(
                f"no {what} {name!r} in the warehouse{hint} ({what}s: {', '.join(known)})"
            )
    return list(dict.fromkeys(given))


def export(
    wh: Store,
    directory: str | os.PathLike[str],
    *,
    collections: Sequence[str] | None = None,
    tables: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Write tables of the warehouse as Parquet files with a manifest.

    Args:
        wh: The warehouse (read-only is enough).
        directory: A new or empty directory.
        collections: Export only these collections (every collection when None); tables
            without a ``collection_id`` column are exported whole.
        tables: Export only these tables (every data table when None).

    Returns:
        The manifest, as also written to ``directory/manifest.json``.

    Raises:
        EvalWhError: if ``directory`` exists and is not empty.
        NotFoundError: for an unknown collection or table.

    Examples:
        >>> import pandas as pd, tempfile
        >>> from evalwh import Warehouse
        >>> wh = Warehouse(":memory:")
        >>> _ = wh.ingest_qrels(pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]}),
        ...                     collection="demo")
        >>> manifest = export(wh, Path(tempfile.mkdtemp()) / "out", tables=["qrels"])
        >>> manifest["tables"]["qrels"]["rows"], manifest["tables"]["qrels"]["files"][0]["path"]
        (1, 'qrels/collection_id=demo/data_0.parquet')
    """
    target = Path(directory)
    refuse_database(target, *([wh.path] if wh.path != ":memory:" else []))
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise EvalWhError(
            f"{target}: exists and is not an empty directory; export into a new or empty directory"
        )
    available = _tables(wh.con)
    chosen_tables = _choose(tables, list(available), "table")
    known_collections = [
        r[0] for r in wh.con.execute("SELECT collection_id FROM collections ORDER BY 1").fetchall()
    ]
    chosen_collections = _choose(collections, known_collections, "collection")
    migrations = [
        r[0] for r in wh.con.execute("SELECT name FROM schema_migrations ORDER BY name").fetchall()
    ]
    remove_leftovers(target)  # of exports killed before they could clean up
    partial = partial_name(target)
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    try:
        entries = {
            table: _export_table(wh.con, partial, table, available[table], chosen_collections)
            for table in chosen_tables
        }
        manifest = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "evalwh_version": __version__,
            "duckdb_version": duckdb.__version__,
            "created_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "source": wh.path,
            "migrations": migrations,
            "collections": chosen_collections,
            "tables": entries,
        }
        publish_export(partial, target, manifest)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return manifest


def publish_export(partial: Path, target: Path, manifest: dict[str, Any]) -> None:
    """Finish an export written into ``partial``: the manifest last, everything flushed to
    disk, then the folder renamed into place as ``target`` (an empty ``target`` is replaced),
    so a reader sees a whole export or none."""
    (partial / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    fsync_tree(partial)
    if target.exists():
        target.rmdir()  # empty, checked by the caller
    partial.rename(target)


def _export_table(
    con: duckdb.DuckDBPyConnection,
    root: Path,
    table: str,
    columns: list[tuple[str, str]],
    collections: list[str],
) -> dict[str, Any]:
    names = [c for c, _ in columns]
    partitioned = PARTITION in names
    select = f"SELECT {', '.join(sql.identifier(c) for c in names)} FROM {sql.identifier(table)}"
    params: dict[str, Any] = {}
    if partitioned:
        select += f" WHERE list_contains($collections, {PARTITION})"
        params["collections"] = collections
    rows = int(con.execute(f"SELECT count(*) FROM ({select})", params).fetchall()[0][0])
    relation = con.sql(select, params=params)
    files: list[dict[str, Any]] = []
    if rows:
        folder = root / table
        if partitioned:
            relation.write_parquet(
                str(folder), partition_by=[PARTITION], write_partition_columns=False
            )
        else:
            folder.mkdir()
            relation.write_parquet(str(folder / "data_0.parquet"))
        for path in sorted(folder.rglob("*.parquet")):
            part = path.parent.name
            collection = urllib.parse.unquote(part.split("=", 1)[1]) if partitioned else None
            count = con.execute(
                "SELECT count(*) FROM read_parquet($f)", {"f": str(path)}
            ).fetchall()[0]
            files.append(
                {
                    "path": path.relative_to(root).as_posix(),
                    "collection_id": collection,
                    "rows": int(count[0]) if count else 0,
                    "sha256": _sha256(path),
                    "bytes": path.stat().st_size,
                }
            )
    return {
        "columns": [{"name": c, "type": t} for c, t in columns],
        "partitioned_by": PARTITION if partitioned else None,
        "rows": rows,
        "files": files,
    }


def read_manifest(directory: Path) -> dict[str, Any]:
    """The manifest of an export directory, checked to be one.

    Raises:
        NotFoundError: if the directory does not exist.
        EvalWhError: if it is not an evalwh export, or one of a newer format.
    """
    if not directory.is_dir():
        raise NotFoundError(f"{directory}: no such directory")
    path = directory / MANIFEST
    if not path.is_file():
        raise EvalWhError(
            f"{directory}: not an evalwh export (no {MANIFEST}); make one with evalwh export"
        )
    from evalwh.io.formats import TABLE_BYTES, read_bounded

    try:
        manifest = json.loads(read_bounded(path, TABLE_BYTES, "a manifest", decompress=False))
    except (ValueError, RecursionError) as error:
        raise EvalWhError(f"{path}: not valid JSON ({error}); the export is damaged") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise EvalWhError(f"{path}: not an evalwh export manifest (format is not {FORMAT!r})")
    if manifest.get("format_version", 0) > FORMAT_VERSION:
        raise EvalWhError(
            f"{path}: export format {manifest['format_version']} is newer than this evalwh "
            f"({__version__}) reads; upgrade evalwh"
        )
    return manifest


def check_export(directory: str | os.PathLike[str], tables: Sequence[str]) -> None:
    """The checks :func:`import_export` makes of an export's files, for a reader that loads
    them elsewhere (Spark's ``--runs-parquet``): every path inside the folder, the checksum,
    columns and row count the manifest gives, ids, duplicate keys and finite numbers.

    Raises:
        EvalWhError: as :func:`import_export` for its files.
    """
    from evalwh.store.connection import Store

    root = Path(directory)
    manifest = read_manifest(root)
    with Store(":memory:") as fresh:  # (a fresh warehouse: its tables' columns and types)
        target = _tables(fresh.con)
        for table in tables:
            entry = manifest["tables"].get(table)
            if entry is not None:
                _check_files(fresh.con, root, table, entry, partition_in_files(manifest, entry), dict(target.get(table, [])))


def partition_in_files(manifest: dict[str, Any], entry: dict[str, Any]) -> bool:
    """Whether the files of a table hold its partition column (exports of format 1 did)."""
    return entry.get("partitioned_by") != PARTITION or manifest.get("format_version", 1) < 2


# What ingest refuses, import refuses too (a file whose checksum was fixed in the manifest is
# checked all the same): ids no TREC file could hold or holding an ESC, rows repeating a key, numbers that are
# not finite, columns of another type than the warehouse's.
_IDS = ("run_id", "query_id", "doc_id", "iteration", "qrels_id")
_ROW_KEYS = {
    "collections": ("collection_id",),
    "qrels": ("collection_id", "qrels_id", "query_id", "doc_id"),
    "qrels_sets": ("collection_id", "qrels_id"),
    "run_results": ("collection_id", "run_id", "query_id", "doc_id"),
    "run_topics": ("collection_id", "run_id", "query_id"),
    "runs": ("collection_id", "run_id"),
    "topics": ("collection_id", "query_id"),
    "judgment_details": ("collection_id", "qrels_id", "query_id", "doc_id"),
    "judgment_prompts": ("prompt_sha256",),
    # judging budgets (schema/019)
    "pool_order": ("collection_id", "pool_id", "query_id", "doc_id"),
    "judgment_probabilities": ("collection_id", "qrels_id", "query_id", "doc_id"),
    "budget_experiments": ("collection_id", "experiment_id"),
    "budget_results": ("collection_id", "experiment_id", "strategy", "seed", "budget"),
    # random audits (schema/025)
    "audits": ("collection_id", "audit_id"),
    "audit_strata": ("collection_id", "audit_id", "stratum"),
    "audit_pairs": ("collection_id", "audit_id", "query_id", "doc_id"),
    **LATER_KEYS,
}


def _inside(root: Path, relative: object) -> Path:
    """``root / relative``, refused unless it stays inside the export folder (links resolved)."""
    if not isinstance(relative, str) or not relative or os.path.isabs(relative):
        raise EvalWhError(f"{root / MANIFEST}: file path {relative!r} is not a path inside the export")
    path = root / relative
    base = os.path.realpath(root)
    if os.path.commonpath([base, os.path.realpath(path)]) != base:
        raise EvalWhError(
            f"{root / MANIFEST}: file path {relative!r} leads outside the export folder; refused"
        )
    return path


def _check_content(
    con: duckdb.DuckDBPyConnection, path: Path, table: str, types: dict[str, str], found: dict[str, str]
) -> int:
    """Check one file's rows as ingest checks its input; return its row count.

    Raises:
        EvalWhError: ``FILE: column C is TYPE, the warehouse's is TYPE``.
        IngestError: ``FILE:ROW: problem`` (rows of the Parquet file counted from 1).
    """
    from evalwh.errors import IngestError

    for column, kind in found.items():
        if column in types and kind != types[column]:
            raise EvalWhError(
                f"{path}: column {column!r} is {kind}, the warehouse's is {types[column]}; "
                "the file was changed after the export"
            )
    source = "read_parquet($f, file_row_number = true)"
    params: dict[str, Any] = {"f": str(path)}
    for column in [c for c in _IDS if c in found]:
        name = sql.identifier(column)
        hit = con.execute(
            f"SELECT file_row_number + 1, {name} FROM {source} WHERE {name} = ''"
            f"{'' if (table, column) in NULLABLE_IDS else f' OR {name} IS NULL'}"
            f" OR regexp_matches({name}, $bad) ORDER BY 1 LIMIT 1",
            {**params, "bad": NOT_AN_ID},
        ).fetchall()
        if hit:
            row, value = hit[0]
            raise IngestError(str(path), int(row), f"{column} {id_problem(value)}")
    for column in [c for c, k in found.items() if k in ("DOUBLE", "FLOAT", "REAL")]:
        name = sql.identifier(column)
        hit = con.execute(
            f"SELECT file_row_number + 1, {name} FROM {source} WHERE isinf({name}) OR isnan({name})"
            " ORDER BY 1 LIMIT 1",
            params,
        ).fetchall()
        if hit:
            raise IngestError(str(path), int(hit[0][0]), f"{column} {hit[0][1]} is not a finite number")
    keys = [c for c in _ROW_KEYS.get(table, ()) if c in found]
    if keys:
        listed = ", ".join(sql.identifier(c) for c in keys)
        hit = con.execute(
            f"SELECT max(file_row_number) + 1, min(file_row_number) + 1 FROM {source} GROUP BY {listed}"
            " HAVING count(*) > 1 ORDER BY 1 LIMIT 1",
            params,
        ).fetchall()
        if hit:
            raise IngestError(
                str(path), int(hit[0][0]), f"repeats the {', '.join(keys)} of row {int(hit[0][1])} (a duplicate)"
            )
    ((rows,),) = con.execute(f"SELECT count(*) FROM {source}", params).fetchall()
    return int(rows)


def _check_files(
    con: duckdb.DuckDBPyConnection, root: Path, table: str, entry: dict[str, Any], in_files: bool,
    types: dict[str, str],
) -> list[str]:  # fmt: skip
    expected = [c["name"] for c in entry["columns"] if in_files or c["name"] != PARTITION]
    paths = []
    total = 0
    for item in entry["files"]:
        path = _inside(root, item.get("path"))
        if not path.exists():
            raise EvalWhError(
                f"{path}: listed in the manifest but missing; the export is incomplete"
            )
        if not path.is_file():  # (a pipe would never end, a device neither)
            raise EvalWhError(
                f"{path}: is not a regular file (a device, pipe or socket); an export holds regular files"
            )
        if _sha256(path) != item["sha256"]:
            raise EvalWhError(
                f"{path}: SHA-256 differs from the manifest; the file was changed or damaged"
            )
        try:
            found = {
                r[0]: r[1]
                for r in con.execute(
                    "DESCRIBE SELECT * FROM read_parquet($f)", {"f": str(path)}
                ).fetchall()
            }
        except duckdb.Error as error:
            raise EvalWhError(f"{path}: not a readable Parquet file ({str(error).splitlines()[0]})") from None
        missing = [c for c in expected if c not in found]
        if missing:
            raise EvalWhError(
                f"{path}: missing columns {missing} of table {table!r} (expected {expected}); "
                "the file does not belong to this export"
            )
        rows = _check_content(con, path, table, types, {c: found[c] for c in expected})
        if rows != item.get("rows"):
            raise EvalWhError(
                f"{path}: holds {rows:,} rows, the manifest says {item.get('rows')}; the export was changed"
            )
        total += rows
        paths.append(str(path))
    if total != entry.get("rows"):
        raise EvalWhError(
            f"{root / MANIFEST}: table {table!r} has {total:,} rows in its files, the manifest says "
            f"{entry.get('rows')}; the export was changed"
        )
    return paths


def import_export(
    wh: Store, directory: str | os.PathLike[str], *, replace: bool = False
) -> dict[str, int]:
    """Load an evalwh export into the warehouse, in one transaction.

    Every file is checked first: its path stays inside ``directory``; it is present, its
    SHA-256 is the manifest's, every column is there with the warehouse's type, its row count
    is the manifest's; and its rows pass ingest's rules (ids neither empty nor holding
    whitespace or NUL, no row repeating another's key, every number finite), refused with
    ``FILE:ROW: problem`` (Parquet rows counted from 1). A checksum fixed in the manifest does
    not make a changed file trusted.
    Rows of a collection that the warehouse already holds in an imported table are a clash:
    refused, or with ``replace`` deleted before the import.

    Args:
        wh: The warehouse to import into (opened for writing; new or existing).
        directory: An export written by :func:`export`.
        replace: Replace the warehouse's rows of the imported collections.

    Returns:
        Rows imported per table.

    Raises:
        EvalWhError: for a directory that is not an export, a damaged file, missing columns,
            a clash without ``replace``, or a schema this evalwh does not know.
    """
    root = Path(directory)
    manifest = read_manifest(root)
    known = set(sql.load_package("evalwh.schema"))
    unknown = sorted(set(manifest.get("migrations", [])) - known)
    if unknown:
        raise SchemaError(
            f"{root}: exported by a warehouse with schema migrations {unknown} that this evalwh "
            f"({__version__}) does not have; upgrade evalwh"
        )
    target = _tables(wh.con)
    plan: list[tuple[str, dict[str, Any], list[str], bool]] = []
    for table, entry in manifest["tables"].items():
        if table not in target:
            raise SchemaError(f"{root}: table {table!r} of the export does not exist in {wh.path}")
        have = {c for c, _ in target[table]}
        lacking = [c["name"] for c in entry["columns"] if c["name"] not in have]
        if lacking:
            raise SchemaError(
                f"{root}: the warehouse's table {table!r} lacks columns {lacking} of the export"
            )
        in_files = partition_in_files(manifest, entry)
        types = dict(target[table])
        plan.append((table, entry, _check_files(wh.con, root, table, entry, in_files, types), in_files))
    collections = list(manifest.get("collections", []))
    _check_rules(wh, root, collections, {table: (entry, files, in_files) for table, entry, files, in_files in plan})
    imported: dict[str, int] = {}
    with wh.transaction():
        for table, entry, files, in_files in plan:
            if table in _BY_KEY:
                # staged by name; store_ranked.sql gives them this warehouse's keys below
                columns = ", ".join(sql.identifier(c) for c, _ in target[table])
                wh.con.execute(
                    f"CREATE OR REPLACE TEMP TABLE {_STAGED[table]} AS"
                    f" SELECT {columns} FROM {sql.identifier(table)} LIMIT 0"
                )
            quoted = sql.identifier(table)
            partitioned = entry.get("partitioned_by") == PARTITION
            where = f" WHERE list_contains($collections, {PARTITION})" if partitioned else ""
            params = {"collections": collections} if partitioned else {}
            if table == "judgment_prompts":
                # prompts are shared by every collection, stored once by hash: add the new ones
                _import_prompts(wh, files)
                imported[table] = sum(int(f["rows"]) for f in entry["files"])
                continue
            clash = wh.con.execute(f"SELECT count(*) FROM {quoted}{where}", params).fetchall()[0]
            if clash[0]:
                if not replace:
                    raise EvalWhError(
                        f"{wh.path}: table {table!r} already holds {clash[0]:,} rows of "
                        f"{'collections ' + ', '.join(collections) if partitioned else 'data'}; "
                        "import into another warehouse, or pass --replace to replace them"
                    )
                if table in _BY_KEY:
                    wh.run(sql.query(_INGEST, "delete_collection_runs"), {"collections": collections})
                else:
                    wh.con.execute(f"DELETE FROM {quoted}{where}", params)
            if table in _BY_KEY:
                quoted = _STAGED[table]
            names = ", ".join(sql.identifier(c["name"]) for c in entry["columns"])
            if files and in_files:
                wh.con.execute(
                    f"INSERT INTO {quoted} ({names}) SELECT {names} FROM read_parquet($files)",
                    {"files": files},
                )
            elif files:
                # the collection of each file is the manifest's (the folder name, decoded)
                values = ", ".join(
                    "$collection" if c["name"] == PARTITION else sql.identifier(c["name"])
                    for c in entry["columns"]
                )
                for path, item in zip(files, entry["files"], strict=True):
                    wh.con.execute(
                        f"INSERT INTO {quoted} ({names}) SELECT {values} FROM read_parquet($file)",
                        {"file": path, "collection": item["collection_id"]},
                    )
            imported[table] = sum(int(f["rows"]) for f in entry["files"])
        if any(table in _BY_KEY for table, *_ in plan):
            _store_staged(wh, [table for table, *_ in plan])
        # an export made before migration 015 has no provenance: its sets are marked as 015 does
        wh.con.execute(
            "UPDATE qrels_sets SET source = CASE WHEN kind = 'derived' THEN 'derived' ELSE 'human' END"
            " WHERE source IS NULL"
        )
    return imported


# Ingest's rules for what an import stores besides ids and numbers (see _check_rules), each as
# (table, condition on a row that breaks it, problem shown for that row). ``{c}`` is the row's
# collection (its folder's, or its column in a file that holds it); ``known_*`` are the rows
# the warehouse will hold after the import (the export's, and the warehouse's of other
# collections), so a reference is checked against what it will name.
_RULES: list[tuple[str, str, str]] = [
    ("qrels_sets", "kind NOT IN ('ingested', 'derived')", "kind {kind!r} is not ingested or derived"),
    (
        "qrels_sets",
        "source IS NOT NULL AND NOT ((kind = 'ingested' AND source IN ('human', 'llm', 'inferred'))"
        " OR (kind = 'derived' AND source = 'derived'))",
        "source {source!r} of a set of kind {kind!r} is not one of "
        "human, llm, inferred (derived: evalwh's own sets)",
    ),
    ("qrels_sets", '"round" < 0', "round {round} is not a whole number >= 0"),
    (
        "qrels_sets",
        "judge IS NOT NULL AND (trim(judge) = '' OR regexp_matches(judge, '[\\n\\r\\x00]'))",
        "judge {judge!r} is empty or holds a line break or a NUL byte",
    ),
    (
        "qrels_sets",
        "model IS NOT NULL AND (trim(model) = '' OR regexp_matches(model, '[\\n\\r\\x00]'))",
        "model {model!r} is empty or holds a line break or a NUL byte",
    ),
    (
        "qrels_sets",
        "NOT regexp_full_match(sha256, '[0-9a-f]{{64}}')",
        "sha256 {sha256!r} is not a SHA-256 (64 hexadecimal digits)",
    ),
    (
        "qrels_sets",
        "prompt_sha256 IS NOT NULL AND prompt_sha256 NOT IN (SELECT prompt_sha256 FROM known_prompts)",
        "prompt_sha256 {prompt_sha256!r} names no stored prompt (judgment_prompts)",
    ),
    (
        "qrels_sets",
        "parent_qrels_id IS NOT NULL AND ({c}, parent_qrels_id) NOT IN (SELECT (collection_id, qrels_id) FROM known_sets)",
        "parent_qrels_id {parent_qrels_id!r} names no qrels set of its collection",
    ),
    (
        "qrels",
        "({c}, qrels_id) NOT IN (SELECT (collection_id, qrels_id) FROM known_sets)",
        "qrels_id {qrels_id!r} names no qrels set of its collection (qrels_sets)",
    ),
    ("qrels", "abs(relevance) >= 1e9", "relevance {relevance} is not a grade (at most nine integer digits)"),
    (
        "judgment_prompts",
        "prompt_sha256 <> sha256(prompt)",
        "prompt_sha256 {prompt_sha256!r} is not the SHA-256 of its prompt's text (recomputed: {recomputed})",
    ),
    ("judgment_prompts", "trim(prompt) = ''", "the prompt is empty"),
    (
        "judgment_details",
        "({c}, qrels_id, query_id, doc_id) NOT IN (SELECT (collection_id, qrels_id, query_id, doc_id) FROM known_pairs)",
        "details of topic {query_id!r}, document {doc_id!r} that qrels set {qrels_id!r} does not judge",
    ),
    (
        "judgment_details",
        "prompt_sha256 IS NOT NULL AND prompt_sha256 NOT IN (SELECT prompt_sha256 FROM known_prompts)",
        "prompt_sha256 {prompt_sha256!r} names no stored prompt (judgment_prompts)",
    ),
    (
        "runs",
        "{c} NOT IN (SELECT collection_id FROM known_collections)",
        "collection {collection!r} is not among the collections (collections)",
    ),
    (
        "qrels_sets",
        "{c} NOT IN (SELECT collection_id FROM known_collections)",
        "collection {collection!r} is not among the collections (collections)",
    ),
    (
        "run_topics",
        "({c}, run_id) NOT IN (SELECT (collection_id, run_id) FROM known_runs)",
        "run {run_id!r} is not among the runs of its collection (runs)",
    ),
    (
        "run_results",
        "({c}, run_id) NOT IN (SELECT (collection_id, run_id) FROM known_runs)",
        "run {run_id!r} is not among the runs of its collection (runs)",
    ),
    # excluded documents (schema/024_exclusions.sql, methods §17)
    ("excluded_documents", "origin NOT IN ('qrels', 'file')", "origin {origin!r} is not qrels or file"),
    (
        "exclusion_sources",
        "origin NOT IN ('qrels', 'file', 'rule') OR (origin = 'rule' AND source <> 'identical_ids')",
        "source {origin!r} {source!r} is not a qrels set, a file or the rule identical_ids",
    ),
    ("exclusion_sources", "pairs < 0", "pairs {pairs} is negative"),
    (
        "run_exclusions",
        "({c}, run_id) NOT IN (SELECT (collection_id, run_id) FROM known_runs)",
        "run {run_id!r} is not among the runs of its collection (runs)",
    ),
    ("run_exclusions", "rank < 1", "rank {rank} of a removed line is not a rank (1 or more)"),
]
_RULES += LATER_RULES  # (pools, budgets, probabilities, ir_metadata, conventions: import_rules.py)
# what each known_* relation holds: (table, its columns)
_KNOWN = {
    "known_collections": ("collections", ("collection_id",)),
    "known_sets": ("qrels_sets", ("collection_id", "qrels_id")),
    "known_prompts": ("judgment_prompts", ("prompt_sha256",)),
    "known_pairs": ("qrels", ("collection_id", "qrels_id", "query_id", "doc_id")),
    "known_runs": ("runs", ("collection_id", "run_id")),
    "known_pools": ("pools", ("collection_id", "pool_id")),
    "known_experiments": ("budget_experiments", ("collection_id", "experiment_id")),
}


def _file_source(
    path: str, item: dict[str, Any], entry: dict[str, Any], in_files: bool
) -> tuple[str, str, dict[str, Any]]:
    """A file's rows (numbered from 1 as ``row_``), the expression of their collection, parameters."""
    source = "(SELECT *, file_row_number + 1 AS row_ FROM read_parquet($f, file_row_number = true))"
    if entry.get("partitioned_by") != PARTITION:
        return source, "NULL", {"f": path}
    if in_files:
        return source, PARTITION, {"f": path}
    return source, "CAST($collection AS VARCHAR)", {"f": path, "collection": item.get("collection_id")}


def _check_rules(
    wh: Store, root: Path, collections: list[str], tables: dict[str, tuple[dict[str, Any], list[str], bool]]
) -> None:
    """Check what ingest would refuse, across the export's tables, before anything is stored.

    A prompt's ``prompt_sha256`` is recomputed from its text and must match; a set's source,
    round, judge and model follow ingest's rules (:func:`evalwh.store.ingest.qrels.check_provenance`);
    every reference names a row the warehouse will hold after the import: a set's prompt and
    parent set, a qrels row's set, a details row's judged pair and prompt, a run's and a set's
    collection, the lines' and lists' runs.

    Raises:
        IngestError: ``FILE:ROW: problem`` (Parquet rows counted from 1; the file's folder names
            its table).
    """
    from evalwh.errors import IngestError

    con = wh.con
    try:
        for name, (table, columns) in _KNOWN.items():
            listed = ", ".join(sql.identifier(c) for c in columns)
            con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT {listed} FROM {sql.identifier(table)} LIMIT 0")
            if table not in tables:
                con.execute(f"INSERT INTO {name} SELECT {listed} FROM {sql.identifier(table)}")
                continue
            entry, files, in_files = tables[table]
            if PARTITION in columns:  # the warehouse's rows of the other collections stay
                con.execute(
                    f"INSERT INTO {name} SELECT {listed} FROM {sql.identifier(table)}"
                    f" WHERE NOT list_contains($collections, {PARTITION})",
                    {"collections": collections},
                )
            elif table == "judgment_prompts":  # prompts are shared: the warehouse's stay
                con.execute(f"INSERT INTO {name} SELECT {listed} FROM {sql.identifier(table)}")
            for path, item in zip(files, entry["files"], strict=True):
                source, collection, params = _file_source(path, item, entry, in_files)
                values = ", ".join(collection if c == PARTITION else sql.identifier(c) for c in columns)
                con.execute(f"INSERT INTO {name} SELECT {values} FROM {source}", params)
        for table, condition, problem in _RULES:
            if table not in tables:
                continue
            entry, files, in_files = tables[table]
            have = {c["name"] for c in entry["columns"]}
            for path, item in zip(files, entry["files"], strict=True):
                source, collection, params = _file_source(path, item, entry, in_files)
                if not _columns_of(condition) <= have | {"collection"}:
                    continue  # (an export older than the column: nothing of it to check)
                where = condition.format(c=collection)
                hit = con.execute(
                    f"SELECT *, {collection} AS collection, sha256(prompt) AS recomputed FROM {source}"
                    f" WHERE {where} ORDER BY row_ LIMIT 1" if table == "judgment_prompts" else
                    f"SELECT *, {collection} AS collection FROM {source} WHERE {where} ORDER BY row_ LIMIT 1",
                    params,
                )
                row = hit.fetchone()
                if row is not None:
                    values = dict(zip([d[0] for d in hit.description], row, strict=True))
                    raise IngestError(path, int(values["row_"]), problem.format(**values))
    finally:
        for name in _KNOWN:
            con.execute(f"DROP TABLE IF EXISTS {name}")


def _columns_of(condition: str) -> set[str]:
    """The columns a rule's condition reads (words that are not SQL or the known relations)."""
    import re

    # (a subquery's columns are the known relation's, not the file's)
    text = re.sub(r"SELECT .*? FROM known_\w+", "", re.sub(r"'[^']*'", "", condition))
    words = set(re.findall(r"\b[a-z_][a-z0-9_]*\b", text))
    return words - _SQL_WORDS - set(_KNOWN) - {"c"}


_SQL_WORDS = frozenset(
    "and or not in is null select from abs trim regexp_matches regexp_full_match sha256 e9 coalesce json_valid"
    " json_type between len list_filter list_sum x false lambda list_has_all where".split()
)


def _import_prompts(wh: Store, files: list[str]) -> None:
    """Add the exported judging prompts this warehouse lacks (a prompt is stored once, by hash)."""
    if files:
        wh.con.execute(
            "INSERT INTO judgment_prompts (prompt_sha256, prompt, source_file)"
            " SELECT prompt_sha256, any_value(prompt), any_value(source_file) FROM read_parquet($files)"
            " WHERE prompt_sha256 NOT IN (SELECT prompt_sha256 FROM judgment_prompts) GROUP BY prompt_sha256",
            {"files": files},
        )


_INGEST = "evalwh.queries.ingest"
_STAGED = {"run_results": "staged_results", "run_topics": "staged_topics"}


def _store_staged(wh: Store, tables: list[str]) -> None:
    """Store the imported run results and topics under new keys; rebuild their cache."""
    from evalwh.store.ingest import refresh_cache

    if "run_topics" not in tables:  # the lists' sizes, from the lines
        wh.con.execute(
            "CREATE OR REPLACE TEMP TABLE staged_topics AS SELECT collection_id, run_id, query_id,"
            " CAST(count(*) AS INTEGER) AS num_ret FROM staged_results GROUP BY ALL"
        )
    if "run_results" not in tables:
        wh.con.execute(
            "CREATE OR REPLACE TEMP TABLE staged_results AS SELECT * FROM run_results LIMIT 0"
        )
    runs = wh.con.execute(
        "SELECT DISTINCT collection_id, run_id FROM staged_topics ORDER BY ALL"
    ).fetchall()
    wh.run(sql.query(_INGEST, "store_ranked"), {})
    sets = wh.con.execute(
        "SELECT collection_id, qrels_id FROM qrels_sets WHERE kind = 'ingested' ORDER BY ALL"
    ).fetchall()
    for collection, qrels_id in sets:
        chosen = [run for c, run in runs if c == collection]
        if chosen:
            refresh_cache(wh, collection, qrels_id, chosen)
