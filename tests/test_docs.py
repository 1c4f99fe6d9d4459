"""The documentation says what the code does.

- README.md stays short (at most 300 lines) and its quick start runs as written;
- every command has help text and an example, and a guide page (or the README) shows it;
- every ``evalwh ...`` line in the README and docs/ names a real command and real options;
- every ``§x.y`` the code, the SQL, the report or the docs cite is a section of docs/methods.md;
- the generated CLI reference (docs/hooks.py) has a section for every command and every option.

The site itself (generated CLI and API reference, links and anchors) is checked by
``mkdocs build --strict`` in .ci/run.
"""

from __future__ import annotations

import glob
import importlib.util
import re
import shlex
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from evalwh.cli import app

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
DOCS = ROOT / "docs"
PAGES = {p.relative_to(DOCS).as_posix(): p.read_text() for p in sorted(DOCS.rglob("*.md"))}
METHODS = PAGES["methods.md"]
CLICK_APP = typer.main.get_command(app)


def test_readme_is_short():
    lines = README.count("\n")
    assert lines <= 300, f"README.md has {lines} lines; move the detail to a page of docs/"


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


COMMANDS = _commands(CLICK_APP)


def test_every_command_has_help_and_an_example():
    for path, command in COMMANDS:
        assert command.help, f"evalwh {path} has no help"
        if not _is_group(command):
            assert "Example: evalwh" in command.help, f"evalwh {path} has no Example: line"
            for param in command.params:
                if param.param_type_name == "option" and param.name != "help":
                    assert param.help, f"evalwh {path} {param.opts[0]} has no help"


def test_every_command_is_shown_in_a_guide():
    guides = README + "".join(text for name, text in PAGES.items() if not name.startswith("reference/"))
    for path, command in COMMANDS:
        if not _is_group(command):
            assert re.search(rf"evalwh {re.escape(path)}\b", guides), f"no guide shows `evalwh {path}`"


# -- the command lines shown in the README and on the pages ------------------------------

FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)


def _command_lines(text: str) -> list[str]:
    """``evalwh ...`` lines of the fenced blocks, comments, pipes and redirections cut off."""
    lines = []
    for block in FENCE.findall(text):
        joined: list[str] = []
        for line in block.replace("\\\n", " ").splitlines():
            if joined and joined[-1].count('"') % 2:  # a quoted argument goes on
                joined[-1] += " " + line.strip()
            else:
                joined.append(line)
        for line in joined:
            line = line.strip().removeprefix("$ ")
            for part in re.split(r"\s(?:&&|\|\||\||;)\s", line):
                part = part.strip()
                if part.startswith("evalwh ") or part == "evalwh":
                    lines.append(part)
    return lines


def _words(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars="<>|")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    words = []
    for word in lexer:
        if word and set(word) <= set("<>|"):
            break  # a redirection or pipe: the rest is not evalwh's
        words.append(word)
    return words


def _resolve(words: list[str]) -> tuple[list[str], object, list[str]]:
    """The command path, the click command and the words after it."""
    command, path, rest = CLICK_APP, [], words[1:]
    while rest[:1] in (["--db"], ["--debug"], ["--csv-safe"]):  # root options may stand before the command
        rest = rest[2:] if rest[0] == "--db" else rest[1:]
    while _is_group(command) and rest and not rest[0].startswith("-"):
        sub = command.commands.get(rest[0])  # type: ignore[attr-defined]
        if sub is None:
            break
        command, path, rest = sub, [*path, rest[0]], rest[1:]
    return path, command, rest


def _option_names(command: object, *, root: bool) -> set[str]:
    names = {"--help"}
    for param in command.params:  # type: ignore[attr-defined]
        names.update(param.opts)
        names.update(getattr(param, "secondary_opts", []))
    if root:
        names |= _option_names(CLICK_APP, root=False)
    return names


DOC_LINES = [
    (name, line)
    for name, text in [("README.md", README), *PAGES.items()]
    for line in _command_lines(text)
]


def test_the_docs_show_commands():
    assert len(DOC_LINES) > 50


@pytest.mark.parametrize(("page", "line"), DOC_LINES, ids=[f"{p}:{i}" for i, (p, _) in enumerate(DOC_LINES)])
def test_documented_command_lines_name_real_commands_and_options(page: str, line: str):
    path, command, rest = _resolve(_words(line))
    assert path or rest[:1] in ([], ["--help"]) or rest[0].startswith("-"), (
        f"{page}: `{line}` names no evalwh command"
    )
    assert not _is_group(command) or not rest or rest[0].startswith("-"), (
        f"{page}: `{line}`: no command {rest[0]!r} in `evalwh {' '.join(path)}`"
    )
    known = _option_names(command, root=bool(path))
    for word in rest:
        if word.startswith("-") and len(word) > 1 and not re.fullmatch(r"-\d.*", word):
            option = word.split("=", 1)[0]
            assert option in known, f"{page}: `{line}`: `evalwh {' '.join(path)}` has no option {option}"


# -- the README's quick start, run as written ----------------------------------------------


def test_readme_quick_start_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    block = README.split("<!-- quickstart:start -->", 1)[1].split("<!-- quickstart:end -->", 1)[0]
    lines = _command_lines(block)
    assert len(lines) >= 10
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("EVALWH_DB", raising=False)
    runner = CliRunner()
    for line in lines:
        args = [w for word in _words(line)[1:] for w in (sorted(glob.glob(word)) or [word])]
        result = runner.invoke(app, args)
        assert result.exit_code == 0, f"`{line}` failed:\n{result.output}"
    assert (tmp_path / "report.html").stat().st_size > 10_000
    assert any((tmp_path / "exported").rglob("*.parquet"))


# -- methods § citations ------------------------------------------------------------------
# A § number is a section of docs/methods.md, unless a paper's short name comes right before it
# ("S4 §5" is section 5 of the paper S4).

SECTION_SIGN = re.compile(r"§\s?(\d+(?:\.\d+)*)")
PAPER_BEFORE = re.compile(r"\bS\d+\s?\(?$")
ANCHOR = re.compile(r"\{\s*#s(\d+(?:\.\d+)*)\s*\}")
CITING = ["evalwh", "cli", "queries", "schema", "docs", "bench"]
SUFFIXES = {".py", ".sql", ".md", ".html", ".js", ".css", ".c", ".j2"}


def _citations(text: str) -> list[tuple[int, str, int]]:
    """``(line number, section, offset)`` of every methods section the text cites."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for match in SECTION_SIGN.finditer(line):
            if not PAPER_BEFORE.search(line[: match.start()]):
                found.append((number, match.group(1), match.start()))
    return found


def _cited_sections() -> dict[str, list[str]]:
    cited: dict[str, list[str]] = {}
    files = [ROOT / "README.md"] + [
        p for d in CITING for p in sorted((ROOT / d).rglob("*")) if p.suffix in SUFFIXES
    ]
    for path in files:
        for number, section, _ in _citations(path.read_text(errors="replace")):
            cited.setdefault(section, []).append(f"{path.relative_to(ROOT)}:{number}")
    return cited


def test_every_cited_methods_section_exists():
    anchors = set(ANCHOR.findall(METHODS))
    cited = _cited_sections()
    assert len(cited) > 40
    missing = {s: where[:3] for s, where in cited.items() if s not in anchors}
    assert not missing, f"cited but not a section of docs/methods.md: {missing}"


def test_methods_headings_carry_their_number_as_anchor():
    headings = re.findall(r"^#{2,4} (\d+(?:\.\d+)*)\.? .*\{\s*#s(\d+(?:\.\d+)*)\s*\}$", METHODS, re.M)
    assert len(headings) > 80 and all(number == anchor for number, anchor in headings)
    anchors = ANCHOR.findall(METHODS)
    assert len(anchors) == len(set(anchors)) == len(headings)


def test_pages_link_their_methods_citations():
    """On the site a cited section is a link to its anchor, outside code."""
    for name, text in PAGES.items():
        if name.startswith("reference/"):
            continue
        prose = FENCE.sub(lambda m: "\n" * m.group().count("\n"), text)
        prose = re.sub(r"`[^`\n]*`", lambda m: " " * len(m.group()), prose)
        for number, section, offset in _citations(prose):
            line = prose.splitlines()[number - 1]
            target = "#s" if name == "methods.md" else "methods.md#s"
            rest = line[offset:]
            assert re.match(rf"§\s?{re.escape(section)}\]\({re.escape(target)}{re.escape(section)}\)", rest), (
                f"docs/{name}:{number}: §{section} is not a link to {target}{section}"
            )


# -- the generated CLI reference ----------------------------------------------------------


def test_cli_reference_lists_every_command_and_option():
    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    reference = hooks.cli_reference()
    for path, command in COMMANDS:
        anchor = "evalwh-" + path.replace(" ", "-")
        assert f"{{ #{anchor} }}" in reference, f"no section for evalwh {path}"
        for param in command.params:
            if param.param_type_name == "option" and not param.hidden and param.name != "help":
                assert param.opts[0] in reference, f"evalwh {path} {param.opts[0]} is not in the reference"
    assert "<!-- cli-reference -->" in PAGES["reference/cli.md"]
    assert "<!-- metric-table -->" in PAGES["evaluation.md"]
