"""The root command's commands, loaded when used: ``evalwh --help`` imports none of them.

Every command module imports what its command needs (and typer builds each command's
options from its function's signature), which is most of what a process pays before it
starts. The root group knows each command's name, the module that registers it and the
first paragraph of its help (all that the root help screen shows of a command): the table
:data:`COMMANDS` of :mod:`evalwh.cli._root_help`, which imports no typer, so that ``evalwh
--help``, ``evalwh`` alone and ``evalwh no-such-command`` import no command module;
``evalwh CMD ...`` (and ``evalwh CMD --help``) import the one module that registers ``CMD``.
Anything that asks for the whole tree (``group.commands``: the docs' CLI reference, the
tests that walk every command) loads every module, in the order of :data:`COMMANDS`.
(``evalwh --help`` from the shell is not even typer's: ``evalwh.__main__`` prints
:mod:`evalwh.cli._root_help`'s plain screen; typer's is what ``app(["--help"])`` draws.)

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
from evalwh.cli._help import fold_long_words
from evalwh.cli._root_help import COMMANDS

fold_long_words()  # (before typer formats any help screen: cli/_help.py)

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
