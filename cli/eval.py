"""evalwh eval | metrics: evaluate runs, list the metrics."""

from __future__ import annotations

import enum
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from evalwh.cli._errors import handle_errors
from evalwh.cli._options import (
    DEFAULT_DB,
    CollectionOption,
    DbOption,
    FillOption,
    OutputFormat,
    OutputOption,
    default_collection,
    only_collection,
)
from evalwh.cli._render import render

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.store.context import Averaging

DEFAULT_MEASURES = ["P@10", "AP", "nDCG@10", "bpref", "A_p@10"]


class EvalFormat(str, enum.Enum):
    """Output formats of ``evalwh eval``: the table formats plus trec_eval's own."""

    table = "table"
    csv = "csv"
    json = "json"
    parquet = "parquet"
    trec = "trec"


def _depths(text: str | None) -> list[int] | None:
    from evalwh.errors import MetricParamError

    if not text:
        return None
    try:
        depths = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise MetricParamError(f"--depths {text!r}: expected comma-separated integers, e.g. 10,30,100") from None
    if not depths or min(depths) < 1:
        raise MetricParamError(f"--depths {text!r}: depths must be positive integers")
    return depths


@handle_errors
def evaluate(
    files: Annotated[
        list[Path] | None,
        typer.Argument(help="Run files to evaluate directly against --qrels (plain or .gz); nothing is stored."),
    ] = None,
    collection: Annotated[
        str | None,
        typer.Option("--collection", "-c", help="Collection name inside the warehouse (default: its only collection)."),
    ] = None,
    qrels: Annotated[
        Path | None,
        typer.Option("--qrels", help="A qrels file (or irds:DATASET_ID, an ir_datasets dataset's qrels): evaluate the run files given as arguments against it, as trec_eval does."),
    ] = None,
    measure: Annotated[
        list[str] | None,
        typer.Option("--measure", "-m", help="Measure spec in ir_measures' grammar (P@10, AP, 'P(rel=2)@10', 'nDCG(dcg=exp-log2)@10', ERR@20, Judged@10, A_p@100, all_trec); reported as typed; repeatable."),
    ] = None,
    run: Annotated[list[str] | None, typer.Option("--run", "-r", help="Evaluate only this run; repeatable.")] = None,
    per_query: Annotated[bool, typer.Option("--per-query", "-q", help="One value per topic instead of means.")] = False,
    depths: Annotated[str | None, typer.Option("--depths", help="Comma-separated depths for measures given without @k.")] = None,
    qrels_id: Annotated[
        str | None,
        typer.Option("--qrels-id", help="Qrels set to evaluate against (default: the collection's, evalwh conventions)."),
    ] = None,
    fill: FillOption = None,
    rel: Annotated[int, typer.Option("--rel", "-l", help="Relevance threshold: grade >= rel is relevant (trec_eval -l).")] = 1,
    unjudged: Annotated[
        str, typer.Option("--unjudged", help="nonrelevant (assumed) or condensed (removed; trec_eval -J).")
    ] = "nonrelevant",
    depth_cap: Annotated[int | None, typer.Option("--depth-cap", "-M", min=1, help="Keep the first N documents per topic (trec_eval -M).")] = None,
    float32_ties: Annotated[
        bool, typer.Option("--float32-ties", help="Order on scores rounded to float32, as trec_eval <= 9.0.8.")
    ] = False,
    averaging: Annotated[
        str,
        typer.Option(
            "--averaging",
            help="default (topics with relevant docs; missing topic = empty ranking), "
            "trec_eval_c (trec_eval -c) or trec_eval_default (topics the run has).",
        ),
    ] = "default",
    store: Annotated[bool, typer.Option("--store", help="Keep the results in the warehouse's results table.")] = False,
    into: Annotated[
        Path | None,
        typer.Option("--into", help="With --qrels: also store the qrels (set 'default') and the run files in this warehouse file, in --collection, and evaluate from it, in one transaction (a failure stores nothing); the fast way to build a warehouse."),
    ] = None,
    fmt: Annotated[EvalFormat, typer.Option("--format", "-f", help="table, csv, json, parquet or trec (trec_eval's layout).")] = EvalFormat.table,
    output: OutputOption = None,
    db: DbOption = DEFAULT_DB,
    exclude: Annotated[
        list[Path] | None,
        typer.Option("--exclude", help="With --qrels: an exclusion file ('topic docid' a line); those documents leave every run before ranking, ranks closed up (methods §17). Repeatable."),
    ] = None,
    exclude_identical_ids: Annotated[
        bool,
        typer.Option("--exclude-identical-ids", help="With --qrels: exclude a document whose id equals its topic's id (BEIR's ArguAna, Quora)."),
    ] = False,
) -> None:
    """Evaluate the runs of a collection (one row per run, or per topic with --per-query), or run files directly.

    With --qrels, the run files given as arguments are evaluated against that qrels file
    without a warehouse, as trec_eval does (same numbers, same strict input checks).

    Qrels lines labelled -100 are excluded documents, not grades (ir_datasets' and BRIGHT's
    convention): they leave the judgments, and the runs lose those documents before ranking,
    as with --exclude; what each run lost is said on standard error (methods §17).

    With --qrels and --into W, the qrels and run files are also stored in the warehouse W
    (as `ingest qrels` and `ingest runs` store them, in one transaction) and evaluated from
    it, in one process: the same numbers, and a warehouse for every later evaluation.

    Example: evalwh eval --collection trec8 -m P@10 -m AP -m nDCG@10 -m A_p@100
    Example: evalwh eval --qrels qrels.txt runs/* -m P@10 -m AP --format trec
    Example: evalwh eval --qrels qrels.txt runs/* --into trec8.duckdb -c trec8 -m P@10 -m AP
    Example: evalwh eval -c trec8 --qrels-id depth10 --fill full -m AP -m 'A_p(source=human)@10'
    """
    from evalwh.errors import EvalWhError, MetricParamError
    from evalwh.store.context import Averaging, Unjudged

    try:
        unjudged_mode, averaging_mode = Unjudged(unjudged), Averaging(averaging)
    except ValueError as error:
        raise MetricParamError(str(error)) from None
    if (exclude or exclude_identical_ids) and qrels is None:
        raise MetricParamError(
            "--exclude and --exclude-identical-ids go with --qrels; a collection's exclusions are stored: "
            "evalwh exclusions add FILE / evalwh exclusions identical-ids"
        )
    if into is not None and qrels is None:
        raise MetricParamError("--into stores what --qrels evaluates: evalwh eval --qrels QRELS RUN ... --into W -c NAME")
    if collection is not None and qrels is not None and into is None:
        raise MetricParamError("give either --collection (a warehouse) or --qrels with run files, not both")
    if qrels is not None:
        if not files:
            raise MetricParamError("--qrels needs run files: evalwh eval --qrels QRELS RUN [RUN ...]")
        if run or store or qrels_id is not None:
            raise MetricParamError("--run, --store and --qrels-id apply to a warehouse (--collection), not to --qrels")
        if fill:
            raise MetricParamError("--fill composes stored qrels sets (--qrels-id); it does not apply to --qrels")
    elif files:
        raise MetricParamError("run files as arguments go with --qrels; ingest them to evaluate a collection")
    elif collection is None:
        collection = only_collection(db)
    measures = measure or DEFAULT_MEASURES
    options = dict(
        depths=_depths(depths),
        rel=rel,
        unjudged=unjudged_mode,
        depth_cap=depth_cap,
        float32_ties=float32_ties,
        averaging=averaging_mode,
    )
    told: dict[str, None] = {}  # lines about exclusions, said once on standard error

    if qrels is not None and into is None:
        from evalwh.measures.direct import evaluate_files

        excluding = dict(exclusions=exclude or [], identical_ids=exclude_identical_ids, said=told.setdefault)

        def evaluated(specs: list[str], by_topic: bool, **changed: Any) -> pd.DataFrame:
            given = {**options, **changed}
            return evaluate_files(qrels, files, specs, per_query=by_topic, typed_names=True, **given, **excluding)  # type: ignore[arg-type]

        def grades() -> tuple[int, object] | None:
            return None

        name = f"qrels {qrels.name}"
    else:
        from evalwh.warehouse import Warehouse

        if into is not None:  # the qrels and runs stored first, in this process (_ingest_into)
            wh, (transaction, said), collection, run = _ingest_into(
                into, qrels, files, collection, exclude or [], exclude_identical_ids  # type: ignore[arg-type]
            )
            qrels_id = "default"  # (the set --into stores)
        else:
            # a reader unless --store: any number of evaluations at once, also on a read-only disk
            wh = Warehouse(db) if store else Warehouse.open_reader(db)
            try:  # (no --qrels-id: the collection's default set, named in what is printed)
                qrels_id = wh.qrels_set(collection, qrels_id)
                if not measure:  # the collection's conventions (evalwh conventions), else ours
                    from evalwh.present.report.defaults import read_conventions

                    measures = list(read_conventions(wh, collection).measures or measures)
            except BaseException:
                wh.close()
                raise
        stored = dict(collection=collection, runs=run, qrels_id=qrels_id, fill=fill or [], **options)

        def evaluated(specs: list[str], by_topic: bool) -> pd.DataFrame:
            frame = wh.evaluate(specs, per_query=by_topic, store=store, typed_names=True, **stored)
            if into is None:
                return frame
            from evalwh.measures.direct import in_given_order

            return in_given_order(frame, run)  # (the files' order, as --qrels alone gives it)

        def grades() -> tuple[int, object] | None:
            row = wh.con.execute(
                "SELECT count(DISTINCT query_id), max(relevance) FROM qrels WHERE collection_id = ? AND qrels_id = ?",
                [collection, qrels_id],
            ).fetchone()
            return (int(row[0]), row[1]) if row else None

        name = f"{collection}: qrels {'+'.join([qrels_id, *(fill or [])])}"

    def compute(specs: list[str], by_topic: bool) -> pd.DataFrame:
        frame = evaluated(specs, by_topic)
        if frame.empty:
            raise EvalWhError(_no_topics(name, rel, averaging_mode, grades()))
        return frame
    try:
        if (qrels is None or into is not None) and not float32_ties:
            _float32_note(wh, collection, run, measures, per_query, stored)  # type: ignore[arg-type]
        if fmt is EvalFormat.trec:
            _print_trec(compute, measures, per_query, options["depths"], output)  # type: ignore[arg-type]
            frame = None
        else:
            frame = compute(measures, per_query)
            if into is not None:  # written before the commit: what fails stores nothing
                _show(frame, fmt, output, name, rel, unjudged_mode, averaging_mode, depth_cap, float32_ties, per_query)
        if into is not None:
            _commit(wh, transaction)
            typer.echo(said, err=True)
    except BaseException:
        if into is not None:
            transaction.__exit__(*sys.exc_info())  # rolled back
        raise
    finally:
        if qrels is None or into is not None:
            wh.__exit__(*sys.exc_info())  # a failed first --store removes the file it created
    if qrels is not None and into is None and not float32_ties:
        _files_float32_note(frame, evaluated, measures, per_query, [qrels, *files])
    for line in told:
        typer.echo(f"note: {line}", err=True)
    if frame is not None and into is None:
        _show(frame, fmt, output, name, rel, unjudged_mode, averaging_mode, depth_cap, float32_ties, per_query)


def _commit(wh: Any, transaction: Any) -> None:
    """End ``--into``'s transaction with its commit, then write it into the file as the ingest
    commands do (the checkpoint without the vacuum of the appended row groups)."""
    from evalwh.store.ingest import bulk_session, checkpoint

    transaction.__exit__(None, None, None)
    with bulk_session(wh, vacuum=False):
        checkpoint(wh)


def _show(
    frame: pd.DataFrame, fmt: EvalFormat, output: Path | None, name: str, rel: int, unjudged_mode: Any,
    averaging_mode: Any, depth_cap: int | None, float32_ties: bool, per_query: bool,
) -> None:
    """Write the evaluation in a format other than trec's: to standard output or ``output``."""
    if fmt is not EvalFormat.table:
        render(frame, OutputFormat(fmt.value), output)
        return
    title = (
        f"{name}, rel >= {rel}, unjudged {unjudged_mode.value}, "
        f"averaging {averaging_mode.value}"
        + (f", depth cap {depth_cap}" if depth_cap else "")
        + (", float32 ties" if float32_ties else "")
    )
    index = ["run_id", "query_id"] if per_query else ["run_id"]
    wide = frame.pivot_table(index=index, columns="measure", values="value", sort=False, dropna=False)
    order = list(dict.fromkeys(frame["measure"]))
    wide = wide[order].reset_index()
    wide.columns.name = None
    long_form = frame[[*index, "measure", "value"]]
    render(wide, OutputFormat.table, output, title=title, long_form=long_form)


def _ingest_into(
    into: Path, qrels: Path, files: list[Path], collection: str | None, exclude: list[Path], identical_ids: bool
) -> tuple[Any, Any, str, list[str]]:
    """``eval --qrels QRELS RUN... --into W``: store the qrels and runs in W, in a transaction
    left open.

    Returns the open warehouse (the caller closes it); the open transaction (the caller ends
    it: committed once the evaluation is written, rolled back if anything fails, so that a
    failed command stores nothing) with what was stored, said as ``evalwh ingest`` says it (on
    standard error, once committed); the collection; and the run ids in the files' order.
    """
    from evalwh.cli._progress import progress_bar
    from evalwh.errors import MetricParamError
    from evalwh.io import irds
    from evalwh.io.formats import require_file
    from evalwh.store.ingest import ingest_qrels_and_runs, keep_freed_memory
    from evalwh.warehouse import Warehouse

    if not irds.is_irds(qrels):  # before opening: a mistyped name must not create a warehouse file
        require_file(qrels)
    for file in [*files, *exclude]:
        require_file(file)
    if collection is None:
        if not into.exists():
            raise MetricParamError("--into a new warehouse needs --collection NAME (the collection to store the runs in)")
        collection = only_collection(into)
    wh = Warehouse(into)
    transaction = wh.transaction()
    try:
        keep_freed_memory(wh)  # this process ends with the command
        transaction.__enter__()  # (committed by the caller once the output is written)
        with progress_bar("ingesting runs") as progress:
            stored, results = ingest_qrels_and_runs(
                wh, qrels, files, collection=collection, progress=progress, exclusions=exclude,
                identical_ids=identical_ids,
            )  # fmt: skip
    except BaseException:
        transaction.__exit__(*sys.exc_info())
        wh.__exit__(*sys.exc_info())  # (a new file that holds nothing is removed)
        raise
    new = sum(r.status != "unchanged" for r in results)
    said = (
        f"{into}: {stored.message()}; {new} of {len(results)} runs ingested or replaced, "
        f"{len(results) - new} unchanged"
    )
    from evalwh.store.ingest import exclusions

    if exclusions.active(wh, collection):  # what the exclusions removed from each run (methods §17)
        lost = exclusions.losses(wh, collection, runs=[r.name for r in results])
        said = "\n".join([said, *(f"note: {line}" for line in exclusions.losses_lines(lost))])
    return wh, (transaction, said), collection, [r.name for r in results]


def _float32_note(
    wh: Any,
    collection: str,
    runs: list[str] | None,
    measures: list[str],
    per_query: bool,
    stored: dict[str, Any],
) -> None:
    """Say once, on standard error, which runs' printed values trec_eval 9's float32 ties change.

    Only the runs whose order float32 scores change (stored at ingest) are evaluated again,
    both ways, on the measures shown (per topic with --per-query); a run is named when one
    of its values prints differently at four decimals (issue #54: a note about every
    reordered list was true only in a corner case). ``--float32-ties`` prints those values.
    """
    from evalwh.present.report.ties import printed_changes, printed_ties_note

    options = {k: v for k, v in stored.items() if k not in ("collection", "runs")}
    changed, reordered = printed_changes(wh, collection, runs, measures, per_query=per_query, **options)
    note = printed_ties_note(changed, reordered)
    if note:
        typer.echo(f"note: {note}", err=True)


NOTE_FILES_BYTES = 64 << 20
"""The direct path's float32 note reads its files a second time: only up to this many bytes in all."""


def _files_float32_note(
    frame: pd.DataFrame | None, evaluated: Any, measures: list[str], per_query: bool, paths: list[Path]
) -> None:
    """The float32 note of ``eval --qrels`` where its quick path declined the input (the direct path).

    The files are evaluated again in trec_eval 9's float32 order, on the measures shown (per
    topic with --per-query), and a run is named when one of its values prints differently at
    four decimals, as the quick path and the warehouse name them. The direct path stores no
    run, so nothing says beforehand which runs float32 reorders: the second evaluation costs
    as much as the first. It is made only where the files can be read again and are small
    (regular files of :data:`NOTE_FILES_BYTES` in all): standard input or a pipe cannot be
    read twice, and a large input would pay twice for a note (``--float32-ties`` prints
    trec_eval 9's values; ``eval --into`` stores the runs and names the reordered ones).
    """
    import stat

    from evalwh.present.report.ties import changed_values, printed_ties_note

    total = 0
    for path in paths:
        try:
            info = path.stat() if str(path) != "-" else None
        except OSError:
            return
        if info is None or not stat.S_ISREG(info.st_mode):
            return
        total += info.st_size
    if total > NOTE_FILES_BYTES:
        return

    as_given = frame if frame is not None else evaluated(measures, per_query)
    as_float32 = evaluated(measures, per_query, float32_ties=True)
    changed = changed_values(as_given, as_float32)
    pairs = [(str(r), int(v)) for r, v in zip(changed["run_id"], changed["values"], strict=True)]
    note = printed_ties_note(pairs, len(pairs), warehouse=False)
    if note:
        typer.echo(f"note: {note}", err=True)


def _no_topics(name: str, rel: int, averaging: Averaging, grades: tuple[int, object] | None) -> str:
    """Why an evaluation has no row: which topics the averaging keeps, and what the qrels hold."""
    from evalwh.store.context import Averaging

    if averaging is Averaging.default:
        held = ""
        if grades is not None:
            topics, top = grades
            held = f"; its {topics:,} topics have grades up to {top}" if topics else "; it holds no judgment"
        return (
            f"{name}: every topic was dropped: no topic has a document of relevance >= {rel} (--rel){held}, "
            "and the default averaging scores only topics with a relevant document; "
            "lower --rel, or give --averaging trec_eval_c to score every topic"
        )
    if averaging is Averaging.trec_eval_default:
        return (
            f"{name}: every topic was dropped: the runs retrieved nothing for any topic of the qrels, "
            "and --averaging trec_eval_default scores only topics the run retrieved for; "
            "check that the topic ids of runs and qrels match"
        )
    return f"{name}: no topic to score: the qrels hold no topic, or no run was evaluated"


def _print_trec(
    compute: Callable[[list[str], bool], pd.DataFrame],
    measures: list[str],
    per_query: bool,
    depths: list[int] | None,
    output: Path | None,
) -> None:
    """trec_eval's output for every run, one block per run."""
    import sys

    from evalwh.store.context import Options
    from evalwh.measures.evaluation import parse_measures
    from evalwh.measures.trec_format import format_trec

    specs = [str(m) for m in parse_measures(measures, depths, Options())]
    means = compute(specs, False)
    rows = compute(specs, True) if per_query else None
    text = "".join(format_trec(rows, means, run_id, specs) for run_id in dict.fromkeys(means["run_id"]))
    if output:
        from evalwh.io.files import write_text

        write_text(output, text)
    else:
        sys.stdout.write(text)


@handle_errors
def metrics(
    markdown: Annotated[bool, typer.Option("--markdown", help="Print the README's metric table.")] = False,
    fmt: Annotated[OutputFormat, typer.Option("--format", "-f", help="table, csv, json or parquet.")] = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """List every metric evalwh computes, with parameters, aliases, trec_eval and ir_measures names.

    Example: evalwh metrics
    """
    from evalwh.measures.catalog import metric_table, metric_table_markdown

    if markdown:
        typer.echo(metric_table_markdown(), nl=False)
        return
    render(metric_table(), fmt, output, title="metrics")


def register(app: typer.Typer) -> None:
    """Add the commands of this module to the root app."""
    app.command("eval")(evaluate)
    app.command("metrics")(metrics)
    app.command("unjudged")(unjudged)


@handle_errors
@default_collection
def unjudged(
    collection: CollectionOption = None,
    qrels_id: Annotated[
        str | None,
        typer.Option(
            "--qrels-id", help="Qrels set that decides what is judged (default: the collection's, evalwh conventions)."
        ),
    ] = None,
    fill: FillOption = None,
    max_rank: Annotated[int, typer.Option("--max-rank", min=1, help="Deepest rank reported.")] = 1000,
    ranks: Annotated[
        str | None, typer.Option("--ranks", help="Only these ranks, comma-separated (e.g. 1,10,100,1000).")
    ] = None,
    fmt: Annotated[OutputFormat, typer.Option("--format", "-f", help="table, csv, json or parquet.")] = OutputFormat.table,
    output: OutputOption = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Show how incomplete a collection is: the unjudged share of all runs' documents at each rank.

    Example: evalwh unjudged --collection trec8 --ranks 1,10,100,125,1000
    """
    from evalwh.warehouse import Warehouse

    wanted = _depths(ranks)
    with Warehouse.open_reader(db) as wh:
        frame = wh.unjudged(collection=collection, qrels_id=qrels_id, max_rank=max_rank, ranks=wanted, fill=fill or [])
    render(frame, fmt, output, title=f"unjudged share per rank, {collection}")
