"""The evaluation report: one self-contained HTML (or Markdown) file per collection.

:func:`build_report` gathers the numbers and figures, :func:`render_html` and
:func:`render_markdown` lay them out.
"""

from __future__ import annotations

from evalwh.report.build import Figure, Report, ReportOptions, build_report
from evalwh.report.render import render_html, render_markdown

__all__ = ["Figure", "Report", "ReportOptions", "build_report", "render_html", "render_markdown"]
