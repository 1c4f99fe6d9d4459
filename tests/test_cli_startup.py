"""What every ``evalwh`` process pays before its command starts (issue #29: each step of the
warehouse path is a process of its own, so its start-up counts three times end to end).

Typer's Rich layer is loaded only for a help screen, and the commands' annotations are
objects by the time typer reads them; help screens still fold long defaults.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _in_a_fresh_process(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True
    )
    return result.stdout.strip()


def test_the_cli_starts_without_typers_rich_layer():
    out = _in_a_fresh_process(
        """
        import sys
        import typer.main
        from evalwh.cli import app
        typer.main.get_command(app)  # what every command's process does before running it
        print("typer.rich_utils" in sys.modules)
        """
    )
    assert out == "False"


def test_every_command_reads_its_annotations_as_objects():
    out = _in_a_fresh_process(
        """
        import typer.main
        from evalwh.cli import app, _lazy

        typer.main.get_command(app).commands  # (every command's module loaded: cli/_lazy.py)

        def callbacks(group):
            for info in [*group.registered_commands, group.registered_callback]:
                if info is not None and info.callback is not None:
                    yield info.callback
            for sub in group.registered_groups:
                yield from callbacks(sub.typer_instance)

        found = [f for t in [app, *_lazy.LOADED.values()] for f in callbacks(t)]
        text = [f.__name__ for f in found if any(isinstance(a, str) for a in f.__annotations__.values())]
        print(len(found), text)
        """
    )
    count, text = out.split(" ", 1)
    assert int(count) > 30
    assert text == "[]"


def test_a_help_screen_in_a_fresh_process_still_folds_long_defaults():
    out = _in_a_fresh_process(
        """
        import re
        from typer.testing import CliRunner
        from evalwh.cli import app
        result = CliRunner().invoke(app, ["adjust", "--help"], env={"COLUMNS": "60", "TERMINAL_WIDTH": "60"})
        flat = re.sub(r"[\\s│]+", "", result.stdout)
        print(result.exit_code, "RBP_trunc(p=0.8)@10" in flat, "RBP_trunc(p=0.8)@1…" in flat)
        """
    )
    assert out == "0 True False"


def test_the_float32_note_of_eval_does_not_import_the_statistics():
    # evalwh eval on a warehouse imports evalwh.present.report.ties for its note; the report
    # package's names come at first use, so scipy.stats (about a CPU second) stays out
    out = _in_a_fresh_process(
        """
        import sys
        import evalwh.present.report.ties
        before = "scipy.stats" in sys.modules
        from evalwh.present.report import ReportOptions, build_report
        print(before, "scipy.stats" in sys.modules, callable(build_report), ReportOptions.__name__)
        """
    )
    assert out == "False True True ReportOptions"
