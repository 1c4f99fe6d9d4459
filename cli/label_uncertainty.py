"""evalwh label-uncertainty: scores under human labels filled by a machine judge, with its errors (methods §12)."""

from __future__ import annotations

from typing import Annotated

import typer

from evalwh.cli._errors import handle_errors
from evalwh.cli._options import (
    DEFAULT_DB,
    CollectionOption,
    DbOption,
    FormatOption,
    OutputFormat,
    OutputOption,
    default_collection,
    number,
)
from evalwh.cli._render import render

DEFAULT_MEASURES = ["P@10", "nDCG@10", "AP"]


@handle_errors
@default_collection
def label_uncertainty(
    reference: Annotated[str, typer.Option("--reference", help="The reference qrels set H (human labels).")],
    machine: Annotated[str, typer.Option("--machine", help="The machine qrels set M that fills H's holes.")],
    collection: CollectionOption = None,
    measure: Annotated[
        list[str] | None,
        typer.Option("--measure", "-m", help="P@k, nDCG, nDCG@k, AP or AP@k; repeatable (default: P@10, nDCG@10 and AP)."),
    ] = None,
    run: Annotated[list[str] | None, typer.Option("--run", "-r", help="Only this run; repeatable.")] = None,
    samples: Annotated[int, typer.Option("--samples", min=1, help="Monte Carlo replicates.")] = 1000,
    seed: Annotated[int | None, typer.Option("--seed", min=0, help="Seed of the replicates (none: fresh each time).")] = 1,
    level: Annotated[float, typer.Option("--level", click_type=number(0, 1, min_open=True, max_open=True), help="Coverage of the central interval (lower to upper).")] = 0.95,
    prior: Annotated[
        float, typer.Option("--prior", click_type=number(0), help="Dirichlet prior added to every cell of the confusion matrix (0: none).")
    ] = 1.0,
    resample_confusion: Annotated[
        bool,
        typer.Option(
            "--resample-confusion", help="Draw a confusion matrix per replicate from its Dirichlet posterior."
        ),
    ] = False,
    rel: Annotated[int, typer.Option("--rel", "-l", help="Relevance threshold of P and AP (grade >= rel).")] = 1,
    per_query: Annotated[bool, typer.Option("--per-query", "-q", help="One row per run, topic and measure.")] = False,
    pairs: Annotated[
        bool, typer.Option("--pairs", help="For every pair of runs, the probability that the replicates swap them.")
    ] = False,
    confusion: Annotated[
        bool, typer.Option("--confusion", help="Print the judge's confusion matrix P(human grade | machine grade).")
    ] = False,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Score runs with human labels filled by a machine judge, carrying the judge's errors into the scores.

    The judge's confusion matrix P(human grade | machine grade) is estimated on the pairs both
    sets judged; every document only the machine judged gets, in each Monte Carlo replicate, a
    human-equivalent grade drawn from it. Per run: the score under H filled by M (value), the
    replicates' mean, sd and central interval, and for P@k the exact expectation. --pairs
    gives the probability that the replicates swap two runs; --per-query the same per topic.

    Example: evalwh label-uncertainty -c trec8 --reference depth10 --machine llm -m P@10 -m AP --pairs
    """
    import warnings

    from evalwh.errors import MetricParamError
    from evalwh.warehouse import Warehouse

    if per_query + pairs + confusion > 1:
        raise MetricParamError("give one of --per-query, --pairs and --confusion")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with Warehouse.open_reader(db) as wh:
            result = wh.label_uncertainty(
                reference, machine, measure or DEFAULT_MEASURES, collection=collection, runs=run, samples=samples,
                seed=seed, level=level, prior=prior, resample_confusion=resample_confusion, rel=rel,
                per_query=per_query, pairs=pairs,
            )  # fmt: skip
    for warning in caught:
        typer.echo(f"warning: {warning.message}", err=True)
    sets = f"{reference} filled by {machine}"
    if confusion:
        render(result.confusion, fmt, output, title=f"{collection}: P({reference} grade | {machine} grade)")
    elif pairs:
        assert result.pairs is not None
        render(result.pairs, fmt, output, title=f"{collection}: swap probabilities, {sets}, {samples} replicates")
    elif per_query:
        assert result.topics is not None
        render(result.topics, fmt, output, title=f"{collection}: per topic, {sets}, {samples} replicates")
    else:
        render(result.runs, fmt, output, title=f"{collection}: {sets}, {samples} replicates")


def register(app: typer.Typer) -> None:
    """Add the command of this module to the root app."""
    app.command("label-uncertainty")(label_uncertainty)
