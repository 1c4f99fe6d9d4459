"""evalwh demo: write a small synthetic pooled collection and ingest it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalwh.cli._errors import handle_errors
from evalwh.cli._options import DEFAULT_DB, DbOption


@handle_errors
def demo(
    out: Annotated[
        Path, typer.Option("--out", help="Directory for the generated TREC files.", file_okay=False)
    ] = Path("evalwh-demo"),
    collection: Annotated[
        str, typer.Option("--collection", "-c", help="Collection name for the demo.")
    ] = "demo",
    seed: Annotated[
        int, typer.Option("--seed", min=0, help="Seed of the generator (same seed, same files).")
    ] = 0,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Write a synthetic pooled collection (30 topics, 8 runs, 2 not pooled) and ingest it.

    Example: evalwh demo --out demo --db demo.duckdb
    """
    import contextlib

    from evalwh.io.demo_data import demo_paths, write_demo
    from evalwh.warehouse import Warehouse

    # a failed demo leaves nothing it made: not its files, not a folder it created
    made = [p for p in (out, *out.parents) if not p.exists()]  # folders write_demo makes
    new_files = [p for p in demo_paths(out) if not p.exists()]
    files = write_demo(out, rng=seed)
    try:
        with Warehouse(db) as wh:
            results = [wh.ingest_qrels(files.qrels, collection=collection)]
            results += wh.ingest_runs(files.runs, collection=collection)
            wh.ingest_run_metadata(files.metadata, collection=collection)
    except BaseException:
        for path in new_files:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        for folder in made:  # the innermost first; only when empty
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    for result in results:
        typer.echo(result.message())
    typer.echo(
        f"collection {collection!r} is in {db}; try: evalwh runs --collection {collection} --db {db}"
    )


def register(app: typer.Typer) -> None:
    """Add the commands of this module to the root app."""
    app.command("demo")(demo)
