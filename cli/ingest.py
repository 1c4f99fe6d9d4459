"""evalwh ingest qrels|runs|run-metadata."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalwh.cli._errors import handle_errors
from evalwh.cli._options import DEFAULT_DB, CollectionOption, DbOption, default_collection
from evalwh.cli._progress import progress_bar

app = typer.Typer(help="Load qrels, runs and run metadata into the warehouse.", no_args_is_help=True)


@app.command("qrels")
@handle_errors
@default_collection
def qrels(
    file: Annotated[Path, typer.Argument(help="TREC qrels file (qid iter docid rel), plain or .gz.")],
    collection: CollectionOption = None,
    qrels_id: Annotated[str, typer.Option("--qrels-id", help="Name of this qrels set in the collection.")] = "default",
    replace: Annotated[bool, typer.Option("--replace", help="Replace a qrels set of the same name.")] = False,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Ingest a qrels file into a collection (atomic, idempotent).

    Example: evalwh ingest qrels trec8.qrels --collection trec8
    """
    from evalwh.io.formats import require_file
    from evalwh.warehouse import Warehouse

    require_file(file)  # before opening: a mistyped name must not create a warehouse file
    with Warehouse(db) as wh:
        result = wh.ingest_qrels(file, collection=collection, qrels_id=qrels_id, replace=replace)
    typer.echo(result.message())


@app.command("runs")
@handle_errors
@default_collection
def runs(
    files: Annotated[list[Path], typer.Argument(help="TREC run files (qid Q0 docid rank score tag), plain or .gz.")],
    collection: CollectionOption = None,
    run_id: Annotated[str | None, typer.Option("--run-id", help="Name the run instead of using its tag (one file).")] = None,
    replace: Annotated[bool, typer.Option("--replace", help="Replace runs of the same id whose content differs.")] = False,
    ignore_extra_fields: Annotated[
        bool, typer.Option("--ignore-extra-fields", help="Accept lines with more than six fields (trec_eval does).")
    ] = False,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Ingest run files into a collection in one transaction (all or nothing).

    Example: evalwh ingest runs runs/*.gz --collection trec8
    """
    from evalwh.store.ingest import keep_freed_memory
    from evalwh.io.formats import require_file
    from evalwh.warehouse import Warehouse

    for file in files:
        require_file(file)  # before opening: a mistyped name must not create a warehouse file
    with Warehouse(db) as wh, progress_bar("ingesting runs") as progress:
        keep_freed_memory(wh)  # this process ends with the command
        results = wh.ingest_runs(
            files,
            collection=collection,
            run_id=run_id,
            replace=replace,
            ignore_extra_fields=ignore_extra_fields,
            progress=progress,
        )
    for result in results:
        typer.echo(result.message())
    new = sum(r.status != "unchanged" for r in results)
    typer.echo(f"{new} of {len(results)} runs ingested or replaced, {len(results) - new} unchanged")


@app.command("run-metadata")
@handle_errors
@default_collection
def run_metadata(
    file: Annotated[Path, typer.Argument(help="TSV with a header: run_id (or runtag), group, type, pooled (or judged_pooled).")],
    collection: CollectionOption = None,
    allow_unknown_runs: Annotated[
        bool, typer.Option("--allow-unknown-runs", help="Skip rows for runs the collection does not have (else an error).")
    ] = False,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Attach participant group, run type and pooled flag to ingested runs.

    Example: evalwh ingest run-metadata runs.tsv --collection trec8
    """
    from evalwh.errors import NotFoundError
    from evalwh.io.formats import require_file
    from evalwh.warehouse import Warehouse

    require_file(file)
    if not db.exists():  # metadata needs ingested runs: never create an empty warehouse here
        raise NotFoundError(f"{db}: no such warehouse file")
    with Warehouse(db) as wh:
        updated = wh.ingest_run_metadata(file, collection=collection, allow_unknown_runs=allow_unknown_runs)
    typer.echo(f"metadata set for {updated} runs")
