"""The label-set report: a collection of label sets without runs (a judging study).

A collection may hold several label sets over the same topics (the assessors' qrels, the
labels of one or more LLM judges) and no runs: there is no ranking to evaluate, but the sets
can be set side by side. :func:`label_set_report` writes one self-contained HTML file (inline
CSS, no scripts, nothing fetched) or Markdown with:

* the provenance of each set (source, judge, model, prompt, round, file) and its size;
* coverage: the pairs each set shares with the reference and those only one side judged;
* agreement with the reference: percent agreement, Cohen's kappa and Krippendorff's alpha with
  bootstrap intervals over topics (methods §11.1-§11.3, §11.7), and alpha of all sets
  together when there are three or more;
* the confusion matrix of each set against the reference;
* per-topic agreement: kappa per topic and set, to find the topics a judge gets wrong.

The numbers are those of :func:`evalwh.methods.judgments.agreement`; this module only
gathers and lays them out. The reference is the report's ``qrels_id`` when the collection has
that set, else its first human set by name (the set ``evalwh collections`` counts), else its
first set.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalwh import sql
from evalwh.errors import EvalWhError

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.store.connection import Store

MAX_TOPIC_COLUMNS = 8
"""Label sets shown as columns of the per-topic table (the summary covers all)."""


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
    summary = agreement(store, collection, reference, others, resamples=resamples, confidence=confidence, seed=seed)
    raters = None
    if len(sets) >= 3:
        raters = agreement(
            store, collection, reference, others, layout="raters", resamples=resamples, confidence=confidence, seed=seed
        )
    confusion = agreement(store, collection, reference, others, layout="confusion")
    topics = agreement(store, collection, reference, others, per_query=True)
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
    per_topic = topics[topics["qrels_id"].isin(shown)].pivot(index="query_id", columns="qrels_id", values="kappa")
    pairs = topics.groupby("query_id")["pairs"].max()
    per_topic = per_topic.reindex(columns=shown).map(_number)
    per_topic.insert(0, "pairs", [f"{int(pairs[q]):,}" for q in per_topic.index])
    per_topic = per_topic.reset_index().rename(columns={"query_id": "topic"})

    level = "ordinal"
    table = pd.DataFrame({
        "set": summary["qrels_id"],
        "pairs": summary["pairs"].map(lambda v: f"{int(v):,}"),
        "agreement": summary["agreement"].map(_number),
        "kappa": [_with_interval(row, "kappa") for _, row in summary.iterrows()],
        "kappa (quadratic)": summary["kappa_quadratic"].map(_number),
        f"alpha ({level})": [_with_interval(row, f"alpha_{level}") for _, row in summary.iterrows()],
        "alpha (interval)": summary["alpha_interval"].map(_number),
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
        "relevant": provenance["relevant"].map(lambda v: f"{int(v):,}"),
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
    matrices = {}
    for name, block in confusion.groupby("qrels_id", sort=False):
        grades = [c for c in block.columns if c not in ("qrels_id", "reference")]
        matrix = block.drop(columns="qrels_id").rename(columns={"reference": f"{reference} / {name}"})
        matrices[str(name)] = matrix[[f"{reference} / {name}", *grades]].astype(str)
    return LabelSetReport(
        collection=collection, reference=reference, sets=sets, provenance=shown_provenance, coverage=coverage,
        agreement=table, raters=raters_table, confusion=matrices, per_topic=per_topic, notes=notes,
        resamples=resamples, confidence=confidence, seed=seed,
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
        format: ``html`` or ``md``.
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
    import jinja2

    report = build_label_set_report(
        store, collection, qrels_id=qrels_id, resamples=resamples, confidence=confidence, seed=seed
    )
    if format not in ("html", "md"):
        raise EvalWhError(f"report: format {format!r}: give html or md")
    # HTML escapes every value (a set's name or file is the user's text); Markdown does not
    env = jinja2.Environment(
        loader=jinja2.DictLoader({"html": _HTML, "md": _MARKDOWN}), autoescape=format == "html",
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
    )  # fmt: skip
    env.filters["md_table"] = _markdown_table
    if format == "md":  # every other value escaped for Markdown too (a set's name, a file)
        env.finalize = _markdown_value
    return env.get_template(format).render(r=report, opening=_opening(report), method=_method(report))


def _opening(report: LabelSetReport) -> str:
    others = len(report.sets) - 1
    return (
        f"Collection {report.collection} holds {len(report.sets)} label sets and no runs, so this report compares "
        f"the sets instead of ranking runs: each of the {others} other set{'s' if others > 1 else ''} against "
        f"{report.reference}, on the (topic, document) pairs both judged."
    )


def _method(report: LabelSetReport) -> str:
    if not report.resamples:
        return "No intervals were asked for."
    return (
        f"Intervals: {report.confidence:.0%}, the normal bootstrap interval over topics (estimate +- z times the "
        f"standard deviation of {report.resamples:,} replicates, seed {report.seed}); topics, not pairs, are drawn, "
        "since the pairs of one topic err together (methods §11.7). An empty kappa is undefined: both sides gave "
        "every pair one and the same grade; a side with one grade gives kappa 0."
    )


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


def _markdown_table(frame: pd.DataFrame) -> Any:
    """A pipe table (Markup: escaped already); cells escaped for pipes, HTML tags and control
    characters (evalwh.io.printable)."""
    from markupsafe import Markup

    from evalwh.io.printable import markdown

    head = "| " + " | ".join(markdown(c) for c in frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    body = ["| " + " | ".join(markdown(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return Markup("\n".join([head, rule, *body]))


def _markdown_value(value: object) -> object:
    """A value printed into the Markdown report: escaped unless it is a table (Markup)."""
    from markupsafe import Markup

    from evalwh.io.printable import markdown

    if isinstance(value, Markup) or not isinstance(value, str):
        return value
    return markdown(value).replace("\\|", "|")


_TABLE = """<div class="scroll"><table>
<thead><tr>{% for c in t.columns %}<th>{{ c }}</th>{% endfor %}</tr></thead>
<tbody>{% for row in t.itertuples(index=False) %}<tr>{% for v in row %}<td>{{ v }}</td>{% endfor %}</tr>
{% endfor %}</tbody></table></div>"""

_HTML = (
    """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Label sets of {{ r.collection }}</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.25rem; margin-top: 2rem; } h3 { font-size: 1rem; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; font-size: 0.9rem; font-variant-numeric: tabular-nums; }
th, td { padding: 0.25rem 0.6rem; border-bottom: 1px solid #ddd; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
.matrices { display: flex; flex-wrap: wrap; gap: 1.5rem; }
p.note { color: #555; font-size: 0.9rem; }
</style>
</head>
<body>
<h1>Label sets of {{ r.collection }}</h1>
<p>{{ opening }}</p>
<h2>Provenance</h2>
{% with t = r.provenance %}"""
    + _TABLE
    + """{% endwith %}
<h2>Coverage</h2>
<p>Pairs both sets judged, and those only one side judged (a negative grade is no judgment).</p>
{% with t = r.coverage %}"""
    + _TABLE
    + """{% endwith %}
<h2>Agreement with {{ r.reference }}</h2>
{% with t = r.agreement %}"""
    + _TABLE
    + """{% endwith %}
{% if r.raters is not none %}
<h3>All sets together</h3>
<p>Krippendorff's alpha of every set at once: each pair any set judged is a unit, each set that judged it one value.</p>
{% with t = r.raters %}"""
    + _TABLE
    + """{% endwith %}
{% endif %}
<p class="note">{{ method }}</p>
{% for n in r.notes %}<p class="note">{{ n }}</p>
{% endfor %}
<h2>Confusion matrices</h2>
<p>Rows: {{ r.reference }}'s grade; columns: the set's grade; cells: shared pairs.</p>
<div class="matrices">
{% for name, t in r.confusion.items() %}<div><h3>{{ name }}</h3>"""
    + _TABLE
    + """</div>
{% endfor %}</div>
<h2>Agreement per topic</h2>
<p>Cohen's kappa per topic against {{ r.reference }} (pairs: the most any set shares with it on the topic).</p>
{% with t = r.per_topic %}"""
    + _TABLE
    + """{% endwith %}
</body>
</html>
"""
)

_MARKDOWN = """# Label sets of {{ r.collection }}

{{ opening }}

## Provenance

{{ r.provenance | md_table }}

## Coverage

Pairs both sets judged, and those only one side judged (a negative grade is no judgment).

{{ r.coverage | md_table }}

## Agreement with {{ r.reference }}

{{ r.agreement | md_table }}
{% if r.raters is not none %}

All sets together (Krippendorff's alpha of every set at once):

{{ r.raters | md_table }}
{% endif %}

{{ method }}
{% for n in r.notes %}

- {{ n }}
{% endfor %}

## Confusion matrices

Rows: {{ r.reference }}'s grade; columns: the set's grade; cells: shared pairs.
{% for name, t in r.confusion.items() %}

### {{ name }}

{{ t | md_table }}
{% endfor %}

## Agreement per topic

Cohen's kappa per topic against {{ r.reference }}.

{{ r.per_topic | md_table }}
"""
