"""What a report is: its options, its figures and the gathered report, as plain dataclasses.

:mod:`~evalwh.present.report.build` fills a :class:`Report`, :mod:`~evalwh.present.report.figures`
draws its :class:`Figure` s and :mod:`~evalwh.present.report.render` lays it out (through the
Jinja2 templates of ``templates/``); all three read these classes and none reads another's
internals.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_MEASURES = ("P@10", "AP", "nDCG@10", "bpref")
DEFAULT_DEPTHS = (10, 30, 100, 500, 1000)
ASSESSMENT_DEPTHS = (10, 100)


@dataclass(frozen=True)
class ReportOptions:
    """Everything that changes a number in the report; printed in its methods section.

    Attributes:
        measures: Leaderboard measures (ir_measures grammar); ``MAP`` is accepted for ``AP``.
            None: the collection's defaults (:mod:`evalwh.present.report.defaults`: nDCG@10
            leads on graded labels, P@10 on binary, whatever the judged depth).
        pairing: Decision-matrix pairing: ``P`` (P@d with A_p@d) or ``MAP`` (AP@d with A_p@d).
        depths: The depths d of the decision matrix and the depth figures; when None,
            :data:`DEFAULT_DEPTHS` within the judged depth, else 5, and 10
            (:func:`~evalwh.present.report.defaults.default_depths`; up to the deepest
            ranking, plus that depth, when the judged depth is unknown).
        baselines: Compare every run against each of these runs (``evalwh compare -b``);
            empty: all pairs. The comparisons table lists the baseline pairs, else all pairs
            (few runs) or each run with the next one down the leaderboard (many runs). The
            collection's stored baselines (``evalwh conventions``) when empty.
        all_pairs: Compare all pairs even when the collection stores baselines.
        pairs: Pairs of runs to draw (pair and bounds figures); chosen from the leaderboard
            when empty.
        test: Significance procedure (:class:`evalwh.stats.significance.Procedure`); None:
            ``evalwh compare``'s default, the paired t-test
            (:func:`evalwh.stats.compare.family_procedure`).
        correction: Multiple-comparison correction over the family's pairs, per measure;
            None: ``evalwh compare``'s default (Holm; none for the Tukey tests).
        alpha: Significance level.
        seed: Seed of the randomization test's resamples.
        n_resamples: Resamples of the randomization test.
        qrels_id: The qrels set evaluated against (None: the collection's default,
            :meth:`~evalwh.store.connection.Store.qrels_set`).
        fill: Sets whose labels fill the pairs ``qrels_id`` did not judge, in order
            (:func:`evalwh.measures.evaluation.evaluate`); the report then evaluates against
            the composition ``A+B``.
        flag_gap: A run is flagged when its mean A_p_ret@d, at any of
            :data:`ASSESSMENT_DEPTHS`, lies below the pooled runs' lower fence (first quartile
            minus 1.5 interquartile ranges) and more than this below their median.
        max_all_pairs: Without a baseline, list all pairs up to this many; beyond it, the
            comparisons section summarises: tiers, the weak pairs (case 2 or 4) and the pairs
            the measures disagree on.
        listed: In that summary, list at most this many weak pairs and disagreeing pairs.
        pool_depth: The judged depth (a pool's depth) if known; when None, the conventions',
            the evaluated pool's, or inferred from the ranked lists (methods §14.2).
        bounds: Draw the P@d bounds (Dempster-Shafer belief and plausibility) of the pairs.
        figures: Draw the figures (the Markdown report has none).
        max_rank: Deepest rank of the unjudged-share curve.
    """

    measures: tuple[str, ...] | None = None
    pairing: str = "P"
    depths: tuple[int, ...] | None = None
    baselines: tuple[str, ...] = ()
    all_pairs: bool = False
    pairs: tuple[tuple[str, str], ...] = ()
    test: str | None = None
    correction: str | None = None
    alpha: float = 0.05
    seed: int | None = 0
    n_resamples: int = 9999
    qrels_id: str | None = None
    flag_gap: float = 0.10
    max_all_pairs: int = 45
    listed: int = 10
    pool_depth: int | None = None
    bounds: bool = True
    figures: bool = True
    max_rank: int = 1000
    fill: tuple[str, ...] = ()

    @property
    def baseline(self) -> str | None:
        """The first baseline (the one the figures compare with), or None."""
        return self.baselines[0] if self.baselines else None

    @property
    def qrels_label(self) -> str:
        """The label sets the report evaluates with: ``A``, or ``A+B`` when B fills A."""
        return "+".join((self.qrels_id or "default", *self.fill))


@dataclass(frozen=True)
class Judgments:
    """The judgments section: a collection's label sets side by side (when it has several).

    Attributes:
        reference: The label sets the report evaluates with (``A`` or ``A+B``).
        measure: The measure the sets' leaderboards rank by (the leaderboard's first).
        depth: The depth of the judged shares by source.
        provenance: One row per label set: ``qrels_id, source, judge, model, prompt_sha256,
            round, topics, pairs, relevant, source_file``.
        agreement: :func:`evalwh.methods.judgments.agreement` of every other label set with
            the report's set ``qrels_id``; None when it could not be computed (``note`` says why).
        rankings: Long form, one row per label set and run: ``qrels_id, run_id, score, rank,
            reference_rank, change`` (change = rank under the set - rank under the reference).
        shifts: One row per label set: ``qrels_id, kendall_tau, mean_abs_change,
            largest_change, run, top_run``.
        shares: One row per run (leaderboard order): ``run_id`` and the mean share of the top
            ``depth`` judged by each source of the reference's sets, and unjudged (``none``).
        note: A sentence for the reader (why agreement is missing, which sets were left out).
    """

    reference: str
    measure: str
    depth: int
    provenance: pd.DataFrame
    agreement: pd.DataFrame | None
    rankings: pd.DataFrame
    shifts: pd.DataFrame
    shares: pd.DataFrame
    note: str = ""


@dataclass(frozen=True)
class Figure:
    """One figure of the report, as SVG text.

    Attributes:
        key: A stable identifier (``unjudged``, ``topics``, ``runs``, ``pair-1``, ``bounds-1``).
        title: The figure's heading.
        caption: How it was computed.
        svg: The SVG document.
    """

    key: str
    title: str
    caption: str
    svg: str


@dataclass(frozen=True)
class Report:
    """Everything :func:`evalwh.present.report.render.render_html` lays out.

    Attributes:
        collection: The collection reported on.
        options: The options used.
        generated: When the report was built (UTC, ISO 8601).
        version: The evalwh version.
        overview: Collection at a glance: counts, pool depth and how it is known, depths
            where the unjudged share first reaches 1%, 10%, 50%.
        topics: Per topic: ``query_id, judged, relevant, unjudged_pooled``.
        unjudged: Per rank: ``rank, lists, unjudged, share`` (methods §2.7).
        leaderboard: One row per run, best first: ``position, run_id, pooled``, the measures'
            means, ``A_p@10, A_p@100``, ``n_topics``, ``flagged``, ``flag``.
        pairs: The listed pairs, long form: ``run_a, run_b, column, depth`` and the columns of
            :func:`evalwh.stats.decision.decision_pairs`.
        pair_mode: ``baseline``, ``all`` or ``summary`` (too many pairs to list: ``weak``,
            ``disagreements`` and the tiers of ``ranks`` instead).
        proportions: Case proportions over all pairs of the family, one row per column
            (:func:`evalwh.stats.decision.case_proportions`).
        figures: The figures, in reading order.
        qrels: Provenance of the qrels set (source file, sha256, lines).
        runs: Provenance of the runs (source file, sha256, pooled, depth).
        methods: ``(what, how)`` lines: how every number was computed.
        timings: Seconds spent per step.
        judgments: The judgments section, when the collection has more than one label set.
        marks: The leaderboard's significance at a glance, per measure and run
            (:func:`evalwh.present.report.significance.marks`); None for a single run.
        family: How the comparisons were made: ``test, correction, n_runs, n_pairs, mode``
            (``baseline`` or ``all``), ``baselines``, and ``notes``: ``evalwh compare``'s notes
            on the family (the runs' topic sets differ), shown beside the significance marks.
        deeper: Measures (leaderboard or decision matrix) that cut deeper than the judged
            depth, each with why (:func:`evalwh.present.report.defaults.deeper_than_judged`).
        graded: The labels have more than two levels.
        comparison: The leaderboard measures' comparison: :func:`evalwh.stats.compare.compare`'s
            ``pairs`` over the family (what ``evalwh compare`` prints); None for a single run.
        ties: Runs whose leaderboard means print differently (four decimals) under float32
            scores' order, with how many values (``run_id, values``;
            :func:`evalwh.present.report.ties.printed_changes`).
        ties_reordered: How many runs float32 scores reorder at all (those of ``ties`` and
            those that print the same).
        ranks: The lead measure's rank table (:func:`evalwh.stats.compare.rank_table`): each
            run's rank, 95% bootstrap rank interval and tier (methods §13); None for one run.
        weak: In ``summary`` mode (no baseline, more pairs than ``max_all_pairs``): every pair
            weak (case 2 or 4) at some column, ``run_a, run_b, columns`` (the columns where it
            is), down the leaderboard.
        disagreements: In ``summary`` mode: the pairs the leaderboard's measures disagree on
            (:func:`evalwh.present.report.significance.disagreements`).
    """

    collection: str
    options: ReportOptions
    generated: str
    version: str
    overview: dict[str, Any]
    topics: pd.DataFrame
    unjudged: pd.DataFrame
    leaderboard: pd.DataFrame
    pairs: pd.DataFrame
    pair_mode: str
    proportions: pd.DataFrame
    figures: list[Figure]
    qrels: pd.DataFrame
    runs: pd.DataFrame
    methods: list[tuple[str, str]]
    timings: dict[str, float] = field(default_factory=dict)
    judgments: Judgments | None = None
    marks: pd.DataFrame | None = None
    family: dict[str, Any] = field(default_factory=dict)
    deeper: dict[str, str] = field(default_factory=dict)
    graded: bool = False
    ties: pd.DataFrame | None = None
    ties_reordered: int = 0
    comparison: pd.DataFrame | None = None
    ranks: pd.DataFrame | None = None
    weak: pd.DataFrame | None = None
    disagreements: pd.DataFrame | None = None


def options_record(opts: ReportOptions) -> dict[str, Any]:
    """The options as plain values (for the report's provenance block and JSON)."""
    record = asdict(opts)
    record["measures"] = list(opts.measures or ())
    record["baselines"] = list(opts.baselines)
    record["depths"] = list(opts.depths or ())
    record["pairs"] = [list(p) for p in opts.pairs]
    if opts.fill:
        record["fill"] = list(opts.fill)
    else:
        del record["fill"]  # (a report of one set reads as it always did)
    return record


ID_SHOWN = 80
"""Ids longer than this many characters are shown shortened in the report (:func:`short_id`)."""


def short_id(text: object, limit: int = ID_SHOWN) -> str:
    """An id as the report shows it: whole up to ``limit`` characters, else its start and end.

    A run id may be up to a line long (1 MiB); drawn whole in every table and figure it made a
    report of a 200,000-character id take minutes and write 128 MB. Shortened, the report's
    cost does not grow with the id's length; the HTML gives the full id in a tooltip where
    the run is listed (leaderboard and provenance).

    Examples:
        >>> short_id("bm25"), short_id("abcdefghij" * 10, 20)
        ('bm25', 'abcdefghijabcd…fghij')
    """
    text = str(text)
    if len(text) <= limit:
        return text
    tail = max(limit // 4, 1)
    return text[: limit - tail - 1] + "…" + text[-tail:]


def short_ids(texts: Sequence[object], limit: int = ID_SHOWN) -> list[str]:
    """:func:`short_id` of each, lengthened where two different ids would read alike.

    Runs named ``bm25_k1-0.9_b-0.40_rm3_fb10_terms20_w05`` and ``..._fb20_terms20_w05`` both
    shortened to ``bm25_k1-0.9_b-0.4…20_w05``; a figure that lists runs side by side must tell
    them apart, so such ids grow until they differ (at most to the whole id).

    Examples:
        >>> short_ids(["abcdefghij-one-xyz", "abcdefghij-two-xyz", "short"], 12)
        ['abcdefghij-one-xyz', 'abcdefghij-two-xyz', 'short']
        >>> short_ids(["abcdefghij-one-xyz", "short"], 12)
        ['abcdefgh…xyz', 'short']
    """
    texts = [str(t) for t in texts]
    shown = [short_id(t, limit) for t in texts]
    width = limit
    while len(set(shown)) < len(set(texts)) and width < max(map(len, texts), default=0):
        width *= 2
        seen = Counter(shown)
        shown = [short_id(t, width) if seen[s] > 1 else s for t, s in zip(texts, shown, strict=True)]
    return shown

