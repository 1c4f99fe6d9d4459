"""Random audits and prediction-powered scores (methods §15).

A machine judge (an LLM) labels every judged pair of a frame (a pool, or a qrels set's pairs);
people label a *random audit* of it, which evalwh draws (:func:`draw_sample`) or which is
declared and checked (:func:`check_declared`). Each run's score under the human labels is then
estimated from both (:mod:`evalwh.stats.ppi`): the machine's score corrected by the audit.

Two designs:

* ``pairs``: a simple random sample of the frame's pairs, or one within each stratum (a
  topic, or a machine grade). A measure linear in the labels at a fixed ranking (``P@k``,
  ``RBP``, ``dcg``) is a sum over pairs of ``weight(rank) * gain(label) / topics``: the unit is
  the pair, its value that sum's term for each run (:func:`pair_values`). nDCG and AP divide by
  a sum over all of a topic's labels and are refused with the topics design named.
* ``topics``: a simple random sample of the frame's topics, every pair of them audited. The
  unit is the topic, its value the measure on that topic divided by the topics: every measure.

The sampling here is pure (frames in, frames out); the warehouse's side (reading the frame,
storing the audit) is in :func:`draw_audit` and :func:`declare_audit`; the estimates from an
audit and its human labels in :mod:`evalwh.methods.audit_estimates`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from evalwh import sql
from evalwh.errors import EvalWhError, InsufficientDataError, MetricParamError, NotFoundError
from evalwh.measures import catalog

if TYPE_CHECKING:
    from evalwh.store.connection import Store

_QUERIES = "evalwh.queries.audits"
DESIGNS = ("pairs", "topics")
STRATIFY = ("topic", "grade")
LINEAR = ("P", "RBP", "dcg")  # measures linear in the labels at a fixed ranking
IMPLAUSIBLE_P = 1e-3  # a declared audit whose sample departs from the frame this clearly is refused
TOPIC_DRAWS = 9999  # samples of the topic test's null distribution (its p-value is at least 1/10000)
RANK_BINS = (
    1,
    2,
    4,
    11,
    21,
    51,
    101,
)  # best rank of a pair over the runs: 1, 2-3, 4-10, 11-20, ...


# -- drawing (pure) --------------------------------------------------------------------------


def _allocate(population: np.ndarray, size: int) -> np.ndarray:
    """Proportional allocation of ``size`` units to strata, at least 2 per stratum (all of a smaller one).

    Largest remainders settle the rounding. Examples:
        >>> _allocate(np.array([50, 30, 20, 1]), 10).tolist()
        [4, 3, 2, 1]
    """
    floor = np.minimum(population, 2)
    if size < floor.sum():
        raise InsufficientDataError(
            f"audit: {size} units cannot give each of {len(population)} strata its 2 (the variance needs them); "
            f"draw at least {int(floor.sum())} or stratify less finely"
        )
    share = population / population.sum() * size
    counts = np.clip(np.floor(share).astype(np.int64), floor, population)
    while counts.sum() > size:  # the floors of 2 took more than their share: shrink the largest
        room = np.where(counts > floor, counts - share, -np.inf)
        counts[int(np.argmax(room))] -= 1
    while counts.sum() < size:
        room = np.where(counts < population, share - counts, -np.inf)
        counts[int(np.argmax(room))] += 1
    return counts


def draw_sample(
    frame: pd.DataFrame, design: str, size: int, *, stratify: str | None = None, seed: int = 0,
    presorted: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame]:  # fmt: skip
    """Draw a random audit from a frame of judged pairs.

    Args:
        frame: ``query_id, doc_id, machine_grade``: every pair of the frame, once.
        design: ``pairs`` (a sample of pairs) or ``topics`` (a sample of topics, all their pairs).
        size: Units to draw: pairs, or topics.
        stratify: ``topic`` or ``grade`` (the machine's) for a sample within each stratum,
            allocated in proportion to the strata's sizes (at least 2 each); pairs only.
        seed: numpy ``default_rng``'s seed.
        presorted: The frame is sorted by topic and document already, with a default index
            (the sort is skipped: a simulation drawing many audits of one frame).

    Returns:
        ``(pairs, strata)``: the audited ``query_id, doc_id, stratum, draw_order`` (in a random
        judging order, so that the first ``m`` judged of a sample without strata are a random
        sample too) and ``stratum, label, population, sampled``.

    Raises:
        MetricParamError: for an unknown design or stratification, or a size out of range.
    """
    if design not in DESIGNS:
        raise MetricParamError(f"audit: design {design!r} is not one of {', '.join(DESIGNS)}")
    if stratify is not None and stratify not in STRATIFY:
        raise MetricParamError(f"audit: stratify {stratify!r} is not one of {', '.join(STRATIFY)}")
    if design == "topics" and stratify is not None:
        raise MetricParamError(
            "audit: a sample of topics takes no strata (stratify the pairs design)"
        )
    rng = np.random.default_rng(seed)
    if not presorted:
        frame = frame.sort_values(["query_id", "doc_id"], kind="stable").reset_index(drop=True)
    if design == "topics":
        topics = np.asarray(sorted(frame["query_id"].unique()))
        if not 2 <= size <= len(topics):
            raise MetricParamError(
                f"audit: {size} topics asked for; the frame has {len(topics)} (give 2 to {len(topics)})"
            )
        chosen = topics[rng.permutation(len(topics))[:size]]
        place = {topic: i for i, topic in enumerate(chosen)}
        picked = frame[frame["query_id"].isin(place)].copy()
        picked["_order"] = picked["query_id"].map(place)
        picked = picked.sort_values(["_order", "doc_id"], kind="stable")
        strata = pd.DataFrame(
            {"stratum": [0], "label": ["all"], "population": [len(topics)], "sampled": [size]}
        )
        pairs = picked[["query_id", "doc_id"]].assign(stratum=0)
    else:
        if not 2 <= size <= len(frame):
            raise MetricParamError(
                f"audit: {size} pairs asked for; the frame has {len(frame)} (give 2 to {len(frame)})"
            )
        if stratify is None:
            labels = np.zeros(len(frame), dtype=np.int64)
            names = ["all"]
        else:
            key = (
                frame["query_id"]
                if stratify == "topic"
                else frame["machine_grade"].map(_grade_text)
            )
            names_index, labels = np.unique(key.to_numpy(str), return_inverse=True)
            names = [str(x) for x in names_index]
        population = np.bincount(labels, minlength=len(names))
        counts = _allocate(population, size)
        chosen = np.concatenate(
            [rng.permutation(np.flatnonzero(labels == h))[: counts[h]] for h in range(len(names))]
        )
        chosen = chosen[rng.permutation(len(chosen))]  # one random judging order across strata
        pairs = frame.iloc[chosen][["query_id", "doc_id"]].assign(stratum=labels[chosen])
        strata = pd.DataFrame({"stratum": np.arange(len(names)), "label": names, "population": population,
                               "sampled": counts})  # fmt: skip
    pairs = pairs.reset_index(drop=True)
    pairs["draw_order"] = np.arange(1, len(pairs) + 1, dtype=np.int64)
    return pairs, strata.astype({"stratum": "int64", "population": "int64", "sampled": "int64"})


def _grade_text(grade: float) -> str:
    return str(int(grade)) if float(grade).is_integer() else str(grade)


def rank_bin_labels() -> list[str]:
    """Names of the best-rank bins :func:`check_declared` compares: ``1, 2-3, ..., >100 or none``."""
    edges = list(RANK_BINS)
    names = [
        f"{a}" if b == a + 1 else f"{a}-{b - 1}" for a, b in zip(edges[:-1], edges[1:], strict=True)
    ]
    return names + [f">{edges[-1] - 1} or unretrieved"]


def check_declared(
    frame: pd.DataFrame, audited: pd.DataFrame, strata_of: pd.Series, design: str
) -> tuple[str | None, str]:
    """Whether an audit drawn elsewhere is a plausible random sample of the frame.

    Args:
        frame: ``query_id, doc_id, machine_grade, best_rank`` (NULL best rank: no run retrieved it).
        audited: ``query_id, doc_id`` of the audit.
        strata_of: The stratum label of every frame pair (index aligned with ``frame``).
        design: ``pairs`` or ``topics``.

    Returns:
        ``(refusal, note)``: a reason to refuse (None when plausible) and what the check found.

    For pairs, within each stratum the audited pairs' best ranks over the runs and machine
    grades are set against the frame's shares (Pearson's chi-square, expected counts summed
    over the strata), and their topics against the stratum's (:func:`topic_spread`); a p-value
    below 0.001 refuses the audit, naming the largest departure. For topics, each audited
    topic must be complete (every frame pair of it audited).
    """
    from scipy import stats

    keys = frame.set_index(["query_id", "doc_id"]).index
    wanted = pd.MultiIndex.from_frame(audited[["query_id", "doc_id"]].astype(str))
    outside = wanted.difference(keys)
    if len(outside):
        q, d = outside[0]
        return (
            f"{len(outside)} audited pair(s) are not in the frame, e.g. topic {q} document {d}",
            "",
        )
    inside = keys.isin(wanted)
    if design == "topics":
        topics = set(audited["query_id"].astype(str))
        in_topics = frame["query_id"].isin(topics).to_numpy()
        missing = int((in_topics & ~inside).sum())
        if missing:
            return (
                f"{missing} frame pair(s) of the audited topics were not audited: a topics audit judges every pair "
                "of its topics",
                "",
            )
        return None, f"{len(topics)} complete topics of {frame['query_id'].nunique()}"
    bins = np.digitize(frame["best_rank"].fillna(np.inf).to_numpy(float), RANK_BINS[1:])
    names = rank_bin_labels()
    grades = frame["machine_grade"].map(_grade_text).to_numpy(str)
    found: list[tuple[float, str]] = []
    for what, values in (("best rank", bins), ("machine grade", grades)):
        table = pd.crosstab(strata_of.to_numpy(str), values)
        sampled = (
            pd.crosstab(strata_of.to_numpy(str)[inside], values[inside])
            .reindex_like(table)
            .fillna(0)
        )
        n_h = sampled.sum(axis=1)
        expected = (table.div(table.sum(axis=1), axis=0).mul(n_h, axis=0)).sum(axis=0)
        observed = sampled.sum(axis=0)
        keep = expected > 0
        if keep.sum() < 2:
            continue
        chi2 = float((((observed - expected) ** 2)[keep] / expected[keep]).sum())
        p = float(stats.chi2.sf(chi2, int(keep.sum()) - 1))
        worst = ((observed - expected).abs() / np.sqrt(expected.clip(lower=1e-12)))[keep].idxmax()
        label = names[int(worst)] if what == "best rank" else str(worst)
        found.append((p, f"{what}: chi-square p = {p:.3g}, {what} {label} has {int(observed[worst])} audited "
                         f"pairs where a random sample has {expected[worst]:.1f}"))  # fmt: skip
    spread = topic_spread(frame["query_id"].astype(str).to_numpy(), strata_of.to_numpy(str), np.asarray(inside))
    if spread is not None:
        p, topic, stratum, seen, expected = spread
        where = "" if stratum is None else f" of stratum {stratum}"
        found.append((p, f"topic: chi-square p = {p:.3g} (Monte Carlo), topic {topic} has {seen} audited pairs{where} "
                         f"where a random sample has {expected:.1f}"))  # fmt: skip
    note = "; ".join(text for _, text in found)
    bad = [text for p, text in found if p < IMPLAUSIBLE_P]
    if bad:
        return "not a plausible random sample of the frame: " + bad[0], note
    return None, note


def topic_spread(
    topics: np.ndarray, strata: np.ndarray, inside: np.ndarray, *, draws: int = TOPIC_DRAWS, seed: int = 0
) -> tuple[float, str, str | None, int, float] | None:  # fmt: skip
    """Whether the audited pairs spread over the topics as a random sample of each stratum would.

    Pearson's statistic ``sum_h sum_t (O_ht - E_ht)^2 / E_ht`` with ``E_ht = n_h N_ht / N_h``
    (``N_ht`` the stratum's frame pairs of topic ``t``, ``n_h`` its audited pairs) is set against
    ``draws`` audits drawn as the design draws them (the counts of a simple random sample of
    each stratum: multivariate hypergeometric); the p-value is ``(1 + b) / (draws + 1)``, ``b``
    the draws at least as far off (a Monte Carlo test, Hope 1968; exact whatever the counts).

    Args:
        topics: Each frame pair's topic.
        strata: Each frame pair's stratum.
        inside: Whether each frame pair was audited.
        draws: Audits drawn for the null distribution.
        seed: Their seed (one audit's note is the same every time).

    Returns:
        ``(p, topic, stratum, audited, expected)`` with the topic and stratum (None when there is
        one) furthest from a random sample's count, or None when no stratum has an audited
        pair, pairs left and two topics (a topic-stratified design fixes the counts).
    """
    table = pd.crosstab(strata, topics)
    population = table.to_numpy(np.int64)
    observed = pd.crosstab(strata[inside], topics[inside]).reindex_like(table).fillna(0).to_numpy(np.int64)
    n_h = observed.sum(axis=1)
    expected = population * (n_h / population.sum(axis=1))[:, None]
    rows = [h for h in range(len(table))
            if 0 < n_h[h] < population[h].sum() and np.count_nonzero(population[h]) >= 2]  # fmt: skip
    if not rows:
        return None
    seen = sum(float(_pearson(observed[h][None, :], expected[h])[0]) for h in rows)
    null = _null_pearson(population[rows], n_h[rows], expected[rows], draws, seed)
    p = (1 + int(np.count_nonzero(null >= seen * (1 - 1e-9)))) / (draws + 1)
    departure = np.abs(observed - expected) / np.sqrt(np.where(expected > 0, expected, np.inf))
    departure[[h for h in range(len(table)) if h not in rows]] = -1.0
    h, t = np.unravel_index(int(np.argmax(departure)), departure.shape)
    stratum = None if len(table) == 1 else str(table.index[h])
    return p, str(table.columns[t]), stratum, int(observed[h, t]), float(expected[h, t])


def _pearson(counts: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Pearson's statistic of each row of ``counts`` against ``expected`` (cells expecting none left out)."""
    keep = expected > 0
    return (((counts[:, keep] - expected[keep]) ** 2) / expected[keep]).sum(axis=1)


def _null_pearson(
    population: np.ndarray, sampled: np.ndarray, expected: np.ndarray, draws: int, seed: int
) -> np.ndarray:
    """Pearson's statistic, summed over the strata (rows), of ``draws`` simple random samples of each."""
    rng = np.random.default_rng(seed)
    out = np.zeros(draws)
    step = max(1, 2_000_000 // population.shape[1])  # draws at a time: a few million counts in memory
    for colours, n, wanted in zip(population, sampled, expected, strict=True):
        for start in range(0, draws, step):
            counts = rng.multivariate_hypergeometric(colours, int(n), size=min(step, draws - start))
            out[start : start + len(counts)] += _pearson(counts, wanted)
    return out


# -- unit values (pure) ----------------------------------------------------------------------


def check_measure(measure: catalog.Measure, design: str) -> None:
    """Refuse a measure the design cannot estimate, in one line naming the topics design."""
    if design == "pairs" and measure.metric.name not in LINEAR:
        raise MetricParamError(
            f"{measure.name} is not linear in the labels (it divides by the topic's relevant documents or ideal "
            "gain), so a pairs audit cannot estimate it: draw an audit of topics (evalwh audit draw --design topics)"
        )
    if measure.metric.name == "dcg" and measure.params.get("gains") is not None:
        raise MetricParamError(
            f"{measure.name}: a pairs audit estimates dcg with gain = grade only"
        )


def rank_weights(measure: catalog.Measure, rank: np.ndarray) -> np.ndarray:
    """The weight of each position in a linear measure: ``1/k``, ``(1-p) p^(rank-1)``, ``1/log2(rank+1)``.

    Examples:
        >>> rank_weights(catalog.parse("P@2"), np.array([1, 2, 3])).tolist()
        [0.5, 0.5, 0.0]
        >>> rank_weights(catalog.parse("RBP(p=0.5)"), np.array([1, 2])).tolist()
        [0.5, 0.25]
    """
    name, params = measure.metric.name, measure.params
    rank = np.asarray(rank, dtype=float)
    k = params.get("k")
    inside = np.ones(len(rank), dtype=bool) if k is None else rank <= k
    if name == "P":
        weight = np.full(len(rank), 1.0 / k)
    elif name == "RBP":
        weight = (1 - params["p"]) * params["p"] ** (rank - 1)
    elif name == "dcg":
        weight = 1.0 / np.log2(rank + 1)
    else:  # pragma: no cover (check_measure refuses it first)
        raise MetricParamError(f"{measure.name} has no weight per position")
    return np.where(inside, weight, 0.0)


def gains(measure: catalog.Measure, grades: np.ndarray, rel: float = 1.0) -> np.ndarray:
    """A label's gain in a linear measure: relevant (grade >= rel) for P and RBP, the grade (truncated, as trec_eval) for dcg."""
    grades = np.asarray(grades, dtype=float)
    if measure.metric.name == "dcg":
        return np.where(grades > 0, np.trunc(grades), 0.0)
    return (grades >= dict(measure.options).get("rel", rel)).astype(float)


def expected_gains(
    measure: catalog.Measure, probs: Sequence[Sequence[float]], rel: float = 1.0
) -> np.ndarray:
    """A probabilistic judge's expected gain: ``sum_g P(g) gain(g)`` over grades 0.., its probabilities renormalised."""
    out = np.empty(len(probs))
    for i, row in enumerate(probs):
        p = np.asarray(row, dtype=float)
        out[i] = float(p @ gains(measure, np.arange(len(p)), rel)) / p.sum()
    return out


def pair_values(
    positions: pd.DataFrame, n_pairs: int, n_runs: int, topics: int, weights: np.ndarray
) -> Any:
    """The sparse ``(pairs, runs)`` matrix of each position's weight divided by the topics.

    ``positions``: ``pair_no, run_no`` of every frame pair a run ranked, ``weights`` their
    rank weights. A run's score is ``W[:, r] @ gain``.
    """
    from scipy import sparse

    return sparse.csr_matrix(
        (weights / topics, (positions["pair_no"].to_numpy(), positions["run_no"].to_numpy())),
        shape=(n_pairs, n_runs),
    )


# -- the warehouse's side --------------------------------------------------------------------


def _require_set(wh: Store, collection: str, qrels_id: str, what: str) -> None:
    known = [r for (r,) in wh.con.execute(
        "SELECT qrels_id FROM qrels_sets WHERE collection_id = ? ORDER BY qrels_id", [collection]).fetchall()]  # fmt: skip
    if qrels_id not in known:
        raise NotFoundError(
            f"{what}: collection {collection!r} has no qrels set {qrels_id!r}; it has {known}"
        )


def frame_pairs(wh: Store, collection: str, frame_id: str, machine_id: str) -> pd.DataFrame:
    """The frame's judged pairs with the machine's grade: ``query_id, doc_id, machine_grade``.

    Raises:
        NotFoundError: for an unknown set.
        InsufficientDataError: when the machine set leaves a frame pair unlabelled.
    """
    _require_set(wh, collection, frame_id, "audit frame")
    _require_set(wh, collection, machine_id, "machine labels")
    frame = wh.df(sql.query(_QUERIES, "frame"), {"collection_id": collection, "frame_id": frame_id,
                                                "machine_id": machine_id})  # fmt: skip
    if frame.empty:
        raise InsufficientDataError(f"audit frame {frame_id!r} has no judged pairs")
    missing = frame["machine_grade"].isna()
    if missing.any():
        row = frame[missing].iloc[0]
        raise InsufficientDataError(
            f"machine set {machine_id!r} has no label for {int(missing.sum())} pair(s) of frame {frame_id!r}, "
            f"e.g. topic {row['query_id']} document {row['doc_id']}: the machine must label the whole frame"
        )
    return frame


def _check_id(audit_id: str) -> None:
    """Refuse an audit id a pool id could not be (empty, whitespace): `pool export` takes either."""
    from evalwh.store.ingest.frames import check_name

    check_name(audit_id, "audit id")


def _store(
    wh: Store, collection: str, audit_id: str, row: dict[str, Any], pairs: pd.DataFrame, strata: pd.DataFrame,
    *, replace: bool,
) -> None:  # fmt: skip
    exists = wh.con.execute(
        "SELECT count(*) FROM audits WHERE collection_id = ? AND audit_id = ?",
        [collection, audit_id],
    ).fetchone()[0]
    if exists and not replace:
        anew = "declare it anew" if row["declared"] else "draw it anew"
        raise EvalWhError(f"audit {audit_id!r} exists in collection {collection!r}; give --replace to {anew}")
    pools = wh.con.execute(
        "SELECT count(*) FROM pools WHERE collection_id = ? AND pool_id = ?", [collection, audit_id]
    ).fetchone()[0]
    if pools:
        raise EvalWhError(
            f"{audit_id!r} names a pool of collection {collection!r}; `pool export` must tell them apart"
        )
    with wh.transaction():
        for table in ("audits", "audit_strata", "audit_pairs"):
            wh.con.execute(
                f"DELETE FROM {table} WHERE collection_id = ? AND audit_id = ?",
                [collection, audit_id],
            )
        wh.con.execute(
            "INSERT INTO audits (collection_id, audit_id, frame_id, machine_id, design, stratify, size, seed, "
            "declared, check_note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [collection, audit_id, row["frame_id"], row["machine_id"], row["design"], row["stratify"], row["size"],
             row["seed"], row["declared"], row["check_note"]],
        )  # fmt: skip
        keyed = strata.assign(collection_id=collection, audit_id=audit_id)
        wh.con.register("_audit_strata", keyed)
        wh.con.execute("INSERT INTO audit_strata SELECT collection_id, audit_id, stratum, label, population, sampled "
                       "FROM _audit_strata")  # fmt: skip
        wh.con.unregister("_audit_strata")
        keyed = pairs.assign(collection_id=collection, audit_id=audit_id)
        wh.con.register("_audit_pairs", keyed)
        wh.con.execute("INSERT INTO audit_pairs SELECT collection_id, audit_id, query_id, doc_id, stratum, draw_order "
                       "FROM _audit_pairs")  # fmt: skip
        wh.con.unregister("_audit_pairs")


def draw_audit(
    wh: Store, collection: str, audit_id: str, *, machine_id: str, frame_id: str | None = None,
    design: str = "pairs", size: int | None = None, share: float | None = None, stratify: str | None = None,
    seed: int = 0, replace: bool = False,
) -> pd.DataFrame:  # fmt: skip
    """Draw a random audit of a frame and store it (``evalwh audit draw``); returns its row of :func:`list_audits`.

    ``size`` units, or ``share`` of the frame's units (pairs or topics, rounded). The frame is
    ``frame_id``'s judged pairs (a pool id is a qrels set), the machine set's own by default.
    """
    _check_id(audit_id)
    wh.require_collection(collection)
    frame = frame_pairs(wh, collection, frame_id or machine_id, machine_id)
    units = len(frame) if design == "pairs" else frame["query_id"].nunique()
    if (size is None) == (share is None):
        raise MetricParamError(
            "audit: give the size (units) or the share of the frame, one of them"
        )
    if share is not None:
        if not 0 < share <= 1:
            raise MetricParamError(f"audit: share {share} must lie in (0, 1]")
        size = max(int(round(share * units)), 2)
    assert size is not None
    if isinstance(size, bool) or not float(size).is_integer():
        raise MetricParamError(f"audit: size {size!r} must be a whole number of units (pairs or topics)")
    size = int(size)
    pairs, strata = draw_sample(frame, design, size, stratify=stratify, seed=seed)
    row = {"frame_id": frame_id or machine_id, "machine_id": machine_id, "design": design, "stratify": stratify,
           "size": size, "seed": seed, "declared": False, "check_note": None}  # fmt: skip
    _store(wh, collection, audit_id, row, pairs, strata, replace=replace)
    return list_audits(wh, collection, audit_id=audit_id)


def declare_audit(
    wh: Store, collection: str, audit_id: str, *, labels_id: str, machine_id: str, frame_id: str | None = None,
    design: str = "pairs", stratify: str | None = None, replace: bool = False,
) -> pd.DataFrame:  # fmt: skip
    """Declare an audit drawn elsewhere: its pairs are ``labels_id``'s judged pairs; checked, then stored.

    Raises:
        InsufficientDataError: naming why the pairs are not a plausible random sample of the frame.
    """
    _check_id(audit_id)
    wh.require_collection(collection)
    if design not in DESIGNS:
        raise MetricParamError(f"audit: design {design!r} is not one of {', '.join(DESIGNS)}")
    if stratify is not None and (stratify not in STRATIFY or design == "topics"):
        raise MetricParamError(
            f"audit: stratify {stratify!r} applies to the pairs design, by topic or grade"
        )
    frame = frame_pairs(wh, collection, frame_id or machine_id, machine_id)
    _require_set(wh, collection, labels_id, "audit labels")
    audited = wh.df(
        "SELECT query_id, doc_id FROM qrels WHERE collection_id = $c AND qrels_id = $q AND relevance >= 0 "
        "ORDER BY query_id, doc_id", {"c": collection, "q": labels_id},
    )  # fmt: skip
    best = wh.df(
        sql.query(_QUERIES, "best_rank"),
        {"collection_id": collection, "frame_id": frame_id or machine_id},
    )
    frame = frame.merge(best, on=["query_id", "doc_id"], how="left")
    if design == "pairs" and stratify == "topic":
        strata_of = frame["query_id"].astype(str)
    elif design == "pairs" and stratify == "grade":
        strata_of = frame["machine_grade"].map(_grade_text)
    else:
        strata_of = pd.Series("all", index=frame.index)
    refusal, note = check_declared(frame, audited, strata_of, design)
    if refusal:
        raise InsufficientDataError(f"audit {audit_id!r} from {labels_id!r}: {refusal}")
    keys = pd.MultiIndex.from_frame(audited.astype(str))
    inside = frame.set_index(["query_id", "doc_id"]).index.isin(keys)
    if design == "topics":
        topics = frame["query_id"].unique()
        audited_topics = audited["query_id"].unique()
        strata = pd.DataFrame({"stratum": [0], "label": ["all"], "population": [len(topics)],
                               "sampled": [len(audited_topics)]})  # fmt: skip
        pairs = audited.assign(stratum=0)
        size = len(audited_topics)
    else:
        names, codes = np.unique(strata_of.to_numpy(str), return_inverse=True)
        strata = pd.DataFrame({"stratum": np.arange(len(names)), "label": names,
                               "population": np.bincount(codes, minlength=len(names)),
                               "sampled": np.bincount(codes[inside], minlength=len(names))})  # fmt: skip
        pairs = frame.loc[inside, ["query_id", "doc_id"]].assign(stratum=codes[inside])
        size = int(inside.sum())
    pairs = pairs.reset_index(drop=True)
    pairs["draw_order"] = np.arange(1, len(pairs) + 1, dtype=np.int64)
    row = {"frame_id": frame_id or machine_id, "machine_id": machine_id, "design": design, "stratify": stratify,
           "size": size, "seed": None, "declared": True, "check_note": note}  # fmt: skip
    _store(wh, collection, audit_id, row, pairs, strata.astype({"population": "int64", "sampled": "int64"}),
           replace=replace)  # fmt: skip
    return list_audits(wh, collection, audit_id=audit_id)


def list_audits(wh: Store, collection: str, *, audit_id: str | None = None) -> pd.DataFrame:
    """The stored audits: design, frame, machine set, units drawn of the frame's (one row per audit)."""
    wh.require_collection(collection)
    return wh.df(
        sql.query(_QUERIES, "list_audits"), {"collection_id": collection, "audit_id": audit_id}
    )


def audit_record(wh: Store, collection: str, audit_id: str) -> dict[str, Any]:
    """One stored audit's row.

    Raises:
        NotFoundError: naming the audits the collection has.
    """
    frame = list_audits(wh, collection)
    row = frame[frame["audit_id"] == audit_id]
    if row.empty:
        raise NotFoundError(
            f"collection {collection!r} has no audit {audit_id!r}; it has {sorted(frame['audit_id'])}"
            " (evalwh audit draw makes one)"
        )
    return row.iloc[0].to_dict()


def require_pool_or_audit(wh: Store, collection: str, name: str) -> None:
    """Refuse a name that is neither a pool nor an audit of the collection (``pool export`` takes both).

    Raises:
        NotFoundError: naming the collection's pools and audits.
    """
    wh.require_collection(collection)
    known = {
        table: [r for (r,) in wh.con.execute(
            f"SELECT {table[:-1]}_id FROM {table} WHERE collection_id = ? ORDER BY 1", [collection]).fetchall()]
        for table in ("pools", "audits")
    }  # fmt: skip
    if name in known["pools"] or name in known["audits"]:
        return
    pools, audits = (", ".join(known[t]) or "none yet" for t in ("pools", "audits"))
    raise NotFoundError(
        f"collection {collection!r} has no pool or audit {name!r} (pools: {pools}; audits: {audits}); "
        "`evalwh pool build` or `evalwh audit draw` makes one"
    )


def audit_order(wh: Store, collection: str, audit_id: str) -> pd.DataFrame:
    """An audit's pairs as a judging order (``pool export``'s columns): ``query_id, doc_id, topic_order, overall_order, weight``."""
    audit_record(wh, collection, audit_id)
    return wh.df(
        sql.query(_QUERIES, "audit_order"), {"collection_id": collection, "audit_id": audit_id}
    )
