"""MkDocs hooks: the parts of the site generated from the code at every build.

- ``<!-- cli-reference -->`` becomes the command-line reference, walked from the typer app.
  A typer app is a click-style command tree (``typer.main.get_command``); each command's usage
  line, help text and the help record of each argument and option (what ``--help`` prints:
  names, metavar, help, default, environment variable) are read from it, so the reference
  lists exactly the commands and options of the code being documented.
- ``<!-- metric-table -->`` becomes the metric registry's table
  (``evalwh.measures.catalog.metric_table_markdown``).
- On the generated reference pages, a docstring's or help text's ``methods §x.y`` becomes a
  link to that section of the methods page (the guide pages write their links themselves).
"""

from __future__ import annotations

import html
import re

CLI_REFERENCE = "<!-- cli-reference -->"
METRIC_TABLE = "<!-- metric-table -->"


def on_page_markdown(markdown, page, config, files):
    if CLI_REFERENCE in markdown:
        markdown = markdown.replace(CLI_REFERENCE, cli_reference())
    if METRIC_TABLE in markdown:
        from evalwh.measures import catalog

        markdown = markdown.replace(METRIC_TABLE, catalog.metric_table_markdown())
    return markdown


CITATION = re.compile(r"methods §(\d+(?:\.\d+)*)")
TAG = re.compile(r"(<[^>]+>)")


def on_page_content(html_text, page, config, files):
    if not page.file.src_uri.startswith("reference/"):
        return html_text
    from mkdocs.utils import get_relative_url

    target = get_relative_url("methods/", page.url)
    parts, inside_link = TAG.split(html_text), 0
    for i, part in enumerate(parts):
        if part.startswith("<"):
            inside_link += part.startswith("<a ") or part == "<a>"
            inside_link -= part == "</a>"
        elif not inside_link and "methods §" in part:
            parts[i] = CITATION.sub(rf'<a href="{target}#s\1">\g<0></a>', part)
    return "".join(parts)


def cli_reference() -> str:
    """Markdown for every command of ``evalwh``: a heading (anchor ``evalwh-sub-command``) each."""
    import typer.main

    from evalwh.cli import app

    root = typer.main.get_command(app)
    out: list[str] = []
    _command(root, root.context_class(root, info_name="evalwh"), ["evalwh"], out)
    return "\n".join(out) + "\n"


def _command(command, ctx, path: list[str], out: list[str]) -> None:
    level = "#" * min(len(path) + 1, 4)
    out += [f"{level} {' '.join(path)} {{ #{'-'.join(path)} }}", ""]
    out += _help(command.help or "")
    usage = command.get_usage(ctx).removeprefix("Usage: ").strip()
    out += ["```text", usage, "```", ""]
    rows = []
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is None or param.name == "help":
            continue
        names, text = record
        rows.append(f"| `{names}` | {_cell(text)} |")  # a code span keeps its pipes
    if rows:
        out += ["| argument or option | description |", "|---|---|", *rows, ""]
    subcommands = getattr(command, "commands", None)
    if subcommands:
        names = command.list_commands(ctx)
        out += ["Commands: " + ", ".join(f"[`{n}`](#{'-'.join([*path, n])})" for n in names), ""]
        for name in names:
            sub = subcommands[name]
            _command(sub, sub.context_class(sub, info_name=name, parent=ctx), [*path, name], out)


def _help(text: str) -> list[str]:
    """Help text as paragraphs; its ``Example:`` lines as one code block."""
    prose, examples = [], []
    for line in text.strip().splitlines():
        if line.strip().startswith("Example: "):
            examples.append(line.strip().removeprefix("Example: "))
        else:
            prose.append(html.escape(line.strip(), quote=False))
    out = ["\n".join(prose).strip(), ""] if any(prose) else []
    if examples:
        out += ["```", *examples, "```", ""]
    return out


def _cell(text: str) -> str:
    return html.escape(" ".join(text.split()), quote=False).replace("|", "\\|")
