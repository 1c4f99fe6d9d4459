"""Presentation: the HTML report, figures for papers and tables for papers.

Owns: the evaluation report (:mod:`.report`: gathered in Python, laid out by Jinja2 templates),
the figures (:mod:`.plots`, matplotlib's Agg canvas, never pyplot) and the LaTeX and Markdown
tables of a comparison (:mod:`.paper_table`).

May import everything below it: :mod:`evalwh.methods`, :mod:`evalwh.stats`,
:mod:`evalwh.measures`, :mod:`evalwh.store`, :mod:`evalwh.io`, :mod:`evalwh.errors`,
:mod:`evalwh.sql`. Nothing here is imported by the layers below.
"""
