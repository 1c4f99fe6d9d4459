"""evalwh spark eval | ingest: the whole evaluation (read, check, rank, score) on Spark; write-back."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evalwh.cli._errors import handle_errors
from evalwh.cli._options import OutputFormat, OutputOption

if TYPE_CHECKING:
    from collections.abc import Callable

    import pandas as pd

app = typer.Typer(help="Evaluate on Spark: run and qrels files read, checked, ranked and scored by Spark.", no_args_is_help=True)

RunsArgument = Annotated[
    list[str],
    typer.Argument(help="Run files or globs (plain or .gz; local paths, hdfs://, s3a://, ...), one run per file."),
]
QrelsOption = Annotated[str, typer.Option("--qrels", help="The qrels file (grades are finite numbers).")]
MasterOption = Annotated[
    str | None,
    typer.Option("--master", help="Spark master URL (local[2], spark://host:7077, yarn); default: spark-submit's or local[*]."),
]
ConfOption = Annotated[
    list[str] | None,
    typer.Option("--conf", help="A Spark setting KEY=VALUE for a new session (spark.executor.memory=4g); repeatable."),
]
VerboseOption = Annotated[bool, typer.Option("--verbose", help="Keep Spark's own logging (warnings, start-up lines).")]
IgnoreExtraOption = Annotated[bool, typer.Option("--ignore-extra-fields", help="Accept run lines with more than six fields.")]


ReaderOption = Annotated[
    str,
    typer.Option(
        "--reader",
        help="Who reads the run files: evalwh (the default: evalwh's C reader on the executors, evalwh "
        "installed there, docs/spark.md; Spark SQL reads the files it leaves, and every file where it "
        "cannot be used, said in one line on standard error) or spark (Spark SQL alone, needs nothing "
        "on the executors). Same rules, messages and values.",
    ),
]


@app.command("eval")
@handle_errors
def evaluate(
    runs: Annotated[
        list[str] | None,
        typer.Argument(help="Run files or globs (plain or .gz; local paths, hdfs://, s3a://, ...), one run per file; or --runs-parquet."),
    ] = None,
    qrels: Annotated[
        str | None,
        typer.Option("--qrels", help="The qrels file (grades are finite numbers); with --runs-parquet, instead of the export's qrels."),
    ] = None,
    runs_parquet: Annotated[
        str | None,
        typer.Option(
            "--runs-parquet",
            help="An evalwh export (evalwh spark ingest --output, or evalwh export): its runs, already checked and ranked, and its qrels, read as Parquet instead of text.",
        ),
    ] = None,
    collection: Annotated[
        str | None, typer.Option("--collection", "-c", help="With --runs-parquet: the export's collection (if it holds several).")
    ] = None,
    reader: ReaderOption = "evalwh",
    measure: Annotated[
        list[str] | None,
        typer.Option("--measure", "-m", help="Measure spec (P@10, AP, nDCG@10, 'RBP(p=0.8)@10', A_p@100, all_trec); reported as typed; repeatable."),
    ] = None,
    master: MasterOption = None,
    conf: ConfOption = None,
    per_query: Annotated[bool, typer.Option("--per-query", "-q", help="One value per topic instead of means.")] = False,
    depths: Annotated[str | None, typer.Option("--depths", help="Comma-separated depths for measures given without @k.")] = None,
    rel: Annotated[int, typer.Option("--rel", "-l", help="Relevance threshold: grade >= rel is relevant (trec_eval -l).")] = 1,
    unjudged: Annotated[str, typer.Option("--unjudged", help="nonrelevant (assumed) or condensed (removed; trec_eval -J).")] = "nonrelevant",
    depth_cap: Annotated[int | None, typer.Option("--depth-cap", "-M", min=1, help="Keep the first N documents per topic (trec_eval -M).")] = None,
    float32_ties: Annotated[bool, typer.Option("--float32-ties", help="Order on scores rounded to float32, as trec_eval <= 9.0.8.")] = False,
    averaging: Annotated[
        str, typer.Option("--averaging", help="default, trec_eval_c (trec_eval -c) or trec_eval_default (topics the run has).")
    ] = "default",
    ignore_extra_fields: IgnoreExtraOption = False,
    fmt: Annotated[
        str,
        typer.Option("--format", "-f", help="table, csv, json, trec (trec_eval's layout) or parquet (a directory of per-topic values, partitioned by measure, written by Spark; give --output DIR)."),
    ] = "table",
    output: OutputOption = None,
    verbose: VerboseOption = False,
    exclude: Annotated[
        list[Path] | None,
        typer.Option("--exclude", help="An exclusion file ('topic docid' a line, local); those documents leave every run before ranking (methods §17). Repeatable."),
    ] = None,
    exclude_identical_ids: Annotated[
        bool, typer.Option("--exclude-identical-ids", help="Exclude a document whose id equals its topic's id (BEIR's ArguAna, Quora).")
    ] = False,
) -> None:
    """Evaluate run files against a qrels file on Spark, with the warehouse's checks and SQL.

    Nothing is stored; the numbers, measure names and layouts are those of evalwh eval
    --qrels. On a laptop give --master 'local[2]' (the default without spark-submit is
    local[*]); on a cluster give its master URL, or run it with spark-submit (docs/spark.md).
    --format parquet --output DIR has the executors write every per-topic value as Parquet,
    partitioned by measure. --runs-parquet DIR evaluates an export written by evalwh spark
    ingest (runs checked and ranked once, read as columns). Qrels lines labelled -100, and
    the pairs of --exclude files, are excluded documents: they leave the runs before ranking
    (methods §17), and what each run lost is said on standard error.

    Example: evalwh spark eval --qrels qrels.txt 'runs/*.gz' -m P@10 -m AP --master 'local[2]'
    """
    from evalwh.cli.eval import DEFAULT_MEASURES, _depths
    from evalwh.errors import MetricParamError
    from evalwh.spark import export_rows
    from evalwh.spark.executors import reader_here
    from evalwh.spark.files import READERS
    from evalwh.spark.session import is_local, lean_for
    from evalwh.store.context import Averaging, Unjudged

    if runs_parquet is not None and runs:
        raise typer.BadParameter("give run files or --runs-parquet DIR, not both", param_hint="RUNS")
    if runs_parquet is None and not runs:
        raise typer.BadParameter("give run files (or --runs-parquet DIR)", param_hint="RUNS")
    if runs_parquet is None and qrels is None:
        raise typer.BadParameter("the run files are evaluated against a qrels file: give --qrels", param_hint="--qrels")
    if runs_parquet is None and collection is not None:
        raise typer.BadParameter("--collection names a collection of --runs-parquet's export", param_hint="--collection")
    if reader not in READERS:
        raise typer.BadParameter(f"{reader!r}: expected one of {', '.join(READERS)}", param_hint="--reader")
    if runs_parquet is not None and (exclude or exclude_identical_ids):
        raise typer.BadParameter(
            "an export's runs were filtered when they were stored (evalwh exclusions); --exclude goes with run files",
            param_hint="--exclude",
        )
    try:
        unjudged_mode, averaging_mode = Unjudged(unjudged), Averaging(averaging)
    except ValueError as error:
        raise MetricParamError(str(error)) from None
    formats = ("table", "csv", "json", "parquet", "trec")
    if fmt not in formats:
        raise MetricParamError(f"--format {fmt!r}: expected one of {', '.join(formats)}")
    if fmt == "parquet" and output is None:
        raise MetricParamError("--format parquet writes a directory of per-topic values; give --output DIR")
    measures = measure or DEFAULT_MEASURES
    specs = _specs(measures, _depths(depths)) if fmt == "trec" else measures
    options = dict(
        depths=_depths(depths), rel=rel, unjudged=unjudged_mode, depth_cap=depth_cap,
        float32_ties=float32_ties, averaging=averaging_mode, typed_names=True,
    )
    # what the JVM itself goes through (every line, or only the judged rows) chooses its options:
    # Spark SQL reads every line where the C reader cannot be used (excluded documents; a local
    # master, whose executors are this interpreter, without it)
    c_reader = not (exclude or exclude_identical_ids) and (not is_local(master) or reader_here())
    lean = lean_for(reader, None if runs_parquet is None else export_rows(runs_parquet, collection), c_reader=c_reader)
    with _spark(master, conf, verbose, lean) as (session, progress):
        from evalwh.spark import build_context, evaluate, measure_values, parse_options
        from evalwh.spark.files import load_qrels, load_runs

        if runs_parquet is not None:
            name = _load_export(session, runs_parquet, collection, qrels, progress)
        else:
            name = "spark"
            judgments = load_qrels(session, qrels, collection=name)
            progress(f"read {judgments:,} judgments")
            if exclude:
                from evalwh.spark.files import load_exclusions

                progress(f"read {load_exclusions(session, exclude):,} excluded pairs")
            loaded = load_runs(
                session, runs, collection=name, ignore_extra_fields=ignore_extra_fields, progress=progress,
                reader=reader, rel=rel, float32_ties=float32_ties, identical_ids=exclude_identical_ids,
            )  # fmt: skip
            typer.echo(loaded.reader_line, err=True)  # (who read the run files, and why)
            for run_id, lost in loaded.excluded.items():
                typer.echo(f"note: exclusions removed {lost:,} lines from run {run_id}", err=True)
        if fmt == "parquet":
            from evalwh.spark.writeback import write_values

            parsed, context = parse_options(specs, options)
            build_context(session, name, None, context)
            written = write_values(measure_values(session, parsed, typed_names=True), output)
            typer.echo(f"wrote the per-topic values of {len(parsed)} measures to {output} in {written} files", err=True)
            return
        frame = evaluate(session, specs, collection=name, **options)
        progress(f"ranked, judged and scored: {len(frame):,} values")
    source = f"qrels {Path(qrels).name}" if qrels is not None else f"qrels of {Path(runs_parquet).name}"
    if frame.empty:
        from evalwh.cli.eval import _no_topics
        from evalwh.errors import EvalWhError

        raise EvalWhError(_no_topics(source, rel, averaging_mode, None))
    title = options_line(source, rel, unjudged_mode.value, averaging_mode.value, depth_cap, float32_ties)
    _print(frame, specs, per_query, fmt, output, title, context_columns(options))


@app.command("ingest")
@handle_errors
def ingest(
    runs: RunsArgument,
    qrels: QrelsOption,
    collection: Annotated[str, typer.Option("--collection", "-c", help="The collection the export holds.")],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="A new or empty directory for the export (the executors write into it).")
    ],
    qrels_id: Annotated[str, typer.Option("--qrels-id", help="The qrels set's name.")] = "default",
    master: MasterOption = None,
    conf: ConfOption = None,
    ignore_extra_fields: IgnoreExtraOption = False,
    verbose: VerboseOption = False,
    exclude: Annotated[
        list[Path] | None,
        typer.Option("--exclude", help="An exclusion file ('topic docid' a line, local); those documents leave every run before ranking (methods §17). Repeatable."),
    ] = None,
    exclude_identical_ids: Annotated[
        bool, typer.Option("--exclude-identical-ids", help="Exclude a document whose id equals its topic's id (BEIR's ArguAna, Quora).")
    ] = False,
) -> None:
    """Read, check and rank run and qrels files on Spark; write them as an evalwh export.

    The directory has evalwh export's layout (format 2: Parquet partitioned by collection,
    manifest.json with row counts and checksums); evalwh import DIR loads it into a
    warehouse without parsing the run files again. A bad file gets the message evalwh
    ingest gives, and nothing is written. Qrels lines labelled -100, the pairs of --exclude
    files and, with --exclude-identical-ids, documents whose id is their topic's are
    excluded documents (methods §17): they leave the runs before ranking, and the export
    carries them with their sources and each run's losses, as evalwh ingest and evalwh
    exclusions store them.

    Example: evalwh spark ingest --qrels qrels.txt 'runs/*.gz' --collection trec8 --output trec8.export
    """
    with _spark(master, conf, verbose) as (session, progress):
        from evalwh.spark.files import load_qrels, load_runs
        from evalwh.spark.writeback import qrels_source, write_export

        from evalwh.spark.exclusions import exclusion_sources, load_exclusions

        judgments = load_qrels(session, qrels, collection=collection, qrels_id=qrels_id)
        progress(f"read {judgments:,} judgments")
        labelled = [pairs for origin, _, _, pairs in exclusion_sources(session) if origin == "qrels"]
        if labelled:  # (as evalwh ingest qrels says it)
            typer.echo(
                f"note: {labelled[0]:,} lines labelled -100 are excluded documents, not grades: they left the"
                " set for the collection's exclusions (methods §17)",
                err=True,
            )
        if exclude:
            progress(f"read {load_exclusions(session, exclude):,} excluded pairs")
        loaded = load_runs(
            session, runs, collection=collection, ignore_extra_fields=ignore_extra_fields, progress=progress,
            identical_ids=exclude_identical_ids,
        )  # fmt: skip
        for run_id, lost in loaded.excluded.items():
            typer.echo(f"note: exclusions removed {lost:,} lines from run {run_id}", err=True)
        manifest = write_export(
            session, output, collection=collection, qrels_id=qrels_id, qrels_source=qrels_source(session, [qrels])
        )
    rows = manifest["tables"]["run_results"]["rows"]
    typer.echo(
        f"wrote {len(loaded.run_ids):,} runs ({rows:,} ranked lines) and {judgments:,} judgments of "
        f"collection {collection!r} to {output}; load them with: evalwh import {output}",
        err=True,
    )


def _load_export(session: object, directory: str, collection: str | None, qrels: str | None, progress: Callable[[str], None]) -> str:
    """Register an export's runs (and its qrels, or the --qrels file's) as the evaluation's views.

    Returns the collection evaluated: the export's one collection, or ``collection``.
    """
    from evalwh.errors import NotFoundError
    from evalwh.spark import CONTEXT_TABLES, register_export
    from evalwh.spark.files import load_qrels
    from evalwh.store.transfer import read_manifest

    held = list(read_manifest(Path(directory))["collections"])
    if collection is None:
        if len(held) != 1:
            raise NotFoundError(f"{directory}: the export holds collections {', '.join(held)}; name one with --collection")
        collection = held[0]
    elif collection not in held:
        raise NotFoundError(f"{directory}: the export holds no collection {collection!r} (it has: {', '.join(held)})")
    tables = [t for t in CONTEXT_TABLES if qrels is None or t != "qrels"]
    register_export(session, directory, tables)
    if qrels is not None:
        load_qrels(session, qrels, collection=collection)
    progress(f"registered the export {directory} (collection {collection!r})")
    return collection


def options_line(name: str, rel: int, unjudged: str, averaging: str, depth_cap: int | None, float32_ties: bool) -> str:
    """The line above the table, as evalwh eval prints it (cli/eval.py)."""
    return (
        f"{name}, rel >= {rel}, unjudged {unjudged}, averaging {averaging}"
        + (f", depth cap {depth_cap}" if depth_cap else "")
        + (", float32 ties" if float32_ties else "")
    )


def context_columns(options: dict[str, object]) -> dict[str, object]:
    """The option columns evalwh eval adds to its rows (qrels_id, rel, unjudged, ...)."""
    from evalwh.spark import context_options

    return context_options(options).columns()


def _specs(measures: list[str], depths: list[int] | None) -> list[str]:
    """The measures as trec_eval's layout names them (as evalwh eval --format trec does)."""
    from evalwh.measures.evaluation import parse_measures
    from evalwh.store.context import Options

    return [str(m) for m in parse_measures(measures, depths, Options())]


class _spark:
    """The session for one command, with a progress line on a terminal; Spark errors as one line."""

    def __init__(self, master: str | None, conf: list[str] | None, verbose: bool, lean_jvm: bool = True) -> None:
        from evalwh.errors import MetricParamError

        self.master, self.verbose, self.lean_jvm = master, verbose, lean_jvm
        self.config = {}
        for item in conf or []:
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise MetricParamError(f"--conf {item!r}: expected KEY=VALUE, e.g. spark.executor.memory=4g")
            self.config[key.strip()] = value

    def __enter__(self) -> tuple[object, Callable[[str], None]]:
        from evalwh.cli._progress import interactive

        self.status = None
        if interactive():
            from rich.console import Console

            self.status = Console(stderr=True).status("starting Spark")
            self.status.start()
        try:
            from evalwh.spark.session import start

            session = start(self.master, verbose=self.verbose, config=self.config, lean_jvm=self.lean_jvm)
        except BaseException:
            self._stop()
            raise
        self._note(f"Spark {session.version} on {session.sparkContext.master}")
        return session, self._note

    def _note(self, text: str) -> None:
        if self.status is not None:
            self.status.update(text)

    def _stop(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None

    def __exit__(self, kind, error, traceback) -> bool:  # type: ignore[no-untyped-def]
        self._stop()
        from py4j.protocol import Py4JJavaError
        from pyspark.errors import PySparkException

        from evalwh.errors import EvalWhError

        if isinstance(error, Py4JJavaError):  # a Java exception that pyspark did not convert
            text = str(error.java_exception.getMessage() or error.java_exception.toString())
            raise EvalWhError(f"Spark: {text.strip().splitlines()[0]}") from error
        if isinstance(error, PySparkException):
            # one line, as every evalwh error (--debug shows the Java side)
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise EvalWhError(f"Spark: {first}") from error
        return False


def _print(
    frame: pd.DataFrame, specs: list[str], per_query: bool, fmt: str, output: Path | None, title: str,
    columns: dict[str, object],
) -> None:
    from evalwh.cli._render import render
    from evalwh.measures.direct import COLLECTION
    from evalwh.spark import means

    averaged = means(frame)
    if fmt == "trec":
        from evalwh.measures.trec_format import format_trec

        text = "".join(
            format_trec(frame if per_query else None, averaged, run_id, specs)
            for run_id in dict.fromkeys(averaged["run_id"])
        )
        if output:
            from evalwh.io.files import write_text

            write_text(output, text)
        else:
            typer.echo(text, nl=False)
        return
    shown = frame if per_query else averaged
    if fmt != "table":
        # the columns of evalwh eval --qrels: the collection, the values, the options
        shown = shown.copy()
        shown.insert(0, "collection_id", COLLECTION)
        for key, value in columns.items():
            shown[key] = value
        render(shown, OutputFormat(fmt), output)
        return
    index = ["run_id", "query_id"] if per_query else ["run_id"]
    wide = shown.pivot_table(index=index, columns="measure", values="value", sort=False, dropna=False)
    wide = wide[list(dict.fromkeys(shown["measure"]))].reset_index()
    wide.columns.name = None
    render(wide, OutputFormat.table, output, title=title, long_form=shown[[*index, "measure", "value"]])
