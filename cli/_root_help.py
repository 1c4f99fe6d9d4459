"""The root help screen in plain text, and what it lists: the commands and the root's options.

``evalwh --help`` (and ``evalwh`` alone) is the one screen a new user asks for most, and the
one a shell completion or a wrapper script calls without thinking. Drawn by typer it costs
typer, click and Rich (about 0.05 to 0.14 CPU s on the benchmark machine, more than Python's
own start); drawn here, from the table below and the root's options, it costs neither: this
module imports nothing but ``os`` and ``sys``, and ``evalwh.__main__`` prints the screen before
it imports the CLI. Every other screen (a command's help, usage errors) is typer's.

:data:`COMMANDS` is also the table the root group lists its commands from without importing
their modules (:mod:`evalwh.cli._lazy`); :data:`OPTIONS` and :data:`HELP` are what the root
command (:mod:`evalwh.cli._app`) declares. ``tests/test_cli_lazy.py`` holds the table against
the modules, and this screen against typer's own (same commands in the same order, same help,
same options).
"""

from __future__ import annotations

import os
import sys

# (name, module of evalwh.cli, the first paragraph of its help): the root's commands in the
# order its help lists them. A module whose name is a command's and has an ``app`` is that
# command's group (``add_typer``); every other module has ``register(app)``.
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("collections", "info", "List the collections: topics, judged and relevant documents, runs, label sets."),
    ("runs", "info", "List the runs of a collection: topics, documents, depth, source file, sha256, lists float32 reorders."),
    ("compare", "compare", "Compare runs on any measures: paired tests against baselines or over all pairs."),
    ("matrix", "compare", "Classify every pair of runs at every depth and print the case proportions."),
    ("kendall", "compare", "Kendall's tau_b between the run rankings by two measures (MAP against A_p@1000 by default)."),
    ("eval", "eval", "Evaluate the runs of a collection (one row per run, or per topic with --per-query), or run files directly."),
    ("metrics", "eval", "List every metric evalwh computes, with parameters, aliases, trec_eval and ir_measures names."),
    ("unjudged", "eval", "Show how incomplete a collection is: the unjudged share of all runs' documents at each rank."),
    ("adjust", "pool", "Adjust an unpooled run's mean score for pooling bias (Webber & Park)."),
    ("sql", "sql", "Run SQL against the warehouse, read-only unless --write; or print it for another engine."),
    ("schema", "sql", "List the views for ad-hoc SQL and the tables, or the columns of one of them."),
    ("upgrade", "sql", "Apply the schema steps a warehouse written by an older evalwh lacks (a writer command)."),
    ("export", "sql", "Write the warehouse's tables as Parquet, partitioned by collection, with manifest.json."),
    ("import", "sql", "Load an evalwh export into a new or existing warehouse, in one transaction."),
    ("report", "report", "Evaluate, test and report a collection's runs in one HTML (or Markdown) file."),
    (
        "conventions",
        "report",
        "Show or set a collection's conventions: the measures, baselines and judged depth reused by\n"
        "report, plot runs, compare and eval, and the qrels set every command uses when given none\n"
        "(an option given replaces that convention, the others stay).",
    ),
    ("bounds", "bounds", "Lower and upper values per run across depth: P and RBP bounds, AP/nDCG/R scenarios."),
    (
        "label-uncertainty",
        "label_uncertainty",
        "Score runs with human labels filled by a machine judge, carrying the judge's errors into the scores.",
    ),
    ("demo", "demo", "Write a synthetic pooled collection (30 topics, 8 runs, 2 not pooled) and ingest it."),
    ("trec_eval", "trec_eval", "trec_eval's command line and output, byte for byte (--v9: trec_eval 9.0.8); -h for its flags."),
    (
        "agreement",
        "judgments",
        "Compare label sets with a reference on the pairs both judged: agreement, Cohen's kappa, Krippendorff's alpha.",
    ),
    (
        "sensitivity",
        "judgments",
        "Show how the ranking of the runs moves when the label set changes: tau_b, tau_ap, RBO, rank changes.",
    ),
    ("meta", "meta", "Meta-analysis across collections: one system's effect over another, per collection and pooled."),
    ("ingest", "ingest", "Load qrels, runs and run metadata into the warehouse."),
    ("experiment", "experiment", "Meta-evaluation of measures under incomplete judgments: swap rates, reduced qrels, tau."),
    ("spark", "spark", "Evaluate on Spark: run and qrels files read, checked, ranked and scored by Spark."),
    ("exclusions", "exclusions", "Excluded documents: exclusion files, the identical-id rule, and what they take from each run."),
    ("qrels", "info", "List a collection's qrels sets; `evalwh qrels diff` compares two of them."),
    ("plot", "compare", "Draw figures (PNG, PDF or SVG by the file suffix)."),
    ("pool", "pool", "Build pools, list them, and count unique contributions."),
    (
        "audit",
        "audit",
        "Random audits: draw pairs or topics for people to judge, then score runs from the machine's labels "
        "corrected by the audit (prediction-powered inference).",
    ),
)

# the root command's description and usage (``evalwh [OPTIONS] COMMAND [ARGS]...``)
HELP = "An SQL-backed evaluation warehouse for IR test collections."
USAGE = "[OPTIONS] COMMAND [ARGS]..."

# (flag, metavar or "", help, environment variable or ""): the root's options, as declared
OPTIONS: tuple[tuple[str, str, str, str], ...] = (
    ("--debug", "", "Show tracebacks instead of one-line errors.", ""),
    ("--db", "FILE", "DuckDB warehouse file for the command (as the command's own --db; env EVALWH_DB).", ""),
    (
        "--csv-safe",
        "",
        "CSV for spreadsheets: prefix cells beginning =, +, -, @ with ' and quote text (env EVALWH_CSV_SAFE=1).",
        "EVALWH_CSV_SAFE",
    ),
)
HELP_OPTION = ("--help", "", "Show this message and exit.", "")

# the left column's widest entry (a longer name has its text on the next line), and the
# narrowest column of text beside the names
_NAMES_WIDTH = 30
_TEXT_WIDTH = 24


def render(prog: str, width: int, bold: bool = False) -> str:
    """The root help screen for a terminal ``width`` columns wide (``bold``: ANSI bold headings)."""

    def strong(text: str) -> str:
        return f"\x1b[1m{text}\x1b[0m" if bold else text

    options = [
        (f"{flag} {metavar}".rstrip(), f"{text}  [env var: {env}]" if env else text)
        for flag, metavar, text, env in (*OPTIONS, HELP_OPTION)
    ]
    commands = [(name, " ".join(first.split())) for name, _, first in COMMANDS]
    column = min(max(len(name) for name, _ in options + commands), _NAMES_WIDTH) + 4
    if width - column < _TEXT_WIDTH:  # (a narrow terminal: each text below its name)
        column = 6
    usage = _wrap(f"{prog} {USAGE}", width - 7)
    lines = [f"{strong('Usage:')} {usage[0]}", *("       " + line for line in usage[1:]), ""]
    lines += ["  " + line for line in _wrap(HELP, width - 2)]
    for heading, rows in (("Options:", options), ("Commands:", commands)):
        lines += ["", strong(heading)]
        for name, text in rows:
            wrapped = _wrap(text, width - column)
            if len(name) + 4 > column:  # (a name wider than the column: its text below it)
                lines.append("  " + strong(name))
                lines += [" " * column + line for line in wrapped]
                continue
            lines.append("  " + strong(name) + " " * (column - 2 - len(name)) + wrapped[0])
            lines += [" " * column + line for line in wrapped[1:]]
    return "\n".join(lines) + "\n"


def _wrap(text: str, width: int) -> list[str]:
    """``text``'s words in lines of at most ``width`` characters (a longer word on its own line)."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, line]


def terminal_width() -> int:
    """The terminal's columns as :func:`shutil.get_terminal_size` reads them (``COLUMNS`` first,
    then standard output's terminal, else 80), without importing :mod:`shutil`."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def program_name() -> str:
    """The name the usage line shows: ``evalwh``, or ``python -m evalwh`` (as click detects it)."""
    main = sys.modules.get("__main__")
    package = getattr(main, "__package__", None)
    path = sys.argv[0] if sys.argv and sys.argv[0] else ""
    if not package:
        return os.path.basename(path)
    name = os.path.splitext(os.path.basename(path))[0]
    return "python -m " + (package if name == "__main__" else f"{package}.{name}").lstrip(".")


def wants_colour(stream: object) -> bool:
    """ANSI bold on a terminal, unless ``NO_COLOR`` is set or the terminal is ``dumb``."""
    isatty = getattr(stream, "isatty", None)
    return bool(
        isatty is not None
        and isatty()
        and not os.environ.get("NO_COLOR")
        and os.environ.get("TERM", "") != "dumb"
    )
