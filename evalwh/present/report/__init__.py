"""The evaluation report: one self-contained HTML (or Markdown) file per collection.

:func:`build_report` gathers the numbers and figures, :func:`render_html` and
:func:`render_markdown` lay them out. The layout lives in the Jinja2 templates of
``templates/`` (``report.html.j2``, ``report.css.j2``, ``report.md.j2``), shipped as package
data; ``render.py`` prepares the values they print.

May import: what :mod:`evalwh.present` may (the methods, statistics, measures and store), and
:mod:`evalwh.present.plots` for the figures it shares with ``evalwh plot``.


The names below are imported when first asked for (PEP 562): ``evalwh eval`` imports
:mod:`.ties` of this package for its float32 note, and importing :mod:`.build` with it (the
statistics, hence scipy.stats) took about a CPU second of every evaluation on a warehouse.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalwh.present.report.build import build_report
    from evalwh.present.report.model import Figure, Report, ReportOptions
    from evalwh.present.report.render import render_html, render_markdown

__all__ = ["Figure", "Report", "ReportOptions", "build_report", "render_html", "render_markdown"]

_HOME = {
    "Figure": "model",
    "Report": "model",
    "ReportOptions": "model",
    "build_report": "build",
    "render_html": "render",
    "render_markdown": "render",
}


def __getattr__(name: str) -> Any:
    """The public names, each imported from its module at first use."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
