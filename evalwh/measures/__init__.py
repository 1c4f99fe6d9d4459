"""Measures: the metric registry, measure names, evaluation, and trec_eval's front end.

Owns: the registry built from ``queries/metrics/*.sql`` and the ir_measures-style name grammar
(:mod:`.catalog`), trec_eval's names and command line (:mod:`.trec_names`,
:mod:`.trec_command`), the evaluation over a warehouse (:mod:`.evaluation`), the direct path
from files without storing them (:mod:`.direct`), ``evalwh trec_eval`` (:mod:`.trec_eval`) and
trec_eval's text output (:mod:`.trec_format`).

May import: :mod:`evalwh.store`, :mod:`evalwh.io`, :mod:`evalwh.errors`, :mod:`evalwh.sql`.
"""
