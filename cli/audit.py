"""evalwh audit draw|declare|list|estimate: random human audits of machine labels, prediction-powered scores (methods §15)."""

from __future__ import annotations

import enum
from typing import Annotated

import typer
from evalwh.cli._decision_options import CorrectionChoice
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

app = typer.Typer(
    help="Random audits: draw pairs or topics for people to judge, then score runs from the machine's labels "
    "corrected by the audit (prediction-powered inference).",
    no_args_is_help=True,
)

DEFAULT_MEASURES = ["P@10"]
MachineOption = Annotated[
    str,
    typer.Option(
        "--machine", help="The machine's label set over the frame (an LLM judge's qrels)."
    ),
]
FrameOption = Annotated[
    str | None,
    typer.Option(
        "--frame",
        help="The qrels set or pool whose judged pairs are sampled (default: --machine's).",
    ),
]
DesignOption = Annotated[
    str,
    typer.Option(
        "--design", help="'pairs' (a sample of pairs) or 'topics' (all pairs of sampled topics)."
    ),
]
StratifyOption = Annotated[
    str | None,
    typer.Option(
        "--stratify",
        help="'topic' or 'grade' (the machine's): a sample within each stratum (pairs only).",
    ),
]
ReplaceOption = Annotated[
    bool, typer.Option("--replace", help="Replace a stored audit of that id.")
]


class IntervalChoice(str, enum.Enum):
    """How ``audit estimate`` makes the runs' intervals (methods §15.4)."""

    auto = "auto"
    t = "t"
    machine = "machine"
    beta = "beta"


@app.command("draw")
@handle_errors
@default_collection
def draw(
    audit_id: Annotated[str, typer.Argument(help="The new audit's id (pool export takes it).")],
    machine: MachineOption,
    collection: CollectionOption = None,
    frame: FrameOption = None,
    design: DesignOption = "pairs",
    size: Annotated[
        int | None, typer.Option("--size", min=2, help="Units to draw: pairs, or topics.")
    ] = None,
    share: Annotated[
        float | None,
        typer.Option(
            "--share",
            click_type=number(0, 1, min_open=True),
            help="Share of the frame's units to draw.",
        ),
    ] = None,
    stratify: StratifyOption = None,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seed of the draw.")] = 0,
    replace: ReplaceOption = False,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Draw a random audit of a frame's pairs and store it; `evalwh pool export AUDIT_ID` writes its tasks.

    Example: evalwh audit draw audit5 -c trec8 --machine llm --share 0.05 --seed 1
    """
    from evalwh.warehouse import Warehouse

    with Warehouse(db) as wh:
        frame_out = wh.draw_audit(
            audit_id, machine=machine, collection=collection, frame=frame, design=design, size=size, share=share,
            stratify=stratify, seed=seed, replace=replace,
        )  # fmt: skip
    render(frame_out, fmt, output, title=f"audit {audit_id}")


@app.command("declare")
@handle_errors
@default_collection
def declare(
    audit_id: Annotated[str, typer.Argument(help="The audit's id.")],
    labels: Annotated[
        str,
        typer.Option(
            "--labels", help="The qrels set of the people's labels: its judged pairs are the audit."
        ),
    ],
    machine: MachineOption,
    collection: CollectionOption = None,
    frame: FrameOption = None,
    design: DesignOption = "pairs",
    stratify: StratifyOption = None,
    replace: ReplaceOption = False,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Declare an audit drawn elsewhere, naming its design; refused when its pairs are no plausible random sample.

    Example: evalwh audit declare ext -c trec8 --labels people --machine llm --design pairs
    """
    from evalwh.warehouse import Warehouse

    with Warehouse(db) as wh:
        frame_out = wh.declare_audit(
            audit_id, labels=labels, machine=machine, collection=collection, frame=frame, design=design,
            stratify=stratify, replace=replace,
        )  # fmt: skip
    render(frame_out, fmt, output, title=f"audit {audit_id} (declared)")


@app.command("list")
@handle_errors
@default_collection
def list_(
    collection: CollectionOption = None,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """List the stored audits: frame, machine set, design, units audited of the frame's.

    Example: evalwh audit list -c trec8
    """
    from evalwh.warehouse import Warehouse

    with Warehouse.open_reader(db) as wh:
        render(wh.audits(collection=collection), fmt, output, title="audits")


@app.command("estimate")
@handle_errors
@default_collection
def estimate(
    audit_id: Annotated[str, typer.Argument(help="A stored audit (evalwh audit list).")],
    human: Annotated[
        str,
        typer.Option("--human", help="The qrels set of the people's labels of the audit's pairs."),
    ],
    collection: CollectionOption = None,
    measure: Annotated[
        list[str] | None,
        typer.Option(
            "--measure",
            "-m",
            help="Repeatable (default P@10); a pairs audit takes P@k, RBP and dcg.",
        ),
    ] = None,
    run: Annotated[
        list[str] | None, typer.Option("--run", "-r", help="Show only this run (the weights and points stay the collection's); repeatable.")
    ] = None,
    probabilities: Annotated[
        bool,
        typer.Option(
            "--probabilities",
            help="Use the machine's stored probabilities (expected gains), pairs audits.",
        ),
    ] = False,
    weight: Annotated[
        str,
        typer.Option(
            "--weight",
            help="'tuned' (PPI++, one weight for all the runs of a measure), or a fixed lambda: "
            "1 is PPI, 0 the audit alone.",
        ),
    ] = "tuned",
    level: Annotated[
        float,
        typer.Option(
            "--level",
            click_type=number(0, 1, min_open=True, max_open=True),
            help="Coverage of the intervals.",
        ),
    ] = 0.95,
    rel: Annotated[
        int, typer.Option("--rel", "-l", help="Relevance threshold (grade >= rel).")
    ] = 1,
    differences: Annotated[
        bool, typer.Option("--differences", help="Paired differences of runs instead of scores.")
    ] = False,
    baselines: Annotated[
        list[str] | None,
        typer.Option(
            "--baseline", "-b", help="With --differences: every other run against it; repeatable."
        ),
    ] = None,
    all_pairs: Annotated[
        bool, typer.Option("--all-pairs", help="With --differences and baselines: every pair.")
    ] = False,
    correction: Annotated[
        CorrectionChoice,
        typer.Option("--correction", help="Over the pairs: bonferroni, holm, bh, by, none."),
    ] = CorrectionChoice.holm,
    ranks: Annotated[
        bool,
        typer.Option(
            "--ranks",
            help="Each run's rank under the estimates, its bootstrap rank interval and its tier.",
        ),
    ] = False,
    replicates: Annotated[
        int | None, typer.Option("--replicates", min=100, help="With --ranks: bootstrap replicates (at least 100; 2,000).")
    ] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="With --ranks: the bootstrap's seed (0).")] = None,
    interval: Annotated[
        IntervalChoice,
        typer.Option(
            "--interval",
            help="The runs' intervals: 'machine' (a topics audit's default: the studentised "
            "estimate's points read off the machine's own per-topic values, methods §15.4), "
            "'t' (Student's; a pairs audit's default) or 'beta' (a pairs audit, P@k: post-stratified "
            "counts with Jeffreys intervals, for small audits, methods §15.7).",
        ),
    ] = IntervalChoice.auto,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Score runs from the machine's labels corrected by a random human audit, with intervals.

    Per run and measure: the prediction-powered estimate and interval, the audit-only estimate and
    interval, the machine-only value, the weight lambda and the human labels the machine was
    worth (effective_n). --differences gives the paired differences with adjusted p-values;
    --ranks each run's rank, 95% rank interval and tier under the estimates (methods §15.5).

    Example: evalwh audit estimate audit5 -c trec8 --human people -m P@10 -m "RBP(p=0.8)" --differences
    """
    from evalwh.errors import MetricParamError
    from evalwh.measures import catalog
    from evalwh.warehouse import Warehouse

    if weight != "tuned":
        try:
            lam: float | str = float(weight)
        except ValueError:
            raise MetricParamError(f"--weight {weight!r}: give 'tuned' or a number") from None
    else:
        lam = weight
    if (baselines or all_pairs) and not differences:
        raise MetricParamError("--baseline and --all-pairs apply with --differences")
    if ranks and differences:
        raise MetricParamError("--ranks and --differences are two tables: ask for one at a time")
    if seed is not None and not ranks:
        raise MetricParamError("--seed is the rank bootstrap's: it applies with --ranks")
    if replicates is not None and not ranks:
        raise MetricParamError("--replicates is the rank bootstrap's: it applies with --ranks")
    require_output(fmt, output)  # before the work, not after it
    specs = measure or DEFAULT_MEASURES
    with Warehouse.open_reader(db) as wh:
        result = wh.audit_estimate(
            audit_id, human, specs, collection=collection, runs=run, probabilities=probabilities,
            level=level, rel=rel, weight=lam, differences=differences, baselines=baselines or (), all_pairs=all_pairs,
            correction=correction.value, ranks=ranks, replicates=replicates, seed=seed, interval=interval.value,
        )  # fmt: skip
    typed = {str(m): m.name for m in map(catalog.parse, specs)}  # the measures as typed, as evalwh eval prints them
    for table in (result.runs, result.pairs, result.ranks):
        if table is not None:
            table["measure"] = table["measure"].map(typed)
    for note in result.notes:  # a note on a measure names it as the table does
        canonical = next((c for c in typed if note.startswith(f"{c}: ")), None)
        typer.echo(f"note: {note if canonical is None else typed[canonical] + note[len(canonical):]}", err=True)
    if ranks:
        assert result.ranks is not None
        render(
            result.ranks,
            fmt,
            output,
            title=f"{collection}: ranks under the prediction-powered scores from audit {audit_id}",
        )
    elif differences:
        assert result.pairs is not None
        render(
            result.pairs,
            fmt,
            output,
            title=f"{collection}: paired differences from audit {audit_id}",
        )
    else:
        render(
            result.runs,
            fmt,
            output,
            title=f"{collection}: prediction-powered scores from audit {audit_id}",
        )


def register(root: typer.Typer) -> None:
    """Add the ``audit`` group to the root app."""
    root.add_typer(app, name="audit")
