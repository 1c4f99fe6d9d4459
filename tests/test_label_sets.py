"""A collection of label sets without runs (issue 36, item 5): what works on it, and what says why not.

The collection: three topics of LLMJudge's human test labels and of one LLM judge's labels
(Olz-exp), no runs. The expected numbers are computed from the files with pandas,
scikit-learn and the krippendorff package, not from the warehouse.
"""

from __future__ import annotations

import io
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest
from conftest import SHARED_DATA
from sklearn.metrics import cohen_kappa_score
from typer.testing import CliRunner

from evalwh import Warehouse
from evalwh.cli import app

LLMJUDGE = SHARED_DATA / "llmjudge"
TOPICS = ["q0", "q1", "q2"]
runner = CliRunner(env={"COLUMNS": "200", "TERMINAL_WIDTH": "200"})


def _subset(path: Path) -> pd.DataFrame:
    frame = pd.read_csv(path, sep=r"\s+", header=None, names=["query_id", "iteration", "doc_id", "relevance"],
                        dtype={"query_id": str, "doc_id": str})  # fmt: skip
    return frame[frame["query_id"].isin(TOPICS)].reset_index(drop=True)


@pytest.fixture(scope="module")
def labels_only(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame]:
    if not LLMJUDGE.is_dir():
        pytest.skip(f"{LLMJUDGE} is not there")
    folder = tmp_path_factory.mktemp("labels")
    human, llm = _subset(LLMJUDGE / "human.test.qrels"), _subset(LLMJUDGE / "judges" / "Olz-exp.txt")
    for name, frame in (("human", human), ("llm", llm)):
        frame.to_csv(folder / f"{name}.qrels", sep=" ", header=False, index=False)
    db = folder / "labels.duckdb"
    for name, source in (("human", "human"), ("llm", "llm")):
        result = runner.invoke(app, ["ingest", "qrels", str(folder / f"{name}.qrels"), "-c", "judging", "--qrels-id",
                                     name, "--source", source, "--db", str(db)])  # fmt: skip
        assert result.exit_code == 0, result.output
    return db, human.merge(llm, on=["query_id", "doc_id"], suffixes=("_human", "_llm"))


def test_collections_counts_the_human_set_and_says_so(labels_only: tuple[Path, pd.DataFrame]) -> None:
    db, pairs = labels_only
    result = runner.invoke(app, ["collections", "--db", str(db), "-f", "csv"])
    assert result.exit_code == 0, result.output
    relevant = int((pairs["relevance_human"] >= 1).sum())
    assert result.stdout == (
        "collection_id,topics,judged,relevant,runs,qrels_sets,counted_set\n"
        f"judging,3,{len(pairs)},{relevant},0,2,human\n"
    )


@pytest.mark.parametrize("command", ["eval", "sensitivity", "compare", "bounds"])
def test_run_commands_say_in_one_line_that_there_are_no_runs(labels_only: tuple[Path, pd.DataFrame], command: str) -> None:
    db, _ = labels_only
    args = [command, "--db", str(db)] + (["--qrels-id", "human", "--qrels-id", "llm"] if command == "sensitivity" else [])
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: {command}: collection 'judging' has no runs, only label sets (human, llm); evalwh agreement compares "
        "label sets, evalwh report writes a label-set report, evalwh ingest runs adds runs\n"
    )


def test_agreement_works_with_intervals(labels_only: tuple[Path, pd.DataFrame]) -> None:
    db, pairs = labels_only
    result = runner.invoke(app, ["agreement", "--reference", "human", "--seed", "3", "-f", "csv", "--db", str(db)])
    assert result.exit_code == 0, result.output
    row = pd.read_csv(io.StringIO(result.stdout)).iloc[0]
    assert row["kappa"] == pytest.approx(cohen_kappa_score(pairs["relevance_human"], pairs["relevance_llm"]), abs=1e-4)
    assert row["kappa_low"] <= row["kappa"] <= row["kappa_high"]


def test_agreement_and_the_report_print_the_same_intervals(labels_only: tuple[Path, pd.DataFrame], tmp_path: Path) -> None:
    """Issue 51, item 7: agreement's default seed is fixed and printed; the report's intervals are the same."""
    db, _ = labels_only
    runs = [runner.invoke(app, ["agreement", "--reference", "human", "-f", "csv", "--db", str(db)]) for _ in range(2)]
    for result in runs:
        assert result.exit_code == 0, result.output
        assert "intervals: 95%, normal bootstrap over topics, 1,000 replicates, seed 0\n" in result.stderr
    assert runs[0].stdout == runs[1].stdout  # not a fresh seed per call
    row = pd.read_csv(io.StringIO(runs[0].stdout)).iloc[0]
    out = tmp_path / "labels.md"
    result = runner.invoke(app, ["report", "--db", str(db), "--format", "md", "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    for column in ("kappa", "alpha_ordinal"):
        cell = f"{row[column]:.3f} [{row[f'{column}_low']:.3f}, {row[f'{column}_high']:.3f}]"
        assert cell in text, cell
    assert "1,000 replicates, seed 0" in text


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_report_is_a_label_set_report(labels_only: tuple[Path, pd.DataFrame], tmp_path: Path, fmt: str) -> None:
    db, pairs = labels_only
    out = tmp_path / f"labels.{fmt}"
    result = runner.invoke(app, ["report", "--db", str(db), "--format", fmt, "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    a, b = pairs["relevance_human"], pairs["relevance_llm"]
    kappa = cohen_kappa_score(a, b)
    alpha = krippendorff.alpha(reliability_data=np.vstack([a, b]).astype(float), level_of_measurement="ordinal")
    assert "Label sets of judging" in text
    assert "holds 2 label sets and no runs" in text
    for section in ("Provenance", "Coverage", "Agreement with human", "Confusion matrices", "Agreement per topic"):
        assert section in text, section
    assert f"{kappa:.3f} [" in text and f"{alpha:.3f} [" in text  # estimates with their intervals
    # the confusion matrix: human grade 0 against the LLM's grades, from the files
    counts = pd.crosstab(a, b)
    zero = " | ".join(str(int(counts.loc[0, g])) if g in counts.columns else "0" for g in sorted(counts.columns))
    per_topic = {q: cohen_kappa_score(t["relevance_human"], t["relevance_llm"]) for q, t in pairs.groupby("query_id")}
    if fmt == "md":
        assert f"| 0 | {zero} |" in text
        for topic, value in per_topic.items():
            # kappa with its large-sample interval (statsmodels' cohens_kappa, tests/test_agreement.py)
            assert f"| {topic} | {int((pairs['query_id'] == topic).sum())} | {value:.3f} [" in text
    else:
        assert "<script" not in text and 'src="http' not in text and '<table id="agreement-table">' in text


def test_report_on_one_label_set_without_runs_says_why(tmp_path: Path) -> None:
    db = tmp_path / "one.duckdb"
    with Warehouse(db) as wh:
        wh.ingest_qrels(pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]}), collection="c", qrels_id="h")
    result = runner.invoke(app, ["report", "--db", str(db), "--format", "md"])
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: report: collection 'c' has no runs and 1 label set(s); a label-set report compares at least two "
        "(evalwh ingest qrels adds one), a run report needs runs (evalwh ingest runs)\n"
    )


def test_docstring_examples() -> None:
    import doctest

    import evalwh.present.report.labels

    failures, tried = doctest.testmod(evalwh.present.report.labels)
    assert tried > 0 and failures == 0


def test_label_set_report_states_threshold_binary_kappa_and_topics_in_natural_order(tmp_path: Path) -> None:
    """Issue 51, item 7: topics 2, 14, 31, 144, 200 in that order; relevant is grade >= 1 on the grades used;
    kappa on relevant against not equals scikit-learn's; one other set is "the other set"."""
    generator = np.random.default_rng(5)
    topics = ["144", "14", "200", "31", "2"]
    human = pd.DataFrame({
        "query_id": np.repeat(topics, 12), "doc_id": [f"d{i}" for i in range(60)],
        "relevance": generator.integers(0, 5, 60),
    })  # fmt: skip
    llm = human.assign(relevance=np.clip(human["relevance"] + generator.integers(-1, 2, 60), 0, 4))
    with Warehouse(tmp_path / "w.duckdb") as wh:
        wh.ingest_qrels(human, collection="c", qrels_id="human")
        wh.ingest_qrels(llm, collection="c", qrels_id="llm")
        text = wh.report(format="md")
        per_topic = wh.agreement("human", "llm", per_query=True)
    assert per_topic["query_id"].tolist() == ["2", "14", "31", "144", "200"]  # agreement --per-query too
    assert "the other set, llm, against human" in text and "each of the 1" not in text
    assert "human uses 0-4 on the shared pairs" in text
    assert "**Relevant**: grade >= 1" in text
    rows = [line.split(" | ")[0].lstrip("| ") for line in text.split("## Agreement per topic")[1].split("## Confusion")[0].splitlines()
            if line.startswith("| ") and line[2:3].isdigit()]  # fmt: skip
    assert rows == ["2", "14", "31", "144", "200"]
    binary = cohen_kappa_score(human["relevance"] >= 1, llm["relevance"] >= 1)
    header = next(line for line in text.splitlines() if line.startswith("| set | pairs | agreement"))
    row = next(line for line in text.splitlines() if line.startswith("| llm |"))
    cells = dict(zip(header.strip("| ").split(" | "), row.strip("| ").split(" | "), strict=True))
    assert cells["kappa (grade >= 1)"] == f"{binary:.3f}"


def test_label_set_report_in_chromium_has_the_run_reports_house(labels_only: tuple[Path, pd.DataFrame], tmp_path: Path) -> None:
    """Issue 51, item 7: two label sets open in Chromium with the run report's header, navigation and figures;
    text columns left, numbers right."""
    import os
    import shutil

    chromium = "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else shutil.which("chromium")
    if chromium is None:
        pytest.skip("Debian's chromium is not installed (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    db, _ = labels_only
    out = tmp_path / "labels.html"
    result = runner.invoke(app, ["report", "--db", str(db), "-o", str(out)])
    assert result.exit_code == 0, result.output
    url = out.as_uri()
    refused: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--headless", "--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})

            def route(r):  # type: ignore[no-untyped-def]
                if r.request.url == url or r.request.url.startswith("data:"):
                    r.continue_()
                else:
                    refused.append(r.request.url)
                    r.abort()

            page.route("**/*", route)
            page.goto(url, wait_until="load")
            header = page.locator("header.top h1").inner_text()
            links = page.locator("nav a").all_inner_texts()
            images = page.eval_on_selector_all("figure img", "els => els.map(e => [e.complete && e.naturalWidth > 0, e.clientHeight])")
            aligned = page.eval_on_selector_all(
                "#agreement-table tbody tr:first-child td", "els => els.map(e => getComputedStyle(e).textAlign)"
            )
            header_bg = page.eval_on_selector("header.top", "e => getComputedStyle(e).backgroundColor")
            overflow = page.eval_on_selector("#agreement-table", "e => e.scrollWidth > e.parentElement.clientWidth")
        finally:
            browser.close()
    assert refused == []
    assert header == "Label sets of judging"
    assert header_bg == "rgb(15, 42, 68)"  # the run report's header (report.css.j2)
    assert links[:3] == ["At a glance", "Agreement", "Figures"] and "How it was computed" in links
    assert len(images) == 2 and all(ok and height > 100 for ok, height in images)
    assert aligned[0] == "left" and set(aligned[1:]) == {"right"}
    assert not overflow  # the agreement table fits the page at 1,280 px


def test_label_set_report_of_many_sets_with_long_names_draws_without_warnings(tmp_path: Path) -> None:
    """Six sets with long names (warnings are errors here): the figures say which sets they draw."""
    generator = np.random.default_rng(11)
    human = pd.DataFrame({
        "query_id": np.repeat([str(t) for t in range(1, 13)], 10), "doc_id": [f"d{i}" for i in range(120)],
        "relevance": generator.integers(0, 4, 120),
    })  # fmt: skip
    with Warehouse(tmp_path / "w.duckdb") as wh:
        wh.ingest_qrels(human, collection="c", qrels_id="human")
        for k in range(5):
            noisy = np.clip(human["relevance"] + generator.integers(-1, 2, 120), 0, 3)
            wh.ingest_qrels(human.assign(relevance=noisy), collection="c", qrels_id=f"a-rather-long-judge-name-{k}")
        text = wh.report(format="html", qrels_id="human")
    assert "The first 4 of the 5 compared sets are drawn" in text
    assert "each of the 5 other sets against human" in text
