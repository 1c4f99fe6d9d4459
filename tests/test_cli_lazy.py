"""The root command loads its commands' modules when they are used (issue #54: ``evalwh --help``
and usage errors stay light).

What is held is the import list of a fresh process, not a time: the root help, ``evalwh`` alone
and a mistyped command import no command module and none of pandas, DuckDB or numpy; a
command's own help imports its module only. The root group's table of names and first help
paragraphs (cli/_lazy.py) is held against the modules, and the root help drawn from it against
the one drawn from the loaded commands.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import typer.main
from evalwh.cli import _lazy
from typer.testing import CliRunner

HEAVY = ("pandas", "duckdb", "numpy", "pyarrow", "scipy", "sqlglot", "matplotlib")


def _imports_of(args: list[str]) -> tuple[int, list[str], list[str]]:
    """Exit code, heavy packages and command modules imported by ``evalwh ARGS`` in a fresh process."""
    code = f"""
        import json, sys, contextlib, io
        from evalwh.cli import app
        out = io.StringIO()
        code = 0
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            try:
                app({args!r}, prog_name="evalwh")
            except SystemExit as done:
                code = done.code
        heavy = sorted({{m.split(".")[0] for m in sys.modules}} & set({HEAVY!r}))
        commands = sorted(m for m in sys.modules if m.startswith("evalwh.cli.") and not m.startswith("evalwh.cli._"))
        print(json.dumps([code, heavy, commands]))
        """
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True
    )
    code_, heavy, commands = json.loads(result.stdout.strip().splitlines()[-1])
    return code_, heavy, commands


def test_the_root_help_imports_no_command_module_and_no_pandas_duckdb_or_numpy():
    assert _imports_of(["--help"]) == (0, [], [])


def test_the_root_help_defers_richs_markdown_and_traceback_until_used():
    code = """
        import contextlib, io, sys
        from evalwh.cli import app
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                app(["--help"], prog_name="evalwh")
            except SystemExit:
                pass
        deferred = "rich.markdown" not in sys.modules and "rich.traceback" not in sys.modules
        import typer.rich_utils as ru
        markdown = ru.Markdown("*x*")  # (the real class, imported now)
        try:
            raise ValueError("x")
        except ValueError as error:
            tb = ru.Traceback.from_exception(type(error), error, error.__traceback__)
        import rich.markdown, rich.traceback
        print(deferred, type(markdown) is rich.markdown.Markdown, type(tb) is rich.traceback.Traceback)
        """
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["True", "True", "True"]


def test_evalwh_alone_and_usage_errors_import_no_command_module():
    assert _imports_of([]) == (2, [], [])  # (no_args_is_help: the help, exit 2 as before)
    assert _imports_of(["evl"]) == (2, [], [])
    assert _imports_of(["--bogus"]) == (2, [], [])


def test_a_commands_help_imports_its_own_module_only():
    code, _, commands = _imports_of(["trec_eval", "--help"])
    assert (code, commands) == (0, ["evalwh.cli.trec_eval"])
    code, _, commands = _imports_of(["qrels", "diff", "--help"])
    assert (code, commands) == (0, ["evalwh.cli.info"])


def test_the_table_names_each_modules_commands_in_typers_order_with_their_help():
    by_module: dict[str, list[str]] = {}
    for name, module, _ in _lazy.COMMANDS:
        by_module.setdefault(module, []).append(name)
    seen_group = False
    for module, names in by_module.items():
        group = typer.main.get_group(_lazy.module_typer(module))
        assert list(group.commands) == names, module
    for name, module, first in _lazy.COMMANDS:
        command = typer.main.get_group(_lazy.module_typer(module)).commands[name]
        assert _lazy.first_paragraph(command) == first, name
        assert not command.hidden and not command.deprecated, name
        # typer lists a group's commands before its groups (in the order they were added)
        is_group = isinstance(command, typer.core.TyperGroup)
        assert is_group or not seen_group, f"{name}: a command after a group"
        seen_group = seen_group or is_group


def test_the_root_help_from_the_table_is_the_one_from_the_loaded_commands(monkeypatch):
    from evalwh.cli import app

    env = {"COLUMNS": "100", "TERMINAL_WIDTH": "100"}
    lazy = CliRunner().invoke(app, ["--help"], prog_name="evalwh", env=env)
    # the same screen drawn from the commands themselves (every module loaded)
    monkeypatch.setattr(_lazy.LazyGroup, "format_help", _lazy.OneLineGroup.format_help)
    loaded = CliRunner().invoke(app, ["--help"], prog_name="evalwh", env=env)
    assert set(_lazy.LOADED) == {module for _, module, _ in _lazy.COMMANDS}
    assert lazy.exit_code == loaded.exit_code == 0
    assert "Adjust an unpooled run's mean score" in lazy.stdout
    assert lazy.stdout == loaded.stdout


def test_the_cycle_collector_is_back_after_the_start_up_and_the_root_help(monkeypatch):
    """evalwh.__main__ and the root help switch Python's cycle collector off while they import
    and lay out (issue #54's start-up): it is on again after, also when they end by an error."""
    import gc

    import pytest
    from evalwh.cli import app

    from evalwh.__main__ import main

    class Interrupting:
        def find_spec(self, name, path=None, target=None):  # type: ignore[no-untyped-def]
            if name == "evalwh.cli":
                raise KeyboardInterrupt
            return None

    assert gc.isenabled()
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0 and "Commands" in result.output
    assert gc.isenabled()
    monkeypatch.delitem(sys.modules, "evalwh.cli", raising=False)
    monkeypatch.setattr(sys, "meta_path", [Interrupting(), *sys.meta_path])
    monkeypatch.setattr(sys, "argv", ["evalwh", "--help"])
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code == 130
    assert gc.isenabled()
