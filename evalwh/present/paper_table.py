"""Tables for papers from a :class:`~evalwh.stats.compare.Comparison`: one row per run.

Per measure: the mean, its confidence interval, and per baseline the topics won and lost
(``+/-``) and a marker where the difference from that baseline is significant after the
correction (first baseline ``†``, then ``‡``, ``§``, ``¶``, ``#``; the direction is read off
the means and the counts). Three shapes:

* :func:`paper_frame`: numbers, one column per quantity (for CSV, JSON, Parquet);
* :func:`display_frame`: formatted cells (for the terminal, Markdown and LaTeX);
* :func:`to_markdown` and :func:`to_latex`: text, the latter a ``booktabs`` table that
  compiles in a plain ``article``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from evalwh.stats.compare import Comparison

MARKERS = ["†", "‡", "§", "¶", "#"]
_LATEX_MARKERS = {"†": r"\dagger", "‡": r"\ddagger", "§": r"\S", "¶": r"\P", "#": r"\#"}
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


def marker(index: int) -> str:
    """The significance marker of the ``index``-th baseline (``†``, ``‡``, ...; then ``*5``).

    Examples:
        >>> marker(0), marker(1), marker(5)
        ('†', '‡', '*6')
    """
    return MARKERS[index] if index < len(MARKERS) else f"*{index + 1}"


def _against(result: Comparison, measure: str, run: str, base: str) -> pd.Series | None:
    """The comparison row of ``run`` with ``base`` on ``measure``, oriented run minus base."""
    pairs = result.pairs[result.pairs["measure"] == measure]
    row = pairs[(pairs["run_a"] == run) & (pairs["run_b"] == base)]
    if len(row):
        return row.iloc[0]
    row = pairs[(pairs["run_a"] == base) & (pairs["run_b"] == run)]
    if len(row):  # the pair was tested the other way round: mirror it
        flipped = row.iloc[0].copy()
        flipped["wins"], flipped["losses"] = flipped["losses"], flipped["wins"]
        flipped["mean_diff"] = -flipped["mean_diff"]
        return flipped
    return None


def paper_frame(result: Comparison) -> pd.DataFrame:
    """One row per run, numbers only: ``run_id``, then per measure ``M mean, M ci_low,
    M ci_high`` and per baseline ``B`` ``M vs B wins, M vs B losses, M vs B p_adjusted,
    M vs B significant``.

    Examples:
        >>> from evalwh.stats.compare import compare
        >>> frame = pd.DataFrame({"run_id": ["a"] * 4 + ["b"] * 4, "query_id": list("wxyz") * 2,
        ...                       "measure": "AP", "value": [0.9, 0.8, 0.9, 0.7, 0.1, 0.2, 0.1, 0.2]})
        >>> paper_frame(compare(frame, baselines=["b"])).columns.tolist()[:4]
        ['run_id', 'AP mean', 'AP ci_low', 'AP ci_high']
    """
    measures = list(dict.fromkeys(result.runs["measure"]))
    runs = list(dict.fromkeys(result.runs["run_id"]))
    records = []
    for run in runs:
        record: dict[str, object] = {"run_id": run}
        for measure in measures:
            stats = result.runs[(result.runs["measure"] == measure) & (result.runs["run_id"] == run)].iloc[0]
            record[f"{measure} mean"] = float(stats["mean"])
            record[f"{measure} ci_low"] = float(stats["ci_low"])
            record[f"{measure} ci_high"] = float(stats["ci_high"])
            for base in result.baselines:
                row = None if run == base else _against(result, measure, run, base)
                prefix = f"{measure} vs {base}"
                record[f"{prefix} wins"] = None if row is None else int(row["wins"])
                record[f"{prefix} losses"] = None if row is None else int(row["losses"])
                record[f"{prefix} p_adjusted"] = None if row is None else float(row["p_adjusted"])
                record[f"{prefix} significant"] = None if row is None else bool(row["reject"])
        records.append(record)
    frame = pd.DataFrame(records)
    for column in frame.columns:
        if column.endswith((" wins", " losses")):
            frame[column] = frame[column].astype("Int64")
        elif column.endswith(" significant"):
            frame[column] = frame[column].astype("boolean")
    return frame


def display_frame(result: Comparison, *, digits: int = 4, latex: bool = False) -> pd.DataFrame:
    """Formatted cells: ``Run``, then per measure the mean with markers, ``CI`` and ``+/-`` per baseline.

    With ``latex``, cells are escaped for LaTeX and markers are math superscripts.
    """
    numbers = paper_frame(result)
    measures = list(dict.fromkeys(result.runs["measure"]))
    level = round(100 * (1 - float(result.families["alpha"].iloc[0])))
    esc = _escape if latex else (lambda text: text)
    baselines = result.baselines
    out: dict[str, list[str]] = {"Run": [esc(r) for r in numbers["run_id"]]}
    for measure in measures:
        cells, intervals = [], []
        counts: dict[str, list[str]] = {b: [] for b in baselines}
        for _, row in numbers.iterrows():
            marks = "".join(
                marker(i)
                for i, base in enumerate(baselines)
                if _true(row[f"{measure} vs {base} significant"])
            )
            mean = f"{row[f'{measure} mean']:.{digits}f}"
            if latex and marks:
                mean += "$^{" + "".join(_LATEX_MARKERS.get(m, m) for m in marks) + "}$"
            else:
                mean += marks
            cells.append(mean)
            intervals.append(
                f"[{row[f'{measure} ci_low']:.{digits}f}, {row[f'{measure} ci_high']:.{digits}f}]"
            )
            for base in baselines:
                wins = row[f"{measure} vs {base} wins"]
                losses = row[f"{measure} vs {base} losses"]
                minus = "--" if latex else "-"  # an en dash in LaTeX
                counts[base].append(minus if pd.isna(wins) else f"+{wins}/{minus}{losses}")
        out[esc(measure)] = cells
        out[esc(f"{measure} {level}% CI")] = intervals
        for i, base in enumerate(baselines):
            label = f"{measure} +/- vs {base}" + (f" ({marker(i)})" if len(baselines) > 1 else "")
            if latex:
                label = esc(f"{measure} +/- vs {base}").replace("+/-", r"$\pm$")
                if len(baselines) > 1:
                    label += " ($" + _LATEX_MARKERS.get(marker(i), marker(i)) + "$)"
            out[label] = counts[base]
    return pd.DataFrame(out)


def caption(result: Comparison) -> str:
    """One sentence saying what the markers mean: test, correction, alpha, baselines."""
    families = result.families.iloc[0]
    test = str(families["test"])
    correction = str(families["correction"])
    alpha = float(families["alpha"])
    names = {
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
    corrections = {
        "none": "no correction",
        "bonferroni": "Bonferroni correction",
        "holm": "Holm correction",
        "bh": "Benjamini-Hochberg correction",
        "by": "Benjamini-Yekutieli correction",
    }
    topics = ", ".join(
        f"{m}: {int(n)} topics" for m, n in zip(result.families["measure"], result.families["n_topics"], strict=True)
    )
    marks = "; ".join(f"{marker(i)} differs from {b}" for i, b in enumerate(result.baselines))
    level = round(100 * (1 - alpha))
    described = names.get(test, test)
    text = (
        f"Means with {level}% t intervals ({topics}). "
        f"{described[0].upper()}{described[1:]}, {corrections.get(correction, correction)}, "
        f"alpha {alpha:g}"
    )
    if marks:
        text += f"; {marks}; +/- counts topics won and lost against the baseline"
    return text + "."


# Written by frame_to_markdown, not DataFrame.to_markdown (see there), which would give
# "| a     | 0.8250† | [0.6727, 0.9773] | +4/-0         |"
# for "| a | 0.8250† | [0.6727, 0.9773] | +4/-0 |".
def to_markdown(result: Comparison, *, digits: int = 4) -> str:
    """A pipe table (GitHub / MkDocs Markdown) with the caption below it."""
    return frame_to_markdown(display_frame(result, digits=digits)) + "\n" + caption(result) + "\n"


# Not Styler.to_latex(caption=..., position="ht", position_float="centering", hrules=True): it
# writes "\caption{...}" right after "\centering", above "\begin{tabular}", where this table has it
# below "\end{tabular}" ("\small" comes only as a table style, and after the caption);
# DataFrame.to_latex puts the caption above too and writes no "\centering".
def to_latex(result: Comparison, *, digits: int = 4) -> str:
    """A ``table`` with a ``booktabs`` ``tabular``; needs only ``\\usepackage{booktabs}``."""
    frame = display_frame(result, digits=digits, latex=True)
    align = "l" + "r" * (frame.shape[1] - 1)
    return frame_to_latex(frame, caption=_escape(caption(result)), align=align, small=True)


# Not DataFrame.to_markdown (tabulate): it pads cells and rules to the column width,
# "| run   |     AP |" and "|:------|-------:|" for "| run | AP |" and "|:--|--:|" (stralign=None,
# numalign=None drop the padding and the colons too: "|-------|--------|"); it leaves "|" in
# cells unescaped and writes NaN as "nan", pd.NA as "<NA>".
def frame_to_markdown(frame: pd.DataFrame, digits: int = 4) -> str:
    """Any frame as a pipe table; numbers right-aligned, ``|`` in cells escaped.

    Examples:
        >>> print(frame_to_markdown(pd.DataFrame({"run": ["a"], "AP": [0.25]})), end="")
        | run | AP |
        |:--|--:|
        | a | 0.2500 |
    """
    columns = [str(c) for c in frame.columns]
    aligns = ["--:" if frame[c].dtype.kind in "fiu" else ":--" for c in frame.columns]
    lines = ["| " + " | ".join(_md(c) for c in columns) + " |", "|" + "|".join(aligns) + "|"]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(_md(_cell(v, digits)) for v in row) + " |")
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


def _true(value: object) -> bool:
    return not pd.isna(value) and bool(value)


def _md(text: str) -> str:
    return text.replace("|", r"\|")


def _escape(text: str) -> str:
    """Escape LaTeX's special characters; the markers become math symbols."""
    out = "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)
    for ch, repl in (("†", r"$\dagger$"), ("‡", r"$\ddagger$"), ("§", r"\S{}"), ("¶", r"\P{}")):
        out = out.replace(ch, repl)
    return out
