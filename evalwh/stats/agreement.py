"""Agreement between two label sets on the pairs both judged (methods §11.1-§11.3).

The input is two aligned arrays of grades: the reference's and the other set's label of the
same (topic, document) pairs. The categories are the distinct grades of both sides, in
increasing order (fractional grades are categories of their own). Everything is computed from
confusion matrices, stacked as an array of shape ``(groups, K, K)`` so that one call scores
every topic (or every label set) at once:

* percent agreement: the share of pairs with the same grade;
* Cohen's kappa, unweighted and with linear or quadratic disagreement weights on the
  categories' positions (as :func:`sklearn.metrics.cohen_kappa_score` weighs its labels);
* Krippendorff's alpha for two coders at the nominal, ordinal and interval levels (the
  interval level uses the grades' values, the ordinal level their order and frequencies).

Kappa and alpha are undefined when their chance term is zero, which for both happens exactly
when the two sides give every pair one and the same grade; the table functions leave them
empty and say why in ``note``, the scalar functions raise
:class:`~evalwh.errors.InsufficientDataError`. A side with one grade against a side with
several is no such case: kappa is then exactly 0, and ``note`` says why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from evalwh.errors import InsufficientDataError

if TYPE_CHECKING:
    import pandas as pd
    from numpy.typing import ArrayLike, NDArray

FEW_PAIRS = 30
"""Fewer shared pairs than this make every agreement statistic a warning case."""

KAPPA_WEIGHTS = ("none", "linear", "quadratic")
ALPHA_LEVELS = ("nominal", "ordinal", "interval")


def confusion(
    reference: ArrayLike,
    labels: ArrayLike,
    *,
    groups: ArrayLike | None = None,
    n_groups: int | None = None,
    categories: ArrayLike | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Confusion matrices of two aligned label arrays, one per group.

    Args:
        reference: The reference's grade of each pair.
        labels: The other set's grade of the same pairs.
        groups: A group number (0, 1, ...) per pair, e.g. the topic; None: one group.
        n_groups: How many groups (those without pairs get zeros); None: the largest number + 1.
        categories: The categories, increasing; None: the distinct grades of both arrays.

    Returns:
        ``(categories, counts)``: counts has shape ``(groups, K, K)``, rows the reference's
        category and columns the other set's.

    Examples:
        >>> cats, counts = confusion([0, 1, 1, 2], [0, 1, 2, 2])
        >>> cats.tolist(), counts[0].tolist()
        ([0.0, 1.0, 2.0], [[1.0, 0.0, 0.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]])
    """
    a = np.asarray(reference, dtype=np.float64)
    b = np.asarray(labels, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise InsufficientDataError(
            f"agreement: the two label arrays must be 1-d and aligned; got shapes {a.shape} and {b.shape}"
        )
    cats = np.unique(np.concatenate([a, b])) if categories is None else np.asarray(categories, dtype=np.float64)
    g = np.zeros(len(a), dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)
    if n_groups is None:
        n_groups = int(g.max()) + 1 if len(g) else 1
    elif len(g) and (g.min() < 0 or g.max() >= n_groups):
        raise InsufficientDataError(f"agreement: group numbers must lie in 0..{n_groups - 1}")
    k = len(cats)
    i = np.searchsorted(cats, a)
    j = np.searchsorted(cats, b)
    if len(a) and (i.max(initial=0) >= k or j.max(initial=0) >= k or (cats[i] != a).any() or (cats[j] != b).any()):
        raise InsufficientDataError("agreement: a grade is not among the categories given")
    flat = np.bincount((g * k + i) * k + j, minlength=n_groups * k * k)
    return cats, flat.reshape(n_groups, k, k).astype(np.float64)


def _weights(positions: NDArray[np.float64], weights: str) -> NDArray[np.float64]:
    """Disagreement weights on category positions, per group: shape ``(G, K, K)``, 0 on the diagonal."""
    diff = np.abs(positions[:, :, None] - positions[:, None, :])
    if weights == "none":
        return (diff > 0).astype(np.float64)
    if weights == "linear":
        return diff
    if weights == "quadratic":
        return diff**2
    raise InsufficientDataError(f"kappa: weights {weights!r}: give one of {', '.join(KAPPA_WEIGHTS)}")


def positions(counts: NDArray[np.float64], scopes: ArrayLike | None = None) -> NDArray[np.float64]:
    """Each category's position among the categories used within its group's scope: ``(G, K)``.

    Weighted kappa weighs disagreements by how far apart two categories lie among the
    categories in use (as scikit-learn does with its sorted labels). A scope is the set of
    groups whose categories count together: per label set, say, so that every topic of one
    set weighs with the same positions. None: all groups form one scope. A category no group
    of the scope uses gets a position too, never used (its counts are zero).
    """
    n_groups = counts.shape[0]
    scope = np.zeros(n_groups, dtype=np.int64) if scopes is None else np.asarray(scopes, dtype=np.int64)
    used = (counts.sum(axis=2) + counts.sum(axis=1)) > 0  # (G, K)
    per_scope = np.zeros((int(scope.max(initial=0)) + 1, counts.shape[1]), dtype=np.int64)
    np.add.at(per_scope, scope, used.astype(np.int64))
    place = np.cumsum(per_scope > 0, axis=1) - 1
    return place[scope].astype(np.float64)


def kappa_from_counts(
    counts: NDArray[np.float64], *, weights: str = "none", scopes: ArrayLike | None = None
) -> NDArray[np.float64]:
    """Cohen's kappa of each confusion matrix in ``counts`` (shape ``(G, K, K)``).

    ``1 - sum(w * observed) / sum(w * expected)``, expected from the two margins, weights on
    the categories' :func:`positions` within each group's scope; NaN where the expected
    disagreement is zero (a side with one category, or no pairs).
    """
    w = _weights(positions(counts, scopes), weights)
    n = counts.sum(axis=(1, 2))
    rows = counts.sum(axis=2)
    cols = counts.sum(axis=1)
    observed = np.einsum("gij,gij->g", counts, w)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = np.einsum("gi,gj,gij->g", rows, cols, w) / n
        value = 1.0 - observed / expected
    return np.where((n > 0) & (expected > 0), value, np.nan)


def _alpha_delta(coincidence: NDArray[np.float64], values: NDArray[np.float64], level: str) -> NDArray[np.float64]:
    """Squared distance between categories per group: shape ``(G, K, K)``."""
    k = len(values)
    g = coincidence.shape[0]
    if level == "nominal":
        return np.broadcast_to((~np.eye(k, dtype=bool)).astype(np.float64), (g, k, k))
    if level == "interval":
        return np.broadcast_to((values[:, None] - values[None, :]) ** 2, (g, k, k))
    if level == "ordinal":
        # Krippendorff's ordinal metric: the frequencies between two categories, each end
        # counted half: (sum_{c<=x<=k} n_x - (n_c + n_k) / 2)^2
        n_c = coincidence.sum(axis=2)
        cum = np.cumsum(n_c, axis=1)
        lo = np.minimum.outer(np.arange(k), np.arange(k))
        hi = np.maximum.outer(np.arange(k), np.arange(k))
        between = cum[:, hi] - cum[:, lo] + n_c[:, lo]
        return (between - (n_c[:, lo] + n_c[:, hi]) / 2.0) ** 2
    raise InsufficientDataError(f"alpha: level {level!r}: give one of {', '.join(ALPHA_LEVELS)}")


def alpha_from_counts(
    counts: NDArray[np.float64], categories: NDArray[np.float64], *, level: str = "nominal"
) -> NDArray[np.float64]:
    """Krippendorff's alpha of two coders for each confusion matrix in ``counts``.

    Each pair is a unit with two values; the coincidence matrix is ``C + C^T`` and
    ``alpha = 1 - (n - 1) * sum(o * delta) / sum(n_c n_k delta)`` with ``n = 2 * pairs``.
    NaN where the expected disagreement is zero (one category in all, or no pairs).
    """
    return alpha_from_coincidence(counts + np.transpose(counts, (0, 2, 1)), categories, level=level)


def agreement_from_counts(counts: NDArray[np.float64]) -> NDArray[np.float64]:
    """The share of pairs on the diagonal of each confusion matrix (NaN without pairs)."""
    n = counts.sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(n > 0, np.trace(counts, axis1=1, axis2=2) / n, np.nan)


def undefined_reason(counts: NDArray[np.float64], categories: NDArray[np.float64]) -> list[str]:
    """Why kappa and alpha cannot be computed for each confusion matrix, or '' when they can.

    Both are 0/0 exactly when the two sides give every shared pair one and the same grade
    (or there are no shared pairs): then observed and expected disagreement are both zero.
    A side with one grade while the other has more is no such case: kappa is then 0
    (:func:`one_grade_note`).
    """
    rows = counts.sum(axis=2) > 0
    cols = counts.sum(axis=1) > 0
    reasons = [""] * counts.shape[0]
    for g in np.flatnonzero((rows.sum(axis=1) <= 1) & (cols.sum(axis=1) <= 1)):
        if not rows[g].any():
            reasons[g] = "no shared pairs"
        elif (rows[g] == cols[g]).all():
            grade = _grade(categories[rows[g]][0])
            reasons[g] = f"kappa and alpha undefined: both sides give every pair grade {grade}"
    return reasons


def one_grade_note(counts: NDArray[np.float64], categories: NDArray[np.float64]) -> list[str]:
    """Why kappa is 0 for each confusion matrix where a side gives every pair one grade, else ''.

    With one side constant the observed agreement equals the agreement expected by chance
    (``p_o = p_e``), so every kappa, weighted or not, is exactly 0; alpha is defined and
    pools the two sides' grades. Where kappa is undefined (:func:`undefined_reason`) the
    note is ''.
    """
    rows = counts.sum(axis=2) > 0
    cols = counts.sum(axis=1) > 0
    undefined = undefined_reason(counts, categories)
    notes = [""] * counts.shape[0]
    for g in np.flatnonzero((rows.sum(axis=1) == 1) | (cols.sum(axis=1) == 1)):
        if undefined[g]:
            continue
        sides = [
            f"{name} gives every pair grade {_grade(categories[present][0])}"
            for name, present in (("the reference", rows[g]), ("the set", cols[g]))
            if present.sum() == 1
        ]
        notes[g] = " and ".join(sides) + ": kappa is 0 (agreement no better than chance)"
    return notes


def _grade(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def statistics_from_counts(
    counts: NDArray[np.float64], categories: NDArray[np.float64], *, scopes: ArrayLike | None = None
) -> dict[str, NDArray[np.float64]]:
    """Every agreement statistic of each confusion matrix: name -> array over groups."""
    out = {
        "pairs": counts.sum(axis=(1, 2)),
        "agreement": agreement_from_counts(counts),
        "kappa": kappa_from_counts(counts, scopes=scopes),
        "kappa_linear": kappa_from_counts(counts, weights="linear", scopes=scopes),
        "kappa_quadratic": kappa_from_counts(counts, weights="quadratic", scopes=scopes),
    }
    for level in ALPHA_LEVELS:
        out[f"alpha_{level}"] = alpha_from_counts(counts, categories, level=level)
    return out


def binary_counts(counts: NDArray[np.float64], categories: NDArray[np.float64], at: float) -> NDArray[np.float64]:
    """Collapse confusion matrices to 2 x 2: grade < ``at`` (0) against grade >= ``at`` (1)."""
    hot = (np.asarray(categories) >= at).astype(np.float64)
    onehot = np.stack([1.0 - hot, hot], axis=1)  # (K, 2)
    return np.einsum("gij,ia,jb->gab", counts, onehot, onehot)


def agreement_table(
    reference: ArrayLike,
    labels: ArrayLike,
    *,
    groups: ArrayLike | None = None,
    n_groups: int | None = None,
    scopes: ArrayLike | None = None,
    binary_at: float | None = None,
) -> pd.DataFrame:
    """Every agreement statistic of two aligned label arrays, per group.

    Args:
        reference: The reference's grade of each pair.
        labels: The other set's grade of the same pairs.
        groups: A group number per pair (0, 1, ...); None: one group of all pairs.
        n_groups: How many groups (a group without pairs gets a row too); None: from ``groups``.
        scopes: Per group, the scope whose categories the weighted kappas' positions come
            from (:func:`positions`); None: the categories of all pairs.
        binary_at: Also the statistics of grade >= this (``kappa_binary``, ``agreement_binary``).

    Returns:
        One row per group: ``group, pairs, agreement, kappa, kappa_linear, kappa_quadratic,
        alpha_nominal, alpha_ordinal, alpha_interval`` (``, kappa_binary, agreement_binary``),
        ``note``. A statistic that is undefined is NaN and ``note`` says why; fewer than
        :data:`FEW_PAIRS` pairs are noted too.

    Examples:
        >>> table = agreement_table([0, 1, 2, 2, 1, 0], [0, 1, 2, 1, 1, 1])
        >>> round(float(table.loc[0, "kappa"]), 4), round(float(table.loc[0, "agreement"]), 4)
        (0.5, 0.6667)
    """
    import pandas as pd

    a = np.asarray(reference, dtype=np.float64)
    g = np.zeros(len(a), dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)
    cats, counts = confusion(a, labels, groups=g, n_groups=n_groups)
    frame = pd.DataFrame({"group": np.arange(counts.shape[0]), **statistics_from_counts(counts, cats, scopes=scopes)})
    frame["pairs"] = frame["pairs"].astype(np.int64)
    notes = _notes(counts, cats)
    if binary_at is not None:
        two = binary_counts(counts, cats, binary_at)
        frame["kappa_binary"] = kappa_from_counts(two)
        frame["agreement_binary"] = agreement_from_counts(two)
        binary_notes = _notes(two, np.array([0.0, 1.0]))
        notes = [
            n if not b or b == n else "; ".join(x for x in (n, f"binary at {_grade(binary_at)}: {b}") if x)
            for n, b in zip(notes, binary_notes, strict=True)
        ]
    few = [
        f"only {int(p)} shared pairs (under {FEW_PAIRS}): the statistics are unreliable" if 0 < p < FEW_PAIRS else ""
        for p in frame["pairs"]
    ]
    frame["note"] = ["; ".join(x for x in (n, f) if x) for n, f in zip(notes, few, strict=True)]
    return frame


def _notes(counts: NDArray[np.float64], categories: NDArray[np.float64]) -> list[str]:
    """Per group: why kappa and alpha are undefined, or why kappa is 0, or ''."""
    undefined = undefined_reason(counts, categories)
    zero = one_grade_note(counts, categories)
    return [u or z for u, z in zip(undefined, zero, strict=True)]


def _one(reference: ArrayLike, labels: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    cats, counts = confusion(reference, labels)
    reason = undefined_reason(counts, cats)[0]
    if reason:
        raise InsufficientDataError(reason)
    return cats, counts


def cohen_kappa(reference: ArrayLike, labels: ArrayLike, *, weights: str = "none") -> float:
    """Cohen's kappa of two aligned label arrays (``weights``: none, linear or quadratic).

    Raises:
        InsufficientDataError: when both sides give every pair one and the same grade (kappa
            is 0/0); a side with one grade against several gives kappa 0.

    Examples:
        >>> round(cohen_kappa([0, 1, 2, 2, 1, 0], [0, 1, 2, 1, 1, 1], weights="quadratic"), 4)
        0.6667
    """
    cats, counts = _one(reference, labels)
    return float(kappa_from_counts(counts, weights=weights)[0])


def krippendorff_alpha(reference: ArrayLike, labels: ArrayLike, *, level: str = "nominal") -> float:
    """Krippendorff's alpha of two coders who both labelled every pair (``level``: nominal, ordinal, interval).

    Raises:
        InsufficientDataError: when both sides give every pair one and the same grade.

    Examples:
        >>> round(krippendorff_alpha([0, 1, 2, 2, 1, 0], [0, 1, 2, 1, 1, 1], level="interval"), 4)
        0.6944
    """
    cats, counts = _one(reference, labels)
    return float(alpha_from_counts(counts, cats, level=level)[0])


# -- intervals and several raters ------------------------------------------------------------


def normal_interval(
    estimate: NDArray[np.float64], replicates: NDArray[np.float64], confidence: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``estimate +- z * sd(replicates)`` per column of ``replicates`` (shape ``(B, G)``), cut to [-1, 1].

    The normal bootstrap interval of methods §11.4, centred on the estimate; replicates that
    are NaN (a replicate where the statistic is undefined) are left out. NaN where the
    estimate is NaN or fewer than two replicates are defined.
    """
    from statistics import NormalDist  # the quantile without importing scipy.stats (about a second)

    if not 0.0 < confidence < 1.0:
        raise InsufficientDataError(f"bootstrap: confidence={confidence} must lie strictly between 0 and 1")
    defined = np.isfinite(replicates)
    count = defined.sum(axis=0)
    filled = np.where(defined, replicates, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = filled.sum(axis=0) / count
        sd = np.sqrt(np.where(defined, (replicates - mean) ** 2, 0.0).sum(axis=0) / (count - 1))
    half = NormalDist().inv_cdf((1.0 + confidence) / 2.0) * sd
    ok = np.isfinite(estimate) & (count >= 2)
    low = np.where(ok, np.maximum(estimate - half, -1.0), np.nan)
    high = np.where(ok, np.minimum(estimate + half, 1.0), np.nan)
    return low, high


def kappa_interval(counts: NDArray[np.float64], confidence: float = 0.95) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Large-sample interval of unweighted Cohen's kappa per confusion matrix, cut to [-1, 1].

    ``kappa +- z * se`` with the standard error of Fleiss, Cohen and Everitt (1969, Psychological
    Bulletin 72(5)), the variance :func:`statsmodels.stats.inter_rater.cohens_kappa` gives as
    ``var_kappa``: with p the shares of the matrix, r and c its row and column margins, p_e the
    chance agreement and N the pairs,
    ``[sum_i p_ii (1 - (r_i + c_i)(1 - kappa))^2 + (1 - kappa)^2 sum_{i != j} p_ij (c_i + r_j)^2
    - (kappa - p_e (1 - kappa))^2] / ((1 - p_e)^2 N)``. It is for one group of pairs taken as
    independent (the pairs of one topic, where no coarser unit is left to resample). NaN where
    kappa is undefined, a side gives one grade only (kappa is then 0 by construction) or the
    matrix is empty.

    Args:
        counts: Confusion matrices, shape ``(..., K, K)``.
        confidence: Coverage of the intervals.

    Returns:
        ``(low, high)``, each of shape ``counts.shape[:-2]``.

    Examples:
        >>> low, high = kappa_interval(np.array([[20.0, 5.0], [10.0, 15.0]]))
        >>> round(float(low), 4), round(float(high), 4)
        (0.1511, 0.6489)
    """
    from statistics import NormalDist

    if not 0.0 < confidence < 1.0:
        raise InsufficientDataError(f"kappa interval: confidence={confidence} must lie strictly between 0 and 1")
    counts = np.asarray(counts, dtype=np.float64)
    n = counts.sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = counts / n[..., None, None]
        rows, cols = p.sum(axis=-1), p.sum(axis=-2)
        diagonal = np.diagonal(p, axis1=-2, axis2=-1)
        observed = diagonal.sum(axis=-1)
        chance = (rows * cols).sum(axis=-1)
        kappa = (observed - chance) / (1.0 - chance)
        k1 = (1.0 - kappa)[..., None]
        term_a = (diagonal * (1.0 - (rows + cols) * k1) ** 2).sum(axis=-1)
        off = p * (cols[..., :, None] + rows[..., None, :]) ** 2  # p_ij (c_i + r_j)^2
        off_sum = off.sum(axis=(-2, -1)) - np.diagonal(off, axis1=-2, axis2=-1).sum(axis=-1)
        term_b = (1.0 - kappa) ** 2 * off_sum
        term_c = (kappa - chance * (1.0 - kappa)) ** 2
        variance = (term_a + term_b - term_c) / (1.0 - chance) ** 2 / n
        half = NormalDist().inv_cdf((1.0 + confidence) / 2.0) * np.sqrt(np.maximum(variance, 0.0))
    # a side with one grade makes kappa 0 by construction (its variance is 0): no interval to give
    one_grade = ((rows > 0).sum(axis=-1) < 2) | ((cols > 0).sum(axis=-1) < 2)
    ok = np.isfinite(kappa) & np.isfinite(half) & (n > 0) & ~one_grade
    low = np.where(ok, np.maximum(kappa - half, -1.0), np.nan)
    high = np.where(ok, np.minimum(kappa + half, 1.0), np.nan)
    return low, high


def topic_weights(topics: int, resamples: int, rng: np.random.Generator | int | None) -> NDArray[np.float64]:
    """Bootstrap draws of topics as counts ``(resamples, topics)``: row b says how often each topic is drawn.

    Replicate b draws ``rng.integers(0, topics, (resamples, topics))[b]``, as
    :func:`evalwh.stats.rankings.tau_b_replicates` does.
    """
    if resamples < 1 or topics < 1:
        raise InsufficientDataError(f"bootstrap: resamples={resamples} and topics={topics} must be at least 1")
    drawn = np.random.default_rng(rng).integers(0, topics, size=(resamples, topics))
    flat = (drawn + (np.arange(resamples) * topics)[:, None]).ravel()
    return np.bincount(flat, minlength=resamples * topics).reshape(resamples, topics).astype(np.float64)


def bootstrap_agreement(
    counts: NDArray[np.float64],
    categories: NDArray[np.float64],
    *,
    level: str = "ordinal",
    resamples: int = 1000,
    confidence: float = 0.95,
    rng: np.random.Generator | int | None = None,
) -> dict[str, NDArray[np.float64]]:
    """Bootstrap intervals over topics for Cohen's kappa and Krippendorff's alpha of each set.

    Topics, not pairs, are drawn: the pairs of one topic share its query, its assessor and
    the judge's reading of it, so their labels err together, and a bootstrap over pairs would
    pretend they are independent and give too narrow intervals. Each replicate draws the
    topics with replacement (:func:`topic_weights`, the same draws for every set), adds up
    the drawn topics' confusion matrices and computes the statistics; the interval is
    :func:`normal_interval` around the estimate on all topics.

    Args:
        counts: Confusion matrices per set and topic, shape ``(sets, topics, K, K)``.
        categories: The K categories, increasing.
        level: Krippendorff's alpha's level (nominal, ordinal, interval).
        resamples: Bootstrap replicates.
        confidence: Coverage of the intervals.
        rng: Seed or generator of the draws.

    Returns:
        Arrays over the sets: ``kappa_low, kappa_high, alpha_<level>_low, alpha_<level>_high``.

    Examples:
        >>> _, c = confusion([0, 1, 1, 0, 1, 0], [0, 1, 0, 0, 1, 1], groups=[0, 0, 1, 1, 2, 2])
        >>> out = bootstrap_agreement(c[None], np.array([0.0, 1.0]), resamples=200, rng=1)
        >>> sorted(out)
        ['alpha_ordinal_high', 'alpha_ordinal_low', 'kappa_high', 'kappa_low']
    """
    if counts.ndim != 4:
        raise InsufficientDataError(f"bootstrap: confusion matrices of shape (sets, topics, K, K) needed; got {counts.shape}")
    sets, topics, k, _ = counts.shape
    weights = topic_weights(topics, resamples, rng)
    total = counts.sum(axis=1)
    # one matrix product: (B, topics) @ (topics, sets * K * K)
    per_topic = np.ascontiguousarray(np.transpose(counts, (1, 0, 2, 3))).reshape(topics, sets * k * k)
    replicates = (weights @ per_topic).reshape(resamples * sets, k, k)
    out: dict[str, NDArray[np.float64]] = {}
    # each replicate weighs kappa by the positions of the categories it uses, as the estimate does
    kappa = kappa_from_counts(replicates, scopes=np.arange(resamples * sets)).reshape(resamples, sets)
    out["kappa_low"], out["kappa_high"] = normal_interval(kappa_from_counts(total, scopes=np.arange(sets)), kappa, confidence)
    alpha = alpha_from_counts(replicates, categories, level=level).reshape(resamples, sets)
    low, high = normal_interval(alpha_from_counts(total, categories, level=level), alpha, confidence)
    out[f"alpha_{level}_low"], out[f"alpha_{level}_high"] = low, high
    return out


def alpha_from_coincidence(
    coincidence: NDArray[np.float64], categories: NDArray[np.float64], *, level: str = "nominal"
) -> NDArray[np.float64]:
    """Krippendorff's alpha from coincidence matrices ``(G, K, K)`` (any number of coders).

    ``alpha = 1 - (n - 1) * sum(o * delta) / sum(n_c n_k delta)``, ``n`` the pairable values
    (the matrix's total). NaN where the expected disagreement is zero.
    """
    delta = _alpha_delta(coincidence, np.asarray(categories, dtype=np.float64), level)
    n = coincidence.sum(axis=(1, 2))
    marg = coincidence.sum(axis=2)
    observed = np.einsum("gij,gij->g", coincidence, delta)
    expected = np.einsum("gi,gj,gij->g", marg, marg, delta)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = 1.0 - (n - 1.0) * observed / expected
    return np.where((n > 0) & (expected > 0), value, np.nan)


def coincidence_per_group(values: NDArray[np.int64], groups: ArrayLike, n_groups: int, k: int) -> NDArray[np.float64]:
    """Coincidence matrices of units coded by several coders, summed per group: ``(n_groups, K, K)``.

    Args:
        values: Per unit and coder, the category's index (0..K-1), or -1 where the coder gave
            no value; shape ``(units, coders)``.
        groups: A group number per unit (the topic, say).
        n_groups: How many groups.
        k: How many categories.

    A unit with m >= 2 values adds ``(n_u n_u^T - diag(n_u)) / (m - 1)`` (``n_u`` its count per
    category): every ordered pair of values from different coders, weighted by 1 / (m - 1).
    A unit with fewer than two values is not pairable and adds nothing.
    """
    units = values.shape[0]
    onehot = np.zeros((units, k))
    for coder in range(values.shape[1]):  # a few coders: one vectorised pass each
        have = values[:, coder] >= 0
        np.add.at(onehot, (np.flatnonzero(have), values[have, coder]), 1.0)
    m = onehot.sum(axis=1)
    scale = np.where(m >= 2, 1.0 / np.maximum(m - 1.0, 1.0), 0.0)
    g = np.asarray(groups, dtype=np.int64)
    out = np.zeros((n_groups, k, k))
    np.add.at(out, g, (onehot * scale[:, None])[:, :, None] * onehot[:, None, :])
    diagonal = np.zeros((n_groups, k))
    np.add.at(diagonal, g, onehot * scale[:, None])
    out[:, np.arange(k), np.arange(k)] -= diagonal
    return out
