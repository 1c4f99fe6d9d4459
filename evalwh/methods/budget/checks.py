"""The arguments of :meth:`evalwh.warehouse.Warehouse.budget` checked as the CLI's options are.

The CLI types its options (``--depth`` is a whole number >= 1, ``--seeds`` whole numbers >= 0);
the Python API takes whatever it is given. So a string where a list of strategies belongs
(``strategies='depth'``) is one strategy, not five letters; ``alpha=1.5``, ``rrf_k=nan``,
``depth='5'`` or ``depth=5.5``, a negative seed and an experiment id holding a space are
refused in one :class:`~evalwh.errors.ArgumentError` (or IngestError for an id) naming the
argument, before anything is read or stored.
"""

from __future__ import annotations

from typing import Any

from evalwh.errors import check_count, check_names, check_real, check_seed


def check_budget_options(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` of a replay or hybrid, checked and normalised (lists as lists, numbers as numbers).

    Examples:
        >>> check_budget_options({"strategies": "depth", "budgets": "10%", "seeds": 0})
        {'strategies': ['depth'], 'budgets': ['10%'], 'seeds': [0]}
    """
    out = dict(options)
    for name in ("strategies", "selections"):
        if name in out:
            out[name] = check_names(out[name], f"budget: {name}")
    if "budgets" in out:
        budgets = out["budgets"]
        out["budgets"] = [budgets] if isinstance(budgets, (str, int, float)) else list(budgets)
    if "seeds" in out:
        seeds = out["seeds"]
        seeds = [seeds] if isinstance(seeds, int) else list(seeds)
        for seed in seeds:
            check_seed(seed, "budget: seed")
        out["seeds"] = seeds
    for name in ("depth", "judged_depth"):
        if name in out:
            out[name] = check_count(out[name], f"budget: {name}")
    bounds = {
        "alpha": {"low": 0, "high": 1, "low_open": True, "high_open": True},
        "rbp_p": {"low": 0, "high": 1, "low_open": True, "high_open": True},
        "gamma": {"low": 0, "high": 1, "low_open": True},
        "rrf_k": {"low": 0},
        "rel": {},
    }
    for name, interval in bounds.items():
        if name in out:
            out[name] = check_real(out[name], f"budget: {name}", **interval)
    if out.get("experiment_id") is not None:
        from evalwh.store.ingest.frames import check_name

        check_name(out["experiment_id"], "experiment id")
    return out
