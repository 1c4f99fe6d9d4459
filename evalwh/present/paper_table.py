"""Tables for papers from a :class:`~evalwh.stats.compare.Comparison`: one row per run, one column per measure.

Runs are lettered ``a``, ``b``, ``c``, ... in the comparison's order. Each cell holds the
run's mean on the measure and, as superscript letters, the runs it is significantly better
than after the correction (the convention of ranx's tables); the best mean of a measure is
bold. Against baselines (``marks="arrows"``) a cell holds an up or down marker instead where
the run is significantly better or worse than a baseline (followed by the baseline's letter
when there are several). The caption names the test, the correction, alpha and the topics.
``compact`` leaves the means alone (no marks, best still bold).

* :func:`paper_frame`: numbers, one column per quantity (for CSV, JSON, Parquet);
* :func:`display_frame`: formatted cells (for the terminal, Markdown and LaTeX);
* :func:`to_markdown` and :func:`to_latex`: text, the latter a ``booktabs`` table that
  compiles in a plain ``article`` with ``\\usepackage{booktabs}`` (its first line says so).
"""

from __future__ import annotations

import string
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from evalwh.io.printable import markdown, terminal

if TYPE_CHECKING:
    from evalwh.stats.compare import Comparison

MARKS = ("letters", "arrows")
_ARROWS = {1: "▲", -1: "▼"}
_LATEX_ARROWS = {1: r"\uparrow", -1: r"\downarrow"}
_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
LATEX_PACKAGES = "booktabs"
_TESTS = {
    "t": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "sign": "sign test",
    "randomization": "paired randomisation test",
    "bootstrap": "paired bootstrap test",
    "tukey": "Tukey HSD after a two-way ANOVA",
    "randomized_tukey": "randomised Tukey HSD test",
    "anova": "one-way ANOVA and pairwise t with pooled error",
    "anova2": "two-way ANOVA and pairwise t with pooled error",
}
_CORRECTIONS = {
    "none": "no correction",
    "bonferroni": "Bonferroni correction",
    "holm": "Holm correction",
    "bh": "Benjamini-Hochberg correction",
    "by": "Benjamini-Yekutieli correction",
}


def letter(index: int) -> str:
    """The letter of the ``index``-th run: ``a`` ... ``z``, then ``aa``, ``ab``, ...

    Examples:
        >>> letter(0), letter(25), letter(26), letter(27)
        ('a', 'z', 'aa', 'ab')
    """
    letters = string.ascii_lowercase
    return letters[index] if index < 26 else letter(index // 26 - 1) + letters[index % 26]


def _runs(result: Comparison) -> list[str]:
    return list(dict.fromkeys(result.runs["run_id"]))


def _measures(result: Comparison) -> list[str]:
    return list(dict.fromkeys(result.runs["measure"]))


def _winners(result: Comparison, measure: str) -> list[tuple[str, str]]:
    """``(better, worse)`` for every significant comparison of ``measure``."""
    pairs = result.pairs[(result.pairs["measure"] == measure) & result.pairs["reject"].astype(bool)]
    out = []
    for row in pairs.itertuples():
        sign = np.sign(row.mean_diff) if row.mean_diff != 0 else np.sign(row.wins - row.losses)
        if sign > 0:
            out.append((row.run_a, row.run_b))
        elif sign < 0:
            out.append((row.run_b, row.run_a))
    return out


def paper_frame(result: Comparison) -> pd.DataFrame:
    """One row per run, numbers only: ``letter, run_id``, then per measure ``M mean, M ci_low,
    M ci_high, M better than, M worse than, M best`` (letters of the runs it is significantly
    better and worse than; whether its mean is the best).

    Examples:
        >>> from evalwh.stats.compare import compare
        >>> frame = pd.DataFrame({"run_id": ["a"] * 4 + ["b"] * 4, "query_id": list("wxyz") * 2,
        ...                       "measure": "AP", "value": [0.9, 0.8, 0.9, 0.7, 0.1, 0.2, 0.1, 0.2]})
        >>> paper_frame(compare(frame, baselines=["b"]))[["letter", "run_id", "AP better than", "AP best"]].values.tolist()
        [['a', 'a', 'b', True], ['b', 'b', '', False]]
    """
    runs = _runs(result)
    names = {run: letter(i) for i, run in enumerate(runs)}
    frame = pd.DataFrame({"letter": [names[r] for r in runs], "run_id": runs})
    for measure in _measures(result):
        stats = result.runs[result.runs["measure"] == measure].set_index("run_id").loc[runs]
        wins = _winners(result, measure)
        frame[f"{measure} mean"] = stats["mean"].to_numpy(dtype=float)
        frame[f"{measure} ci_low"] = stats["ci_low"].to_numpy(dtype=float)
        frame[f"{measure} ci_high"] = stats["ci_high"].to_numpy(dtype=float)
        frame[f"{measure} better than"] = [
            "".join(names[w] for b, w in wins if b == run) for run in runs
        ]
        frame[f"{measure} worse than"] = [
            "".join(names[b] for b, w in wins if w == run) for run in runs
        ]
        means = stats["mean"].to_numpy(dtype=float)
        frame[f"{measure} best"] = np.isclose(means, means.max(), rtol=0, atol=1e-12)
    return frame


def _arrows(result: Comparison, measure: str, run: str, names: dict[str, str]) -> list[tuple[int, str]]:
    """``(+1 or -1, baseline letter)`` per baseline ``run`` differs from significantly."""
    out = []
    for better, worse in _winners(result, measure):
        if run == better and worse in result.baselines:
            out.append((1, worse))
        elif run == worse and better in result.baselines:
            out.append((-1, better))
    order = {b: i for i, b in enumerate(result.baselines)}
    return [(sign, names[base]) for sign, base in sorted(out, key=lambda item: order[item[1]])]


def display_frame(
    result: Comparison, *, digits: int = 4, style: str = "text", compact: bool = False, marks: str = "letters"
) -> pd.DataFrame:
    """Formatted cells: the run's letter, ``Run``, then one column per measure (mean and marks).

    ``style`` is ``text`` (marks after ``^``, best between ``**``), ``markdown`` (``<sup>``
    and ``**``) or ``latex`` (escaped; ``$^{...}$`` and ``\\textbf``).
    """
    if marks not in MARKS:
        from evalwh.errors import EvalWhError

        raise EvalWhError(f"paper table marks {marks!r}: give letters or arrows")
    numbers = paper_frame(result)
    runs = numbers["run_id"].tolist()
    names = dict(zip(runs, numbers["letter"], strict=True))
    several = len(result.baselines) > 1
    # ids are the user's text: LaTeX-escaped, or in Markdown with no HTML tag (the marks' <sup> are ours)
    esc = _escape if style == "latex" else (lambda text: markdown(text, cell=False)) if style == "markdown" else str
    out: dict[str, list[str]] = {}
    if not compact:
        out[""] = numbers["letter"].tolist()
    out["Run"] = [esc(r) for r in runs]
    for measure in _measures(result):
        cells = []
        for i, run in enumerate(runs):
            mean = f"{numbers.loc[i, f'{measure} mean']:.{digits}f}"
            if numbers.loc[i, f"{measure} best"]:
                mean = {"latex": rf"\textbf{{{mean}}}", "text": f"**{mean}**"}.get(style, f"**{mean}**")
            mark = ""
            if not compact and marks == "letters":
                mark = numbers.loc[i, f"{measure} better than"]
            elif not compact:
                arrows = _arrows(result, measure, run, names)
                if style == "latex":
                    mark = "".join(_LATEX_ARROWS[s] + (rf"\mathrm{{{b}}}" if several else "") for s, b in arrows)
                else:
                    mark = "".join(_ARROWS[s] + (b if several else "") for s, b in arrows)
            if mark:
                mean += {"latex": f"$^{{{mark}}}$", "markdown": f"<sup>{mark}</sup>"}.get(style, f" ^{mark}")
            cells.append(mean)
        out[esc(measure)] = cells
    return pd.DataFrame(out)


def caption(result: Comparison, *, compact: bool = False, marks: str = "letters") -> str:
    """What the table shows, in sentences: topics, best, what the marks mean, test, correction, alpha."""
    families = result.families.iloc[0]
    test = str(families["test"])
    correction = str(families["correction"])
    alpha = float(families["alpha"])
    topics = ", ".join(
        f"{m}: {int(n)} topics" for m, n in zip(result.families["measure"], result.families["n_topics"], strict=True)
    )
    text = f"Mean per run ({topics}); bold: the best mean per measure."
    if compact:
        return text
    described = _TESTS.get(test, test)
    described = described[0].upper() + described[1:]
    if correction == "none":
        how = f"{described}, no correction, alpha {alpha:g}."
    else:
        how = f"{described}, {_CORRECTIONS.get(correction, correction)} over the comparisons of a measure, alpha {alpha:g}."
    if marks == "letters":
        plural = "s" if len(result.baselines) > 1 else ""
        against = f"baseline{plural} {', '.join(result.baselines)}" if result.baselines else "every other run"
        text += f" Superscript letters: the runs a run is significantly better than (tested against {against})."
    else:
        names = {run: letter(i) for i, run in enumerate(_runs(result))}
        if len(result.baselines) == 1:
            which = f"baseline {result.baselines[0]}"
        else:
            which = "the baseline whose letter follows (" + ", ".join(f"{names[b]}: {b}" for b in result.baselines) + ")"
        text += f" ▲ / ▼: significantly better / worse than {which}."
    text += " " + how
    return text


# Written by frame_to_markdown, not DataFrame.to_markdown (see there), which would give
# "| a     | 0.8250† | [0.6727, 0.9773] | +4/-0         |"
# for "| a | 0.8250† | [0.6727, 0.9773] | +4/-0 |".
def to_markdown(result: Comparison, *, digits: int = 4, compact: bool = False, marks: str = "letters") -> str:
    """A pipe table (GitHub / MkDocs Markdown) with the caption below it."""
    frame = display_frame(result, digits=digits, style="markdown", compact=compact, marks=marks)
    labels = sum(1 for c in frame.columns if c in ("", "Run"))
    aligns = [":--"] * labels + ["--:"] * (frame.shape[1] - labels)
    table = frame_to_markdown(frame, aligns=aligns, html=True)
    return table + "\n" + markdown(caption(result, compact=compact, marks=marks), cell=False) + "\n"


# Not Styler.to_latex(caption=..., position="ht", position_float="centering", hrules=True): it
# writes "\caption{...}" right after "\centering", above "\begin{tabular}", where this table has it
# below "\end{tabular}" ("\small" comes only as a table style, and after the caption);
# DataFrame.to_latex puts the caption above too and writes no "\centering".
def to_latex(result: Comparison, *, digits: int = 4, compact: bool = False, marks: str = "letters") -> str:
    """A ``table`` with a ``booktabs`` ``tabular``; needs only ``\\usepackage{booktabs}`` (its first line says so)."""
    frame = display_frame(result, digits=digits, style="latex", compact=compact, marks=marks)
    labels = sum(1 for c in frame.columns if c in ("", "Run"))
    align = "l" * labels + "r" * (frame.shape[1] - labels)
    text = _escape(caption(result, compact=compact, marks=marks))
    text = text.replace("▲", r"$\uparrow$").replace("▼", r"$\downarrow$")
    body = frame_to_latex(frame, caption=text, align=align, small=True)
    return f"% evalwh paper table; needs \\usepackage{{{LATEX_PACKAGES}}} in the preamble\n" + body


# Not DataFrame.to_markdown (tabulate): it pads cells and rules to the column width,
# "| run   |     AP |" and "|:------|-------:|" for "| run | AP |" and "|:--|--:|" (stralign=None,
# numalign=None drop the padding and the colons too: "|-------|--------|"); it leaves "|" in
# cells unescaped and writes NaN as "nan", pd.NA as "<NA>".
def frame_to_markdown(
    frame: pd.DataFrame, digits: int = 4, *, aligns: list[str] | None = None, html: bool = False
) -> str:
    """Any frame as a pipe table; numbers right-aligned (or as ``aligns`` says), ``|`` in cells escaped.

    Every cell is the user's text: control characters and a ``<`` that could open an HTML
    tag are escaped (:func:`evalwh.io.printable.markdown`), unless ``html`` says the cells
    hold markup of ours (``<sup>``) around text escaped already.

    Examples:
        >>> print(frame_to_markdown(pd.DataFrame({"run": ["a"], "AP": [0.25]})), end="")
        | run | AP |
        |:--|--:|
        | a | 0.2500 |
    """
    columns = [str(c) for c in frame.columns]
    if aligns is None:
        aligns = ["--:" if frame[c].dtype.kind in "fiu" else ":--" for c in frame.columns]
    md = (lambda text: terminal(text).replace("|", r"\|")) if html else markdown
    lines = ["| " + " | ".join(md(c) for c in columns) + " |", "|" + "|".join(aligns) + "|"]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(md(_cell(v, digits)) for v in row) + " |")
    return "\n".join(lines) + "\n"


# Not Styler.to_latex(hrules=True, position="ht", position_float="centering") with
# format(escape="latex"): it writes "a\textasciitilde 1†" for "a\textasciitilde{}1$\dagger$" (and
# "\textbackslash ", "\textasciicircum "). Passing _cell and _escape as its formatters gives the
# same bytes but leaves pandas only the " & " joins, for importing jinja2 and the Styler
# (~50-90 ms a command, ~2 ms here), 9x the time on 300,000 cells and other output for
# MultiIndex columns ("\multicolumn{2}{r}{a} \\" rows) and frames without columns.
def frame_to_latex(
    frame: pd.DataFrame,
    *,
    caption: str | None = None,
    digits: int = 4,
    align: str | None = None,
    small: bool = False,
) -> str:
    """Any frame as a ``booktabs`` table (cells of string columns are taken as LaTeX already
    when ``caption`` is given by :func:`to_latex`; otherwise every cell is escaped).

    Examples:
        >>> print(frame_to_latex(pd.DataFrame({"run_id": ["a_1"], "AP": [0.25]})), end="")
        \\begin{table}[ht]
        \\centering
        \\begin{tabular}{lr}
        \\toprule
        run\\_id & AP \\\\
        \\midrule
        a\\_1 & 0.2500 \\\\
        \\bottomrule
        \\end{tabular}
        \\end{table}
    """
    formatted = caption is not None  # from to_latex: cells are LaTeX already
    spec = align or "".join("r" if frame[c].dtype.kind in "fiu" else "l" for c in frame.columns)
    header = " & ".join(str(c) if formatted else _escape(str(c)) for c in frame.columns)
    lines = [r"\begin{table}[ht]", r"\centering"] + ([r"\small"] if small else [])
    lines += [rf"\begin{{tabular}}{{{spec}}}", r"\toprule"]
    lines.append(header + r" \\")
    lines.append(r"\midrule")
    for row in frame.itertuples(index=False):
        cells = [_cell(v, digits) for v in row]
        lines.append(" & ".join(c if formatted else _escape(c) for c in cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if caption:
        lines.append(rf"\caption{{{caption}}}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def _cell(value: object, digits: int) -> str:
    if value is None or (isinstance(value, float) and value != value) or value is pd.NA:
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _escape(text: str) -> str:
    """Escape LaTeX's special characters."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)
