"""MkDocs hooks: the parts of the site generated from the code at every build.

- The CLI reference (``docs/reference/cli.md``) is rendered by mkdocs-click. A typer app is a
  click app underneath: ``typer.main.get_command(app)`` builds the click command tree, which
  is published here as the module ``evalwh_cli_reference`` for mkdocs-click to import.
- ``<!-- metric-table -->`` in a page is replaced by the metric registry's table
  (``evalwh.catalog.metric_table_markdown``), so the list of metrics is never hand-copied.
"""

from __future__ import annotations

import sys
import types

MODULE = "evalwh_cli_reference"
METRIC_TABLE = "<!-- metric-table -->"


def on_config(config):
    import typer.main

    from evalwh.cli import app

    module = types.ModuleType(MODULE, "The click command tree of the evalwh typer app.")
    module.command = typer.main.get_command(app)
    sys.modules[MODULE] = module
    return config


def on_page_markdown(markdown, page, config, files):
    if METRIC_TABLE in markdown:
        from evalwh import catalog

        markdown = markdown.replace(METRIC_TABLE, catalog.metric_table_markdown())
    return markdown
