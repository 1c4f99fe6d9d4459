"""evalwh ingest qrels|runs|run-metadata."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated

import typer

from evalwh.cli._errors import handle_errors
from evalwh.cli._options import DEFAULT_DB, CollectionOption, DbOption, default_collection
from evalwh.cli._progress import progress_bar

app = typer.Typer(help="Load qrels, runs and run metadata into the warehouse.", no_args_is_help=True)


class Source(str, enum.Enum):
    """Who made a qrels set's labels (qrels_sets.source; evalwh marks its own sets 'derived')."""

    human = "human"
    llm = "llm"
    inferred = "inferred"


@app.command("qrels")
@handle_errors
@default_collection
def qrels(
    files: Annotated[
        list[Path],
        typer.Argument(help="TREC qrels files (qid iter docid rel) or JSON-lines judgment records, plain or .gz; or irds:DATASET_ID, an ir_datasets dataset's qrels."),
    ],
    collection: CollectionOption = None,
    qrels_id: Annotated[
        str | None,
        typer.Option("--qrels-id", help="Name of the set (one file; default 'default'). Several files: each its stem."),
    ] = None,
    source: Annotated[Source, typer.Option("--source", help="Who made the labels.")] = Source.human,
    judge: Annotated[str | None, typer.Option("--judge", help="Who judged: assessor group, team or tool.")] = None,
    model: Annotated[str | None, typer.Option("--model", help="The model that produced the labels.")] = None,
    prompt: Annotated[Path | None, typer.Option("--prompt", help="File holding the judging prompt (stored once).")] = None,
    round: Annotated[int | None, typer.Option("--round", min=0, help="Round or iteration of judging.")] = None,
    replace: Annotated[bool, typer.Option("--replace", help="Replace qrels sets of the same name.")] = False,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Ingest qrels files into a collection, with their provenance (atomic, idempotent).

    One file makes the set --qrels-id (default 'default'); several make one set each, named by the file's stem.

    Example: evalwh ingest qrels judges/*.txt --collection llmjudge --source llm
    """
    from evalwh.io import irds
    from evalwh.io.formats import require_file
    from evalwh.warehouse import Warehouse

    for file in files:  # before opening: a mistyped name must not create a warehouse file
        if irds.is_irds(file):
            irds.check(file)  # irds:DATASET_ID: a known dataset with qrels
        else:
            require_file(file)
    if prompt is not None:
        require_file(prompt)
    with Warehouse(db) as wh:
        results = wh.ingest_qrels(
            files if len(files) > 1 else files[0],
            collection=collection,
            qrels_id=qrels_id,
            replace=replace,
            source=source.value,
            judge=judge,
            model=model,
            prompt=prompt,
            round=round,
        )
    results = results if isinstance(results, list) else [results]
    for result in results:
        typer.echo(result.message())
    if len(results) > 1:
        new = sum(r.status != "unchanged" for r in results)
        typer.echo(f"{new} of {len(results)} qrels sets ingested or replaced, {len(results) - new} unchanged")


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
