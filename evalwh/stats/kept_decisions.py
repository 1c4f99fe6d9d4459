"""Significant pairwise decisions kept, lost and reversed when the label set changes (methods §16).

A *decision* is the outcome of one pair of runs under one label set, as
:func:`evalwh.stats.significance.pairwise` gives it: +1 when the first run is significantly
better, -1 when it is significantly worse, 0 when the test does not reject. Against a
reference set, each of the reference's significant pairs is

* **kept** when the other set finds it significant in the same direction,
* **lost** when the other set finds no significant difference,
* **reversed** when the other set finds it significant in the opposite direction;

a pair the reference does not find significant and the other set does is **gained**. Otero,
Parapar and Ferro (CIKM 2023) showed that the label sets whose rankings correlate best with
the reference's (tau) are not always those that keep its significant decisions, so the counts
are reported beside tau_b, tau_ap and RBO. The same functions serve ``sensitivity``,
``qrels diff`` and the budget replay's share of significant pairs kept.

* :func:`pair_changes`: the change of every pair, as a string label.
* :func:`count_changes`: how many pairs of each kind, and the share kept.
* :func:`decisions`: the outcomes of every pair of runs under one set (the family's test and
  correction), on a runs x topics matrix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from evalwh.errors import InsufficientDataError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

KINDS = ("kept", "lost", "reversed", "gained")
"""The changes a pair's decision can undergo; a pair significant under neither set is ``""``."""
COUNT_COLUMNS = ("pairs", "significant", "kept", "lost", "reversed", "gained", "kept_share")
"""The columns :func:`count_changes` returns, in order."""


def _outcomes(reference: ArrayLike, other: ArrayLike) -> tuple[NDArray[np.int8], NDArray[np.int8]]:
    ref = np.asarray(reference, dtype=np.float64)
    oth = np.asarray(other, dtype=np.float64)
    if ref.shape != oth.shape or ref.ndim != 1:
        raise InsufficientDataError(
            f"decisions: the two outcome vectors must be one-dimensional and aligned, got {ref.shape} and {oth.shape}"
        )
    bad = ~np.isin(ref, (-1, 0, 1)) | ~np.isin(oth, (-1, 0, 1))
    if bad.any():
        raise InsufficientDataError("decisions: outcomes are -1, 0 or +1 (one per pair)")
    return ref.astype(np.int8), oth.astype(np.int8)


def pair_changes(reference: ArrayLike, other: ArrayLike) -> NDArray[np.str_]:
    """The change of each pair's decision from ``reference`` to ``other`` (aligned outcome vectors).

    Examples:
        >>> pair_changes([1, 1, -1, 0, 0, 1], [1, 0, 1, -1, 0, -1]).tolist()
        ['kept', 'lost', 'reversed', 'gained', '', 'reversed']
    """
    ref, oth = _outcomes(reference, other)
    return np.select(
        [(ref != 0) & (oth == ref), (ref != 0) & (oth == 0), (ref != 0) & (oth == -ref), (ref == 0) & (oth != 0)],
        list(KINDS),
        default="",
    )


def count_changes(reference: ArrayLike, other: ArrayLike) -> dict[str, float]:
    """Counts of the pairs by change, with the reference's significant pairs and the share kept.

    ``kept + lost + reversed == significant``; ``kept_share`` is ``kept / significant``
    (NaN when the reference finds no pair significant).

    Examples:
        >>> count_changes([1, 1, -1, 0, 0, 1], [1, 0, 1, -1, 0, -1])
        {'pairs': 6, 'significant': 4, 'kept': 1, 'lost': 1, 'reversed': 2, 'gained': 1, 'kept_share': 0.25}
    """
    changes = pair_changes(reference, other)
    counts: dict[str, float] = {"pairs": int(changes.size)}
    counts["significant"] = int(np.count_nonzero(np.asarray(reference, dtype=np.float64)))
    for kind in KINDS:
        counts[kind] = int(np.count_nonzero(changes == kind))
    counts["kept_share"] = counts["kept"] / counts["significant"] if counts["significant"] else float("nan")
    return counts


def decisions(
    values: ArrayLike,
    runs: Sequence[str],
    *,
    test: str,
    correction: str,
    alpha: float,
    n_resamples: int = 9999,
    rng: np.random.Generator | int | None = None,
) -> NDArray[np.int8]:
    """The outcome of every pair of ``runs`` (in :func:`numpy.triu_indices` order) on a runs x topics matrix.

    The pairs are tested as :func:`evalwh.stats.significance.pairwise` tests them: ``test``
    over the family of all pairs, ``correction`` over those pairs, significance at ``alpha``.

    Examples:
        >>> values = [[0.9, 0.8, 0.9, 0.7], [0.1, 0.2, 0.1, 0.2], [0.5, 0.9, 0.1, 0.4]]
        >>> decisions(values, ["a", "b", "c"], test="t", correction="holm", alpha=0.05).tolist()
        [1, 0, 0]
    """
    import pandas as pd

    from evalwh.stats.significance import pairwise

    matrix = np.asarray(values, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != len(runs):
        raise InsufficientDataError(f"decisions: expected {len(runs)} runs x topics, got shape {matrix.shape}")
    frame = pd.DataFrame({
        "run_id": np.repeat(np.asarray(runs, dtype=object), matrix.shape[1]),
        "query_id": np.tile(np.arange(matrix.shape[1]).astype(str), matrix.shape[0]),
        "value": matrix.ravel(),
    })  # fmt: skip
    tested = pairwise(
        frame, test=test, correction=correction, alpha=alpha, runs=list(runs), n_resamples=n_resamples, rng=rng
    )
    return tested["outcome"].to_numpy(dtype=np.int8)
