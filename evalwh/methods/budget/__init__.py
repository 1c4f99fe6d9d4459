"""What a judging budget buys (methods §5.5-§5.7): judging orders, replays, and people with an LLM.

One concern per module, in the order data flows:

* :mod:`.order`: the strategies that order a pool's candidates for judging (pure: frames in,
  frames out, randomness only from a seed), and a budget applied to an order.
* :mod:`.candidates`: the warehouse's side of it, a pool's candidates read and put in order.
* :mod:`.scores`: every run scored under many label sets in one set-wise pass.
* :mod:`.replays`: ``evalwh experiment budget``: each strategy's judged prefixes at each budget,
  compared with the complete reference (relevant found, tau_b, tau_ap, significance kept).
* :mod:`.hybrids`: ``evalwh experiment budget --machine SET``: people judge a budget of a machine
  set's pairs, a calibration on them labels the rest; :func:`simulated_judge`, a judge with a
  known bias; :func:`export_tasks`, judging tasks.
* :mod:`.ids`: experiment ids and the notes on what a budget bought; :mod:`.checks`: the Python
  API's arguments checked as the CLI's typed options are.

The names below are the package's surface (``from evalwh.methods import budget``).

May import: what :mod:`evalwh.methods` may (:mod:`evalwh.stats`, :mod:`evalwh.measures`,
:mod:`evalwh.store`, :mod:`evalwh.io`, :mod:`evalwh.errors`, :mod:`evalwh.sql`), and
:mod:`evalwh.methods.pools` (pools as data) and :mod:`evalwh.methods.audits` (an audit's pairs
as judging tasks).
"""

from __future__ import annotations

from evalwh.methods.budget.hybrids import (
    TASK_FORMATS,
    calibrate,
    choose_pairs,
    export_tasks,
    hybrid,
    machine_probabilities,
    simulated_judge,
)
from evalwh.methods.budget.order import STRATEGIES
from evalwh.methods.budget.replays import (
    CALIBRATIONS,
    RESULT_COLUMNS,
    SELECTIONS,
    compare_to_reference,
    parse_budgets,
    replay,
    store_results,
    stored_results,
    summarise,
)
from evalwh.methods.budget.scores import score_label_sets

__all__ = [
    "CALIBRATIONS", "RESULT_COLUMNS", "SELECTIONS", "STRATEGIES", "TASK_FORMATS", "calibrate", "choose_pairs",
    "compare_to_reference", "export_tasks", "hybrid", "machine_probabilities", "parse_budgets", "replay",
    "score_label_sets", "simulated_judge", "store_results", "stored_results", "summarise",
]  # fmt: skip
