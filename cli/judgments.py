"""evalwh agreement | sensitivity: label sets against each other (methods §11)."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Annotated

import typer

from evalwh.cli._decision_options import AlphaOption, CorrectionChoice, TestChoice
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
from evalwh.cli._render import render, require_output

if TYPE_CHECKING:
    import pandas as pd

class AgreementLayout(str, enum.Enum):
    """What ``evalwh agreement`` prints."""

    summary = "summary"
    confusion = "confusion"
    raters = "raters"


class AlphaLevel(str, enum.Enum):
    """Krippendorff's alpha's level of measurement."""

    nominal = "nominal"
    ordinal = "ordinal"
    interval = "interval"


class SensitivityLayout(str, enum.Enum):
    """What ``evalwh sensitivity`` prints."""

    summary = "summary"
    runs = "runs"
    sets = "sets"
    decisions = "decisions"


def _warn(frame: pd.DataFrame, keys: list[str]) -> None:
    """Each row's note (an undefined kappa, too few shared pairs) as a warning line on stderr."""
    for row in frame[frame["note"] != ""].itertuples(index=False):
        where = " ".join(str(getattr(row, key)) for key in keys)
        typer.echo(f"warning: {where}: {row.note}", err=True)


@handle_errors
@default_collection
def agreement(
    reference: Annotated[str, typer.Option("--reference", help="The reference qrels set (e.g. the human labels).")],
    sets: Annotated[
        list[str] | None,
        typer.Argument(help="Label sets (qrels ids) to compare with the reference; none: every other set.", show_default=False),
    ] = None,
    collection: CollectionOption = None,
    binary_at: Annotated[
        float | None,
        typer.Option("--binary-at", help="Also compare relevant (grade >= G) against not: kappa_binary, agreement_binary; "
            "with --layout confusion, the matrices of relevant and not."),
    ] = None,
    per_query: Annotated[bool, typer.Option("--per-query", "-q", help="One row per set and topic.")] = False,
    layout: Annotated[
        AgreementLayout,
        typer.Option(
            "--layout",
            help="summary (the statistics), confusion (counts per grade pair) or raters (Krippendorff's alpha of the "
            "reference and the sets together).",
        ),
    ] = AgreementLayout.summary,
    bootstrap: Annotated[
        int,
        typer.Option(
            "--bootstrap", min=0, help="Bootstrap samples over topics for the intervals of kappa and alpha (0: none)."
        ),
    ] = 1000,
    confidence: Annotated[float, typer.Option("--confidence", click_type=number(0, 1, min_open=True, max_open=True), help="Coverage of the intervals.")] = 0.95,
    seed: Annotated[
        int,
        typer.Option(
            "--seed", min=0, help="Seed of the bootstrap, printed with the intervals (evalwh report uses the same default)."
        ),
    ] = 0,
    level: Annotated[
        AlphaLevel, typer.Option("--level", help="The level of Krippendorff's alpha whose interval the summary gives.")
    ] = AlphaLevel.ordinal,
    sort: Annotated[
        str | None, typer.Option("--sort", help="Sort the summary by this column, largest first (e.g. kappa).")
    ] = None,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Compare label sets with a reference on the pairs both judged: agreement, Cohen's kappa, Krippendorff's alpha.

    Each set gets percent agreement, Cohen's kappa (unweighted, linear and quadratic weights)
    and Krippendorff's alpha (nominal, ordinal, interval), and how many pairs only one side
    judged, with 95% intervals for kappa and alpha (a bootstrap over topics with a fixed seed,
    printed on stderr; with --per-query, kappa's large-sample interval per topic). Kappa is
    empty when undefined (both sides give every pair one grade) and 0 when one side does;
    both, and fewer than 30 shared pairs, are noted in the table and warned about on stderr. --layout raters gives Krippendorff's alpha of the reference and
    the sets together (several raters at once).

    Example: evalwh agreement -c llmjudge --reference human --binary-at 2 --sort kappa
    """
    from evalwh.errors import MetricParamError
    from evalwh.warehouse import Warehouse

    if binary_at is not None and layout is AgreementLayout.raters:
        raise MetricParamError("--binary-at applies to the summary and confusion layouts, not to --layout raters")
    with Warehouse.open_reader(db) as wh:
        frame = wh.agreement(
            reference, sets or None, collection=collection, binary_at=binary_at, per_query=per_query,
            layout=layout.value, resamples=bootstrap, confidence=confidence, seed=seed, level=level.value,
        )  # fmt: skip
    if bootstrap and per_query and layout is AgreementLayout.summary:
        typer.echo(f"intervals: {confidence:.0%}, kappa's large-sample interval per topic (Fleiss, Cohen and Everitt)", err=True)
    elif bootstrap and layout is not AgreementLayout.confusion:
        # the interval's seed is part of the result: said, so that a rerun (or the report) can match it
        typer.echo(
            f"intervals: {confidence:.0%}, normal bootstrap over topics, {bootstrap:,} replicates, seed {seed}",
            err=True,
        )
    if layout is AgreementLayout.raters:
        _warn(frame, ["sets"])
        render(frame, fmt, output, title=f"{collection}: Krippendorff's alpha of {frame['raters'][0]} label sets together")
        return
    if layout is AgreementLayout.confusion:
        cut = "per grade" if binary_at is None else f"relevant (1: grade >= {binary_at:g}) or not (0)"
        render(frame, fmt, output, title=f"{collection}: shared pairs {cut}, rows {reference}, columns the set")
        return
    if sort is not None:
        if sort not in frame.columns:
            raise MetricParamError(f"--sort {sort!r}: not a column; give one of {', '.join(frame.columns)}")
        frame = frame.sort_values(sort, ascending=sort in ("qrels_id", "query_id"), kind="stable", na_position="last")
    _warn(frame, ["qrels_id", "query_id"] if per_query else ["qrels_id"])
    render(frame, fmt, output, title=f"{collection}: agreement with {reference}")


@handle_errors
@default_collection
def sensitivity(
    qrels_id: Annotated[
        list[str],
        typer.Option(
            "--qrels-id",
            help="A label set, or A+B (A's labels, B's where A has none); repeatable, the first is the reference.",
        ),
    ],
    collection: CollectionOption = None,
    measure: Annotated[
        list[str] | None,
        typer.Option("--measure", "-m", help="Measure spec; repeatable (default: AP, nDCG@10, P@10 and bpref)."),
    ] = None,
    run: Annotated[list[str] | None, typer.Option("--run", help="Rank only this run; repeatable.")] = None,
    rbo_p: Annotated[float, typer.Option("--rbo-p", click_type=number(0, 1, min_open=True, max_open=True), help="RBO's persistence p (0 < p < 1).")] = 0.9,
    top_k: Annotated[int, typer.Option("--top-k", min=1, help="Depth of the top-k overlap.")] = 10,
    bootstrap: Annotated[
        int, typer.Option("--bootstrap", min=0, help="Bootstrap samples over topics for tau_b's interval (0: none).")
    ] = 1000,
    confidence: Annotated[float, typer.Option("--confidence", click_type=number(0, 1, min_open=True, max_open=True), help="Coverage of the bootstrap interval.")] = 0.95,
    seed: Annotated[int | None, typer.Option("--seed", min=0, help="Seed of the bootstrap (none: fresh each run).")] = None,
    layout: Annotated[
        SensitivityLayout,
        typer.Option(
            "--layout",
            help="summary (per set and measure), runs (rank and score per set), sets (ranked) or decisions "
            "(the pairs of runs whose significance moved).",
        ),
    ] = SensitivityLayout.summary,
    test: Annotated[
        TestChoice | None,
        typer.Option("--test", "-t", help="Significance test of the pairs of runs, as compare's (default t)."),
    ] = None,
    correction: Annotated[
        CorrectionChoice | None,
        typer.Option("--correction", help="Its correction over the pairs of a measure, as compare's (default holm)."),
    ] = None,
    alpha: AlphaOption = 0.05,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Show how the ranking of the runs moves when the label set changes: tau_b, tau_ap, RBO, rank changes.

    The first --qrels-id is the reference; every other set's ranking of the runs is compared
    with it per measure: Kendall's tau_b with a bootstrap interval over topics, tau_ap (the
    reference as the truth), RBO, the top-k overlap and the largest rank change; and how many
    of the reference's significant pairwise decisions (all pairs of runs, compare's test and
    correction) the set keeps, loses and reverses, and how many it gains.

    Example: evalwh sensitivity -c trec8 --qrels-id full --qrels-id depth10 -m AP -m nDCG@10 --seed 1
    """
    from evalwh.warehouse import Warehouse

    require_output(fmt, output)  # before the work, not after it
    chosen = {"measures": measure} if measure else {}  # none: the Warehouse method's defaults
    with Warehouse.open_reader(db) as wh:
        result = wh.sensitivity(
            qrels_id, collection=collection, runs=run, rbo_p=rbo_p, top_k=top_k, resamples=bootstrap,
            confidence=confidence, seed=seed, test=test.value if test else None,
            correction=correction.value if correction else None, alpha=alpha, **chosen,
        )  # fmt: skip
    if bootstrap and layout.value == "summary":  # the interval shown, and the coverage it had in simulation
        drawn = f"seed {seed}" if seed is not None else "a fresh seed each run; --seed fixes it"
        typer.echo(
            f"note: tau_b interval: {confidence:.0%}, bootstrap over topics ({bootstrap:,} replicates, {drawn}), the "
            "union of the normal intervals around tau_b and around its bias-corrected value; 95% intervals held the "
            "population's tau_b in 86-99% of simulated TREC-8 collections of 25 and 50 topics (methods §11.4)",
            err=True,
        )
    frames = {"summary": result.summary, "runs": result.runs, "sets": result.sets, "decisions": result.decisions}
    frame = frames[layout.value]
    render(frame, fmt, output, title=f"{collection}: rankings under each label set against {qrels_id[0]}")


def register(app: typer.Typer) -> None:
    """Add the commands of this module to the root app."""
    app.command("agreement")(agreement)
    app.command("sensitivity")(sensitivity)
