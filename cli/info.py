"""evalwh collections | runs | qrels [diff]: what the warehouse holds, and how two label sets differ."""

from __future__ import annotations

import enum
from typing import Annotated

import typer

from evalwh.cli._decision_options import AlphaOption, CorrectionChoice, TestChoice
from evalwh.cli._errors import handle_errors
from evalwh.cli._options import DEFAULT_DB, CollectionOption, DbOption, FormatOption, OutputFormat, OutputOption, default_collection
from evalwh.cli._render import render


@handle_errors
def collections(
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """List the collections: topics, judged and relevant documents, runs, label sets.

    The counts are those of one label set, named in counted_set: `default` when the
    collection has it, else its first human set (a collection of label sets without runs,
    say human and LLM labels, is counted on its human labels); qrels_sets counts every set.

    Example: evalwh collections --db trec.duckdb
    """
    from evalwh.warehouse import Warehouse

    with Warehouse.open_reader(db) as wh:
        render(wh.collections(), fmt, output, title="collections")


@handle_errors
@default_collection
def runs(
    collection: CollectionOption = None,
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """List the runs of a collection: topics, documents, depth, source file, sha256, lists float32 reorders.

    Example: evalwh runs --collection trec8
    """
    from evalwh.warehouse import Warehouse

    with Warehouse.open_reader(db) as wh:
        render(wh.runs(collection), fmt, output, title=f"runs of {collection}")


qrels_app = typer.Typer(help="List a collection's qrels sets; `evalwh qrels diff` compares two of them.")


@qrels_app.callback(invoke_without_command=True)
@handle_errors
def qrels(
    ctx: typer.Context,
    collection: CollectionOption = None,
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """List the qrels sets of a collection: provenance (source, judge, model, prompt, round), topics, pairs, relevant, file.

    `evalwh qrels diff` compares two sets of a collection (its own options follow `diff`).

    Example: evalwh qrels --collection llmjudge
    """
    if ctx.invoked_subcommand is not None:
        return
    from evalwh.cli._options import only_collection
    from evalwh.warehouse import Warehouse

    collection = collection if collection is not None else only_collection(db)
    with Warehouse.open_reader(db) as wh:
        render(wh.qrels_sets(collection), fmt, output, title=f"qrels sets of {collection}")


class DiffLayout(str, enum.Enum):
    """What ``evalwh qrels diff`` prints."""

    topics = "topics"
    labels = "labels"
    summary = "summary"
    runs = "runs"
    decisions = "decisions"


@qrels_app.command("diff")
@handle_errors
@default_collection
def qrels_diff(
    old: Annotated[str, typer.Option("--old", help="The earlier label set (the reference of ranks and decisions).")],
    new: Annotated[str, typer.Option("--new", help="The later label set.")],
    collection: CollectionOption = None,
    measure: Annotated[
        list[str] | None, typer.Option("--measure", "-m", help="Measure spec; repeatable (default: AP, nDCG@10, P@10).")
    ] = None,
    run: Annotated[list[str] | None, typer.Option("--run", help="Compare only this run; repeatable.")] = None,
    layout: Annotated[
        DiffLayout,
        typer.Option(
            "--layout",
            help="topics (pairs added, removed, regraded per topic), labels (every changed pair), summary (tau_b, "
            "tau_ap, decisions kept/lost/reversed per measure), runs (score and rank under both) or decisions "
            "(the pairs of runs whose significance moved).",
        ),
    ] = DiffLayout.topics,
    test: Annotated[
        TestChoice | None,
        typer.Option("--test", "-t", help="Significance test of the pairs of runs, as compare's (default t)."),
    ] = None,
    correction: Annotated[
        CorrectionChoice | None,
        typer.Option("--correction", help="Its correction over the pairs of a measure, as compare's (default holm)."),
    ] = None,
    alpha: AlphaOption = 0.05,
    bootstrap: Annotated[
        int, typer.Option("--bootstrap", min=0, help="Bootstrap samples over topics for tau_b's interval (0: none).")
    ] = 1000,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seed of the bootstrap.")] = 0,
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Compare two label sets of a collection: pairs added, removed, regraded; runs' scores, ranks and decisions.

    Per topic, the (topic, document) pairs the new set added, removed and regraded; for the
    runs, each one's score and rank under both sets, tau_b (with a bootstrap interval over
    topics) and tau_ap between the two rankings, and how many of the old set's significant
    pairwise decisions (all pairs of runs, compare's test and correction) the new set keeps,
    loses and reverses. The first lines (standard error for a table) sum the label changes.

    Example: evalwh qrels diff -c bright --old original --new fixed --layout summary -m nDCG@10
    """
    from evalwh.warehouse import Warehouse

    chosen = {"measures": measure} if measure else {}
    with Warehouse.open_reader(db) as wh:
        result = wh.qrels_diff(
            old, new, collection=collection, runs=run, test=test.value if test else None,
            correction=correction.value if correction else None, alpha=alpha, resamples=bootstrap, seed=seed,
            with_runs=layout not in (DiffLayout.topics, DiffLayout.labels), **chosen,
        )  # fmt: skip
    totals = result.totals()
    pairs = "pair" if totals["added"] == 1 else "pairs"
    typer.echo(
        f"{collection}: {new} against {old}: {totals['added']:,} {pairs} added, {totals['removed']:,} removed, "
        f"{totals['regraded']:,} regraded, {totals['unchanged']:,} unchanged; relevant {totals['relevant_old']:,} -> "
        f"{totals['relevant_new']:,}",
        err=True,
    )
    frame = getattr(result, layout.value)
    if frame.empty and layout is not DiffLayout.topics and layout is not DiffLayout.labels:
        typer.echo(f"{collection} has no runs: only the labels are compared (--layout topics or labels)", err=True)
    render(frame, fmt, output, title=f"{collection}: {new} against {old} ({layout.value})")


def register(app: typer.Typer) -> None:
    """Add the commands of this module to the root app."""
    app.command("collections")(collections)
    app.command("runs")(runs)
    app.add_typer(qrels_app, name="qrels")
