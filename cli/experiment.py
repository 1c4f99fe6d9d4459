"""evalwh experiment exclusions|swap-rates|reduced-qrels: incomplete-judgment studies (S4)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

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
from evalwh.cli._progress import progress_bar
from evalwh.cli._render import render, require_output

if TYPE_CHECKING:
    import pandas as pd

app = typer.Typer(
    help="Meta-evaluation of measures under incomplete judgments: swap rates, reduced qrels, tau.",
    no_args_is_help=True,
)

MeasuresOption = Annotated[
    list[str],
    typer.Option("--measure", "-m", help="Measure spec, repeatable (MAP, bpref-10, RankEff, ...)."),
]
QrelsOption = Annotated[
    str | None,
    typer.Option("--qrels-id", help="The full qrels set to start from (default: the collection's, evalwh conventions)."),
]
SeedOption = Annotated[
    int, typer.Option("--seed", min=0, help="Seed of the random generator (results are reproducible).")
]
CapOption = Annotated[
    int, typer.Option("--cap", min=1, help="Documents per topic counted by the exclusion rule.")
]
ShareOption = Annotated[
    float,
    typer.Option(
        "--share", click_type=number(0, 1, min_open=True),
        help="Share of |T| x cap a run must retrieve to take part (methods §8.1)."
    ),
]
ExperimentOption = Annotated[
    str | None,
    typer.Option(
        "--experiment-id", help="Store under this name (default derived from the options)."
    ),
]


@app.command("exclusions")
@handle_errors
@default_collection
def exclusions(
    collection: CollectionOption = None,
    qrels_id: QrelsOption = None,
    cap: CapOption = 1000,
    share: ShareOption = 0.95,
    all_runs: Annotated[bool, typer.Option("--all", help="List retained runs too.")] = False,
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """List the runs the S4 experiments exclude, with the reason (methods §8.1).

    Example: evalwh experiment exclusions --collection trec8
    """
    from evalwh.warehouse import Warehouse

    with Warehouse.open_reader(db) as wh:
        frame = wh.exclusions(collection=collection, qrels_id=qrels_id, cap=cap, share=share)
    shown = frame if all_runs else frame[frame["excluded"]]
    render(
        shown.reset_index(drop=True),
        fmt,
        output,
        title=f"{int(frame['excluded'].sum())} of {len(frame)} runs excluded",
    )


@app.command("swap-rates")
@handle_errors
@default_collection
def swap_rates(
    measures: MeasuresOption,
    collection: CollectionOption = None,
    samples: Annotated[
        int, typer.Option("--samples", "-B", min=1, help="Number of disjoint topic-set pairs.")
    ] = 1000,
    seed: SeedOption = 1,
    bins: Annotated[
        bool, typer.Option("--bins", help="Show the error rate per bin instead of the summary.")
    ] = False,
    qrels_id: QrelsOption = None,
    cap: CapOption = 1000,
    share: ShareOption = 0.95,
    experiment_id: ExperimentOption = None,
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Swap error rates of measures over disjoint topic-set pairs, with d* and sigma (methods §8.2).

    Example: evalwh experiment swap-rates --collection trec8 -m MAP -m bpref-10 -m RankEff --samples 1000 --seed 1
    """
    from evalwh.warehouse import Warehouse

    with Warehouse(db) as wh, progress_bar("swap rates") as progress:
        result = wh.swap_rates(
            measures,
            collection=collection,
            samples=samples,
            seed=seed,
            qrels_id=qrels_id,
            cap=cap,
            share=share,
            experiment_id=experiment_id,
            progress=progress,
        )
    if bins:
        render(result["rates"], fmt, output, title="swap error rate per bin of |dA|")
    else:
        render(
            result["summary"],
            fmt,
            output,
            title=f"swap rates, {samples} topic-set pairs, seed {seed}",
        )
    _note_exclusions(result["exclusion"])  # (after the output: an output that fails is one line)


@app.command("reduced-qrels")
@handle_errors
@default_collection
def reduced_qrels(
    measures: MeasuresOption,
    collection: CollectionOption = None,
    seed: SeedOption = 1,
    levels: Annotated[
        str | None,
        typer.Option(
            "--levels", help="Comma-separated percentages (default 100,95,...,10,9,...,1)."
        ),
    ] = None,
    qrels_id: QrelsOption = None,
    cap: CapOption = 1000,
    share: ShareOption = 0.95,
    experiment_id: ExperimentOption = None,
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Re-evaluate on reduced qrels per level: mean change, tau vs full qrels (methods §8.3-§8.5).

    The reduced qrels are kept as qrels sets reduced-a<level>-seed<seed>; every metric can use them.

    Example: evalwh experiment reduced-qrels --collection trec8 -m MAP -m bpref-10 -m RankEff --seed 1
    """
    from evalwh.warehouse import Warehouse

    chosen = _parse_levels(levels) if levels else None
    with Warehouse(db) as wh, progress_bar("levels") as progress:
        result = wh.reduced_qrels(
            measures,
            collection=collection,
            seed=seed,
            levels=chosen,
            qrels_id=qrels_id,
            cap=cap,
            share=share,
            experiment_id=experiment_id,
            progress=progress,
        )
    columns = ["measure", "level", "qrels_id", "n_runs", "mean_value", "change_pct", "tau"]
    render(
        result["levels"][columns],
        fmt,
        output,
        title="reduced qrels: mean and Kendall tau vs full qrels",
    )
    if fmt is OutputFormat.table and output is None:
        render(result["measure_tau"], fmt, title="Kendall tau between measures, full qrels")
        render(result["level_below"], fmt, title="highest level where tau falls below 0.9")
    _note_exclusions(result["exclusion"])  # (after the output: an output that fails is one line)


def _parse_levels(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter(
            f"--levels {text!r}: give comma-separated integers such as 100,50,10"
        ) from None


def _note_exclusions(exclusion: pd.DataFrame) -> None:
    excluded = exclusion.loc[exclusion["excluded"], "run_id"].tolist()
    typer.echo(
        f"{len(exclusion) - len(excluded)} runs retained, {len(excluded)} excluded (methods §8.1)"
        + (f": {', '.join(excluded)}" if excluded else ""),
        err=True,
    )


@handle_errors
@default_collection
def pool_bias(
    collection: CollectionOption = None,
    widths: Annotated[str, typer.Option("--widths", help="Comma-separated pool widths (pooled runs, r excluded).")] = "2,4,10,20,40",
    repeats: Annotated[int, typer.Option("--repeats", "-I", min=1, help="Run samplings per width.")] = 100,
    topic_samples: Annotated[int, typer.Option("--topic-samples", "-J", min=1, help="Common-topic samplings per run sampling.")] = 200,
    common_topics: Annotated[
        str | None, typer.Option("--common-topics", help="Comma-separated numbers of common topics (default 5,10,20,50,100 below N).")
    ] = None,
    seed: SeedOption = 1,
    manual_vs_automatic: Annotated[
        bool, typer.Option("--manual-vs-automatic", help="New run from the 11 best manual runs, pools from automatic runs.")
    ] = False,
    handling: Annotated[str, typer.Option("--handling", help="Unjudged documents: nonrelevant, condensed or both.")] = "both",
    measure: Annotated[str, typer.Option("--measure", "-m", help="One measure spec (not nDCG).")] = "RBP_trunc(p=0.8)@10",
    pool_depth: Annotated[int, typer.Option("--pool-depth", min=1, help="Pool depth lambda.")] = 10,
    qrels_id: QrelsOption = None,
    experiment_id: ExperimentOption = None,
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Pooling bias, Algorithm 1 and Algorithm 3 accuracy against pool width (Webber & Park; methods §6.8).

    Prints the common-topics table (Algorithm 3); on a terminal also the bias table (Algorithm 1).

    Example: evalwh experiment pool-bias --collection trec8 --widths 2,4,10,20,40 --repeats 100 --topic-samples 200 --seed 1
    """
    from evalwh.warehouse import Warehouse

    with Warehouse(db) as wh, progress_bar("pool-bias passes") as progress:
        result = wh.pool_bias(
            collection=collection,
            widths=_parse_counts("--widths", widths),
            repeats=repeats,
            topic_samples=topic_samples,
            common_topics=_parse_counts("--common-topics", common_topics) if common_topics else None,
            seed=seed,
            measure=measure,
            pool_depth=pool_depth,
            handling=handling,
            manual_vs_automatic=manual_vs_automatic,
            qrels_id=qrels_id,
            experiment_id=experiment_id,
            progress=progress,
        )
    name = result["experiment"]["experiment_id"].iloc[0]
    topics, summary = result["common_topics"], result["summary"]
    if fmt is OutputFormat.table:
        # the terminal gets the columns of S2's tables; files get every column
        topics = topics[["handling", "width", "n_common", "mae_unadjusted", "mae_mixed", "mae_adjusted", "adjusted_better"]]
        summary = summary[["handling", "width", "bias_mean", "bias_q1", "bias_median", "bias_q3", "mae_unadjusted", "mae_loo_adjusted"]]
    render(topics, fmt, output, title=f"{name}: MAE of the mean by common topics (Algorithm 3)")
    if fmt is OutputFormat.table and output is None:
        render(summary, fmt, title=f"{name}: bias of the unpooled run and Algorithm 1, by pool width")


def _parse_counts(option: str, text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter(f"{option} {text!r}: give comma-separated integers such as 2,4,10") from None


app.command("pool-bias")(pool_bias)


@handle_errors
@default_collection
def budget(
    ctx: typer.Context,
    collection: CollectionOption = None,
    strategies: Annotated[
        str, typer.Option("--strategies", help="Comma-separated: depth, take, mtf, bandit, rbp, rrf, random.")
    ] = "depth,mtf,bandit,rrf",
    budgets: Annotated[
        str, typer.Option("--budgets", help="Comma-separated budgets: shares of the pool (10%) or counts.")
    ] = "10%,25%,50%",
    per: Annotated[str, typer.Option("--per", help="Budgets in 'total' or per 'topic' (a count in every topic, a share of each topic's candidates).")] = "total",
    seeds: Annotated[str, typer.Option("--seeds", help="Comma-separated seeds of the random strategies.")] = "0",
    reference: Annotated[
        str | None,
        typer.Option("--reference", help="The complete label set (default: the collection's, evalwh conventions)."),
    ] = None,
    depth: Annotated[int, typer.Option("--depth", "-d", min=1, help="Pool depth of the candidates.")] = 100,
    runs_from: Annotated[str, typer.Option("--runs-from", help="Pool members: 'pooled' or 'all'.")] = "pooled",
    measure: Annotated[str, typer.Option("--measure", "-m", help="The leaderboard's measure (AP, P@10, nDCG@10, ...).")] = "AP",
    test: Annotated[str, typer.Option("--test", help="Significance test of the pairs (t, wilcoxon, ...).")] = "t",
    correction: Annotated[str, typer.Option("--correction", help="Its correction (none, holm, bonferroni, ...).")] = "none",
    machine: Annotated[
        str | None, typer.Option("--machine", help="A label set with LLM probabilities: people + calibrated LLM.")
    ] = None,
    selections: Annotated[
        str, typer.Option("--selections", help="With --machine: random, uncertain, lara (comma-separated).")
    ] = "random,uncertain,lara",
    calibration: Annotated[str, typer.Option("--calibration", help="With --machine: isotonic or logistic.")] = "isotonic",
    store_sets: Annotated[
        bool, typer.Option("--store-sets", help="With --machine: store people's labels and the calibrated fill as sets.")
    ] = False,
    figure: Annotated[Path | None, typer.Option("--figure", help="Write the figure (PNG) here.", dir_okay=False)] = None,
    experiment_id: ExperimentOption = None,
    replace: Annotated[
        bool, typer.Option("--replace", help="Replace a stored experiment of that id made with other options.")
    ] = False,
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """What a judging budget buys: relevant found, tau_b, tau_ap, significant pairs kept, judged share.

    Prints the mean over seeds per strategy and budget (files get one row per seed). The
    default --experiment-id names the strategies (or selections), budgets, scope and seeds; an
    experiment of that id made with other options is kept unless --replace. Standard error says
    how many relevant pairs the candidates can reach (the relevant share's ceiling;
    reachable_share is over those) and why a budget judged fewer pairs than it allowed.

    Example: evalwh experiment budget -c trec8 --strategies depth,mtf,bandit,rrf --budgets 10%,25%,50% --seeds 0,1,2
    """
    from evalwh.methods.budget import summarise
    from evalwh.methods.budget.ids import ceiling_note, shortfall_notes, with_reachable
    from evalwh.warehouse import Warehouse

    _refuse_unused(ctx, machine is not None)
    require_output(fmt, output)  # before the work, not after it
    seed_list = _parse_counts("--seeds", seeds)
    with Warehouse(db) as wh, progress_bar("strategy replays") as progress:
        common = dict(collection=collection, budgets=[b.strip() for b in budgets.split(",") if b.strip()],
                      seeds=seed_list, reference=reference, measure=measure, experiment_id=experiment_id,
                      test=test, correction=correction, replace=replace)  # fmt: skip
        if machine is not None:
            rows = wh.budget(
                machine=machine, selections=[s.strip() for s in selections.split(",") if s.strip()],
                calibration=calibration, store_sets=store_sets, **common,
            )  # fmt: skip
        else:
            rows = wh.budget(
                strategies=[s.strip() for s in strategies.split(",") if s.strip()], scope=per, depth=depth,
                runs_from=runs_from, progress=progress, **common,
            )  # fmt: skip
    name = rows.attrs.get("experiment_id", "budget")
    params = rows.attrs.get("params", {})
    notes = [ceiling_note(params), *shortfall_notes(rows, params, rows.attrs.get("reference", reference))]
    rows = with_reachable(rows, params)
    summary = with_reachable(summarise(rows), params)
    if figure is not None:
        from evalwh.io.files import atomic_output
        from evalwh.present.plots.budget import budget_figure

        with atomic_output(figure, "wb") as handle:
            budget_figure(summary, title=f"{name} ({measure})").savefig(handle, format="png", dpi=110)
    render(summary if fmt is OutputFormat.table else rows, fmt, output, title=f"{name}: what a budget buys ({measure})")
    # the notes after the outputs (and after the work): a refusal, or an output that fails, is one line
    if params.get("seeds", seed_list):  # a replay of deterministic strategies draws nothing
        typer.echo(f"seeds: {', '.join(map(str, params.get('seeds', seed_list)))}", err=True)
    typer.echo(f"experiment: {name}", err=True)
    for note in notes:
        if note:
            typer.echo(note, err=True)


def _refuse_unused(ctx: typer.Context, hybrid: bool) -> None:
    """Refuse, in one line, an option given on the command line that the chosen study does not read."""
    from evalwh.errors import EvalWhError

    from evalwh.cli._options import typed_options

    unused = ("strategies", "per", "depth", "runs_from") if hybrid else ("selections", "calibration", "store_sets")
    given = typed_options(ctx, unused)
    if given:
        flags = ", ".join("--" + name.replace("_", "-") for name in given)
        verb = "applies" if len(given) == 1 else "apply"
        raise EvalWhError(
            f"experiment budget: {flags} {verb} without --machine (the replay of pooling strategies)"
            if hybrid else f"experiment budget: {flags} {verb} with --machine (people and a calibrated LLM)"
        )


app.command("budget")(budget)
