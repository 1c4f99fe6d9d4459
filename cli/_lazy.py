"""The root command's commands, loaded when used: ``evalwh --help`` imports none of them.

Every command module imports what its command needs (and typer builds each command's
options from its function's signature), which is most of what a process pays before it
starts. The root group knows each command's name, the module that registers it and the
first paragraph of its help (all that the root help screen shows of a command), so that
``evalwh --help``, ``evalwh`` alone and ``evalwh no-such-command`` import no command module;
``evalwh CMD ...`` (and ``evalwh CMD --help``) import the one module that registers ``CMD``.
Anything that asks for the whole tree (``group.commands``: the docs' CLI reference, the
tests that walk every command) loads every module, in the order of :data:`COMMANDS`.

``tests/test_cli_lazy.py`` holds :data:`COMMANDS` against the modules (names, order, help)
and the root help screen against the one drawn from the loaded commands.
"""

from __future__ import annotations

import importlib
import inspect
from difflib import get_close_matches
from typing import Any

import typer
import typer.core
from evalwh.cli._errors import OneLineGroup

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

# the modules whose command group is their ``app`` (added under the command's name)
GROUP_MODULES = frozenset({"ingest", "experiment", "spark", "exclusions"})

# the Typer instance each loaded module registered its commands on (for tests: annotations)
LOADED: dict[str, typer.Typer] = {}


def module_typer(module_name: str) -> typer.Typer:
    """The commands of ``evalwh.cli.<module_name>`` on a Typer of their own (imported once)."""
    if module_name not in LOADED:
        module = importlib.import_module(f"evalwh.cli.{module_name}")
        sub = typer.Typer()
        if module_name in GROUP_MODULES:
            sub.add_typer(module.app, name=module_name)
        else:
            module.register(sub)
        _resolve_annotations(sub)
        LOADED[module_name] = sub
    return LOADED[module_name]


def _resolve_annotations(group: typer.Typer) -> None:
    """Give every command's function its annotations as objects, once, instead of as text.

    The CLI's modules use postponed annotations (text), and typer reads each command's
    hints several times while it builds the command line (and those of the function a
    command wraps, and of its options' callbacks), compiling and evaluating every
    annotation's text each time: more than half of the start-up cost typer adds to every
    command (90 ms of 140 CPU ms). Resolved here once, the later reads are lookups.
    """
    for info in [*group.registered_commands, group.registered_callback]:
        _resolve(getattr(info, "callback", None))
    for sub in group.registered_groups:
        if sub.typer_instance is not None:
            _resolve_annotations(sub.typer_instance)


def _resolve(function: object) -> None:
    """Resolve the annotations of ``function``, of what it wraps and of its options' callbacks."""
    import typing

    # (typer reads the wrapped function's signature too: every function of the chain)
    while callable(function) and isinstance(getattr(function, "__annotations__", None), dict):
        hints = typing.get_type_hints(function, include_extras=True)
        function.__annotations__ = hints
        for hint in hints.values():
            for meta in getattr(hint, "__metadata__", ()):
                callback = getattr(meta, "callback", None)
                if callback is not None and any(
                    isinstance(a, str) for a in getattr(callback, "__annotations__", {}).values()
                ):
                    _resolve(callback)
        function = getattr(function, "__wrapped__", None)


class _Listed(typer.core.TyperCommand):
    """A command as the root help lists it (name and first paragraph), its module not imported."""


class LazyGroup(OneLineGroup):
    """The root group: :data:`COMMANDS` listed without imports, each loaded at its first use."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._loaded: dict[str, Any] = {}
        self._listing = False
        self._ready = False
        super().__init__(*args, **kwargs)
        self._ready = True

    # click's Group keeps its commands in ``self.commands``; here they are made on demand
    @property  # type: ignore[override]
    def commands(self) -> dict[str, Any]:
        if not self._ready:
            return self._loaded
        return {name: self._load(name) for name, _, _ in COMMANDS}

    @commands.setter
    def commands(self, value: Any) -> None:
        self._loaded.update(value or {})

    def list_commands(self, ctx: Any) -> list[str]:
        return [name for name, _, _ in COMMANDS]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if self._listing and cmd_name not in self._loaded:
            for name, _, first in COMMANDS:
                if name == cmd_name:
                    return _Listed(name=name, help=first, callback=None)
        return self._load(cmd_name)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        import gc

        # (importing Rich and laying out the screen make many objects and free few: no cycle
        # collection meanwhile, as during the start-up, evalwh.__main__.main)
        collecting = gc.isenabled()
        gc.disable()
        self._listing = True
        try:
            _light_rich_layer()
            super().format_help(ctx, formatter)
        finally:
            self._listing = False
            if collecting:
                gc.enable()

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        try:
            return self._click_resolve_command(ctx, args)
        except typer.core._click.exceptions.UsageError as error:
            # (typer's own suggestion, from the names rather than from every loaded command)
            if self.suggest_commands and args:
                matches = get_close_matches(args[0], self.list_commands(ctx))
                if matches:
                    suggestions = ", ".join(f"{m!r}" for m in matches)
                    error.message = f"{error.message.rstrip('.')}. Did you mean {suggestions}?"
            raise

    def _load(self, cmd_name: str) -> Any:
        if cmd_name in self._loaded:
            return self._loaded[cmd_name]
        module_name = next((module for name, module, _ in COMMANDS if name == cmd_name), None)
        if module_name is None:
            return None
        from evalwh.cli._options import finite_floats

        group = typer.main.get_group(module_typer(module_name))
        for name, command in group.commands.items():
            if name not in self._loaded:
                finite_floats(command)
                self._loaded[name] = command
        return self._loaded.get(cmd_name)


def _light_rich_layer() -> None:
    """Import typer's rich layer without rich's Markdown and traceback renderers until used.

    ``typer.rich_utils`` imports ``rich.markdown`` (markdown-it, pygments) and ``rich.traceback``
    at its top, about 0.07 of the root help's 0.17 CPU s, and uses them only for help text in
    Markdown mode (evalwh's is typer's default, rich markup) and for a pretty traceback. While
    it is imported, those two modules are stand-ins whose class imports the real module at its
    first use (an instance, or a class attribute such as ``Traceback.from_exception``); the
    stand-ins leave ``sys.modules`` at once, so any later ``import rich.markdown`` is the real one.
    """
    import sys

    if "typer.rich_utils" in sys.modules:
        return
    import types

    seeded: dict[str, types.ModuleType] = {}
    for module, name in (("rich.markdown", "Markdown"), ("rich.traceback", "Traceback")):
        if module not in sys.modules:
            stand_in = types.ModuleType(module)
            setattr(stand_in, name, _later(module, name))
            sys.modules[module] = seeded[module] = stand_in
    try:
        import typer.rich_utils  # noqa: F401
    finally:
        for module, stand_in in seeded.items():
            if sys.modules.get(module) is stand_in:
                del sys.modules[module]


def _later(module: str, name: str) -> type:
    """A class standing for ``module.name``: calling it or reading an attribute imports the module."""

    def real() -> Any:
        return getattr(importlib.import_module(module), name)

    class Later(type):
        def __getattr__(cls, attribute: str) -> Any:
            return getattr(real(), attribute)

    return Later(name, (), {"__new__": lambda cls, *args, **kwargs: real()(*args, **kwargs)})


def first_paragraph(command: Any) -> str:
    """What the root help shows of ``command``: the first paragraph of its help (for the tests)."""
    return inspect.cleandoc(command.short_help or command.help or "").split("\n\n")[0]
