"""evalwh spark eval: the whole evaluation (read, check, rank, score) on Spark."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from evalwh.cli._errors import handle_errors
from evalwh.cli._options import OutputFormat, OutputOption

if TYPE_CHECKING:
    import pandas as pd

app = typer.Typer(help="Evaluate on Spark: run and qrels files read, checked, ranked and scored by Spark.", no_args_is_help=True)


@app.command("eval")
@handle_errors
def evaluate(
    runs: Annotated[
        list[str],
        typer.Argument(help="Run files or globs (plain or .gz; local paths, hdfs://, s3a://, ...), one run per file."),
    ],
    qrels: Annotated[str, typer.Option("--qrels", help="The qrels file (grades are finite numbers).")],
    measure: Annotated[
        list[str] | None,
        typer.Option("--measure", "-m", help="Measure spec (P@10, AP, nDCG@10, 'RBP(p=0.8)@10', A_p@100, all_trec); repeatable."),
    ] = None,
    master: Annotated[
        str | None,
        typer.Option("--master", help="Spark master URL (local[*], spark://host:7077, yarn); default: spark-submit's or local[*]."),
    ] = None,
    per_query: Annotated[bool, typer.Option("--per-query", "-q", help="One value per topic instead of means.")] = False,
    depths: Annotated[str | None, typer.Option("--depths", help="Comma-separated depths for measures given without @k.")] = None,
    rel: Annotated[int, typer.Option("--rel", "-l", help="Relevance threshold: grade >= rel is relevant (trec_eval -l).")] = 1,
    unjudged: Annotated[str, typer.Option("--unjudged", help="nonrelevant (assumed) or condensed (removed; trec_eval -J).")] = "nonrelevant",
    depth_cap: Annotated[int | None, typer.Option("--depth-cap", "-M", help="Keep the first N documents per topic (trec_eval -M).")] = None,
    float32_ties: Annotated[bool, typer.Option("--float32-ties", help="Order on scores rounded to float32, as trec_eval <= 9.0.8.")] = False,
    averaging: Annotated[
        str, typer.Option("--averaging", help="default, trec_eval_c (trec_eval -c) or trec_eval_default (topics the run has).")
    ] = "default",
    ignore_extra_fields: Annotated[bool, typer.Option("--ignore-extra-fields", help="Accept run lines with more than six fields.")] = False,
    fmt: Annotated[str, typer.Option("--format", "-f", help="table, csv, json, parquet or trec (trec_eval's layout).")] = "table",
    output: OutputOption = None,
) -> None:
    """Evaluate run files against a qrels file on Spark, with the warehouse's checks and SQL.

    Nothing is stored; the numbers are those of evalwh eval. On a laptop give --master
    'local[*]' (the default without spark-submit); on a cluster run it with spark-submit
    (docs/spark.md).

    Example: evalwh spark eval --qrels qrels.txt 'runs/*.gz' -m P@10 -m AP --master 'local[*]'
    """
    from evalwh.cli.eval import DEFAULT_MEASURES, _depths
    from evalwh.errors import MetricParamError
    from evalwh.store.context import Averaging, Unjudged

    try:
        unjudged_mode, averaging_mode = Unjudged(unjudged), Averaging(averaging)
    except ValueError as error:
        raise MetricParamError(str(error)) from None
    formats = ("table", "csv", "json", "parquet", "trec")
    if fmt not in formats:
        raise MetricParamError(f"--format {fmt!r}: expected one of {', '.join(formats)}")
    measures = measure or DEFAULT_MEASURES
    frame = _run(
        runs, qrels, measures, master,
        dict(depths=_depths(depths), rel=rel, unjudged=unjudged_mode, depth_cap=depth_cap,
             float32_ties=float32_ties, averaging=averaging_mode),
        ignore_extra_fields,
    )
    _print(frame, measures, _depths(depths), per_query, fmt, output)


def _session(master: str | None):  # type: ignore[no-untyped-def]
    """The active session (spark-submit's), else a new one on ``master`` (default local[*])."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    builder = SparkSession.builder.appName("evalwh").config("spark.ui.showConsoleProgress", "false")
    if master is not None:
        builder = builder.master(master)
    # else spark-submit's master, or local[*]: spark-submit's default, which pyspark also
    # goes through when started from plain Python
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def _run(runs, qrels, measures, master, options, ignore_extra_fields):  # type: ignore[no-untyped-def]
    from evalwh.spark.files import evaluate_files

    from pyspark.errors import PySparkException

    from evalwh.errors import EvalWhError

    try:
        session = _session(master)
        return evaluate_files(session, qrels, runs, measures, ignore_extra_fields=ignore_extra_fields, **options)
    except PySparkException as error:
        # one line, as every evalwh error (--debug shows the Java side)
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise EvalWhError(f"Spark: {first}") from error


def _print(
    frame: pd.DataFrame, measures: list[str], depths: list[int] | None, per_query: bool, fmt: str, output
) -> None:  # type: ignore[no-untyped-def]
    from evalwh.cli._render import render
    from evalwh.spark import means

    averaged = means(frame)
    if fmt == "trec":
        from evalwh.measures.catalog import expand
        from evalwh.measures.trec_format import format_trec

        specs = [str(m) for m in expand(measures, depths)]
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
        render(shown, OutputFormat(fmt), output)
        return
    index = ["run_id", "query_id"] if per_query else ["run_id"]
    wide = shown.pivot_table(index=index, columns="measure", values="value", sort=False, dropna=False)
    wide = wide[list(dict.fromkeys(shown["measure"]))].reset_index()
    wide.columns.name = None
    render(wide, OutputFormat.table, output, title="evaluated on Spark")
