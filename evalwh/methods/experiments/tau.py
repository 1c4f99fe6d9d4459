"""Kendall tau_b between system rankings (methods §8.3, §9.21)."""

from __future__ import annotations

from itertools import combinations
from typing import TYPE_CHECKING

from evalwh.errors import InsufficientDataError

if TYPE_CHECKING:
    import pandas as pd


def kendall_tau(first: pd.Series, second: pd.Series) -> tuple[float, float, int]:
    """Kendall tau_b between two rankings of runs given as run means indexed by run id.

    Only runs with a value in both are compared.

    Returns:
        ``(tau, p_value, n_runs)`` from :func:`scipy.stats.kendalltau` (variant ``b``).

    Raises:
        InsufficientDataError: if fewer than two runs are shared.

    Examples:
        >>> import pandas as pd
        >>> a = pd.Series({"r1": 0.3, "r2": 0.2, "r3": 0.1})
        >>> b = pd.Series({"r1": 0.5, "r2": 0.6, "r3": 0.1})
        >>> round(kendall_tau(a, b)[0], 6)
        0.333333
    """
    from scipy import stats

    joined = first.rename("first").to_frame().join(second.rename("second"), how="inner").dropna()
    if len(joined) < 2:
        raise InsufficientDataError(
            f"Kendall tau: the rankings share {len(joined)} run(s); need at least 2"
        )
    result = stats.kendalltau(joined["first"], joined["second"], variant="b")
    return float(result.statistic), float(result.pvalue), len(joined)


def measure_tau(means: pd.DataFrame) -> pd.DataFrame:
    """Kendall tau_b between the run rankings of every pair of measures.

    Args:
        means: Run means in long form, ``measure, run_id, value``.

    Returns:
        One row per pair of measures, in the order they first appear:
        ``measure_a, measure_b, n_runs, tau, p_value``.

    Examples:
        >>> import pandas as pd
        >>> means = pd.DataFrame({"measure": ["AP"] * 3 + ["RankEff"] * 3, "run_id": ["a", "b", "c"] * 2,
        ...                       "value": [0.3, 0.2, 0.1, 0.9, 0.7, 0.8]})
        >>> measure_tau(means)[["measure_a", "measure_b", "tau"]].round(4).values.tolist()
        [['AP', 'RankEff', 0.3333]]
    """
    import pandas as pd

    missing = [c for c in ("measure", "run_id", "value") if c not in means.columns]
    if missing:
        raise InsufficientDataError(
            f"Kendall tau: means is missing columns {missing}; expected measure, run_id, value"
        )
    by_measure = {
        str(m): part.set_index("run_id")["value"]
        for m, part in means.groupby("measure", sort=False)
    }
    rows = []
    for measure_a, measure_b in combinations(by_measure, 2):
        tau, p_value, n_runs = kendall_tau(by_measure[measure_a], by_measure[measure_b])
        rows.append(
            {
                "measure_a": measure_a,
                "measure_b": measure_b,
                "n_runs": n_runs,
                "tau": tau,
                "p_value": p_value,
            }
        )
    return pd.DataFrame(rows, columns=["measure_a", "measure_b", "n_runs", "tau", "p_value"])
