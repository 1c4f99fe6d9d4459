"""The label-set report: a collection of label sets without runs (a judging study).

A collection may hold several label sets over the same topics (the assessors' qrels, the
labels of one or more LLM judges) and no runs: there is no ranking to evaluate, but the sets
can be set side by side. :func:`label_set_report` writes one self-contained HTML file in the
run report's house (its header, navigation, stylesheet and figure style; no scripts, nothing
fetched) or Markdown with:

* at a glance: the sets, the topics, the reference, the grades used and what "relevant" means;
* agreement with the reference: percent agreement, Cohen's kappa and Krippendorff's alpha with
  bootstrap intervals over topics (methods §11.1-§11.3, §11.7), kappa and agreement on
  relevant against not at a stated grade, and alpha of all sets together when there are three
  or more;
* figures: each set's confusion matrix as a heat map, and kappa per topic with its interval;
* per-topic agreement: kappa per topic and set with its large-sample interval, topics in
  natural order (2, 10, 100), to find the topics a judge gets wrong;
* the confusion matrices, the coverage (pairs shared and pairs only one side judged) and the
  provenance of each set (source, judge, model, prompt, round, file).

The numbers are those of :func:`evalwh.methods.judgments.agreement` with the same defaults as
``evalwh agreement`` (1,000 bootstrap replicates, seed 0, 95%), so the command and the report
print the same intervals; this module only gathers and lays them out. The reference is the
report's ``qrels_id`` when the collection has that set, else its first human set by name (the
set ``evalwh collections`` counts), else its first set. The layout lives in
``templates/labels.html.j2`` and ``templates/labels.md.j2``.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalwh import sql
from evalwh.errors import EvalWhError
from evalwh.methods.judgments import natural_key

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.present.report.model import Figure
    from evalwh.store.connection import Store

MAX_TOPIC_COLUMNS = 8
"""Label sets shown as columns of the per-topic table (the summary covers all)."""
RELEVANT_AT = 1.0
"""The grade from which a label counts as relevant (trec_eval's default threshold)."""
_TEXT_COLUMNS = {"set", "sets", "source", "judge", "model", "prompt", "file", "topic"}


@dataclass(frozen=True)
class LabelSetReport:
    """What the label-set report shows, as tables (each a DataFrame of display strings)."""

    collection: str
    reference: str
    sets: list[str]
    provenance: pd.DataFrame
    coverage: pd.DataFrame
    agreement: pd.DataFrame
    raters: pd.DataFrame | None
    confusion: dict[str, pd.DataFrame]
    per_topic: pd.DataFrame
    notes: list[str]
    resamples: int
    confidence: float
    seed: int
    relevant_at: float = RELEVANT_AT
    topics: list[str] = field(default_factory=list)
    reference_grades: str = ""
    set_grades: str = ""
    shared_pairs: int = 0
    figures: list[Figure] = field(default_factory=list)


def choose_reference(store: Store, collection: str, qrels_id: str) -> str:
    """``qrels_id`` if the collection has that set, else its first human set by name, else its first set."""
    sets = store.df(sql.query("evalwh.queries.reports", "qrels_sets"), {"collection_id": collection})
    names = [str(n) for n in sets["qrels_id"]]
    if qrels_id in names:
        return qrels_id
    human = [str(n) for n, s in zip(sets["qrels_id"], sets["source"], strict=True) if _missing(s) or s == "human"]
    return (human or names)[0]


def build_label_set_report(
    store: Store,
    collection: str,
    *,
    qrels_id: str = "default",
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    relevant_at: float = RELEVANT_AT,
    figures: bool = True,
) -> LabelSetReport:
    """Gather the label-set report of ``collection`` (at least two label sets).

    Raises:
        EvalWhError: when the collection has fewer than two label sets.
    """
    import pandas as pd

    from evalwh.methods.judgments import agreement, known_sets

    sets = known_sets(store, collection)
    if len(sets) < 2:
        raise EvalWhError(
            f"report: collection {collection!r} has no runs and {len(sets)} label set(s); a label-set report "
            "compares at least two (evalwh ingest qrels adds one), a run report needs runs (evalwh ingest runs)"
        )
    reference = choose_reference(store, collection, qrels_id)
    others = [s for s in sets if s != reference]
    provenance = store.df(sql.query("evalwh.queries.reports", "qrels_sets"), {"collection_id": collection})
    summary = agreement(
        store, collection, reference, others, binary_at=relevant_at, resamples=resamples, confidence=confidence,
        seed=seed,
    )  # fmt: skip
    raters = None
    if len(sets) >= 3:
        raters = agreement(
            store, collection, reference, others, layout="raters", resamples=resamples, confidence=confidence, seed=seed
        )
    confusion = agreement(store, collection, reference, others, layout="confusion")
    topics = agreement(store, collection, reference, others, per_query=True, resamples=resamples, confidence=confidence)
    notes = [f"{row.qrels_id}: {row.note}" for row in summary.itertuples() if row.note]
    undefined = topics[topics["note"].str.contains("undefined", regex=False)]
    if len(undefined):
        notes.append(
            f"{len(undefined)} (set, topic) cells of the per-topic table are empty: both sides gave every pair of the "
            "topic one and the same grade, so kappa is undefined there."
        )
    zero = topics[topics["note"].str.contains("kappa is 0", regex=False)]
    if len(zero):
        notes.append(
            f"{len(zero)} (set, topic) cells of the per-topic table are 0 because one side gave every pair of the topic "
            "one grade: the set's labels carry no information about the reference's there."
        )
    shown = others[:MAX_TOPIC_COLUMNS]
    if len(others) > MAX_TOPIC_COLUMNS:
        notes.append(f"The per-topic table shows the first {MAX_TOPIC_COLUMNS} of {len(others)} sets; the summary covers all.")
    order = sorted({str(q) for q in topics["query_id"]}, key=natural_key)
    topics = topics.assign(query_id=topics["query_id"].astype(str))
    cells = topics.assign(cell=[_with_interval(row, "kappa") for _, row in topics.iterrows()])
    per_topic = cells[cells["qrels_id"].isin(shown)].pivot(index="query_id", columns="qrels_id", values="cell")
    per_topic = per_topic.reindex(index=order, columns=shown).fillna("")
    pairs = topics.groupby("query_id")["pairs"].max()
    per_topic.insert(0, "pairs", [f"{int(pairs[q]):,}" for q in per_topic.index])
    per_topic = per_topic.reset_index(names="topic")
    per_topic.columns.name = None

    level = "ordinal"
    at = _grade(relevant_at)
    table = pd.DataFrame({
        "set": summary["qrels_id"],
        "pairs": summary["pairs"].map(lambda v: f"{int(v):,}"),
        "agreement": summary["agreement"].map(_number),
        "kappa": [_with_interval(row, "kappa") for _, row in summary.iterrows()],
        "kappa (quadratic)": summary["kappa_quadratic"].map(_number),
        f"alpha ({level})": [_with_interval(row, f"alpha_{level}") for _, row in summary.iterrows()],
        "alpha (interval)": summary["alpha_interval"].map(_number),
        f"kappa (grade >= {at})": summary["kappa_binary"].map(_number),
        f"agreement (grade >= {at})": summary["agreement_binary"].map(_number),
    })  # fmt: skip
    coverage = pd.DataFrame({
        "set": summary["qrels_id"],
        "shared pairs": summary["pairs"].map(lambda v: f"{int(v):,}"),
        f"only {reference}": summary["only_reference"].map(lambda v: f"{int(v):,}"),
        "only the set": summary["only_set"].map(lambda v: f"{int(v):,}"),
    })  # fmt: skip
    shown_provenance = pd.DataFrame({
        "set": provenance["qrels_id"],
        "source": provenance["source"].fillna(""),
        "judge": provenance["judge"].fillna(""),
        "model": provenance["model"].fillna(""),
        "prompt": provenance["prompt_sha256"].map(lambda v: "" if _missing(v) else str(v)[:12]),
        "round": provenance["round"].map(lambda v: "" if _missing(v) else str(int(v))),
        "topics": provenance["topics"].map(lambda v: f"{int(v):,}"),
        "pairs": provenance["pairs"].map(lambda v: f"{int(v):,}"),
        f"relevant (grade >= {_grade(RELEVANT_AT)})": provenance["relevant"].map(lambda v: f"{int(v):,}"),
        # the file's name; its whole path is in evalwh qrels
        "file": provenance["file"].map(lambda v: "" if _missing(v) else str(v).replace("\\", "/").rsplit("/", 1)[-1]),
    })  # fmt: skip
    raters_table = None
    if raters is not None:
        row = raters.iloc[0]
        raters_table = pd.DataFrame({
            "sets": [row["sets"]], "units": [f"{int(row['units']):,}"], "values": [f"{int(row['values']):,}"],
            **{f"alpha ({lv})": [_with_interval(row, f"alpha_{lv}")] for lv in ("nominal", "ordinal", "interval")},
        })  # fmt: skip
        if row["note"]:
            notes.append(f"all sets together: {row['note']}")
    matrices: dict[str, pd.DataFrame] = {}
    counts: dict[str, pd.DataFrame] = {}
    set_grades: set[str] = set()
    for name, block in confusion.groupby("qrels_id", sort=False):
        grades = [c for c in block.columns if c not in ("qrels_id", "reference")]
        set_grades.update(g for g in grades if block[g].sum() > 0)
        matrix = block.drop(columns="qrels_id").rename(columns={"reference": f"{reference} / {name}"})
        matrices[str(name)] = matrix[[f"{reference} / {name}", *grades]].astype(str)
        counts[str(name)] = block.set_index("reference")[grades]
    reference_grades = {str(g) for g in confusion["reference"]}
    drawn: list[Figure] = []
    if figures:
        from evalwh.present.report.label_figures import confusion_figure, topic_kappa_figure

        drawn = [
            confusion_figure({name: counts[name] for name in shown if name in counts}, reference, len(others)),
            topic_kappa_figure(topics, order, others, confidence),
        ]
    return LabelSetReport(
        collection=collection, reference=reference, sets=sets, provenance=shown_provenance, coverage=coverage,
        agreement=table, raters=raters_table, confusion=matrices, per_topic=per_topic, notes=notes,
        resamples=resamples, confidence=confidence, seed=seed, relevant_at=relevant_at, topics=order,
        reference_grades=_grade_range(reference_grades), set_grades=_grade_range(set_grades),
        shared_pairs=int(summary["pairs"].max()) if len(summary) else 0, figures=drawn,
    )  # fmt: skip


def label_set_report(
    store: Store,
    collection: str,
    *,
    format: str = "html",
    qrels_id: str = "default",
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> str:
    """The label-set report of ``collection`` as HTML (one self-contained file) or Markdown.

    Args:
        store: The warehouse.
        collection: A collection with at least two label sets (runs are not needed).
        format: ``html`` or ``md`` (no figures).
        qrels_id: The reference set if the collection has it (else :func:`choose_reference`).
        resamples: Bootstrap replicates over topics for the intervals (0: none).
        confidence: Coverage of the intervals.
        seed: Seed of the bootstrap.

    Returns:
        The report's text.

    Examples:
        >>> import pandas as pd
        >>> from evalwh import Warehouse
        >>> wh = Warehouse(":memory:")
        >>> qrels = pd.DataFrame({"query_id": ["1"] * 4, "doc_id": list("abcd"), "relevance": [0, 1, 2, 2]})
        >>> _ = wh.ingest_qrels(qrels, collection="demo", qrels_id="human")
        >>> _ = wh.ingest_qrels(qrels.assign(relevance=[0, 1, 1, 2]), collection="demo", qrels_id="llm")
        >>> text = label_set_report(wh, "demo", format="md", resamples=0)
        >>> text.splitlines()[0]
        '# Label sets of demo'
    """
    from evalwh._version import __version__
    from evalwh.present.report.render import _environment, _figure_context

    if format not in ("html", "md"):
        raise EvalWhError(f"report: format {format!r}: give html or md")
    report = build_label_set_report(
        store, collection, qrels_id=qrels_id, resamples=resamples, confidence=confidence, seed=seed,
        figures=format == "html",
    )  # fmt: skip
    context = {
        "r": report,
        "title": f"Label sets of {report.collection}",
        "subtitle": " · ".join([
            _count_of(len(report.sets), "label set"), _count_of(len(report.topics), "topic"), "no runs",
            f"evalwh {__version__}",
            f"generated {dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()}",
        ]),  # fmt: skip
        "opening": _opening(report),
        "cards": _cards(report),
        "facts": _facts(report),
        "method": _method(report),
        "methods": _methods(report),
        "tables": {
            "agreement": _table(report.agreement),
            "raters": None if report.raters is None else _table(report.raters),
            "per_topic": _table(report.per_topic),
            "coverage": _table(report.coverage),
            "provenance": _table(report.provenance),
            "confusion": {name: _table(t, first_is_text=True) for name, t in report.confusion.items()},
        },
        # the confusion matrices of several sets span the page; kappa per topic takes a column
        "figures": [{**_figure_context(f), "wide": f.key == "confusion" and len(report.sets) > 3} for f in report.figures],
    }
    return _environment(markdown=format == "md").get_template(f"labels.{format}.j2").render(context)


def _count_of(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _opening(report: LabelSetReport) -> str:
    others = [s for s in report.sets if s != report.reference]
    compared = (
        f"the other set, {others[0]}, against {report.reference}"
        if len(others) == 1
        else f"each of the {len(others)} other sets against {report.reference}"
    )
    return (
        f"Collection {report.collection} holds {len(report.sets)} label sets and no runs, so this report compares "
        f"the sets instead of ranking runs: {compared}, on the (topic, document) pairs both judged."
    )


def _cards(report: LabelSetReport) -> list[tuple[str, str]]:
    return [
        (f"{len(report.sets)}", "label sets"),
        (f"{len(report.topics):,}", "topics"),
        (f"{report.shared_pairs:,}", "shared pairs (most of any set)"),
        (f"grade >= {_grade(report.relevant_at)}", "relevant"),
    ]


def _facts(report: LabelSetReport) -> list[tuple[str, str]]:
    at = _grade(report.relevant_at)
    return [
        ("Reference", f"{report.reference}: every other set is compared with its labels"),
        (
            "Grades",
            f"{report.reference} uses {report.reference_grades or 'none'} on the shared pairs, the other sets "
            f"{report.set_grades or 'none'}; a negative grade is no judgment",
        ),
        (
            "Relevant",
            f"grade >= {at} (trec_eval's default threshold) in the provenance's relevant column and in kappa and "
            f"agreement on relevant against not (grade >= {at} on both sides)",
        ),
    ]


def _method(report: LabelSetReport) -> str:
    if not report.resamples:
        return "No intervals were asked for."
    return (
        f"Intervals: {report.confidence:.0%}, the normal bootstrap interval over topics (estimate +- z times the "
        f"standard deviation of {report.resamples:,} replicates, seed {report.seed}, as evalwh agreement draws them "
        "by default); topics, not pairs, are drawn, since the pairs of one topic err together (methods §11.7). An "
        "empty kappa is undefined: both sides gave every pair one and the same grade; a side with one grade gives "
        "kappa 0."
    )


def _methods(report: LabelSetReport) -> list[tuple[str, str]]:
    at = _grade(report.relevant_at)
    items = [
        (
            "Agreement and kappa",
            "On the (topic, document) pairs both sets judged: percent agreement (same grade), Cohen's kappa "
            "unweighted and with quadratic weights on the grades' positions (as scikit-learn's cohen_kappa_score), "
            "Krippendorff's alpha at the ordinal and interval levels (methods §11.1-§11.3).",
        ),
        (
            f"Relevant (grade >= {at})",
            f"Kappa and agreement after mapping both sides to relevant (grade >= {at}) or not, the threshold "
            "trec_eval uses by default; evalwh agreement --binary-at G gives another.",
        ),
        ("Intervals of the summary", _method(report).removeprefix("Intervals: ")),
    ]
    if report.resamples:
        items.append((
            "Intervals per topic",
            f"{report.confidence:.0%} large-sample interval of kappa on the topic's pairs (Fleiss, Cohen and "
            "Everitt 1969; statsmodels' cohens_kappa gives the same), cut to [-1, 1]. Within one topic the pairs "
            "are the only unit left and it takes them as independent, so it may be narrower than the judge's "
            "real uncertainty on that topic.",
        ))  # fmt: skip
    items.append((
        "Topics",
        "In natural order: numbers as numbers (14, 31, 144), names by their digit runs (q3 before q20).",
    ))  # fmt: skip
    return items


def _table(frame: pd.DataFrame, *, first_is_text: bool = False) -> dict[str, Any]:
    """Columns, rows and which columns hold text (left-aligned) rather than numbers (right-aligned)."""
    columns = [str(c) for c in frame.columns]
    text = [c in _TEXT_COLUMNS or (first_is_text and i == 0) for i, c in enumerate(columns)]
    rows = [[str(v) for v in row] for row in frame.itertuples(index=False)]
    return {"columns": columns, "rows": rows, "text": text, "frame": frame}


def _grade(value: float) -> str:
    number = float(value)
    return str(int(number)) if number.is_integer() else str(number)


def _grade_range(grades: set[str]) -> str:
    """``0-3`` for consecutive whole grades, else the grades listed."""
    values = sorted(float(g) for g in grades)
    if not values:
        return ""
    whole = all(v.is_integer() for v in values)
    if whole and values == [float(v) for v in range(int(values[0]), int(values[-1]) + 1)] and len(values) > 1:
        return f"{int(values[0])}-{int(values[-1])}"
    return ", ".join(_grade(v) for v in values)


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or str(value) in ("<NA>", "nan", "NaT")


def _number(value: object) -> str:
    return "" if _missing(value) else f"{float(value):.3f}"  # type: ignore[arg-type]


def _with_interval(row: Any, column: str) -> str:
    """``0.252 [0.145, 0.358]``; the value alone without an interval; empty when undefined."""
    value = _number(row[column])
    low, high = row.get(f"{column}_low"), row.get(f"{column}_high")
    if not value or _missing(low) or _missing(high):
        return value
    return f"{value} [{float(low):.3f}, {float(high):.3f}]"
