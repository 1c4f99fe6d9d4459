"""Label sets side by side: their agreement, and what they do to the ranking of the runs.

* :func:`agreement`: every label set against a reference on the (topic, document) pairs both
  judged (methods §11.1-§11.3), with the pairs each side has that the other lacks, per set or
  per set and topic, or as confusion matrices.
* :func:`sensitivity`: the runs ranked under each label set and each measure, compared with
  the ranking under the reference (methods §11.4-§11.6): Kendall's tau_b with a bootstrap
  interval over topics, tau_ap, RBO, the largest rank change, the top-k overlap; the runs'
  ranks and scores under every set; and the label sets ranked by how well they reproduce the
  reference's ranking. A set may be a composition ``A+B``: A's labels, B's where A has none.
  Beside them, the reference's significant pairwise decisions that each set keeps, loses and
  reverses (:mod:`evalwh.stats.kept_decisions`, methods §16).

The pairs come from ``queries/judgments/*.sql``; the statistics are :mod:`evalwh.stats.agreement`
and :mod:`evalwh.stats.rankings`.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from evalwh import sql
from evalwh.errors import InsufficientDataError, MetricParamError, NotFoundError
from evalwh.stats import agreement as agree
from evalwh.stats import kept_decisions, rankings

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.store.connection import Store

_QUERIES = "evalwh.queries.judgments"
SCORE_DECIMALS = 12
"""Mean scores are compared at this many decimals when runs are ranked (methods §11.4)."""
LAYOUTS = ("summary", "confusion", "raters")
STATISTICS = (
    "agreement", "kappa", "kappa_linear", "kappa_quadratic", "alpha_nominal", "alpha_ordinal", "alpha_interval",
)  # fmt: skip


def natural_key(text: object) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders the digit runs of a name as numbers: 2 < 10 < 100 < q3 < q20.

    Examples:
        >>> sorted(["144", "14", "31", "200", "q20", "q3"], key=natural_key)
        ['14', '31', '144', '200', 'q3', 'q20']
    """
    import re

    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.findall(r"\d+|\D+", str(text)))


def known_sets(store: Store, collection: str) -> list[str]:
    """The qrels sets of ``collection`` (an error naming the collections if it has none)."""
    store.require_collection(collection)
    return [str(v) for v in store.df(sql.query(_QUERIES, "sets"), {"collection_id": collection})["qrels_id"]]


def require_runs(store: Store, collection: str, *, command: str) -> None:
    """Raise NotFoundError in one line when ``collection`` holds label sets but no runs.

    A collection of label sets alone (human and LLM labels, the usual judging study) has no
    ranking to evaluate, compare or bound; the message says what works on it instead.
    """
    store.require_collection(collection)
    if store.run_ids(collection):
        return
    sets = known_sets(store, collection)
    listed = ", ".join(sets[:5]) + (f" and {len(sets) - 5} more" if len(sets) > 5 else "")
    held = f"only label sets ({listed})" if sets else "no label sets either"
    raise NotFoundError(
        f"{command}: collection {collection!r} has no runs, {held}; evalwh agreement compares label sets, "
        "evalwh report writes a label-set report, evalwh ingest runs adds runs"
    )


def check_sets(store: Store, collection: str, names: Sequence[str], *, command: str) -> None:
    """Raise NotFoundError for a name that is not a qrels set of ``collection``, with a suggestion."""
    known = known_sets(store, collection)
    for name in names:
        if name not in known:
            folded = {k.lower(): k for k in known}
            close = difflib.get_close_matches(name.lower(), list(folded), n=3, cutoff=0.5)
            close = [folded[c] for c in close]
            hint = f" Did you mean {' or '.join(close)}?" if close else ""
            listed = ", ".join(known[:10]) + (f" and {len(known) - 10} more" if len(known) > 10 else "")
            raise NotFoundError(
                f"{command}: collection {collection!r} has no qrels set {name!r}.{hint} (its sets: {listed or 'none'})"
            )


def agreement(
    store: Store,
    collection: str,
    reference: str,
    sets: Sequence[str] | None,
    *,
    binary_at: float | None = None,
    per_query: bool = False,
    layout: str = "summary",
    resamples: int = 0,
    confidence: float = 0.95,
    seed: int | None = None,
    level: str = "ordinal",
) -> pd.DataFrame:
    """Every label set against ``reference`` on the pairs both judged (methods §11.1-§11.3).

    Args:
        store: The warehouse.
        collection: The collection.
        reference: The reference qrels set (the rows of confusion matrices).
        sets: The label sets compared with it (the reference itself may be among them);
            None: every other set of the collection.
        binary_at: Also compare grade >= this on both sides (``kappa_binary``, ``agreement_binary``).
        per_query: One row per set and topic (every topic either side judged).
        layout: ``summary`` (the statistics), ``confusion`` (one row per set and reference
            grade, one column per grade of any set, counts of shared pairs; grades as text;
            with ``binary_at`` the grades cut to 0 and 1 there)
            or ``raters`` (Krippendorff's alpha of the reference and the sets together,
            :func:`raters`).
        resamples: Bootstrap replicates over topics for the intervals of kappa and alpha
            (methods §11.7); 0: none. With ``per_query``, any number > 0 asks for kappa's
            large-sample interval per topic instead (:func:`evalwh.stats.agreement.kappa_interval`).
        confidence: Coverage of the intervals.
        seed: Seed of the bootstrap (None: a fresh one each call).
        level: The level of Krippendorff's alpha whose interval is given (nominal, ordinal,
            interval).

    Returns:
        ``summary``: ``qrels_id, [query_id,] pairs, only_reference, only_set, agreement, kappa,
        kappa_linear, kappa_quadratic, alpha_nominal, alpha_ordinal, alpha_interval
        [, kappa_binary, agreement_binary], note``, sets in the order given. ``pairs`` is the
        number of pairs both judged, ``only_reference`` and ``only_set`` those only one side
        judged (a negative grade is no judgment). Kappa and alpha are empty exactly when
        undefined (both sides give every pair one and the same grade) and ``note`` says why;
        a side with one grade gives kappa 0, noted too, as are fewer than 30 shared pairs.
        With ``resamples``: ``kappa_low, kappa_high, alpha_<level>_low, alpha_<level>_high``
        before ``note`` (per topic: ``kappa_low, kappa_high``).

    Raises:
        NotFoundError: for an unknown collection or set (with a suggestion).
        MetricParamError: for an unknown layout, or no set to compare.

    Examples:
        >>> import pandas as pd
        >>> from evalwh import Warehouse
        >>> wh = Warehouse(":memory:")
        >>> qrels = pd.DataFrame({"query_id": ["1"] * 4, "doc_id": list("abcd"), "relevance": [0, 1, 2, 2]})
        >>> _ = wh.ingest_qrels(qrels, collection="demo", qrels_id="human")
        >>> _ = wh.ingest_qrels(qrels.assign(relevance=[0, 1, 1, 2]), collection="demo", qrels_id="llm")
        >>> table = agreement(wh, "demo", "human", ["llm"])
        >>> table[["qrels_id", "pairs", "agreement"]].values.tolist()
        [['llm', 4, 0.75]]
        >>> round(float(table.kappa[0]), 4), table.note[0]
        (0.6364, 'only 4 shared pairs (under 30): the statistics are unreliable')
    """
    import pandas as pd

    if sets is None:
        check_sets(store, collection, [reference], command="agreement")
        sets = [name for name in known_sets(store, collection) if name != reference]
    names = list(dict.fromkeys(sets))
    if not names:
        raise MetricParamError(
            f"agreement: no label set to compare with {reference!r}; name one, or ingest another qrels set"
        )
    if layout not in LAYOUTS:
        raise MetricParamError(f"agreement: layout {layout!r}: give one of {', '.join(LAYOUTS)}")
    if level not in agree.ALPHA_LEVELS:
        raise MetricParamError(f"agreement: level {level!r}: give one of {', '.join(agree.ALPHA_LEVELS)}")
    if resamples < 0:
        raise MetricParamError(f"agreement: resamples={resamples}: give 0 (no intervals) or more")
    check_sets(store, collection, [reference, *names], command="agreement")
    if layout == "raters":
        if binary_at is not None:
            raise MetricParamError(
                "agreement: binary_at applies to the summary and confusion layouts; the raters layout gives "
                "Krippendorff's alpha of the grades as given"
            )
        return raters(
            store, collection, [reference, *(n for n in names if n != reference)], resamples=resamples,
            confidence=confidence, seed=seed,
        )  # fmt: skip
    params = {"collection_id": collection, "reference": reference, "sets": names}
    pairs = store.run(sql.query(_QUERIES, "pairs"), params).fetchnumpy()
    if layout == "confusion":
        return _confusion(pairs, names, binary_at=binary_at)
    coverage = store.df(sql.query(_QUERIES, "coverage"), params)
    n_topics = int(coverage["topic_index"].max()) + 1 if len(coverage) else 0
    set_index = np.asarray(pairs["set_index"], dtype=np.int64)
    if per_query:
        # one group per (set, topic): every set and every topic either side judged
        groups = set_index * n_topics + np.asarray(pairs["topic_index"], dtype=np.int64)
        n_groups = len(names) * n_topics
        rows = coverage.reset_index(drop=True)
        keys = ["qrels_id", "query_id"]
    else:
        groups, n_groups = set_index, len(names)
        rows = coverage.groupby(["set_index", "qrels_id"], sort=True)[["only_reference", "only_set"]].sum()
        rows = rows.reset_index().set_index("set_index").reindex(range(len(names)))
        rows = rows.assign(qrels_id=names).fillna(0).reset_index(drop=True)
        keys = ["qrels_id"]
    # weighted kappas weigh by the positions of the categories each set uses with the reference
    scopes = np.arange(n_groups) // (n_topics if per_query else 1)
    table = agree.agreement_table(
        np.asarray(pairs["reference"], dtype=np.float64), np.asarray(pairs["label"], dtype=np.float64),
        groups=groups, n_groups=n_groups, scopes=scopes, binary_at=binary_at,
    )  # fmt: skip
    out = pd.concat([rows[[*keys, "only_reference", "only_set"]], table.drop(columns="group")], axis=1)
    columns = [*keys, "pairs", "only_reference", "only_set", *STATISTICS]
    if binary_at is not None:
        columns += ["kappa_binary", "agreement_binary"]
    if resamples and per_query:
        # one topic's pairs are the only unit left: the large-sample interval of kappa (methods §11.7)
        _, counts = agree.confusion(
            np.asarray(pairs["reference"], dtype=np.float64), np.asarray(pairs["label"], dtype=np.float64),
            groups=groups, n_groups=n_groups,
        )  # fmt: skip
        out["kappa_low"], out["kappa_high"] = agree.kappa_interval(counts, confidence)
        columns += ["kappa_low", "kappa_high"]
    if resamples and not per_query:
        cats, counts = agree.confusion(
            np.asarray(pairs["reference"], dtype=np.float64), np.asarray(pairs["label"], dtype=np.float64),
            groups=set_index * max(n_topics, 1) + np.asarray(pairs["topic_index"], dtype=np.int64),
            n_groups=len(names) * max(n_topics, 1),
        )  # fmt: skip
        k = len(cats)
        intervals = agree.bootstrap_agreement(
            counts.reshape(len(names), max(n_topics, 1), k, k), cats, level=level, resamples=resamples,
            confidence=confidence, rng=seed,
        )  # fmt: skip
        for name, values in intervals.items():
            out[name] = values
        columns += list(intervals)
    out = out[[*columns, "note"]]
    if per_query:  # each set's topics in natural order (2, 14, 31, 144; q3 before q20)
        rank = {name: i for i, name in enumerate(names)}
        keys = [(rank[q_set], natural_key(q)) for q_set, q in zip(out["qrels_id"], out["query_id"], strict=True)]
        out = out.iloc[sorted(range(len(out)), key=keys.__getitem__)].reset_index(drop=True)
    for column in ("pairs", "only_reference", "only_set"):
        out[column] = out[column].astype("int64")
    return out


def raters(
    store: Store,
    collection: str,
    sets: Sequence[str],
    *,
    resamples: int = 0,
    confidence: float = 0.95,
    seed: int | None = None,
) -> pd.DataFrame:
    """Krippendorff's alpha of several label sets at once (methods §11.7).

    Every (topic, document) pair any of ``sets`` judged is a unit; each set that judged it
    gives one value (a negative grade is no value). Units with fewer than two values are
    not pairable and are left out, as Krippendorff defines it; the values equal those of
    the ``krippendorff`` package on the sets' reliability matrix.

    Returns:
        One row: ``sets`` (comma-separated), ``raters``, ``topics``, ``units`` (pairable
        units), ``values`` (their values), ``alpha_nominal, alpha_ordinal, alpha_interval``,
        with ``resamples`` each with ``_low`` and ``_high`` (the normal bootstrap interval
        over topics), and ``note``.

    Raises:
        MetricParamError: with fewer than two sets.
    """
    import pandas as pd

    names = list(dict.fromkeys(sets))
    if len(names) < 2:
        raise MetricParamError("agreement: Krippendorff's alpha over several raters needs at least two label sets")
    check_sets(store, collection, names, command="agreement")
    labels = store.run(sql.query(_QUERIES, "labels"), {"collection_id": collection, "sets": names}).fetchnumpy()
    grades = np.asarray(labels["grade"], dtype=np.float64)
    unit = np.asarray(labels["unit_index"], dtype=np.int64)
    topic_of_row = np.asarray(labels["topic_index"], dtype=np.int64)
    cats = np.unique(grades)
    n_units = int(unit.max()) + 1 if len(unit) else 0
    n_topics = int(topic_of_row.max()) + 1 if len(topic_of_row) else 0
    # the reliability matrix, units x raters: the category's index, -1 for no value
    values = np.full((n_units, len(names)), -1, dtype=np.int64)
    values[unit, np.asarray(labels["set_index"], dtype=np.int64)] = np.searchsorted(cats, grades)
    topic = np.zeros(n_units, dtype=np.int64)
    topic[unit] = topic_of_row
    per_topic = agree.coincidence_per_group(values, topic, max(n_topics, 1), len(cats))
    total = per_topic.sum(axis=0, keepdims=True)
    pairable = (values >= 0).sum(axis=1) >= 2
    row: dict[str, Any] = {
        "sets": ", ".join(names), "raters": len(names), "topics": int(len(np.unique(topic[pairable]))),
        "units": int(pairable.sum()), "values": int((values[pairable] >= 0).sum()),
    }  # fmt: skip
    if resamples:
        weights = agree.topic_weights(per_topic.shape[0], resamples, seed)
        replicates = np.einsum("bt,tij->bij", weights, per_topic)
    for level in agree.ALPHA_LEVELS:
        estimate = agree.alpha_from_coincidence(total, cats, level=level)
        row[f"alpha_{level}"] = float(estimate[0])
        if resamples:
            low, high = agree.normal_interval(
                estimate, agree.alpha_from_coincidence(replicates, cats, level=level)[:, None], confidence
            )
            row[f"alpha_{level}_low"], row[f"alpha_{level}_high"] = float(low[0]), float(high[0])
    notes = []
    if len(cats) < 2:
        notes.append("alpha undefined: every value is one grade" if len(cats) else "no unit has two values")
    elif row["units"] < agree.FEW_PAIRS:
        notes.append(f"only {row['units']} pairable units (under {agree.FEW_PAIRS}): the statistics are unreliable")
    row["note"] = "; ".join(notes)
    return pd.DataFrame([row])


def _confusion(pairs: dict[str, Any], names: list[str], *, binary_at: float | None = None) -> pd.DataFrame:
    """One row per (set, reference grade), one column per grade of any set: shared pairs.

    With ``binary_at`` the grades are cut there first: 1 for a grade ``>= binary_at``, 0 below.
    """
    import pandas as pd

    frame = pd.DataFrame({key: pairs[key] for key in ("set_index", "reference", "label")})
    if binary_at is not None:
        for side in ("reference", "label"):
            frame[side] = (frame[side].astype(float) >= binary_at).astype(int)
    table = pd.crosstab([frame["set_index"], frame["reference"]], frame["label"])
    table.columns = [_grade(c) for c in table.columns]
    table = table.reset_index().sort_values(["set_index", "reference"])
    table.insert(0, "qrels_id", [names[i] for i in table["set_index"]])
    table["reference"] = [_grade(g) for g in table["reference"]]
    return table.drop(columns="set_index").reset_index(drop=True)


def _grade(value: object) -> str:
    number = float(value)  # type: ignore[arg-type]
    return str(int(number)) if number.is_integer() else str(number)


# -- sensitivity ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Sensitivity:
    """The runs' rankings under several label sets, compared with the ranking under a reference.

    Attributes:
        summary: One row per (set, measure): ``reference, qrels_id, measure, runs, kendall_tau_b,
            tau_b_low, tau_b_high, tau_ap, rbo, rbo_p, top_k, top_k_overlap, max_rank_change,
            max_change_run, test, correction, alpha, pairs, significant, kept, lost, reversed,
            gained, kept_share`` (the interval is the bootstrap interval over topics of
            :func:`evalwh.stats.rankings.bootstrap_tau`, which contains ``kendall_tau_b``, methods §11.4; no run is named
            when none moved; ``significant`` counts the reference's significant pairs of runs,
            ``kept + lost + reversed`` of them, ``gained`` the pairs only the set finds significant,
            :mod:`evalwh.stats.kept_decisions`).
        runs: One row per (measure, run): ``measure, run_id``, then ``score`` and ``rank``
            under each set (``<set>_score``, ``<set>_rank``) and the rank change from the
            reference's (``<set>_change``, positive: the run moved down).
        sets: The sets ranked per measure by how well their ranking reproduces the
            reference's: ``measure, place, qrels_id, kendall_tau_b, tau_ap, rbo, kept_share``.
        decisions: One row per (set, measure, pair of runs) whose decision moved: ``qrels_id,
            measure, run_a, run_b, reference_outcome, outcome, change`` (outcome +1: ``run_a``
            significantly better, -1 worse, 0 not significant; change ``lost``, ``reversed`` or
            ``gained``; the kept pairs are only counted).
    """

    summary: pd.DataFrame
    runs: pd.DataFrame
    sets: pd.DataFrame
    decisions: pd.DataFrame


def parse_set(name: str, known: Sequence[str] = ()) -> tuple[str, tuple[str, ...]]:
    """A label set name, or a composition ``A+B+C`` (A's labels, then B's, then C's): (A, (B, C)).

    A name in ``known`` (the collection's sets) is a set even if it holds a ``+``.

    Examples:
        >>> parse_set("depth10+full"), parse_set("human"), parse_set("a+b", known=["a+b"])
        (('depth10', ('full',)), ('human', ()), ('a+b', ()))
    """
    if name in known:
        return name, ()
    parts = [part.strip() for part in name.split("+")]
    if any(not part for part in parts):
        raise MetricParamError(f"sensitivity: label set {name!r}: give A or A+B (A filled by B's labels)")
    return parts[0], tuple(parts[1:])


def _evaluate(
    store: Store, collection: str, name: str, known: list[str], measures: list[str], runs: Sequence[str] | None,
    per_query: bool,
) -> pd.DataFrame:  # fmt: skip
    from evalwh.measures.evaluation import evaluate

    base, fill = parse_set(name, known)
    options: dict[str, Any] = {"fill": fill} if fill else {}
    return evaluate(
        store, measures, collection=collection, runs=runs, qrels_id=base, per_query=per_query, typed_names=True,
        **options,
    )  # fmt: skip


def sensitivity(
    store: Store,
    collection: str,
    sets: Sequence[str],
    measures: Sequence[str],
    *,
    reference: str | None = None,
    runs: Sequence[str] | None = None,
    rbo_p: float = 0.9,
    top_k: int = 10,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = None,
    test: str | None = None,
    correction: str | None = None,
    alpha: float = 0.05,
) -> Sensitivity:
    """How the ranking of the runs moves between label sets (methods §11.4-§11.6).

    Each set (or composition ``A+B``) evaluates the runs on every measure; each set's ranking
    is compared with the reference's: Kendall's tau_b (the same as :func:`scipy.stats.kendalltau`
    on the two mean vectors ``evalwh eval`` prints, rounded to :data:`SCORE_DECIMALS` decimals
    so that equal means tie), a bootstrap interval for it over
    topics that contains it (:func:`evalwh.stats.rankings.bootstrap_tau`), tau_ap with the reference as the truth, RBO_ext with persistence ``rbo_p``,
    the share of the reference's top ``top_k`` kept, and the largest rank change; and the
    reference's significant pairwise decisions kept, lost and reversed under each set (every
    pair of runs tested under each set with the comparison family's test and correction, as
    ``evalwh compare`` over all pairs; :mod:`evalwh.stats.kept_decisions`).

    Args:
        store: The warehouse.
        collection: The collection.
        sets: Label sets (or compositions ``A+B``); at least two, or one besides ``reference``.
        measures: Measure specs (``AP``, ``nDCG@10``, ...).
        reference: The set the others are compared with; None: the first of ``sets``.
        runs: The runs ranked; None: every run of the collection.
        rbo_p: RBO's persistence.
        top_k: Depth of the top-k overlap.
        resamples: Bootstrap replicates over topics (0: no interval).
        confidence: Coverage of the bootstrap interval.
        seed: Seed of the bootstrap (None: a fresh one each call) and of a resampling test.
        test: The significance test of the pairs (None: ``compare``'s default, the paired t-test).
        correction: Its correction over the pairs of one measure (None: ``compare``'s default for the test).
        alpha: Significance level.

    Returns:
        A :class:`Sensitivity`.

    Raises:
        NotFoundError: for an unknown collection or set (with a suggestion).
        InsufficientDataError: with fewer than two runs.
    """
    import pandas as pd

    from evalwh.stats.compare import family_procedure

    procedure, adjust = family_procedure(test, correction)
    if not 0.0 < alpha < 1.0:
        raise MetricParamError(f"sensitivity: alpha must lie in (0, 1), got {alpha}")
    names = list(dict.fromkeys(sets))
    ref = names[0] if reference is None else reference
    names = [ref, *(n for n in names if n != ref)]
    if len(names) < 2:
        twice = f"; {names[0]!r} was given {len(list(sets))} times" if len(list(sets)) > 1 else ""
        raise MetricParamError(f"sensitivity: give at least two different label sets (the first is the reference){twice}")
    if not measures:
        raise MetricParamError("sensitivity: give at least one measure")
    require_runs(store, collection, command="sensitivity")
    known = known_sets(store, collection)
    parts = [(base, *fill) for base, fill in (parse_set(n, known) for n in names)]
    check_sets(store, collection, list(dict.fromkeys(p for group in parts for p in group)), command="sensitivity")
    means: dict[str, pd.DataFrame] = {}
    topics: dict[str, pd.DataFrame] = {}
    for name in names:
        means[name] = _evaluate(store, collection, name, known, list(measures), runs, per_query=False)
        # per topic: the bootstrap's unit, and the significance tests' observations
        topics[name] = _evaluate(store, collection, name, known, list(measures), runs, per_query=True)
    if means[ref].empty:
        raise InsufficientDataError(f"sensitivity: no run of collection {collection!r} is scored under {ref!r}")
    measure_names = list(dict.fromkeys(means[ref]["measure"]))
    rng = np.random.default_rng(seed)
    test_rng = np.random.default_rng(seed)  # its own stream: a resampling test leaves the bootstrap as it was
    summary_rows: list[dict[str, Any]] = []
    run_frames: list[pd.DataFrame] = []
    decision_frames: list[pd.DataFrame] = []

    def outcomes(name: str, run_ids: np.ndarray, measure: str) -> np.ndarray:
        return kept_decisions.decisions(
            _set_matrix(topics[name], measure, run_ids), list(run_ids), test=procedure.value,
            correction=adjust.value, alpha=alpha, rng=test_rng,
        )  # fmt: skip

    for measure in measure_names:
        score = pd.DataFrame(
            {name: means[name][means[name]["measure"] == measure].set_index("run_id")["value"] for name in names}
        )
        score = score.dropna().sort_index()
        if len(score) < 2:
            raise InsufficientDataError(
                f"sensitivity: {measure} scores {len(score)} run(s) under every set; ranking needs at least two"
            )
        run_ids = score.index.to_numpy(dtype=str)
        per_run = pd.DataFrame({"measure": measure, "run_id": run_ids})
        # runs are ranked on means rounded to 12 decimals: two runs with the same per-topic
        # values tie, whatever rounding error the order of summation left in their means
        ranked = score.round(SCORE_DECIMALS)
        ref_scores = ranked[ref].to_numpy()
        ref_ranks = rankings.ranks(ref_scores)
        ref_outcomes = outcomes(ref, run_ids, measure)
        pair_a, pair_b = np.triu_indices(len(run_ids), 1)
        for name in names:
            other = ranked[name].to_numpy()
            per_run[f"{name}_score"] = score[name].to_numpy()
            per_run[f"{name}_rank"] = rankings.ranks(other)
            if name == ref:
                continue
            change = per_run[f"{name}_rank"].to_numpy() - ref_ranks
            per_run[f"{name}_change"] = change
            biggest = int(np.argmax(np.abs(change)))  # the first run in name order on ties
            tau_b = rankings.kendall_tau_b(ref_scores, other)
            low = high = float("nan")
            if resamples:
                low, high = _bootstrap(topics[ref], topics[name], measure, run_ids, resamples, confidence, rng, tau_b)
            mine = outcomes(name, run_ids, measure)
            changes = kept_decisions.pair_changes(ref_outcomes, mine)
            moved = (changes != "") & (changes != "kept")
            decision_frames.append(pd.DataFrame({
                "qrels_id": name, "measure": measure, "run_a": run_ids[pair_a[moved]], "run_b": run_ids[pair_b[moved]],
                "reference_outcome": ref_outcomes[moved], "outcome": mine[moved], "change": changes[moved],
            }))  # fmt: skip
            summary_rows.append({
                "reference": ref, "qrels_id": name, "measure": measure, "runs": len(run_ids),
                "kendall_tau_b": tau_b, "tau_b_low": low, "tau_b_high": high,
                "tau_ap": rankings.tau_ap(ref_scores, other), "rbo": rankings.rbo(ref_scores, other, p=rbo_p, names=run_ids),
                "rbo_p": rbo_p, "top_k": min(top_k, len(run_ids)),
                "top_k_overlap": rankings.top_k_overlap(ref_scores, other, top_k, names=run_ids),
                "max_rank_change": int(change[biggest]),
                "max_change_run": str(run_ids[biggest]) if change[biggest] else "",
                "test": procedure.value, "correction": adjust.value, "alpha": alpha,
                **kept_decisions.count_changes(ref_outcomes, mine),
            })  # fmt: skip
        run_frames.append(per_run)
    summary = pd.DataFrame(summary_rows)
    ranked = summary.sort_values(["measure", "kendall_tau_b", "tau_ap"], ascending=[True, False, False], kind="stable")
    ranked = ranked.assign(place=ranked.groupby("measure").cumcount() + 1)
    order = {m: i for i, m in enumerate(measure_names)}
    ranked = ranked.sort_values(["measure", "place"], key=lambda s: s.map(order) if s.name == "measure" else s)
    sets_frame = ranked[["measure", "place", "qrels_id", "kendall_tau_b", "tau_ap", "rbo", "kept_share"]]
    return Sensitivity(
        summary=summary, runs=pd.concat(run_frames, ignore_index=True), sets=sets_frame.reset_index(drop=True),
        decisions=pd.concat(decision_frames, ignore_index=True),
    )  # fmt: skip


def _set_matrix(frame: pd.DataFrame, measure: str, run_ids: np.ndarray) -> np.ndarray:
    """Runs x topics of one set and measure: the topics the set scores, 0 where a run has no row.

    The mean of a row is the run's mean under the set (a run without a row for a topic scores 0
    there, as :func:`evalwh.measures.evaluation.evaluate` averages).
    """
    import pandas as pd

    mine = frame[frame["measure"] == measure]
    topic_ids = pd.Index(sorted(set(mine["query_id"])))
    row, col = pd.Index(run_ids).get_indexer(mine["run_id"]), topic_ids.get_indexer(mine["query_id"])
    keep = row >= 0
    matrix = np.zeros((len(run_ids), len(topic_ids)))
    matrix[row[keep], col[keep]] = mine["value"].to_numpy(dtype=np.float64)[keep]
    return matrix


def _bootstrap(
    reference: pd.DataFrame,
    other: pd.DataFrame,
    measure: str,
    run_ids: np.ndarray,
    resamples: int,
    confidence: float,
    rng: np.random.Generator,
    estimate: float,
) -> tuple[float, float]:
    """The bootstrap interval for tau_b around ``estimate``, from both sets' per-topic values of one measure."""
    import pandas as pd

    mine = [f[f["measure"] == measure] for f in (reference, other)]
    topic_ids = pd.Index(sorted(set(mine[0]["query_id"]) | set(mine[1]["query_id"])))
    if topic_ids.empty:
        return float("nan"), float("nan")
    runs = pd.Index(run_ids)
    mats, masks = [], []
    for frame in mine:
        # runs x topics; a (run, topic) the evaluation has no row for counts as 0
        row, col = runs.get_indexer(frame["run_id"]), topic_ids.get_indexer(frame["query_id"])
        keep = row >= 0
        matrix = np.zeros((len(runs), len(topic_ids)))
        matrix[row[keep], col[keep]] = frame["value"].to_numpy(dtype=np.float64)[keep]
        mats.append(matrix)
        masks.append(np.isin(np.arange(len(topic_ids)), col))
    return rankings.bootstrap_tau(
        mats[0], mats[1], reference_topics=masks[0], other_topics=masks[1],
        resamples=resamples, confidence=confidence, rng=rng, estimate=estimate,
    )  # fmt: skip
