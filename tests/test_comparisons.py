"""Comparisons of runs: Sakai's golden two-way ANOVA, agreement with scipy, exact enumeration."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from evalwh.errors import InsufficientDataError
from evalwh.stats import family, paired
from evalwh.stats import significance as sg
from evalwh.stats.compare import compare, family_pairs

# Sakai (2018) Table 5.1, as printed in elinor's tests: 3 systems x 20 topics
SAKAI = np.array(
    [
        [0.70, 0.30, 0.20, 0.60, 0.40, 0.40, 0.00, 0.70, 0.10, 0.30,
         0.50, 0.40, 0.00, 0.60, 0.50, 0.30, 0.10, 0.50, 0.20, 0.10],
        [0.50, 0.10, 0.00, 0.20, 0.40, 0.30, 0.00, 0.50, 0.30, 0.30,
         0.40, 0.40, 0.10, 0.40, 0.20, 0.10, 0.10, 0.60, 0.30, 0.20],
        [0.00, 0.00, 0.20, 0.10, 0.30, 0.30, 0.10, 0.20, 0.40, 0.40,
         0.40, 0.30, 0.30, 0.20, 0.20, 0.20, 0.10, 0.50, 0.40, 0.30],
    ]
)  # fmt: skip


def long_frame(values: np.ndarray, measure: str = "AP", names: str = "abcdefghij") -> pd.DataFrame:
    k, n = values.shape
    return pd.DataFrame(
        {
            "run_id": np.repeat(list(names[:k]), n),
            "query_id": [f"q{j:02d}" for j in range(n)] * k,
            "measure": measure,
            "value": values.ravel(),
        }
    )


def test_sakai_table_5_1_two_way_anova() -> None:
    out = family.two_way_anova(SAKAI)
    assert round(out.ss_systems, 4) == 0.1083
    assert round(out.ss_topics, 4) == 1.0293
    assert round(out.ss_residual, 4) == 0.8317
    assert (out.df_systems, out.df_topics, out.df_residual) == (2, 19, 38)
    assert round(out.f_systems, 3) == 2.475
    assert round(out.p_systems, 3) == 0.098
    assert round(out.p_topics, 3) == 0.009
    assert round(out.moe(0.05), 4) == 0.0670
    table = out.table()
    assert table["source"].tolist() == ["systems", "topics", "residual", "total"]
    assert table["ss"].iloc[3] == pytest.approx(out.ss_systems + out.ss_topics + out.ss_residual)


def test_sakai_data_through_compare_gives_the_anova_and_moe() -> None:
    result = compare(long_frame(SAKAI), test="tukey")
    assert result.families["moe"].round(4).tolist() == [0.0670]
    assert result.anova.loc[0, ["source", "df"]].tolist() == ["systems", 2]
    assert round(result.anova.loc[0, "F"], 3) == 2.475
    # ES_E = difference / sqrt(V_E), V_E = 0.8317 / 38
    first = result.pairs.iloc[0]
    assert first["es_e"] == pytest.approx(first["mean_diff"] / np.sqrt(0.831666666666667 / 38))


def test_tukey_hsd_with_two_runs_is_the_paired_t_test() -> None:
    # k = 2: q = sqrt(2) |t| and the studentized range of 2 means gives the t-test's p
    rng = np.random.default_rng(4)
    values = rng.uniform(size=(2, 15))
    q, p = family.tukey_hsd(values, np.array([0]), np.array([1]))
    direct = stats.ttest_rel(values[0], values[1])
    assert q[0] == pytest.approx(np.sqrt(2) * direct.statistic, rel=1e-10)
    assert p[0] == pytest.approx(direct.pvalue, rel=1e-6)


def _scores(seed: int, k: int = 5, n: int = 25) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.1, 0.6, size=(k, 1))
    return np.clip(base + rng.normal(0, 0.15, size=(k, n)), 0, 1).round(3)


def test_paired_t_and_wilcoxon_equal_scipy() -> None:
    values = _scores(1)
    result = compare(long_frame(values), test="t", correction="none").pairs
    wilcox = compare(long_frame(values), test="wilcoxon", correction="none").pairs
    for row, w in zip(result.itertuples(), wilcox.itertuples(), strict=True):
        x = values["abcde".index(row.run_a)]
        y = values["abcde".index(row.run_b)]
        direct = stats.ttest_rel(x, y)
        assert abs(row.statistic - direct.statistic) <= 1e-12 * max(1, abs(direct.statistic))
        assert abs(row.p_value - direct.pvalue) <= 1e-12
        interval = direct.confidence_interval(0.95)
        assert row.ci_low == pytest.approx(interval.low, abs=1e-12)
        assert row.ci_high == pytest.approx(interval.high, abs=1e-12)
        assert abs(w.p_value - stats.wilcoxon(x, y).pvalue) <= 1e-12


@pytest.mark.parametrize("method", ["bh", "by"])
def test_fdr_corrections_equal_scipy(method: str) -> None:
    p = np.random.default_rng(3).uniform(0, 0.2, size=40)
    ours = sg.adjust_p(p, method)
    assert np.max(np.abs(ours - stats.false_discovery_control(p, method=method))) <= 1e-12
    with_nan = np.append(p, np.nan)
    assert np.isnan(sg.adjust_p(with_nan, method)[-1])
    assert np.max(np.abs(sg.adjust_p(with_nan, method)[:-1] - ours)) <= 1e-12


def test_corrections_apply_over_the_comparisons_of_a_measure() -> None:
    values = _scores(2)
    raw = compare(long_frame(values), baselines=["a"], correction="none").pairs
    bh = compare(long_frame(values), baselines=["a"], correction="bh").pairs
    expected = stats.false_discovery_control(raw["p_value"].to_numpy(), method="bh")
    np.testing.assert_allclose(bh["p_adjusted"], expected, atol=1e-12)
    assert (bh["reject"] == (bh["p_adjusted"] < 0.05)).all()


def test_sign_test_equals_binomtest() -> None:
    diffs = np.array([[0.1, 0.2, -0.1, 0.0, 0.3, 0.4, 0.5, -0.2], [0.1] * 6 + [0.0, -0.3]])
    statistic, p = paired.sign_test(diffs)
    assert statistic.tolist() == [3.0, 5.0]
    assert p[0] == pytest.approx(stats.binomtest(5, 7).pvalue, abs=1e-12)
    assert p[1] == pytest.approx(stats.binomtest(6, 7).pvalue, abs=1e-12)
    assert paired.sign_test(np.zeros((1, 4)))[1].tolist() == [1.0]


def test_hedges_dz() -> None:
    d = np.array([[0.1, 0.3, 0.2, 0.5, -0.1, 0.2]])
    n = d.shape[1]
    dz = d.mean() / d.std(ddof=1)
    assert paired.hedges_dz(d)[0] == pytest.approx(dz * (1 - 3 / (4 * n - 5)), rel=1e-12)


def _exact_sign_flip_p(d: np.ndarray) -> float:
    observed = abs(d.mean())
    flips = np.array(list(itertools.product([-1.0, 1.0], repeat=d.size)))
    return float(np.mean(np.abs(flips @ d) / d.size >= observed - 1e-12))


def _exact_bootstrap_p(d: np.ndarray) -> float:
    n = d.size
    draws = np.array(list(itertools.product(range(n), repeat=n)))
    means = d[draws].mean(axis=1)
    return float(np.mean(np.abs(means - d.mean()) >= abs(d.mean()) - 1e-12))


def _exact_randomized_tukey_p(values: np.ndarray) -> np.ndarray:
    k, n = values.shape
    perms = list(itertools.permutations(range(k)))
    maxima = []
    for choice in itertools.product(perms, repeat=n):
        shuffled = np.array([values[list(p), j] for j, p in enumerate(choice)]).T
        means = shuffled.mean(axis=1)
        maxima.append(means.max() - means.min())
    maxima = np.array(maxima)
    means = values.mean(axis=1)
    a, b = np.triu_indices(k, 1)
    return np.array([np.mean(maxima >= abs(means[i] - means[j]) - 1e-12) for i, j in zip(a, b)])


# B large enough that the Monte Carlo error (sd <= 0.5 / sqrt(B)) is below 0.002
B = 80_000


def test_randomization_agrees_with_exact_enumeration() -> None:
    diffs = np.array([[0.3, -0.1, 0.2, 0.25, 0.05, -0.15, 0.4], [0.1, 0.1, -0.1, 0.0, 0.2, 0.1, 0.3]])
    p = paired.randomization(diffs, B, np.random.default_rng(5))
    exact = np.array([_exact_sign_flip_p(d) for d in diffs])
    np.testing.assert_allclose(p, exact, atol=0.008)


def test_bootstrap_agrees_with_exact_enumeration() -> None:
    diffs = np.array([[0.3, -0.1, 0.2, 0.25, 0.05], [0.1, 0.1, -0.1, 0.0, 0.2]])
    p, low, high = paired.bootstrap(diffs, B, np.random.default_rng(6), 0.05)
    exact = np.array([_exact_bootstrap_p(d) for d in diffs])
    np.testing.assert_allclose(p, exact, atol=0.008)
    assert (low <= diffs.mean(axis=1)).all() and (diffs.mean(axis=1) <= high).all()


def test_randomized_tukey_agrees_with_exact_enumeration() -> None:
    values = np.array([[0.9, 0.5, 0.7, 0.8], [0.2, 0.4, 0.3, 0.6], [0.5, 0.5, 0.1, 0.7]])
    a, b = np.triu_indices(3, 1)
    p = family.randomized_tukey(values, a, b, B, np.random.default_rng(7))
    np.testing.assert_allclose(p, _exact_randomized_tukey_p(values), atol=0.008)


@pytest.mark.parametrize("test", ["randomization", "bootstrap", "randomized_tukey"])
def test_resampling_tests_are_reproducible_by_seed(test: str) -> None:
    frame = long_frame(_scores(9, k=4, n=12))
    first = compare(frame, test=test, n_resamples=500, rng=42).pairs
    again = compare(frame, test=test, n_resamples=500, rng=42).pairs
    other = compare(frame, test=test, n_resamples=500, rng=43).pairs
    pd.testing.assert_frame_equal(first, again)
    assert not first["p_value"].equals(other["p_value"])


def test_resampling_in_chunks_gives_the_same_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    values = _scores(11, k=4, n=10)
    a, b = np.triu_indices(4, 1)
    diffs = paired.rounded_differences(values[a], values[b])
    whole = paired.randomization(diffs, 300, np.random.default_rng(1))
    whole_tukey = family.randomized_tukey(values, a, b, 300, np.random.default_rng(1))
    monkeypatch.setattr(paired, "_CHUNK_CELLS", 1)
    monkeypatch.setattr(family, "_CHUNK_CELLS", 1)
    # one resample per chunk draws the same random stream in another shape: compare the
    # Monte Carlo answers loosely, and the exact fields exactly
    chunked = paired.randomization(diffs, 300, np.random.default_rng(1))
    assert np.abs(whole - chunked).max() < 0.2
    chunked_tukey = family.randomized_tukey(values, a, b, 300, np.random.default_rng(1))
    assert np.abs(whole_tukey - chunked_tukey).max() < 0.2
    boot = paired.bootstrap(diffs, 300, np.random.default_rng(2), 0.05)
    monkeypatch.setattr(paired, "_CHUNK_CELLS", 10**9)
    np.testing.assert_allclose(paired.bootstrap(diffs, 300, np.random.default_rng(2), 0.05), boot)


def test_randomized_tukey_is_more_conservative_than_per_pair_randomization() -> None:
    values = _scores(12, k=8, n=30)
    frame = long_frame(values)
    tukey = compare(frame, test="randomized_tukey", n_resamples=4000, rng=1).pairs
    pairwise = compare(frame, test="randomization", correction="none", n_resamples=4000, rng=1).pairs
    assert (tukey["p_value"] >= pairwise["p_value"] - 0.03).all()


def test_one_way_anova_procedure_in_compare_is_the_papers() -> None:
    frame = long_frame(_scores(3, k=4, n=10))
    ours = compare(frame, test="anova", correction="bonferroni").pairs
    papers = sg.pairwise(frame.drop(columns="measure"), test="anova", correction="bonferroni")
    np.testing.assert_allclose(ours["p_adjusted"], papers["p_adjusted"])
    assert ours["reject"].tolist() == (papers["outcome"] != 0).tolist()


def test_tukey_refuses_a_second_correction() -> None:
    with pytest.raises(InsufficientDataError, match="use correction none, not holm"):
        compare(long_frame(SAKAI), test="tukey", correction="holm")


def test_family_pairs_orientation() -> None:
    assert family_pairs(["x", "b", "y"], ["b"], all_pairs=True) == [("x", "b"), ("x", "y"), ("y", "b")]
    with pytest.raises(InsufficientDataError, match=r"baseline\(s\) \['z'\]"):
        family_pairs(["x", "y"], ["z"])


def test_baselines_and_several_measures() -> None:
    frame = pd.concat([long_frame(_scores(5)), long_frame(_scores(6), measure="nDCG@10")])
    result = compare(frame, baselines=["a", "b"], rng=0)
    assert result.pairs["measure"].unique().tolist() == ["AP", "nDCG@10"]
    assert result.pairs.loc[result.pairs["measure"] == "AP", ["run_a", "run_b"]].values.tolist() == [
        ["b", "a"], ["c", "a"], ["d", "a"], ["e", "a"], ["c", "b"], ["d", "b"], ["e", "b"],
    ]  # fmt: skip
    row = result.pairs.iloc[1]
    assert row["wins"] + row["ties"] + row["losses"] == 25
    assert result.runs.groupby("measure").size().tolist() == [5, 5]
    assert result.families["n_pairs"].tolist() == [7, 7]


def test_missing_topics_are_dropped_from_all_runs_and_counted() -> None:
    frame = long_frame(_scores(8, k=3, n=6))
    frame = frame[~((frame["run_id"] == "b") & frame["query_id"].isin(["q01", "q04"]))]
    frame.loc[(frame["run_id"] == "c") & (frame["query_id"] == "q05"), "value"] = np.nan
    result = compare(frame)
    assert result.families[["n_topics", "topics_dropped"]].values.tolist() == [[3, 3]]
    assert result.notes == [
        "AP: 3 topic(s) without a score for every run were dropped from all runs (3 kept)"
    ]
    assert (result.pairs["n_topics"] == 3).all()


def test_bad_scores_are_named() -> None:
    frame = long_frame(SAKAI)
    with pytest.raises(InsufficientDataError, match="more than one value for run 'a', topic 'q00'"):
        compare(pd.concat([frame, frame.iloc[:1]]))
    with pytest.raises(InsufficientDataError, match=r"missing columns \['value'\]"):
        compare(frame.drop(columns="value"))
    with pytest.raises(InsufficientDataError, match=r"no values for measure\(s\) \['P@10'\]"):
        compare(frame, measures=["P@10"])
    with pytest.raises(InsufficientDataError, match=r"AP: scores have no values for run\(s\) \['z'\]"):
        compare(frame, runs=["a", "z"])


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), test=st.sampled_from(["t", "wilcoxon", "sign", "tukey"]))
def test_swapping_a_pair_mirrors_it(seed: int, test: str) -> None:
    frame = long_frame(_scores(seed, k=3, n=12))
    forward = compare(frame, runs=["a", "b", "c"], test=test).pairs.iloc[0]
    backward = compare(frame, runs=["b", "a", "c"], test=test).pairs.iloc[0]
    assert (forward["run_a"], backward["run_a"]) == ("a", "b")
    assert forward["mean_diff"] == pytest.approx(-backward["mean_diff"])
    assert forward["p_value"] == pytest.approx(backward["p_value"], rel=1e-9)
    assert (forward["wins"], forward["losses"]) == (backward["losses"], backward["wins"])
    assert forward["effect_size"] == pytest.approx(-backward["effect_size"])
    assert forward["ci_low"] == pytest.approx(-backward["ci_high"], nan_ok=True)


def test_paper_table_numbers_and_marks() -> None:
    from evalwh.present import paper_table

    values = np.vstack([SAKAI, SAKAI[0] + 0.2])  # d is clearly better than a, b and c
    result = compare(long_frame(values), baselines=["a", "b"], correction="none")
    frame = paper_table.paper_frame(result)
    assert frame["run_id"].tolist() == ["a", "b", "c", "d"]
    assert frame["letter"].tolist() == ["a", "b", "c", "d"]
    assert frame["AP mean"].tolist() == pytest.approx(values.mean(axis=1).tolist())
    assert frame["AP best"].tolist() == [False, False, False, True]
    significant = result.pairs[result.pairs["reject"]]
    beaten = {(r.run_a, r.run_b) if r.mean_diff > 0 else (r.run_b, r.run_a) for r in significant.itertuples()}
    for run, better in zip(frame["run_id"], frame["AP better than"], strict=True):
        assert set(better) == {w for b, w in beaten if b == run}
    assert frame.loc[3, "AP better than"] == "ab"  # compared with the baselines a and b only
    cells = paper_table.display_frame(result, style="latex")
    assert cells.loc[3, "AP"] == rf"\textbf{{{values[3].mean():.4f}}}$^{{ab}}$"
    arrows = paper_table.display_frame(result, style="markdown", marks="arrows")
    assert arrows.loc[3, "AP"] == f"**{values[3].mean():.4f}**<sup>▲a▲b</sup>"
    compact = paper_table.display_frame(result, compact=True)
    assert list(compact.columns) == ["Run", "AP"] and "^" not in "".join(compact["AP"])


def test_paper_table_one_column_per_measure() -> None:
    from evalwh.present import paper_table

    frame = pd.concat([long_frame(_scores(3, k=4, n=20), m) for m in ("AP", "P@10", "nDCG@10")])
    result = compare(frame, test="tukey")
    cells = paper_table.display_frame(result)
    assert list(cells.columns) == ["", "Run", "AP", "P@10", "nDCG@10"]
    for measure in ("AP", "P@10", "nDCG@10"):
        means = result.runs[result.runs["measure"] == measure]["mean"]
        assert cells[measure].str.startswith("**").tolist() == (means == means.max()).tolist()


PAPER_MARKDOWN = """\
|  | Run | AP |
|:--|:--|--:|
| a | bm25 | 0.2700 |
| b | dense_v2 | 0.3367<sup>a</sup> |
| c | hybrid | **0.5217**<sup>ab</sup> |

Mean per run (AP: 6 topics); bold: the best mean per measure. Superscript letters: the runs a run \
is significantly better than (tested against baselines bm25, dense_v2). Paired t-test, no correction, alpha 0.05.
"""

PAPER_LATEX = r"""% evalwh paper table; needs \usepackage{booktabs} in the preamble
\begin{table}[ht]
\centering
\small
\begin{tabular}{llr}
\toprule
 & Run & AP \\
\midrule
a & bm25 & 0.2700$^{\downarrow\mathrm{b}}$ \\
b & dense\_v2 & 0.3367$^{\uparrow\mathrm{a}}$ \\
c & hybrid & \textbf{0.5217}$^{\uparrow\mathrm{a}\uparrow\mathrm{b}}$ \\
\bottomrule
\end{tabular}
""" + (
    r"\caption{Mean per run (AP: 6 topics); bold: the best mean per measure. $\uparrow$ / $\downarrow$: "
    r"significantly better / worse than the baseline whose letter follows (a: bm25, b: dense\_v2). "
    r"Paired t-test, no correction, alpha 0.05.}"
    "\n\\end{table}\n"
)


def test_paper_table_text_byte_for_byte() -> None:
    """The Markdown and LaTeX of a paper table, whole (`evalwh compare -f markdown|latex` prints
    them as they are): two baselines, an id to escape, letters and arrows, the caption below."""
    import doctest

    from evalwh.present import paper_table

    values = {
        "bm25": [0.20, 0.35, 0.10, 0.42, 0.30, 0.25],
        "dense_v2": [0.28, 0.40, 0.22, 0.45, 0.37, 0.30],
        "hybrid": [0.45, 0.60, 0.41, 0.66, 0.52, 0.49],
    }
    frame = pd.DataFrame(
        [(run, f"q{i}", "AP", v) for run, vs in values.items() for i, v in enumerate(vs)],
        columns=["run_id", "query_id", "measure", "value"],
    )
    result = compare(frame, baselines=["bm25", "dense_v2"], correction="none")
    assert paper_table.to_markdown(result) == PAPER_MARKDOWN
    assert paper_table.to_latex(result, marks="arrows") == PAPER_LATEX
    # the docstrings pin frame_to_markdown and frame_to_latex (every command's -f markdown|latex)
    failures, tried = doctest.testmod(paper_table)
    assert tried > 0 and failures == 0


def test_wilcoxon_equals_scipy_on_trec8_ndcg10_and_rounding_would_not() -> None:
    # issue #28: scipy ranks the differences as computed; rounding them to 12 decimals first
    # (evalwh before) turns near-ties into ties and moved p from 0.01418 to 0.01439
    from conftest import TREC8

    if not TREC8.is_dir():
        pytest.skip("TREC-8 data not beside the checkout")
    import evalwh

    runs = [TREC8 / "runs" / f"input.{r}.gz" for r in ("INQ604", "ok8amxc")]
    scores = evalwh.evaluate(TREC8 / "trec8.qrels", runs, ["nDCG@10"], per_query=True)
    wide = scores.pivot(index="query_id", columns="run_id", values="value")
    x, y = wide["INQ604"].to_numpy(), wide["ok8amxc"].to_numpy()
    ours = evalwh.compare(TREC8 / "trec8.qrels", runs, ["nDCG@10"], test="wilcoxon", correction="none")
    row = ours.pairs.iloc[0]
    assert (row["run_a"], row["run_b"]) == ("INQ604", "ok8amxc")
    assert row["p_value"] == pytest.approx(stats.wilcoxon(x, y).pvalue, rel=1e-12)
    assert round(row["p_value"], 5) == 0.01418
    rounded = stats.wilcoxon(np.round(x - y, 12)).pvalue
    assert round(rounded, 5) == 0.01439  # what rounding first gives: not scipy's answer


def test_hedges_dz_of_two_equal_differences_is_undefined() -> None:
    """Two topics: J = 0, so zero variance's infinite d_z gives NaN, without a warning
    (a report of two topics failed on numpy's 'invalid value' under -W error)."""
    out = paired.hedges_dz(np.array([[-0.5, -0.5], [0.0, 0.0], [0.1, 0.3]]))
    assert np.isnan(out[0])
    assert out[1] == 0.0
    assert out[2] == 0.0  # finite d_z times J = 0
