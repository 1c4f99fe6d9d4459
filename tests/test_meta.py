"""Meta-analysis across collections (issue [5/6] item 3, methods §18): evalwh.stats.meta,
Warehouse.meta_analysis, ``evalwh meta`` and its report.

References: statsmodels' ``combine_effects`` (DerSimonian-Laird as ``chi2``, Paule-Mandel as
``iterated``, Hartung-Knapp-Sidik-Jonkman as the ``wls`` rows), a REML likelihood maximised by
scipy, Borenstein et al.'s worked example for the matched-groups effect, and per-topic scores
from pytrec_eval on the same files.
"""

from __future__ import annotations

import os
import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from evalwh.cli import app
from typer.testing import CliRunner

from evalwh import Warehouse
from evalwh.errors import EvalWhError, IngestError, InsufficientDataError
from evalwh.stats import meta

sm = pytest.importorskip("statsmodels.stats.meta_analysis")
runner = CliRunner(env={"COLUMNS": "200", "TERMINAL_WIDTH": "200"})


def _statsmodels(y, v, method_re, use_t=False):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (its per-study t intervals want sample sizes)
        return sm.combine_effects(np.asarray(y), np.asarray(v), method_re=method_re, use_t=use_t)


def _heterogeneous(seed: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Effects spread well beyond their variances (Q > k - 1), so tau^2 > 0 by every estimator."""
    rng = np.random.default_rng(seed)
    v = rng.uniform(0.005, 0.04, k)
    y = rng.normal(0.3, 0.4, k)
    return y, v


# -- the pooling against statsmodels ------------------------------------------------------------


@pytest.mark.parametrize("seed,k", [(1, 3), (2, 4), (3, 6), (4, 12), (5, 30)])
def test_dersimonian_laird_equals_statsmodels(seed: int, k: int) -> None:
    y, v = _heterogeneous(seed, k)
    ours = meta.combine(y, v, tau2="dl")
    theirs = _statsmodels(y, v, "chi2")
    assert theirs.q > k - 1  # (heterogeneous: no truncation at 0 on either side)
    frame = theirs.summary_frame()
    fixed, random = ours.summary.iloc[0], ours.summary.iloc[1]
    assert ours.heterogeneity["tau2"] == pytest.approx(theirs.tau2, abs=1e-10)
    assert ours.heterogeneity["q"] == pytest.approx(theirs.q, abs=1e-10)
    assert ours.heterogeneity["i2"] == pytest.approx(theirs.i2, abs=1e-10)
    for row, name in ((fixed, "fixed effect"), (random, "random effect")):
        assert row["effect"] == pytest.approx(frame.loc[name, "eff"], abs=1e-10)
        assert row["se"] == pytest.approx(frame.loc[name, "sd_eff"], abs=1e-10)
        assert row["ci_low"] == pytest.approx(frame.loc[name, "ci_low"], abs=1e-10)
        assert row["ci_high"] == pytest.approx(frame.loc[name, "ci_upp"], abs=1e-10)
    weights = ours.studies
    assert np.allclose(weights["weight_fixed"], frame["w_fe"].iloc[:k], atol=1e-10)
    assert np.allclose(weights["weight_random"], frame["w_re"].iloc[:k], atol=1e-10)
    assert np.allclose(weights["ci_low"], frame["ci_low"].iloc[:k], atol=1e-10)


@pytest.mark.parametrize("seed,k", [(6, 3), (7, 5), (8, 9)])
def test_hartung_knapp_equals_statsmodels_wls_rows(seed: int, k: int) -> None:
    y, v = _heterogeneous(seed, k)
    ours = meta.combine(y, v, tau2="dl", interval="hksj")
    theirs = _statsmodels(y, v, "chi2", use_t=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = theirs.summary_frame()
        (fe_low, fe_high), (re_low, re_high) = theirs.conf_int(use_t=True)[2:]
    fixed, random = ours.summary.iloc[0], ours.summary.iloc[1]
    assert fixed["se"] == pytest.approx(frame.loc["fixed effect wls", "sd_eff"], abs=1e-10)
    assert random["se"] == pytest.approx(frame.loc["random effect wls", "sd_eff"], abs=1e-10)
    assert (fixed["ci_low"], fixed["ci_high"]) == pytest.approx((fe_low, fe_high), abs=1e-10)
    assert (random["ci_low"], random["ci_high"]) == pytest.approx((re_low, re_high), abs=1e-10)


@pytest.mark.parametrize("seed,k", [(9, 3), (10, 5), (11, 8)])
def test_paule_mandel_solves_its_equation_and_agrees_with_statsmodels(seed: int, k: int) -> None:
    """statsmodels iterates until |Q_gen - (k - 1)| < 1e-5; evalwh solves it to machine precision."""
    y, v = _heterogeneous(seed, k)
    ours = meta.combine(y, v, tau2="pm")
    tau2 = ours.heterogeneity["tau2"]
    w = 1 / (v + tau2)
    mu = (w * y).sum() / w.sum()
    assert (w * (y - mu) ** 2).sum() == pytest.approx(k - 1, abs=1e-10)
    theirs = _statsmodels(y, v, "iterated")
    assert tau2 == pytest.approx(theirs.tau2, abs=1e-6)
    assert ours.summary.iloc[1]["effect"] == pytest.approx(theirs.summary_frame().loc["random effect", "eff"], abs=1e-7)


def test_homogeneous_effects_give_tau2_zero_where_statsmodels_goes_negative() -> None:
    """With Q < k - 1 the moment estimate is negative: evalwh truncates it at 0, as
    DerSimonian and Laird define it, and the random-effects model is the fixed one;
    statsmodels' ``chi2`` reports the negative value (a documented difference, methods §18.2)."""
    y = np.array([0.30, 0.31, 0.29, 0.305])
    v = np.array([0.02, 0.03, 0.025, 0.02])
    ours = meta.combine(y, v, tau2="dl")
    theirs = _statsmodels(y, v, "chi2")
    assert theirs.tau2 < 0
    assert ours.heterogeneity["tau2"] == 0.0 and ours.heterogeneity["i2"] == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the square root of its negative variance)
        frame = theirs.summary_frame()
    assert ours.summary.iloc[1]["effect"] == pytest.approx(frame.loc["fixed effect", "eff"], abs=1e-12)
    assert ours.summary.iloc[1]["se"] == pytest.approx(frame.loc["fixed effect", "sd_eff"], abs=1e-12)
    for method in ("pm", "reml"):
        assert meta.combine(y, v, tau2=method).heterogeneity["tau2"] == 0.0


@pytest.mark.parametrize("seed,k", [(12, 3), (13, 6), (14, 15)])
def test_reml_maximises_the_restricted_likelihood(seed: int, k: int) -> None:
    from scipy.optimize import minimize_scalar

    y, v = _heterogeneous(seed, k)

    def negative_restricted_loglik(tau2: float) -> float:
        w = 1 / (v + tau2)
        mu = (w * y).sum() / w.sum()
        return 0.5 * (np.log(v + tau2).sum() + np.log(w.sum()) + (w * (y - mu) ** 2).sum())

    best = minimize_scalar(negative_restricted_loglik, bounds=(0, 10), method="bounded", options={"xatol": 1e-12})
    ours = meta.combine(y, v, tau2="reml").heterogeneity["tau2"]
    assert ours == pytest.approx(best.x, abs=1e-7)
    assert negative_restricted_loglik(ours) <= best.fun + 1e-12


def test_prediction_interval_follows_higgins_thompson_spiegelhalter() -> None:
    from scipy import stats

    y, v = _heterogeneous(15, 7)
    ours = meta.combine(y, v)
    tau2 = ours.heterogeneity["tau2"]
    w = 1 / (v + tau2)
    mu, se = (w * y).sum() / w.sum(), np.sqrt(1 / w.sum())
    half = stats.t.ppf(0.975, 5) * np.sqrt(tau2 + se**2)
    assert (ours.heterogeneity["pi_low"], ours.heterogeneity["pi_high"]) == pytest.approx((mu - half, mu + half), abs=1e-12)
    two = meta.combine(y[:2], v[:2])
    assert np.isnan(two.heterogeneity["pi_low"])


# -- the effect per collection ------------------------------------------------------------------


def test_matched_groups_effect_reproduces_borensteins_worked_example() -> None:
    """Introduction to Meta-Analysis (2009), §4.3: n = 50 pairs, mean difference 5, S_diff 10,
    r = 0.5 give d = 0.5000, V_d = 0.0225, J = 0.9846, g = 0.4923, V_g = 0.0218."""
    rng = np.random.default_rng(0)
    # 50 paired scores with exactly that mean difference, S_diff and correlation
    base = rng.normal(size=(50, 2))
    base -= base.mean(axis=0)
    cov = np.cov(base.T)
    base = base @ np.linalg.inv(np.linalg.cholesky(cov)).T  # sample covariance exactly I
    target = np.array([[100.0, 50.0], [50.0, 100.0]])  # SD 10 each, r = 0.5: S_diff = 10
    scores = base @ np.linalg.cholesky(target).T + np.array([105.0, 100.0])
    e = meta.paired_effect(scores[:, 0], scores[:, 1], "smd")
    assert e["mean_diff"] == pytest.approx(5.0) and e["r"] == pytest.approx(0.5)
    assert np.std(scores[:, 0] - scores[:, 1], ddof=1) == pytest.approx(10.0)
    j = 1 - 3 / (4 * 49 - 1)
    assert j == pytest.approx(0.9846, abs=5e-5)
    assert e["effect"] == pytest.approx(0.4923, abs=5e-5)
    assert e["variance"] == pytest.approx(0.0218, abs=5e-5)
    assert e["effect"] / j == pytest.approx(0.5) and e["variance"] / j**2 == pytest.approx(0.0225)


def test_dz_effect_is_compares_hedges_corrected_effect_size() -> None:
    """``--effect dz`` is the effect size ``evalwh compare`` prints (Hedges-corrected d_z)."""
    from evalwh.stats.compare import compare

    rng = np.random.default_rng(3)
    a = rng.uniform(size=25)
    b = np.clip(a - rng.normal(0.05, 0.1, 25), 0, 1)
    frame = pd.concat([
        pd.DataFrame({"run_id": name, "query_id": [f"q{i}" for i in range(25)], "measure": "AP", "value": values})
        for name, values in (("a", a), ("b", b))
    ])  # fmt: skip
    pairs = compare(frame, baselines=["b"]).pairs
    assert meta.paired_effect(a, b, "dz")["effect"] == pytest.approx(pairs["effect_size"].iloc[0], abs=1e-12)


def test_effects_refuse_what_they_cannot_standardise() -> None:
    a = np.array([0.2, 0.4, 0.6, 0.8])
    with pytest.raises(InsufficientDataError, match="differ by a constant"):
        meta.paired_effect(a, a - 0.1, "smd")
    assert meta.paired_effect(a, a - 0.1, "raw")["effect"] == pytest.approx(0.1)
    with pytest.raises(InsufficientDataError, match="at least 3"):
        meta.paired_effect([0.1, 0.2], [0.2, 0.1])
    with pytest.raises(InsufficientDataError, match="same score on every topic"):
        meta.paired_effect([0.5, 0.5, 0.5, 0.5], [0.1, 0.6, 0.3, 0.2], "smd")
    with pytest.raises(InsufficientDataError, match="at least two"):
        meta.combine([0.1], [0.01])
    with pytest.raises(InsufficientDataError, match="variance positive"):
        meta.combine([0.1, 0.2], [0.01, 0.0])


# -- several collections in a warehouse ---------------------------------------------------------

SYSTEMS = {"bm25": 0.0, "rm3": 0.6, "dense": 1.2}
COLLECTIONS = {"alpha": (30, 0.0), "beta": (24, 0.5), "gamma": (40, -0.3), "delta": (18, 0.2)}


def _write_collection(folder: Path, name: str, topics: int, shift: float, seed: int, rename: dict[str, str]) -> tuple[Path, list[Path]]:
    """A graded collection whose systems retrieve relevant documents with per-collection strengths."""
    rng = np.random.default_rng(seed)
    qrels_lines, runs = [], {s: [] for s in SYSTEMS}
    for t in range(topics):
        docs = [f"{name}-d{t}-{i}" for i in range(60)]
        grades = rng.choice([0, 0, 0, 1, 2], size=60)
        qrels_lines += [f"{t + 1} 0 {d} {g}" for d, g in zip(docs, grades, strict=True)]
        hardness = rng.normal(0, 1)
        for system, strength in SYSTEMS.items():
            signal = (strength + shift) * grades + rng.normal(0, 1.5, 60) + hardness
            order = np.argsort(-signal, kind="stable")[:40]
            runs[system] += [f"{t + 1} Q0 {docs[i]} {rank} {40 - rank:.1f} {rename.get(system, system)}"
                             for rank, i in enumerate(order, 1)]  # fmt: skip
    qrels = folder / f"{name}.qrels"
    qrels.write_text("\n".join(qrels_lines) + "\n")
    files = []
    for system, lines in runs.items():
        path = folder / f"{name}-{rename.get(system, system)}.run"
        path.write_text("\n".join(lines) + "\n")
        files.append(path)
    return qrels, files


@pytest.fixture(scope="module")
def collections(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, tuple[Path, list[Path]]]]:
    folder = tmp_path_factory.mktemp("meta")
    db = folder / "wh.duckdb"
    written = {}
    with Warehouse(db) as wh:
        for seed, (name, (topics, shift)) in enumerate(COLLECTIONS.items()):
            # in delta, the dense system's run is named differently: a mapping file says which
            rename = {"dense": "dense-v2"} if name == "delta" else {}
            qrels, runs = _write_collection(folder, name, topics, shift, seed, rename)
            wh.ingest_qrels(qrels, collection=name)
            wh.ingest_runs(runs, collection=name)
            written[name] = (qrels, runs)
    (folder / "systems.tsv").write_text("# collection run system\ndelta dense-v2 dense\n")
    return db, written


def _pytrec_scores(qrels: Path, run: Path, measure: str) -> dict[str, float]:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    judged: dict[str, dict[str, int]] = {}
    for line in qrels.read_text().splitlines():
        q, _, d, g = line.split()
        judged.setdefault(q, {})[d] = int(g)
    ranked: dict[str, dict[str, float]] = {}
    for line in run.read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        ranked.setdefault(q, {})[d] = float(s)
    return {q: v[measure] for q, v in pytrec_eval.RelevanceEvaluator(judged, {measure}).evaluate(ranked).items()}


def test_warehouse_meta_analysis_equals_pytrec_eval_scores_pooled_by_statsmodels(collections) -> None:  # type: ignore[no-untyped-def]
    db, written = collections
    with Warehouse.open_reader(db) as wh:
        result = wh.meta_analysis("nDCG@10", "rm3", "bm25", collections=["alpha", "beta", "gamma"])
    effects, variances = [], []
    for name in ("alpha", "beta", "gamma"):
        qrels, runs = written[name]
        a = _pytrec_scores(qrels, next(r for r in runs if r.name.endswith("-rm3.run")), "ndcg_cut_10")
        b = _pytrec_scores(qrels, next(r for r in runs if r.name.endswith("-bm25.run")), "ndcg_cut_10")
        topics = sorted(set(a) & set(b))
        x, y = np.array([a[t] for t in topics]), np.array([b[t] for t in topics])
        # the matched-groups effect, written out again from Borenstein et al. (eqs. 4.27-4.33)
        n, diff = len(x), x - y
        r = np.corrcoef(x, y)[0, 1]
        s_within = diff.std(ddof=1) / np.sqrt(2 * (1 - r))
        d = diff.mean() / s_within
        j = 1 - 3 / (4 * (n - 1) - 1)
        effects.append(j * d)
        variances.append(j**2 * (1 / n + d**2 / (2 * n)) * 2 * (1 - r))
    got = result.effects.sort_values("collection_id")
    assert list(got["collection_id"]) == ["alpha", "beta", "gamma"]
    assert np.allclose(got["effect"], effects, atol=1e-10)
    assert np.allclose(got["variance"], variances, atol=1e-10)
    fitted = _statsmodels(effects, variances, "chi2")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = fitted.summary_frame()
    # (statsmodels leaves a negative moment estimate of tau^2 as it is: then the model is the fixed one)
    row = "random effect" if fitted.tau2 > 0 else "fixed effect"
    random = result.pooled[result.pooled["model"] == "random"].iloc[0]
    assert random["effect"] == pytest.approx(theirs.loc[row, "eff"], abs=1e-10)
    assert random["ci_low"] == pytest.approx(theirs.loc[row, "ci_low"], abs=1e-10)
    assert random["effect"] > 0  # rm3 is stronger than bm25 in every collection


def test_baseline_comparisons_use_the_system_mapping(collections) -> None:  # type: ignore[no-untyped-def]
    db, _ = collections
    with Warehouse.open_reader(db) as wh:
        plain = wh.meta_analysis(["nDCG@10", "P@10"], baseline="bm25")
        mapped = wh.meta_analysis(["nDCG@10"], baseline="bm25", systems=db.parent / "systems.tsv")
    het = plain.heterogeneity
    # without the mapping, delta's dense run is a system of its own, found in one collection only
    assert set(het["run_a"]) == {"rm3", "dense"} and set(het["measure"]) == {"nDCG@10", "P@10"}
    assert int(het[(het["run_a"] == "dense") & (het["measure"] == "nDCG@10")]["k"].iloc[0]) == 3
    dense = mapped.heterogeneity[mapped.heterogeneity["run_a"] == "dense"].iloc[0]
    assert int(dense["k"]) == 4
    assert "delta" in set(mapped.effects[mapped.effects["run_a"] == "dense"]["collection_id"])


def test_meta_analysis_refusals_name_the_problem(collections, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    db, _ = collections
    with Warehouse.open_reader(db) as wh:
        with pytest.raises(EvalWhError, match="at least two"):
            wh.meta_analysis("AP", "rm3", "bm25", collections=["alpha"])
        with pytest.raises(EvalWhError, match="no collection has a run of system 'bm26'"):
            wh.meta_analysis("AP", "rm3", "bm26")
        bad = tmp_path / "systems.tsv"
        bad.write_text("alpha rm3 x\nalpha bm25\n")
        with pytest.raises(IngestError, match=r"systems.tsv:2: 2 fields"):
            wh.meta_analysis("AP", "rm3", "bm25", systems=bad)
        bad.write_text("alpha rm3 x\nalpha bm25 x\n")
        with pytest.raises(IngestError, match=r"systems.tsv:2: runs 'rm3' \(line 1\) and 'bm25' of 'alpha' are both system 'x'"):
            wh.meta_analysis("AP", "rm3", "bm25", systems=bad)
        bad.write_text("alpha nope x\n")
        with pytest.raises(EvalWhError, match="alpha/nope"):
            wh.meta_analysis("AP", "rm3", "bm25", systems=bad)


def test_meta_command_prints_writes_the_forest_plot_and_the_report(collections, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    db, _ = collections
    figure, page, md = tmp_path / "forest.png", tmp_path / "meta.html", tmp_path / "meta.md"
    result = runner.invoke(app, ["meta", "--db", str(db), "-m", "nDCG@10", "rm3", "bm25", "--figure", str(figure),
                                 "--report", str(page), "-f", "csv"])  # fmt: skip
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(__import__("io").StringIO(result.stdout))
    assert list(frame["model"]) == ["fixed", "random"]
    with Warehouse.open_reader(db) as wh:
        expected = wh.meta_analysis("nDCG@10", "rm3", "bm25").pooled
    assert np.allclose(frame["effect"], expected["effect"], atol=1e-12)
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = page.read_text()
    assert "Meta-analysis over 4 collections" in html and 'id="figure-forest"' in html
    assert '<nav><a href="#collections">' in html
    assert runner.invoke(app, ["meta", "--db", str(db), "rm3", "bm25", "--report", str(md)]).exit_code == 0
    text = md.read_text()
    assert "| measure | system | over | k |" in text and "Over 4 collections, rm3 is better than bm25" in text
    # one line, and nothing written, when the command fails
    before = sorted(p.name for p in tmp_path.iterdir())
    failed = runner.invoke(app, ["meta", "--db", str(db), "rm3", "nope", "--figure", str(tmp_path / "f2.png")])
    assert failed.exit_code != 0 and len(failed.output.strip().splitlines()) == 1
    assert "nope" in failed.output
    assert sorted(p.name for p in tmp_path.iterdir()) == before


CHROMIUM = "/usr/bin/chromium"
BROWSER_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run"]  # (as tests/test_report.py)


@pytest.mark.slow
def test_meta_report_forest_plot_in_chromium_at_1280_px(collections, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    if not os.path.exists(CHROMIUM) and not shutil.which("chromium"):
        pytest.skip("Debian's chromium is not installed (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    db, _ = collections
    page_file = tmp_path / "meta.html"
    result = runner.invoke(app, ["meta", "--db", str(db), "-b", "bm25", "--systems", str(db.parent / "systems.tsv"),
                                 "-m", "nDCG@10", "--report", str(page_file)])  # fmt: skip
    assert result.exit_code == 0, result.output
    url = page_file.as_uri()
    errors: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium"),
                                     args=BROWSER_ARGS)  # fmt: skip
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(url, wait_until="load")
            box = page.eval_on_selector(
                "#figure-forest img",
                "e => ({ok: e.complete && e.naturalWidth > 0, w: e.getBoundingClientRect().width, "
                "h: e.getBoundingClientRect().height})",
            )
            scroll_width = page.evaluate("document.documentElement.scrollWidth")
            nav = page.locator("nav a").all_inner_texts()
            rows = page.locator("#pooled tbody tr").count()
            page.screenshot(path=str(os.environ.get("EVALWH_META_SHOT", tmp_path / "meta.png")), full_page=True)
        finally:
            browser.close()
    assert errors == []
    assert box["ok"] and 500 < box["w"] <= 1120 and box["h"] > 300  # two panels, readable at the page's width
    assert scroll_width <= 1280  # nothing wider than the window
    assert nav[:3] == ["Collections", "Pooled effects", "Forest plots"]
    assert rows == 2  # rm3 and dense over bm25
