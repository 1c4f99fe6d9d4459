"""evalwh pool build|list|order|export|contributions|complete: pools as data (methods §5)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalwh.cli._errors import handle_errors
from evalwh.cli._options import DEFAULT_DB, CollectionOption, DbOption, FormatOption, OutputFormat, OutputOption, default_collection
from evalwh.cli._render import render, require_output

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
        from evalwh.io.formats import TABLE_BYTES, read_bounded

        text = read_bounded(runs_file, TABLE_BYTES, "a list of runs", decompress=False).decode("utf-8", "replace")
        return [line.split()[0] for line in text.splitlines() if line.strip() and not line.startswith("#")]
    return None


@app.command("build")
@handle_errors
@default_collection
def build(
    ctx: typer.Context,
    collection: CollectionOption = None,
    depth: Annotated[int, typer.Option("--depth", "-d", min=1, help="Pool depth lambda: each member's top documents.")] = 100,
    runs_from: RunsFromOption = "pooled",
    runs: RunsOption = None,
    runs_file: RunsFileOption = None,
    pool_id: Annotated[str | None, typer.Option("--pool-id", help="Name of the pool and its qrels set.")] = None,
    qrels_id: Annotated[
        str | None,
        typer.Option("--qrels-id", help="Parent judgments to restrict (default: the collection's, evalwh conventions)."),
    ] = None,
    replace: Annotated[bool, typer.Option("--replace", help="Replace a pool of the same name.")] = False,
    strategy: Annotated[
        str, typer.Option("--strategy", help="Judging order: depth, take, mtf, bandit, rbp, rrf or random.")
    ] = "depth",
    budget: Annotated[
        int | None, typer.Option("--budget", help="Judgments kept, first in the order (not with depth).")
    ] = None,
    per: Annotated[str, typer.Option("--per", help="The budget is per 'topic' or in 'total'.")] = "topic",
    seed: Annotated[int | None, typer.Option("--seed", help="Seed of mtf, bandit and random (default 0).")] = None,
    gamma: Annotated[float, typer.Option("--gamma", help="The bandit's discount of past evidence (1: stationary).")] = 0.9,
    rbp_p: Annotated[float, typer.Option("--rbp-p", help="Persistence of the rbp weights.")] = 0.8,
    rrf_k: Annotated[float, typer.Option("--rrf-k", help="Constant k of the rrf weights 1/(k + rank).")] = 60.0,
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Build a pool with its judging order and store its qrels as a derived qrels set.

    Example: evalwh pool build --collection trec8 --depth 100 --strategy bandit --budget 8683 --per total
    """
    from evalwh.cli._options import typed_options
    from evalwh.errors import EvalWhError
    from evalwh.warehouse import Warehouse

    _refuse_unread(ctx, strategy)
    if budget is None and typed_options(ctx, ["per"]):
        raise EvalWhError("pool build: --per says how --budget is counted; give --budget N with it")
    require_output(fmt, output)  # before the work, not after it
    with Warehouse(db) as wh:
        frame = wh.build_pool(
            collection=collection,
            depth=depth,
            runs=_runs(runs, runs_file),
            runs_from=runs_from,
            pool_id=pool_id,
            qrels_id=qrels_id,
            replace=replace,
            strategy=strategy,
            budget=budget,
            budget_scope=per,
            seed=seed,
            gamma=gamma,
            rbp_p=rbp_p,
            rrf_k=rrf_k,
        )
        if frame["seed"].notna().any():
            import sys

            print(f"seed: {int(frame['seed'].iloc[0])}", file=sys.stderr)
    render(frame, fmt, output, title="pool")


READERS = {"seed": ("mtf", "bandit", "random"), "gamma": ("bandit",), "rbp_p": ("rbp",), "rrf_k": ("rrf",)}
"""The strategies that read each of pool build's strategy options."""


def _refuse_unread(ctx: typer.Context, strategy: str) -> None:
    """Refuse, in one line, a strategy option given on the command line that ``strategy`` does not read."""
    from evalwh.cli._options import typed_options
    from evalwh.errors import EvalWhError

    unread = [name for name in typed_options(ctx, list(READERS)) if strategy not in READERS[name]]
    if unread:
        flags = ", ".join("--" + name.replace("_", "-") for name in unread)
        readers = "; ".join(f"--{name.replace('_', '-')}: {', '.join(READERS[name])}" for name in unread)
        raise EvalWhError(f"pool build: --strategy {strategy} does not read {flags} ({readers})")


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
    qrels_id: Annotated[
        str | None,
        typer.Option(
            "--qrels-id", help="Where relevance comes from, without --pool (default: the collection's, evalwh conventions)."
        ),
    ] = None,
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
    qrels_id: Annotated[
        str | None,
        typer.Option("--qrels-id", help="The qrels set to complete (default: the collection's, evalwh conventions)."),
    ] = None,
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


@app.command("export")
@handle_errors
@default_collection
def export(
    pool: Annotated[str, typer.Argument(help="A stored pool or audit (evalwh pool list, evalwh audit list).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="File to write the tasks to.", dir_okay=False)],
    collection: CollectionOption = None,
    task_format: Annotated[str, typer.Option("--task-format", help="'jsonl' or 'tsv'.")] = "jsonl",
    topics: Annotated[
        str | None, typer.Option("--topics", help="Topic texts: a TSV (id, text) or JSON-lines file, or irds:DATASET_ID.")
    ] = None,
    documents: Annotated[
        str | None, typer.Option("--documents", help="Document texts: a TSV (id, text) or JSON-lines file, or irds:DATASET_ID (only the pooled documents are looked up).")
    ] = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Write a pool's judging tasks in judging order (qid, docid, order, and query and passage texts).

    Example: evalwh pool export bandit8683total-pool100-pooled-seed0 -c trec8 -o tasks.jsonl --topics topics.tsv --documents docs.jsonl
    """
    from evalwh.methods.audits import require_pool_or_audit
    from evalwh.warehouse import Warehouse

    with Warehouse.open_reader(db) as wh:
        require_pool_or_audit(wh, wh.default_collection(collection), pool)  # the message names both kinds
        count = wh.export_pool(pool, output, collection=collection, fmt=task_format, topics=topics, documents=documents)
    typer.echo(f"{count} judging tasks written to {output}", err=True)


@app.command("order")
@handle_errors
@default_collection
def order(
    pool: Annotated[str, typer.Argument(help="A stored pool (evalwh pool list).")],
    collection: CollectionOption = None,
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Show a pool's judging order: topic, document, place in the topic and overall.

    Example: evalwh pool order mtf-pool100-pooled -c trec8 -f csv -o order.csv
    """
    from evalwh.warehouse import Warehouse

    with Warehouse.open_reader(db) as wh:
        render(wh.pool_order(pool, collection=collection), fmt, output, title=f"judging order of {pool}")


def register(root: typer.Typer) -> None:
    """Add the ``pool`` group and the ``adjust`` command to the root app."""
    from evalwh.cli import adjust

    root.add_typer(app, name="pool")
    adjust.register(root)
