"""evalwh report: one command from qrels and run files (or a warehouse) to a report."""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from evalwh.cli._decision_options import (
    AlphaOption,
    CorrectionChoice,
    Measure,
    ResamplesOption,
    TestChoice,
    parse_depths,
    parse_runs,
)
from evalwh.cli._errors import handle_errors
from evalwh.cli._options import DEFAULT_DB, DbOption, FillOption, only_collection
from evalwh.cli._progress import progress_bar
from evalwh.errors import ReplaceError

if TYPE_CHECKING:
    from evalwh.warehouse import Warehouse

DEMO_DIR = Path("evalwh-demo")


class ReportFormat(str, enum.Enum):
    """What `evalwh report` writes."""

    html = "html"  # one self-contained file: inline CSS, figures as data: URIs
    md = "md"  # tables and methods as Markdown; no figures


@handle_errors
def report(
    runs: Annotated[
        list[Path] | None,
        typer.Argument(help="Run files to ingest first (with --qrels); none: report from --db."),
    ] = None,
    qrels: Annotated[
        Path | None,
        typer.Option(
            "--qrels",
            help="Qrels file (or irds:DATASET_ID) to ingest first (the collection is named after it).",
        ),
    ] = None,
    collection: Annotated[
        str | None,
        typer.Option(
            "--collection",
            "-c",
            help="Collection name (default: the qrels file's name, else the warehouse's only collection).",
        ),
    ] = None,
    demo: Annotated[
        bool,
        typer.Option(
            "--demo", help=f"Write a small pooled demo collection to ./{DEMO_DIR} and report on it."
        ),
    ] = False,
    run_metadata: Annotated[
        Path | None,
        typer.Option(
            "--run-metadata", help="TSV with run_id, group, type, pooled (marks pooled runs)."
        ),
    ] = None,
    baseline: Annotated[
        list[str] | None,
        typer.Option(
            "--baseline", "-b",
            help="Baseline run, repeatable: every other run is compared with each, as evalwh "
            "compare -b does (default: all pairs).",
        ),
    ] = None,
    all_pairs: Annotated[
        bool,
        typer.Option("--all-pairs", help="Compare all pairs even when the collection stores baselines."),
    ] = False,
    measures: Annotated[
        str | None,
        typer.Option(
            "--measures",
            help="Comma-separated leaderboard measures, the first ranks it (MAP = AP; default "
            "from the collection's conventions, else nDCG@10 first on graded labels, P@10 on "
            "binary, whatever the judged depth; methods §14.1).",
        ),
    ] = None,
    pairing: Annotated[
        Measure,
        typer.Option(
            "--pairing", help="Decision matrix: P (P@d with A_p@d) or MAP (MAP@d with A_p@d)."
        ),
    ] = Measure.P,
    depths: Annotated[
        str | None,
        typer.Option(
            "--depths", "-d",
            help="Depths d of the decision matrix (default those of 10,30,100,500,1000 within the "
            "judged depth, else 5, and 10).",
        ),
    ] = None,
    pair: Annotated[
        list[str] | None,
        typer.Option(
            "--pair", help="RUN_A,RUN_B to draw (repeatable; default: chosen from the leaderboard)."
        ),
    ] = None,
    test: Annotated[
        TestChoice | None,
        typer.Option(
            "--test", "-t",
            help="Significance test, as evalwh compare's --test (default t: the paired t-test).",
        ),
    ] = None,
    correction: Annotated[
        CorrectionChoice | None,
        typer.Option(
            "--correction",
            help="Correction over the family's pairs, as evalwh compare's (default holm; none "
            "for the Tukey tests).",
        ),
    ] = None,
    alpha: AlphaOption = 0.05,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seed of the randomization test.")] = 0,
    resamples: ResamplesOption = 9999,
    qrels_id: Annotated[
        str | None,
        typer.Option(
            "--qrels-id",
            help="Qrels set to evaluate against (default: the collection's, evalwh conventions), "
            "or the name of the set --qrels stores.",
        ),
    ] = None,
    fill: FillOption = None,
    flag_gap: Annotated[
        float,
        typer.Option(
            "--flag-gap",
            min=0.0,
            max=1.0,
            help="Flag runs whose A_p_ret@10 or A_p_ret@100 is below the pooled runs' lower "
            "fence and this far below their median.",
        ),
    ] = 0.10,
    pool_depth: Annotated[
        int | None,
        typer.Option(
            "--pool-depth", min=1,
            help="The judged depth, if known (else the conventions', the evaluated pool's depth, or "
            "the depth at which most pooled lists stop being judged: methods §14.2).",
        ),
    ] = None,
    bounds: Annotated[
        bool, typer.Option("--bounds/--no-bounds", help="Draw the P@d bounds of the pairs.")
    ] = True,
    fmt: Annotated[
        ReportFormat, typer.Option("--format", "-f", help="html (self-contained) or md.")
    ] = ReportFormat.html,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Write here instead of standard output.", dir_okay=False
        ),
    ] = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Evaluate, test and report a collection's runs in one HTML (or Markdown) file.

    A collection of label sets without runs (human and LLM labels) gets a label-set report in
    the same layout: agreement with intervals (the same as evalwh agreement's), confusion
    matrices and kappa per topic as figures and tables, coverage, provenance.

    Example: evalwh report --qrels qrels.txt runs/*.txt -o report.html

    More:

      evalwh report -c trec8 -b INQ604 -o report.html
    """
    from evalwh.errors import EvalWhError
    from evalwh.warehouse import Warehouse

    files = list(runs or [])
    if demo:
        if qrels is not None or files:
            raise EvalWhError(
                "report: --demo writes its own qrels and runs; drop --qrels and the run files"
            )
        from evalwh.io.demo_data import write_demo

        written = write_demo(DEMO_DIR)
        qrels, files, run_metadata = written.qrels, written.runs, written.metadata
        collection = collection or "demo"
        typer.echo(
            f"demo: qrels and runs written to ./{DEMO_DIR}/ and ingested into {db} (collection "
            f"{collection}); both stay for `evalwh eval --db {db}` and are yours to delete",
            err=True,
        )
    if files and qrels is None:
        raise EvalWhError("report: run files need their qrels; give --qrels FILE")
    if collection is None:
        # a qrels file names its collection; otherwise the warehouse's only one
        collection = _collection_name(qrels) if qrels is not None else only_collection(db)
    figure_pairs = tuple(_pair(p) for p in pair or [])
    options = dict(
        measures=None if measures is None else [m.strip() for m in measures.split(",") if m.strip()],
        pairing=pairing.value,
        depths=tuple(parse_depths(depths)) if depths else None,
        baseline=list(baseline or []),
        all_pairs=all_pairs,
        pairs=figure_pairs,
        test=None if test is None else test.value,
        correction=None if correction is None else correction.value,
        alpha=alpha,
        seed=seed,
        resamples=resamples,
        # the set --qrels stores ('default' unless named) is the one evaluated
        qrels_id="default" if qrels_id is None and qrels is not None else qrels_id,
        flag_gap=flag_gap,
        pool_depth=pool_depth,
        bounds=bounds,
        fill=tuple(fill or ()),
    )
    ingesting = qrels is not None or bool(files) or run_metadata is not None
    said: list[str] = []  # what was stored and written: said once the transaction committed
    with Warehouse(db) if ingesting else Warehouse.open_reader(db) as wh, _all_or_nothing(wh, ingesting):
        if qrels is not None:
            try:
                stored = wh.ingest_qrels(qrels, collection=collection, qrels_id=qrels_id)
            except ReplaceError as clash:  # (report has no --replace: name the command that has)
                raise clash.elsewhere() from None
            said.append(stored.message())
        if files:
            with progress_bar("ingesting runs") as bar:
                try:
                    results = wh.ingest_runs(files, collection=collection, progress=bar)
                except ReplaceError as clash:
                    raise clash.elsewhere() from None
            new = sum(r.status != "unchanged" for r in results)
            said.append(f"{new} of {len(results)} runs ingested, {len(results) - new} unchanged")
        if run_metadata is not None:
            wh.ingest_run_metadata(run_metadata, collection=collection)
        with progress_bar("building the report") as bar:
            text = wh.report(collection=collection, format=fmt.value, progress=bar, **options)  # type: ignore[arg-type]
        if output is not None:  # (before the commit: an output that cannot be written stores nothing)
            from evalwh.io.files import write_text

            write_text(output, text)
            said.append(f"wrote {output} ({len(text.encode()) / 1024:.0f} KiB)")
    if output is None:
        typer.echo(text)
    for line in said:  # (after the report: an output that fails is one line)
        typer.echo(line, err=True)


@contextlib.contextmanager
def _all_or_nothing(wh: Warehouse, ingesting: bool) -> Iterator[None]:
    """The report's ingest and the report in one transaction: if a file is refused or the
    report cannot be built or written, the warehouse stays as it was (a file this command
    created is removed again)."""
    if not ingesting:
        yield
        return
    with wh.transaction():
        yield


def _collection_name(qrels: Path) -> str:
    """``qrels.trec8.txt.gz`` -> ``qrels.trec8``: the file name without .gz and one suffix."""
    name = qrels.name.removesuffix(".gz")
    return Path(name).stem or name


def _pair(text: str) -> tuple[str, str]:
    runs = parse_runs(text) or []
    if len(runs) != 2:
        raise typer.BadParameter(f"expected RUN_A,RUN_B, got {text!r}", param_hint="--pair")
    return runs[0], runs[1]


@handle_errors
def conventions(
    collection: Annotated[
        str | None,
        typer.Option("--collection", "-c", help="Collection name (default: the warehouse's only collection)."),
    ] = None,
    measures: Annotated[
        str | None,
        typer.Option("--measures", help="Comma-separated leaderboard measures, the lead first (e.g. nDCG@10,P@10,AP)."),
    ] = None,
    baseline: Annotated[
        list[str] | None, typer.Option("--baseline", "-b", help="Baseline run, repeatable, in order.")
    ] = None,
    pool_depth: Annotated[
        int | None, typer.Option("--pool-depth", min=1, help="The judged depth (a pool's depth).")
    ] = None,
    qrels_id: Annotated[
        str | None,
        typer.Option(
            "--qrels-id",
            help="The qrels set every command uses when given no --qrels-id (default: the set named "
            "default, else the collection's only ingested set).",
        ),
    ] = None,
    clear: Annotated[
        bool, typer.Option("--clear", help="Remove the collection's conventions (with no other option).")
    ] = False,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Show or set a collection's conventions: the measures, baselines and judged depth reused by
    report, plot runs, compare and eval, and the qrels set every command uses when given none
    (an option given replaces that convention, the others stay).

    Example: evalwh conventions -c trec8 --measures P@10,AP,nDCG@10 --baseline INQ604 --pool-depth 100 --qrels-id nist
    """
    from evalwh.errors import EvalWhError
    from evalwh.present.report.defaults import Conventions, read_conventions, store_conventions
    from evalwh.warehouse import Warehouse

    if collection is None:
        collection = only_collection(db)
    setting = measures is not None or bool(baseline) or pool_depth is not None or qrels_id is not None
    if clear and setting:
        raise EvalWhError("conventions: --clear removes them all; give it alone")
    if clear or setting:
        with Warehouse(db) as wh:
            old = read_conventions(wh, collection)
            new = Conventions() if clear else Conventions(
                measures=old.measures if measures is None else tuple(m.strip() for m in measures.split(",") if m.strip()),
                baselines=tuple(baseline) if baseline else old.baselines,
                judged_depth=old.judged_depth if pool_depth is None else pool_depth,
                qrels_id=old.qrels_id if qrels_id is None else qrels_id,
            )  # fmt: skip
            current = store_conventions(wh, collection, new)
            qrels_line = _default_qrels(wh, collection, current.qrels_id)
    else:
        with Warehouse.open_reader(db) as wh:
            wh.require_collection(collection)
            current = read_conventions(wh, collection)
            qrels_line = _default_qrels(wh, collection, current.qrels_id)
    typer.echo(f"collection {collection}")
    typer.echo(f"measures      {', '.join(current.measures) if current.measures else '(from the collection)'}")
    typer.echo(f"baselines     {', '.join(current.baselines) if current.baselines else '(none: all pairs)'}")
    typer.echo(f"judged depth  {current.judged_depth if current.judged_depth is not None else '(inferred)'}")
    typer.echo(f"qrels set     {qrels_line}")


def _default_qrels(wh: Warehouse, collection: str, stored: str | None) -> str:
    """The conventions' qrels line: the stored set, else the set commands take and why."""
    from evalwh.errors import NotFoundError

    if stored is not None:
        return stored
    try:
        return f"{wh.qrels_set(collection)} (from the collection)"
    except NotFoundError:
        return "(none chosen: give --qrels-id, or store one here)"


def register(app: typer.Typer) -> None:
    """Add the report and conventions commands to the root app."""
    app.command("report")(report)
    app.command("conventions")(conventions)
