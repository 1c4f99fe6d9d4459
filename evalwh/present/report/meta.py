"""The meta-analysis report: one method's effect over several collections, pooled (``evalwh meta --report``).

A page in the run report's house (its stylesheet, header and navigation, ``meta.html.j2``) or
Markdown (``meta.md.j2``): the collections, the pooled effects with their heterogeneity, a
forest plot per comparison (:func:`evalwh.present.plots.forest.forest_figure`), each
collection's effect, and how it was computed (methods §18).
"""

from __future__ import annotations

import base64
import datetime
import math
from typing import TYPE_CHECKING, Any

from evalwh._version import __version__

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.stats.meta import MetaAnalysis

_EFFECT = {
    "smd": "the standardised mean difference of the paired scores (Borenstein et al.'s matched-groups d: the "
    "mean difference over the systems' within-collection standard deviation, with Hedges' small-sample "
    "correction), so that a gain is measured in units of the collection's topic-to-topic spread",
    "dz": "the mean paired difference over the standard deviation of the differences (d_z, Hedges-corrected)",
    "raw": "the raw mean difference of the scores (meaningful only where the collections share a scale)",
}
_TAU2 = {"dl": "DerSimonian and Laird's method of moments", "pm": "Paule and Mandel's estimator",
         "reml": "restricted maximum likelihood"}  # fmt: skip


def _f(value: float, digits: int = 3) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def _p(value: float) -> str:
    return f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


def _interval(effect: float, low: float, high: float) -> str:
    return f"{effect:.3f} [{low:.3f}, {high:.3f}]"


def _pooled_rows(result: MetaAnalysis) -> list[dict[str, Any]]:
    rows = []
    for (measure, a, b), part in result.pooled.groupby(["measure", "run_a", "run_b"], sort=False):
        fixed = part[part["model"] == "fixed"].iloc[0]
        random = part[part["model"] == "random"].iloc[0]
        het = result.heterogeneity[(result.heterogeneity["measure"] == measure) & (result.heterogeneity["run_a"] == a)
                                   & (result.heterogeneity["run_b"] == b)].iloc[0]  # fmt: skip
        pi = "" if math.isnan(het["pi_low"]) else f"[{het['pi_low']:.3f}, {het['pi_high']:.3f}]"
        rows.append({
            "measure": measure, "run_a": a, "run_b": b, "k": int(het["k"]),
            "fixed": _interval(fixed["effect"], fixed["ci_low"], fixed["ci_high"]),
            "random": _interval(random["effect"], random["ci_low"], random["ci_high"]),
            "p": _p(random["p_value"]), "significant": bool(random["p_value"] < result.alpha),
            "pi": pi, "tau2": _f(het["tau2"], 4), "i2": f"{100 * het['i2']:.0f}%",
            "q": f"{het['q']:.2f} ({_p(het['q_p_value'])})",
            "effect": float(random["effect"]), "p_value": float(random["p_value"]), "i2_value": float(het["i2"]),
            "pi_low": float(het["pi_low"]), "pi_high": float(het["pi_high"]),
        })  # fmt: skip
    return rows


def _sentence(row: dict[str, Any], alpha: float) -> str:
    """What one comparison's pooled effect says, in words."""
    a, b, measure, k = row["run_a"], row["run_b"], row["measure"], row["k"]
    direction = "better" if row["effect"] > 0 else "worse"
    if row["p_value"] < alpha:
        verdict = f"Over {k} collections, {a} is {direction} than {b} on {measure}: random-effects effect {row['random']} (p {row['p']})."
    else:
        verdict = f"Over {k} collections, {a} and {b} cannot be told apart on {measure}: random-effects effect {row['random']} (p {row['p']})."
    i2 = row["i2_value"]
    spread = "little" if i2 < 0.25 else ("moderate" if i2 < 0.5 else ("substantial" if i2 < 0.75 else "considerable"))
    text = f"{verdict} The collections' effects vary {spread}ly beyond chance (I² {row['i2']})"
    if not math.isnan(row["pi_low"]):
        lo, hi = row["pi_low"], row["pi_high"]
        where = "a new collection's effect could be of either sign" if lo < 0 < hi else "a new collection's effect would have the same sign"
        text += f"; by the prediction interval [{lo:.3f}, {hi:.3f}], {where}."
    else:
        text += "; two collections give no prediction interval."
    return text.replace("vary littlely", "vary little")


def _effect_rows(result: MetaAnalysis) -> list[dict[str, str]]:
    rows = []
    for _, e in result.effects.iterrows():
        rows.append({
            "measure": e["measure"], "run_a": e["run_a"], "run_b": e["run_b"], "collection": e["collection_id"],
            "n": str(int(e["n_topics"])), "mean_a": _f(e["mean_a"], 4), "mean_b": _f(e["mean_b"], 4),
            "diff": _f(e["mean_diff"], 4), "r": _f(e["r"], 2),
            "effect": _interval(e["effect"], e["ci_low"], e["ci_high"]), "weight": f"{100 * e['weight_random']:.1f}%",
        })  # fmt: skip
    return rows


def _methods(result: MetaAnalysis) -> list[tuple[str, str]]:
    het = result.heterogeneity.iloc[0]
    level = round(100 * (1 - result.alpha))
    interval = (
        f"normal {level}% intervals (estimate ± z × standard error)"
        if het["interval"] == "z"
        else f"Hartung-Knapp-Sidik-Jonkman {level}% intervals (a weighted residual scale, t with k - 1 degrees of freedom)"
    )
    return [
        ("Effect per collection", f"Each collection contributes {_EFFECT[result.effect]}, on the topics both runs have there, with its sampling variance."),
        ("Pooling", f"Inverse-variance weights: the fixed effect assumes one true effect; the random-effects model lets it vary between collections with variance τ², estimated by {_TAU2[str(het['tau2_method'])]}; {interval}."),
        ("Heterogeneity", "Cochran's Q (χ² with k - 1 degrees of freedom) tests whether the collections share one effect; I² = (Q - df) / Q is the share of the effects' spread beyond chance; the prediction interval (t with k - 2 degrees of freedom) is where a new collection's effect would fall."),
        ("Source", "Soboroff (CIKM 2018) on meta-analysis across test collections; Borenstein, Hedges, Higgins and Rothstein, Introduction to Meta-Analysis (2009); evalwh's methods §18."),
    ]  # fmt: skip


def _collections(collections: pd.DataFrame, qrels_id: str) -> list[dict[str, str]]:
    rows = []
    for _, c in collections.iterrows():
        rows.append({"name": str(c["collection_id"]), "topics": str(c.get("topics", "")), "runs": str(c.get("runs", "")),
                     "qrels": qrels_id})  # fmt: skip
    return rows


def meta_report(
    result: MetaAnalysis, collections: pd.DataFrame, *, format: str = "html", title: str | None = None,
    qrels_id: str = "default",
) -> str:  # fmt: skip
    """The meta-analysis as an HTML page (with forest plots) or Markdown.

    Args:
        result: :func:`evalwh.stats.meta.meta_analysis`'s output.
        collections: One row per collection pooled: ``collection_id`` and, where known,
            ``topics, runs, qrels_id``.
        format: ``html`` or ``md``.
        title: The page title (default: "Meta-analysis over N collections").
        qrels_id: The qrels set every collection was evaluated with.
    """
    import pandas as pd
    from markupsafe import Markup, escape

    from evalwh.present.plots.forest import forest_figure
    from evalwh.present.report.figures import _report_style, to_svg
    from evalwh.present.report.render import _environment

    names = list(dict.fromkeys(result.effects["collection_id"]))
    title = title or f"Meta-analysis over {len(names)} collections"
    level = round(100 * (1 - result.alpha))
    pooled = _pooled_rows(result)
    sentences = [_sentence(row, result.alpha) for row in pooled]
    het = result.heterogeneity.iloc[0]
    note = (
        f"Effect: {result.effect}; τ² by {het['tau2_method']}; {level}% intervals ({het['interval']}). "
        "A positive effect means the first system scores higher. The random-effects effect is the one to report "
        "when the collections are a sample of the collections the claim is about."
    )
    context: dict[str, Any] = {
        "title": title, "subtitle": f"{len(names)} collections · {len(pooled)} comparison(s)",
        "version": __version__, "generated": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "collections": _collections(collections, qrels_id), "pooled": pooled, "pooled_note": note, "sentences": sentences,
        "effects": _effect_rows(result), "methods": _methods(result), "level": level,
    }  # fmt: skip
    if format == "md":
        def md(text: object) -> str:
            return str(escape(str(text)))

        context["title"] = md(title)
        context["pooled_table"] = pd.DataFrame([
            {"measure": md(r["measure"]), "system": md(r["run_a"]), "over": md(r["run_b"]), "k": r["k"],
             f"fixed [{level}% CI]": r["fixed"], f"random [{level}% CI]": r["random"], "p": r["p"],
             "prediction interval": r["pi"], "τ²": r["tau2"], "I²": r["i2"], "Q (p)": r["q"]}
            for r in pooled
        ])  # fmt: skip
        context["effects_table"] = pd.DataFrame([
            {"measure": md(r["measure"]), "system": md(r["run_a"]), "over": md(r["run_b"]), "collection": md(r["collection"]),
             "topics": r["n"], "mean A": r["mean_a"], "mean B": r["mean_b"], "difference": r["diff"], "r": r["r"],
             f"effect [{level}% CI]": r["effect"], "weight": r["weight"]}
            for r in _effect_rows(result)
        ])  # fmt: skip
        context["sentences"] = [md(s) for s in sentences]
        return _environment(markdown=True).get_template("meta.md.j2").render(context)

    svg = _report_style(lambda: to_svg(forest_figure(result)))()
    data = base64.b64encode(svg.encode()).decode()
    context["figures"] = [{
        "key": "forest", "title": "Forest plot",
        "caption": f"Each collection's effect (a square sized by its random-effects weight) with its {level}% "
        "interval; the diamonds span the pooled effects' intervals (green: random effects, dark: fixed effect); "
        "the green bar below is the prediction interval of a new collection's effect; the dashed line is no effect.",
        "src": Markup(f"data:image/svg+xml;base64,{data}"),
    }]  # fmt: skip
    return _environment().get_template("meta.html.j2").render(context)
