"""evalwh pool build|list|contributions|complete: pools as data (methods §5)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalwh.cli._errors import handle_errors
from evalwh.cli._options import DEFAULT_DB, CollectionOption, DbOption, FormatOption, OutputFormat, OutputOption, default_collection
from evalwh.cli._render import render

app = typer.Typer(help="Build pools, list them, and count unique contributions.", no_args_is_help=True)

RunsOption = Annotated[
    str | None, typer.Option("--runs", help="Comma-separated member run ids (instead of --runs-from).")
]
RunsFileOption = Annotated[
    Path | None, typer.Option("--runs-file", help="File with one member run id per line.", dir_okay=False)
]
RunsFromOption = Annotated[
    str, typer.Option("--runs-from", help="Members without --runs: 'pooled' (run metadata flag) or 'all'.")
]


def _runs(runs: str | None, runs_file: Path | None) -> list[str] | None:
    from evalwh.errors import EvalWhError

    if runs is not None and runs_file is not None:
        raise EvalWhError("pool: give --runs or --runs-file, not both")
    if runs is not None:
        return [r.strip() for r in runs.split(",") if r.strip()]
    if runs_file is not None:
        if not runs_file.exists():
            raise EvalWhError(f"{runs_file}: no such file")
        return [line.split()[0] for line in runs_file.read_text().splitlines() if line.strip() and not line.startswith("#")]
    return None


@app.command("build")
@handle_errors
@default_collection
def build(
    collection: CollectionOption = None,
    depth: Annotated[int, typer.Option("--depth", "-d", min=1, help="Pool depth lambda: each member's top documents.")] = 100,
    runs_from: RunsFromOption = "pooled",
    runs: RunsOption = None,
    runs_file: RunsFileOption = None,
    pool_id: Annotated[str | None, typer.Option("--pool-id", help="Name of the pool and its qrels set.")] = None,
    qrels_id: Annotated[str, typer.Option("--qrels-id", help="Parent judgments to restrict.")] = "default",
    replace: Annotated[bool, typer.Option("--replace", help="Replace a pool of the same name.")] = False,
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Build a depth-lambda pool and store its qrels as a derived qrels set.

    Example: evalwh pool build --collection trec8 --depth 100 --runs-from pooled
    """
    from evalwh.warehouse import Warehouse

    with Warehouse(db) as wh:
        frame = wh.build_pool(
            collection=collection,
            depth=depth,
            runs=_runs(runs, runs_file),
            runs_from=runs_from,
            pool_id=pool_id,
            qrels_id=qrels_id,
            replace=replace,
        )
    render(frame, fmt, output, title="pool")


@app.command("list")
@handle_errors
@default_collection
def list_(
    collection: CollectionOption = None,
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """List the stored pools of a collection with their sizes.

    Example: evalwh pool list --collection trec8
    """
    from evalwh.warehouse import Warehouse

    with Warehouse.open_reader(db) as wh:
        render(wh.pools(collection=collection), fmt, output, title=f"pools of {collection}")


@app.command("contributions")
@handle_errors
@default_collection
def contributions(
    collection: CollectionOption = None,
    pool: Annotated[str | None, typer.Option("--pool", help="A stored pool (else --depth and the runs).")] = None,
    depth: Annotated[int | None, typer.Option("--depth", "-d", min=1, help="Pool depth, without --pool.")] = None,
    runs_from: RunsFromOption = "pooled",
    runs: RunsOption = None,
    runs_file: RunsFileOption = None,
    qrels_id: Annotated[str, typer.Option("--qrels-id", help="Where relevance comes from, without --pool.")] = "default",
    by: Annotated[str, typer.Option("--by", help="'run' or 'group' (participant).")] = "run",
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Count the documents, and relevant documents, only one run or group brought into a pool.

    Example: evalwh pool contributions --collection trec8 --depth 100 --by group
    """
    from evalwh.warehouse import Warehouse

    with Warehouse.open_reader(db) as wh:
        frame = wh.pool_contributions(
            collection=collection,
            pool=pool,
            depth=depth,
            runs=_runs(runs, runs_file),
            runs_from=runs_from,
            qrels_id=qrels_id,
            by=by,
        )
    render(frame, fmt, output, title=f"unique contributions per {by}")


@app.command("complete")
@handle_errors
@default_collection
def complete(
    collection: CollectionOption = None,
    qrels_id: Annotated[str, typer.Option("--qrels-id", help="The qrels set to complete.")] = "default",
    completed_id: Annotated[str | None, typer.Option("--completed-id", help="Name of the completed set.")] = None,
    replace: Annotated[bool, typer.Option("--replace", help="Replace a derived set of the same name.")] = False,
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Store completed qrels: every returned, unjudged document judged non-relevant (S2).

    Example: evalwh pool complete --collection trec8
    """
    from evalwh.warehouse import Warehouse

    with Warehouse(db) as wh:
        frame = wh.complete_qrels(collection=collection, qrels_id=qrels_id, completed_id=completed_id, replace=replace)
    render(frame, fmt, output, title="completed qrels")


def register(root: typer.Typer) -> None:
    """Add the ``pool`` group and the ``adjust`` command to the root app."""
    from evalwh.cli import adjust

    root.add_typer(app, name="pool")
    adjust.register(root)
