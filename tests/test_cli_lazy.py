"""The root command loads its commands' modules when they are used (issue #54: ``evalwh --help``
and usage errors stay light).

What is held is the import list of a fresh process, not a time: the root help, ``evalwh`` alone
and a mistyped command import no command module and none of pandas, DuckDB or numpy; a
command's own help imports its module only. The root group's table of names and first help
paragraphs (cli/_root_help.py) is held against the modules, and the root help drawn from it
against the one drawn from the loaded commands. ``evalwh --help`` and ``evalwh`` alone from the
shell print the plain screen of cli/_root_help.py without typer, click or Rich: it is held
against typer's own root help (the same commands in the same order with the same help, the
same options), every other screen against typer's.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest
import typer.main
from evalwh.cli import _lazy, _root_help
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
    monkeypatch.setattr(sys, "meta_path", [Interrupting(), *sys.meta_path])
    # (the CLI's import, and the plain root help's: evalwh --help)
    for argv in (["evalwh", "collections", "--help"], ["evalwh", "--help"]):
        monkeypatch.delitem(sys.modules, "evalwh.cli", raising=False)
        monkeypatch.setattr(sys, "argv", argv)
        with pytest.raises(SystemExit) as done:
            main()
        assert done.value.code == 130
        assert gc.isenabled()


# -- evalwh --help from the shell: the plain screen (cli/_root_help.py) -------------------------

LIGHT = ("typer", "click", "rich", "numpy", "pandas", "duckdb", "pyarrow", "scipy", "sqlglot")


def _evalwh(*args: str, columns: int = 200, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``python -m evalwh ARGS`` in a fresh process (``-X importtime``: its imports on stderr)."""
    environ = {**os.environ, "COLUMNS": str(columns), "TERMINAL_WIDTH": str(columns), **(env or {})}
    environ.pop("NO_COLOR", None)
    return subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "evalwh", *args],
        capture_output=True,
        text=True,
        env=environ,
        check=False,
    )


def _imported(done: subprocess.CompletedProcess) -> set[str]:
    return {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }


def _typers_screen(text: str) -> dict[str, object]:
    """Usage, description and the (name, help) rows of each panel of typer's (Rich's) root help;
    an option's metavar (``<file>``) after its name as the plain screen shows it (``FILE``)."""
    lines = [line.rstrip() for line in text.splitlines()]
    plain = [line.strip() for line in lines if line.strip() and line.lstrip()[0] not in "╭│╰"]
    out: dict[str, object] = {"usage": plain[0], "help": " ".join(plain[1:])}
    rows: list[list[str]] = []
    for line in lines:
        if line.startswith("╭─"):
            rows = out.setdefault(line.strip("╭─╮ ").split(" ")[0], [])  # type: ignore[assignment]
        elif line.startswith("│"):
            content = line[2:-1].rstrip()
            if content[:1] == " ":
                rows[-1][-1] += " " + content.strip()
                continue
            name, *rest = re.split(r" {2,}", content)
            if rest and re.fullmatch(r"<\w+>", rest[0]):
                name = f"{name} {rest.pop(0)[1:-1].upper()}"
            rows.append([name, " ".join(rest)])
    return {k: _normal(v) if isinstance(v, list) else v for k, v in out.items()}


def _plain_screen(text: str) -> dict[str, object]:
    """Usage, description and the (name, help) rows of each section of the plain root help."""
    out: dict[str, object] = {"usage": "", "help": ""}
    rows: list[list[str]] | None = None
    lines = text.splitlines()
    while lines[0]:  # (the usage, over several lines in a narrow terminal)
        out["usage"] = f"{out['usage']} {lines.pop(0).strip()}".strip()
    for line in lines:
        if line.endswith(":") and not line.startswith(" "):
            rows = []
            out[line[:-1]] = rows
        elif rows is None and line.strip():
            out["help"] = f"{out['help']} {line.strip()}".strip()
        elif rows is not None and line.startswith("  ") and line[2] != " ":
            # (the name, two spaces or more, its help; in a narrow terminal the help below)
            rows.append([*re.split(r" {2,}", line[2:], maxsplit=1), ""][:2])
        elif rows is not None and line.strip():
            rows[-1][-1] += " " + line.strip()
    return {k: _normal(v) if isinstance(v, list) else v for k, v in out.items()}


def _normal(rows: list[list[str]]) -> list[tuple[str, str]]:
    """(name, help) rows, the help's whitespace normalised."""
    return [(name, " ".join(text.split())) for name, text in rows]


def test_evalwh_help_imports_neither_typer_click_nor_rich():
    done = _evalwh("--help")
    assert done.returncode == 0, done.stderr[-2000:]
    heavy = sorted(m for m in _imported(done) if m.split(".")[0] in LIGHT)
    assert heavy == []
    assert "evalwh.cli._root_help" in _imported(done)
    cli = {m for m in _imported(done) if m.startswith("evalwh.cli")}
    assert cli == {"evalwh.cli", "evalwh.cli._root_help"}
    alone = _evalwh()  # (no_args_is_help: the same screen, exit 2 as typer's)
    assert alone.returncode == 2 and alone.stdout == done.stdout
    assert sorted(m for m in _imported(alone) if m.split(".")[0] in LIGHT) == []


@pytest.mark.parametrize("columns", [200, 100, 72])
def test_the_plain_root_help_lists_what_typers_lists(columns):
    """Same usage, description, options (with metavar and environment variable) and commands,
    in the same order with the same help, as typer draws (``--debug --help`` is typer's: the
    plain screen answers only ``--help`` alone), at every width."""
    plain = _evalwh("--help", columns=columns)
    typers = _evalwh("--debug", "--help", columns=columns)
    assert plain.returncode == typers.returncode == 0
    assert "typer" in _imported(typers) and "typer" not in _imported(plain)
    theirs, ours = _typers_screen(typers.stdout), _plain_screen(plain.stdout)
    assert ours["usage"] == theirs["usage"] == "Usage: python -m evalwh [OPTIONS] COMMAND [ARGS]..."
    assert ours["help"] == theirs["help"] == _root_help.HELP
    assert ours["Options"] == theirs["Options"]
    assert [name for name, _ in ours["Commands"]] == [c[0] for c in _lazy.COMMANDS]  # type: ignore[union-attr]
    assert ours["Commands"] == theirs["Commands"]
    db = "DuckDB warehouse file for the command (as the command's own --db; env EVALWH_DB)."
    assert ("--db FILE", db) in ours["Options"]  # type: ignore[operator]


def test_the_plain_root_help_fits_the_terminal():
    for columns in (30, 40, 60, 80, 132):
        text = _root_help.render("evalwh", columns)
        assert max(len(line) for line in text.splitlines()) <= columns, columns
        assert "\x1b" not in text
    narrow, wide = (_plain_screen(_root_help.render("evalwh", c)) for c in (30, 300))
    assert narrow == wide
    bold = _root_help.render("evalwh", 80, bold=True)
    assert "\x1b[1mUsage:\x1b[0m evalwh" in bold
    assert re.sub(r"\x1b\[[01]m", "", bold) == _root_help.render("evalwh", 80)


def test_only_the_root_help_is_plain():
    """A command's help, a usage error, ``-h`` (not an option of the root) and a completion
    request are typer's, as before."""
    for args, code in ((["eval", "--help"], 0), (["-h"], 2), (["evl"], 2), (["--help", "eval"], 0)):
        done = _evalwh(*args)
        assert done.returncode == code, (args, done.stderr[-2000:])
        assert "typer" in _imported(done), args
    assert "Usage: python -m evalwh eval" in _evalwh("eval", "--help").stdout
    assert "evalwh has no such option" in _evalwh("-h").stderr
    # (click's completion variable: typer answers; under python -m the variable is another one,
    # so typer draws its help)
    completing = _evalwh(env={"_EVALWH_COMPLETE": "bash_source"})
    assert "typer" in _imported(completing) and not completing.stdout.startswith("Usage:")
