"""The evaluation report: one self-contained HTML (or Markdown) file per collection.

:func:`build_report` gathers the numbers and figures, :func:`render_html` and
:func:`render_markdown` lay them out. The layout lives in the Jinja2 templates of
``templates/`` (``report.html.j2``, ``report.css.j2``, ``report.md.j2``), shipped as package
data; ``render.py`` prepares the values they print.

May import: what :mod:`evalwh.present` may (the methods, statistics, measures and store), and
:mod:`evalwh.present.plots` for the figures it shares with ``evalwh plot``.
"""

from __future__ import annotations

from evalwh.present.report.build import build_report
from evalwh.present.report.model import Figure, Report, ReportOptions
from evalwh.present.report.render import render_html, render_markdown

__all__ = ["Figure", "Report", "ReportOptions", "build_report", "render_html", "render_markdown"]
