"""README is current: assembled from docs/readme, metric table from the registry, every command documented."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import typer.main

from evalwh import catalog
from evalwh.cli import app

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _assembler():
    spec = importlib.util.spec_from_file_location("assemble_readme", ROOT / "docs" / "assemble_readme.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_is_assembled_from_parts():
    assert _assembler().assembled(README) == README, "run: python docs/assemble_readme.py"


def test_readme_metric_table_is_the_registry():
    block = README.split("<!-- metrics:start -->\n", 1)[1].split("<!-- metrics:end -->", 1)[0]
    assert block == catalog.metric_table_markdown()


def _is_group(command: object) -> bool:
    return hasattr(command, "commands")


def _commands(group: object, prefix: str = "") -> list[tuple[str, object]]:
    """Every command of the typer app, by its path (typer builds click-style objects)."""
    out = []
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        path = f"{prefix}{name}"
        out.append((path, command))
        if _is_group(command):
            out.extend(_commands(command, path + " "))
    return out


COMMANDS = _commands(typer.main.get_command(app))


def test_every_command_has_help_and_an_example():
    for path, command in COMMANDS:
        assert command.help, f"evalwh {path} has no help"
        if not _is_group(command):
            assert "Example: evalwh" in command.help, f"evalwh {path} has no Example: line"
            for param in command.params:
                if param.param_type_name == "option" and param.name != "help":
                    assert param.help, f"evalwh {path} {param.opts[0]} has no help"


def test_every_command_appears_in_readme():
    for path, command in COMMANDS:
        if _is_group(command):
            continue
        assert re.search(rf"evalwh {re.escape(path)}\b", README), f"README never shows `evalwh {path}`"
