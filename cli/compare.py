"""evalwh compare | matrix | kendall: the System Evaluation Decision Matrix (methods §4)."""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import Annotated

import typer
from evalwh.cli import plot
from evalwh.cli._decision_options import (
    AlphaOption,
    AssessmentOption,
    CorrectionChoice,
    DepthsOption,
    FullOption,
    LegacyQrelsOption,
    PairingMeasureOption,
    QrelsIdOption,
    ResamplesOption,
    RunsOption,
    SeedOption,
    TestChoice,
    TestOption,
    parse_depths,
    check_qrels_file,
    parse_runs,
    warehouse_only,
)
from evalwh.cli._errors import handle_errors
from evalwh.cli._options import (
    default_collection,
    only_collection,
    DEFAULT_DB,
    CollectionOption,
    DbOption,
    FillOption,
    FormatOption,
    OutputFormat,
    OutputOption,
)
from evalwh.cli._progress import progress_bar
from evalwh.cli._render import render

DEFAULT_DEPTHS = "10,30,100,500,1000"


class Layout(str, enum.Enum):
    """What `evalwh matrix` prints."""

    summary = "summary"  # one row per column (depth): C1..C4, 3a/3b, strong/weak
    paper = "paper"  # the papers' tables: one row per collection, C1..C4 per depth
    pairs = "pairs"  # one row per pair and column


class CompareLayout(str, enum.Enum):
    """What `evalwh compare` prints."""

    long = "long"  # one row per measure and comparison (pipes and files always, unless asked)
    wide = "wide"  # one column per comparison, one row per quantity
    pairs = "pairs"  # the former name of long
    paper = "paper"  # one row per run (lettered), one column per measure: the paper table
    anova = "anova"  # per measure: the two-way ANOVA table and the MOE


class PaperMarks(str, enum.Enum):
    """The significance marks of a paper table."""

    letters = "letters"
    arrows = "arrows"


_PAIR_COLUMNS = [
    "column", "run_a", "run_b", "n_topics", "perf_mean_a", "perf_mean_b", "perf_p_adjusted",
    "perf_outcome", "assess_mean_a", "assess_mean_b", "assess_p_adjusted", "assess_outcome",
    "case", "strength",
]  # fmt: skip
_COMPARE_COLUMNS = [
    "measure", "run_a", "run_b", "n_topics", "mean_a", "mean_b", "mean_diff", "ci_low",
    "ci_high", "effect_size", "wins", "ties", "losses", "p_value", "p_adjusted", "reject",
]  # fmt: skip

OptionalCollection = Annotated[
    str | None,
    typer.Option("--collection", "-c", help="Collection name inside the warehouse (not with --scores or --qrels)."),
]


@handle_errors
def compare(
    runs: Annotated[
        list[str] | None,
        typer.Argument(
            help="Runs to compare: run ids of the warehouse; with --qrels, run files (each named "
            "by its tag); with --scores, a subset of the files' runs."
        ),
    ] = None,
    collection: OptionalCollection = None,
    measures: Annotated[
        list[str] | None,
        typer.Option(
            "--measure", "-m",
            help="Measure, repeatable (AP, nDCG@10, 'RBP(p=0.9)@100'; default AP). "
            "With --decision: the performance measure without depth (default P).",
        ),
    ] = None,
    baselines: Annotated[
        list[str] | None,
        typer.Option("--baseline", "-b", help="Baseline run id, repeatable: every other run is compared with each."),
    ] = None,
    all_pairs: Annotated[
        bool, typer.Option("--all-pairs", help="Compare every pair of runs, also with baselines.")
    ] = False,
    all_runs: Annotated[
        bool, typer.Option("--all-runs", help="Compare every run of the collection, not only those named.")
    ] = False,
    qrels: Annotated[
        Path | None,
        typer.Option(
            "--qrels",
            help="A qrels file (or irds:DATASET_ID): evaluate the run files given as arguments "
            "against it and compare them, with no warehouse (a stored qrels set is --qrels-id).",
        ),
    ] = None,
    exclude: Annotated[
        list[Path] | None,
        typer.Option(
            "--exclude",
            help="With --qrels: an exclusion file ('topic docid' a line); those documents leave every "
            "run before ranking (methods §17). Repeatable.",
        ),
    ] = None,
    exclude_identical_ids: Annotated[
        bool,
        typer.Option(
            "--exclude-identical-ids",
            help="With --qrels: exclude a document whose id equals its topic's id (BEIR's ArguAna, Quora).",
        ),
    ] = False,
    scores: Annotated[
        list[Path] | None,
        typer.Option(
            "--scores",
            help="Per-topic scores instead of a warehouse, repeatable: a run_id, query_id, measure, "
            "value table (CSV, TSV, Parquet), trec_eval -q output (several runs split by runid "
            "lines), ir_measures' or ranx's per-query output.",
        ),
    ] = None,
    names: Annotated[
        list[str] | None,
        typer.Option(
            "--names",
            help="With --scores: run names of trec_eval -q blocks without runid lines, in block "
            "order, repeatable (or comma-separated).",
        ),
    ] = None,
    test: Annotated[
        TestChoice | None,
        typer.Option(
            "--test", "-t",
            help="t (default), wilcoxon, sign, randomization, bootstrap, tukey (HSD after two-way "
            "ANOVA), randomized_tukey, anova, anova2 (with --decision: anova by default).",
        ),
    ] = None,
    correction: Annotated[
        CorrectionChoice | None,
        typer.Option(
            "--correction",
            help="bonferroni, holm, bh, by or none over the comparisons of a measure "
            "(default holm; none for the Tukey tests; bonferroni with --decision).",
        ),
    ] = None,
    alpha: AlphaOption = 0.05,
    layout: Annotated[
        CompareLayout | None,
        typer.Option(
            "--layout",
            help="long (one row per measure and comparison; always in a pipe or file unless "
            "named), wide (one column per comparison; on a terminal when it fits its width), "
            "paper (one row per run; the default for markdown and latex) or anova.",
        ),
    ] = None,
    compact: Annotated[
        bool, typer.Option("--compact", help="Paper tables: means only (the best bold), no significance marks.")
    ] = False,
    marks: Annotated[
        PaperMarks,
        typer.Option(
            "--marks",
            help="Paper tables: letters (the runs a run is significantly better than) or arrows "
            "(up or down against the baselines).",
        ),
    ] = PaperMarks.letters,
    decision: Annotated[
        bool,
        typer.Option(
            "--decision",
            help="The decision matrix of two runs per depth (performance and assessment); "
            "implied by --depths or --assessment.",
        ),
    ] = False,
    depths: Annotated[
        str | None, typer.Option("--depths", "-d", help="With --decision: depths (default 10,30,100,500,1000).")
    ] = None,
    assessment: Annotated[
        str | None,
        typer.Option("--assessment", help="With --decision: A_p (default), A_p_ret or 'RBP_resid(p=0.8)'."),
    ] = None,
    full: FullOption = True,
    qrels_id: QrelsIdOption = None,
    fill: FillOption = None,
    seed: SeedOption = None,
    resamples: ResamplesOption = 10_000,
    all_columns: Annotated[
        bool, typer.Option("--all-columns", help="Print every column (statistics, ES_E, ...).")
    ] = False,
    ranks: Annotated[
        bool,
        typer.Option(
            "--ranks",
            help="Print each run's rank, its 95% bootstrap rank interval (2,000 replicates, seed 0) "
            "and its tier (the runs the test cannot tell from the best, then the next group) "
            "instead of the pairs.",
        ),
    ] = False,
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Compare runs on any measures: paired tests against baselines or over all pairs.

    Example: evalwh compare INQ604 ok8amxc -c trec8 -m AP

    More:

      evalwh compare --qrels trec8.qrels input.INQ604.gz input.ok8amxc.gz -m AP

      evalwh compare -c trec8 -b INQ604 ok8amxc uwmt8a2 -m AP -m nDCG@10 -t wilcoxon --correction bh -f latex

      evalwh compare --scores bm25.txt --scores dense.txt -b bm25 -m map

      evalwh compare -c trec8 --all-runs -m nDCG@10 --ranks

      evalwh compare INQ604 ok8amxc -c trec8 --decision --measure MAP --depths 10,100
    """
    from evalwh.errors import EvalWhError

    run_list = list(runs or [])
    base = list(baselines or [])
    if qrels is not None:
        check_qrels_file(qrels, db)
    if decision or depths is not None or assessment is not None:
        if scores or qrels is not None or baselines or all_pairs or ranks:
            raise EvalWhError(
                "compare --decision compares two runs of a collection; "
                "--scores, --qrels, --baseline, --all-pairs and --ranks do not apply"
            )
        _decision_compare(
            run_list, collection, measures, depths, assessment, full, test, correction, alpha,
            all_runs, qrels_id, seed, resamples, all_columns, db, fmt, output,
            fill=fill or [],
        )  # fmt: skip
        return
    if (exclude or exclude_identical_ids) and qrels is None:
        raise EvalWhError(
            "compare: --exclude and --exclude-identical-ids go with --qrels; a collection's exclusions are "
            "stored (evalwh exclusions add FILE / evalwh exclusions identical-ids)"
        )
    if scores and qrels is not None:
        raise EvalWhError("compare: give --scores (per-topic scores) or --qrels with run files, not both")
    if ranks and (layout is not None or compact or all_columns):
        raise EvalWhError("compare --ranks prints one row per run; --layout, --compact and --all-columns do not apply")
    if (scores or qrels is not None) and (collection is not None or all_runs or qrels_id is not None or fill):
        raise EvalWhError(
            "compare: --collection, --all-runs, --qrels-id and --fill name warehouse contents; "
            "with --scores or --qrels there is no warehouse"
        )
    if names and not scores:
        raise EvalWhError("compare: --names names the runs of --scores files; give --scores")
    chosen_test = test.value if test is not None else "t"
    chosen_correction = None if correction is None else correction.value
    if scores:
        from evalwh.io.score_files import read_scores
        from evalwh.stats.compare import compare as compare_scores

        frame = read_scores(scores, names=_split_names(names))
        in_files = list(dict.fromkeys(frame["run_id"]))
        family = list(dict.fromkeys([*base, *run_list])) or None
        if family is not None and len(family) == len(base):  # baselines only: every run of the files
            family = list(dict.fromkeys([*base, *in_files]))
        result = compare_scores(
            frame, runs=family or in_files, measures=measures or None, baselines=base, all_pairs=all_pairs,
            test=chosen_test, correction=chosen_correction, alpha=alpha, n_resamples=resamples, rng=seed,
            ranks=ranks,
        )  # fmt: skip
    elif qrels is not None:
        from evalwh.api import compare as compare_files

        if not run_list:
            raise EvalWhError("compare --qrels needs run files: evalwh compare --qrels QRELS RUN RUN ...")
        told: dict[str, None] = {}
        result = compare_files(
            qrels, run_list, measures or ["AP"], baseline=base, all_pairs=all_pairs, test=chosen_test,
            correction=chosen_correction, alpha=alpha, resamples=resamples, seed=seed, ranks=ranks,
            exclusions=exclude or [], identical_ids=exclude_identical_ids, said=told.setdefault,
        )  # fmt: skip
        for line in told:  # what the excluded documents took from each run (methods §17)
            typer.echo(f"note: {line}", err=True)
    else:
        if collection is None:
            collection = only_collection(db)
        from evalwh.warehouse import Warehouse

        with Warehouse.open_reader(db) as wh:
            if not measures:  # the collection's conventions (evalwh conventions), else AP
                from evalwh.present.report.defaults import read_conventions

                measures = list(read_conventions(wh, collection).measures or ["AP"])
            result = wh.compare(
                measures or ["AP"], run_list, collection=collection, baseline=base, all_runs=all_runs,
                all_pairs=all_pairs, test=chosen_test, correction=chosen_correction, alpha=alpha,
                resamples=resamples, seed=seed, qrels_id=qrels_id,
                fill=fill or [], ranks=ranks,
            )  # fmt: skip
            from evalwh.cli.eval import _float32_note

            # (the measures compared, as their means print; the sets compared)
            stored = dict(qrels_id=qrels_id, fill=fill or [])
            shown = list(dict.fromkeys(result.runs["run_id"]))
            _float32_note(wh, collection, shown, list(measures or ["AP"]), False, stored)
    for note in result.notes:
        typer.echo(f"note: {note}", err=True)
    if marks is PaperMarks.arrows and not base:
        raise EvalWhError("compare --marks arrows marks differences from baselines: give -b RUN")
    if ranks:
        _print_ranks(result, fmt, output)
        return
    _print_comparison(result, layout, all_columns, compact, marks.value, fmt, output)


def _split_names(names: list[str] | None) -> list[str] | None:
    """``--names a,b --names c`` as ``[a, b, c]``."""
    if not names:
        return None
    return [part.strip() for item in names for part in item.split(",") if part.strip()]


def _print_comparison(result, layout, all_columns, compact, marks, fmt, output) -> None:  # type: ignore[no-untyped-def]
    """Print a Comparison in the chosen layout and format.

    The layout never depends on how many comparisons there are: long form in pipes and
    files, and on a terminal the wide view only when it fits the terminal's width.
    """
    from evalwh.present import paper_table

    family = result.families.iloc[0]
    title = (
        f"{family['test']}, {family['correction']}, alpha {family['alpha']:g}; {family['interval']}"
        + "".join(
            f"; {row.measure}: {row.n_topics} topics, MOE {row.moe:.4f}"
            for row in result.families.itertuples()
        )
    )
    if layout is None and fmt in (OutputFormat.markdown, OutputFormat.latex):
        layout = CompareLayout.paper
    if layout is CompareLayout.paper:
        if fmt is OutputFormat.markdown:
            _write_text(paper_table.to_markdown(result, compact=compact, marks=marks), output)
            return
        if fmt is OutputFormat.latex:
            _write_text(paper_table.to_latex(result, compact=compact, marks=marks), output)
            return
        if fmt is OutputFormat.table:
            shown = paper_table.display_frame(result, compact=compact, marks=marks)
            render(shown, fmt, output, title=paper_table.caption(result, compact=compact, marks=marks))
            return
        render(paper_table.paper_frame(result), fmt, output)
        return
    if layout is CompareLayout.anova:
        frame = result.anova.merge(result.families[["measure", "v_e", "moe"]], on="measure")
        render(frame, fmt, output, title=f"two-way ANOVA ({title})")
        return
    frame = result.pairs if all_columns else result.pairs[_with_qrels(result.pairs, _COMPARE_COLUMNS)]
    if fmt is OutputFormat.table and not all_columns:
        frame = _compact(frame)
    if layout is CompareLayout.wide:
        frame = _transposed(frame)
    elif layout is None and fmt is OutputFormat.table and output is None and sys.stdout.isatty():
        wide = _transposed(frame)
        if _fits_terminal(wide):
            frame = wide
    render(frame, fmt, output, title=title)


def _print_ranks(result, fmt, output) -> None:  # type: ignore[no-untyped-def]
    """Each run's rank, rank interval and tier (``compare --ranks``), the method in the title."""
    from evalwh.stats.rank_intervals import rank_note

    frame = result.ranks
    if fmt is not OutputFormat.table:  # (a table prints it as its title; other formats have none)
        typer.echo(f"note: {rank_note(result.ranks.attrs)}", err=True)
    if fmt is OutputFormat.table:
        frame = frame.assign(
            interval=[f"{lo}-{hi}" for lo, hi in zip(frame["rank_low"], frame["rank_high"], strict=True)]
        )[["measure", "rank", "interval", "tier", "run_id", "mean", "n_topics"]]
        frame = frame.rename(columns={"interval": "rank interval"})
    render(frame, fmt, output, title=rank_note(result.ranks.attrs))


def _with_qrels(frame, columns: list[str]) -> list[str]:  # type: ignore[no-untyped-def]
    """The columns shown, after the label sets used when a composition (--fill) named them."""
    return ["qrels_id", *columns] if "qrels_id" in frame.columns else columns


def _fits_terminal(frame) -> bool:  # type: ignore[no-untyped-def]
    """Whether a table shows every cell on one line in the terminal's width."""
    from rich.console import Console

    from evalwh.cli._render import _cells, _natural_width

    return _natural_width(_cells(frame, 4)) <= Console().width


def _transposed(frame):  # type: ignore[no-untyped-def]
    """One column per comparison (``run_a vs run_b``), one row per quantity, as text."""
    import pandas as pd

    labels = [
        f"{a} vs {b}" + (f" ({m})" if frame["measure"].nunique() > 1 else "")
        for m, a, b in zip(frame["measure"], frame["run_a"], frame["run_b"], strict=True)
    ]
    body = frame.drop(columns=["run_a", "run_b"])
    cells = {
        label: [_text(v) for v in row]
        for label, row in zip(labels, body.itertuples(index=False), strict=True)
    }
    return pd.DataFrame({"": list(body.columns), **cells})


def _text(value: object) -> str:
    if isinstance(value, float):
        if value != value:
            return ""
        return f"{value:.4g}" if abs(value) < 1e-4 and value != 0 else f"{value:.4f}"
    return str(value)


def _compact(pairs):  # type: ignore[no-untyped-def]
    """The pairs for a terminal: the interval (named in the title) and the win/tie/loss counts in one cell each."""
    frame = pairs[["measure", "run_a", "run_b", "mean_a", "mean_b", "mean_diff"]].copy()
    frame["CI"] = [
        "none" if lo != lo else f"[{lo:.4f}, {hi:.4f}]"
        for lo, hi in zip(pairs["ci_low"], pairs["ci_high"], strict=True)
    ]
    frame["d_z"] = pairs["effect_size"]
    frame["+/=/-"] = [
        f"{w}/{t}/{l}" for w, t, l in zip(pairs["wins"], pairs["ties"], pairs["losses"], strict=True)
    ]
    frame["p"] = [_p(v) for v in pairs["p_value"]]
    frame["p_adj"] = [_p(v) for v in pairs["p_adjusted"]]
    frame["reject"] = pairs["reject"]
    return frame


def _p(value: float) -> str:
    """A p-value with four significant digits (0.005133, 0.2530, 1.000e-08)."""
    if value != value:
        return ""
    return f"{value:.4g}" if value >= 1e-4 or value == 0 else f"{value:.3e}"


def _write_text(text: str, output: Path | None) -> None:
    """Write text to standard output, or to a file by a rename (never half a file)."""
    if output is None:
        sys.stdout.write(text)
        return
    from evalwh.io.files import write_text

    write_text(output, text)


def _decision_compare(  # type: ignore[no-untyped-def]
    runs, collection, measures, depths, assessment, full, test, correction, alpha, all_runs,
    qrels_id, seed, resamples, all_columns, db, fmt, output,
    fill=(),
) -> None:
    """`compare --decision`: two runs, performance and assessment outcomes and the case per depth."""
    from evalwh.errors import EvalWhError
    from evalwh.stats.significance import default_correction
    from evalwh.warehouse import Warehouse

    if len(runs) != 2:
        raise EvalWhError(f"compare --decision: name exactly two runs, got {len(runs)}")
    if collection is None:
        collection = only_collection(db)
    if measures and len(measures) > 1:
        raise EvalWhError("compare --decision: give one performance measure (-m), e.g. -m P")
    chosen_test = test.value if test is not None else "anova"
    chosen_correction = (
        default_correction(chosen_test, "bonferroni").value if correction is None else correction.value
    )
    run_a, run_b = runs
    with Warehouse.open_reader(db) as wh:
        result = wh.compare_decision(
            run_a, run_b, collection=collection, measure=measures[0] if measures else "P",
            depths=parse_depths(depths or DEFAULT_DEPTHS), full=full, assessment=assessment or "A_p",
            all_runs=all_runs, test=chosen_test, correction=chosen_correction, alpha=alpha,
            qrels_id=qrels_id, resamples=resamples, seed=seed,
            fill=fill,
        )  # fmt: skip
    frame = result.pairs if all_columns else result.pairs[_with_qrels(result.pairs, _PAIR_COLUMNS)]
    render(
        frame,
        fmt,
        output,
        title=f"{run_a} vs {run_b} ({chosen_test}, {chosen_correction}, alpha {alpha})",
    )


@handle_errors
def matrix(
    run_files: Annotated[
        list[Path] | None,
        typer.Argument(help="With --qrels: the run files to classify (each named by its tag); nothing is stored."),
    ] = None,
    collection: CollectionOption = None,
    measure: PairingMeasureOption = "P",
    depths: DepthsOption = DEFAULT_DEPTHS,
    full: FullOption = True,
    assessment: AssessmentOption = "A_p",
    test: TestOption = TestChoice.anova,
    correction: Annotated[
        CorrectionChoice | None,
        typer.Option(
            "--correction",
            help="bonferroni (default; none for the Tukey tests), holm, bh, by or none over the pairs of a column.",
        ),
    ] = None,
    alpha: AlphaOption = 0.05,
    runs: RunsOption = None,
    qrels_id: QrelsIdOption = None,
    qrels: Annotated[
        Path | None,
        typer.Option(
            "--qrels",
            help="A qrels file: classify the run files given as arguments, in memory, with no "
            "warehouse (a stored qrels set is --qrels-id).",
        ),
    ] = None,
    fill: FillOption = None,
    seed: SeedOption = None,
    resamples: ResamplesOption = 9999,
    layout: Annotated[
        Layout, typer.Option("--layout", help="summary, paper (the papers' table) or pairs.")
    ] = Layout.summary,
    store: Annotated[
        bool,
        typer.Option(
            "--store/--no-store",
            help="Keep pairs and proportions in decision_pairs / decision_summary (opens the warehouse for writing).",
        ),
    ] = False,
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Classify every pair of runs at every depth and print the case proportions.

    Example: evalwh matrix --collection trec8 --measure MAP --test wilcoxon --correction holm --format csv

    Any performance measure pairs with any assessment measure: -m nDCG --assessment 'RBP_resid(p=0.8)'.

    From files, with no warehouse: evalwh matrix --qrels trec8.qrels runs/input.* -m MAP
    """
    from evalwh.errors import EvalWhError
    from evalwh.methods.decisions import assessment_inverted, pairings
    from evalwh.stats.significance import default_correction
    from evalwh.warehouse import Warehouse

    chosen = default_correction(test.value, "bonferroni") if correction is None else correction
    if qrels is not None:
        check_qrels_file(qrels, db)
        if not run_files:
            raise EvalWhError("matrix --qrels needs run files: evalwh matrix --qrels QRELS RUN RUN ...")
        if collection is not None or qrels_id is not None or fill:
            raise EvalWhError("matrix --qrels reads files; --collection, --qrels-id and --fill name warehouse contents")
        source = _files_warehouse(qrels, run_files)
        collection, store = "files", False
    elif run_files:
        raise EvalWhError("matrix: run files as arguments go with --qrels FILE; a warehouse's runs are --runs")
    else:
        collection = collection if collection is not None else only_collection(db)
        source = Warehouse(db) if store else Warehouse.open_reader(db)

    with source as wh, progress_bar("testing pairs") as bar:
        result = wh.matrix(
            collection=collection, measure=measure, depths=parse_depths(depths), full=full,
            assessment=assessment, runs=parse_runs(runs), test=test.value, correction=chosen.value,
            alpha=alpha, qrels_id=qrels_id, resamples=resamples, seed=seed, store=store, progress=bar,
            fill=fill or [],
        )  # fmt: skip
    if layout is Layout.pairs:
        frame = result.pairs
    elif layout is Layout.paper:
        frame = result.table
    else:
        frame = result.summary.drop(columns=["collection_id"])
    _, perf, assess, _ = pairings(measure, [1], full=False, assessment=assessment)[0]
    inverted = " (inverted)" if assessment_inverted(assess) else ""
    pairing = f"{'MAP' if perf.startswith('AP@') else perf[:-2]}@d / {assess[:-2]}@d{inverted}"
    render(
        frame,
        fmt,
        output,
        title=f"{collection}: {pairing} ({test.value}, {chosen.value}, alpha {alpha})",
        digits=3,
        long_form=result.summary if layout is Layout.paper else None,
    )


def _files_warehouse(qrels: Path, run_files: list[Path]):  # type: ignore[no-untyped-def]
    """A warehouse in memory holding one qrels file and run files (collection ``files``)."""
    from evalwh.warehouse import Warehouse

    wh = Warehouse(":memory:")
    try:
        wh.ingest_qrels(qrels, collection="files")
        wh.ingest_runs([str(p) for p in run_files], collection="files")
    except BaseException:
        wh.close()
        raise
    return wh


@handle_errors
@warehouse_only("kendall")
@default_collection
def kendall(
    collection: CollectionOption = None,
    x: Annotated[str, typer.Option("--x", help="Measure of the first ranking.")] = "AP",
    y: Annotated[str, typer.Option("--y", help="Measure of the second ranking.")] = "A_p@1000",
    runs: RunsOption = None,
    qrels_id: QrelsIdOption = None,
    qrels: LegacyQrelsOption = None,
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Kendall's tau_b between the run rankings by two measures (MAP against A_p@1000 by default).

    Example: evalwh kendall --collection trec8 --x AP --y A_p@1000
    """
    from evalwh.warehouse import Warehouse

    with Warehouse.open_reader(db) as wh:
        frame = wh.kendall(collection=collection, x=x, y=y, runs=parse_runs(runs), qrels_id=qrels_id)
    render(frame, fmt, output, title=f"{collection}: Kendall tau_b")


def register(app: typer.Typer) -> None:
    """Add compare, matrix, kendall and the plot group to the root app."""
    app.command("compare")(compare)
    app.command("matrix")(matrix)
    app.command("kendall")(kendall)
    app.add_typer(plot.app, name="plot")
