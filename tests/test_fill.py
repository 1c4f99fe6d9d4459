"""Composed label sets (evalwh eval --qrels-id A --fill B) and the judged share by source.

A composition evaluates as one qrels file holding A's labels, then B's labels for the pairs A
did not judge (a pair is judged by a set when it has a grade >= 0 there). On TREC-8 the
depth-10 labels filled by the full qrels are checked against such a file written here and
evaluated directly (evalwh eval --qrels FILE RUN...), per topic, exactly.
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from evalwh import Warehouse
from evalwh.cli import app
from evalwh.errors import NotFoundError

from conftest import TREC8

MEASURES = ["AP", "P@10", "nDCG@10", "bpref", "A_p@10"]
RUNS = ["input.INQ603.gz", "input.Sab8A1.gz", "input.att99atde.gz", "input.mds08a1.gz"]
QRELS_COLUMNS = ["query_id", "iteration", "doc_id", "relevance"]
runner = CliRunner()


def invoke(*args: str) -> pd.DataFrame:
    result = runner.invoke(app, list(args), env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return pd.read_csv(io.StringIO(result.stdout), dtype={"query_id": str})


def read_qrels(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep=r"\s+", header=None, names=QRELS_COLUMNS, dtype={"query_id": str, "doc_id": str})


def merged(first: pd.DataFrame, *fills: pd.DataFrame) -> pd.DataFrame:
    """One qrels frame: the first set's labels, then each fill's for the pairs still unjudged.

    Written independently of the SQL: a pair is judged once some set has a grade >= 0 for it;
    a negative grade is kept only where no later set judges the pair (it then stays unjudged).
    """
    out = first
    for fill in fills:
        judged = out[out["relevance"] >= 0].set_index(["query_id", "doc_id"]).index
        keys = fill.set_index(["query_id", "doc_id"]).index
        added = fill[~keys.isin(judged)]
        taken = added.set_index(["query_id", "doc_id"]).index
        kept = out[~out.set_index(["query_id", "doc_id"]).index.isin(taken)]
        out = pd.concat([kept, added], ignore_index=True)
    return out


@pytest.fixture(scope="module")
def trec8_two_sets(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    """A warehouse with TREC-8's depth-10 labels (depth10) and full qrels (full), and four runs."""
    if not TREC8.is_dir():
        pytest.skip(f"{TREC8} is not there (CI checks out ../shared beside the repository)")
    runs = [TREC8 / "runs" / name for name in RUNS]
    db = tmp_path_factory.mktemp("fill") / "trec8.duckdb"
    with Warehouse(db) as wh:
        wh.ingest_qrels(TREC8 / "depth10" / "depth10.qrels", collection="trec8", qrels_id="depth10")
        wh.ingest_qrels(TREC8 / "trec8.qrels", collection="trec8", qrels_id="full")
        wh.ingest_runs(runs, collection="trec8")
    return db, runs


def test_trec8_depth10_filled_by_full_equals_a_merged_qrels_file(trec8_two_sets, tmp_path: Path) -> None:
    db, runs = trec8_two_sets
    depth10 = read_qrels(TREC8 / "depth10" / "depth10.qrels")
    full = read_qrels(TREC8 / "trec8.qrels")
    both = merged(depth10, full)
    assert (depth10["relevance"] < 0).sum() > 1000  # the -1 pairs: pooled, never judged; full labels them
    path = tmp_path / "merged.qrels"
    both.to_csv(path, sep=" ", header=False, index=False)
    options = [arg for m in MEASURES for arg in ("-m", m)]
    composed = invoke(
        "eval", "--db", str(db), "-c", "trec8", "--qrels-id", "depth10", "--fill", "full", "-q", "-f", "csv", *options
    )
    direct = invoke("eval", "--qrels", str(path), *map(str, runs), "-q", "-f", "csv", *options)
    assert set(composed["qrels_id"]) == {"depth10+full"}
    key = ["run_id", "query_id", "measure"]
    joined = composed.merge(direct, on=key, how="outer", suffixes=("_composed", "_direct"), indicator=True)
    assert (joined["_merge"] == "both").all()
    assert len(joined) == len(runs) * 50 * len(MEASURES)
    assert joined["value_composed"].tolist() == pytest.approx(joined["value_direct"].tolist(), abs=1e-12)
    # and the composition differs from depth10 alone (the fill did something)
    alone = invoke("eval", "--db", str(db), "-c", "trec8", "--qrels-id", "depth10", "-f", "csv", "-m", "AP")
    filled = composed[composed["measure"] == "AP"].groupby("run_id")["value"].mean()
    assert not filled.to_numpy() == pytest.approx(alone.set_index("run_id")["value"].loc[filled.index].to_numpy())


def test_cache_is_never_shared_with_the_composition(trec8_two_sets, tmp_path: Path) -> None:
    """A, then A+B, then A again: each right; the cache keeps A's rows only."""
    copy = tmp_path / "w.duckdb"
    shutil.copy(trec8_two_sets[0], copy)
    with Warehouse(copy) as wh:
        first = wh.evaluate(MEASURES, qrels_id="depth10", per_query=True)
        builds = wh.sql("SELECT qrels_id, run_id, qrels_fingerprint FROM judged_builds ORDER BY ALL")
        rows = wh.sql("SELECT count(*) AS n FROM judged_results").n.item()
        composed = wh.evaluate(MEASURES, qrels_id="depth10", fill="full", per_query=True)
        full = wh.evaluate(MEASURES, qrels_id="full", per_query=True)
        again = wh.evaluate(MEASURES, qrels_id="depth10", per_query=True)
        assert wh.sql("SELECT qrels_id, run_id, qrels_fingerprint FROM judged_builds ORDER BY ALL").equals(builds)
        assert wh.sql("SELECT count(*) AS n FROM judged_results").n.item() == rows
    pd.testing.assert_frame_equal(first, again)
    # the composition is not A's cache: its values differ. depth10's labels were copied from
    # the full qrels (its -1 pairs are not there), so filling depth10 from full gives full.
    values = [f.set_index(["run_id", "query_id", "measure"])["value"] for f in (first, composed, full)]
    assert not values[1].equals(values[0].reindex(values[1].index))
    assert values[1].tolist() == pytest.approx(values[2].reindex(values[1].index).tolist(), abs=1e-12)


def test_judged_share_by_source_on_trec8(trec8_two_sets, tmp_path: Path) -> None:
    """depth10 (human) filled by full marked llm: human + llm + none = 1, human = A_p of depth10."""
    copy = tmp_path / "w.duckdb"
    shutil.copy(trec8_two_sets[0], copy)
    with Warehouse(copy) as wh:
        wh.con.execute("UPDATE qrels_sets SET source = 'llm' WHERE qrels_id = 'full'")
        specs = ["A_p@20", *(f"A_p(source={s})@20" for s in ("human", "llm", "inferred", "derived", "none"))]
        shares = wh.evaluate(specs, qrels_id="depth10", fill=["full"], per_query=True, wide=True, typed_names=True)
        plain = wh.evaluate(["A_p@20"], qrels_id="depth10", per_query=True, wide=True)
    parts = shares[[f"A_p(source={s})@20" for s in ("human", "llm", "inferred", "derived", "none")]].sum(axis=1)
    assert parts.tolist() == pytest.approx([1.0] * len(shares))
    assert shares["A_p(source=human)@20"].tolist() == pytest.approx(plain["A_p@20"].tolist())
    assert (shares["A_p(source=llm)@20"] > 0).any()
    assert shares["A_p(source=inferred)@20"].eq(0).all()


def test_unknown_fill_set_gets_a_did_you_mean(trec8_two_sets) -> None:
    with Warehouse.open_reader(trec8_two_sets[0]) as wh, pytest.raises(NotFoundError, match="Did you mean full"):
        wh.evaluate(["AP"], qrels_id="depth10", fill=["Full"])


# -- invariants on small random label sets ----------------------------------------------------

TOPICS = ["1", "2", "3"]
DOCS = [f"d{i}" for i in range(8)]
pair = st.tuples(st.sampled_from(TOPICS), st.sampled_from(DOCS))
labels = st.dictionaries(pair, st.integers(-1, 2), min_size=1, max_size=20)
SMALL = ["AP", "P@5", "nDCG@5", "bpref", "A_p@5", "RR"]


def small_warehouse(sets: dict[str, dict[tuple[str, str], int]], scores: dict[tuple[str, str], float]) -> Warehouse:
    wh = Warehouse(":memory:")
    for name, grades in sets.items():
        frame = pd.DataFrame(
            [(q, d, g) for (q, d), g in grades.items()], columns=["query_id", "doc_id", "relevance"]
        )
        wh.ingest_qrels(frame, collection="c", qrels_id=name)
    run = pd.DataFrame([(q, d, s) for (q, d), s in scores.items()], columns=["query_id", "doc_id", "score"])
    wh.ingest_runs(run, collection="c", run_id="r")
    return wh


run_scores = st.dictionaries(pair, st.floats(0, 10, allow_nan=False), min_size=1, max_size=20)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(a=labels, scores=run_scores, data=st.data())
def test_a_fill_that_adds_nothing_is_the_identity(a, scores, data) -> None:
    """B labels only pairs A judged (or gives them negative grades), on A's topics: A+B = A."""
    judged = sorted(p for p, g in a.items() if g >= 0)
    topics = sorted({q for q, _ in a})
    redundant = data.draw(st.dictionaries(st.sampled_from(judged), st.integers(0, 2)) if judged else st.just({}))
    unjudged = data.draw(
        st.dictionaries(st.tuples(st.sampled_from(topics), st.sampled_from(DOCS)), st.just(-1), max_size=4)
    )
    b = {**unjudged, **redundant}
    if not b:
        b = {(topics[0], "never-retrieved"): -1}  # a set with no label at all
    with small_warehouse({"A": a, "B": b}, scores) as wh:
        # trec_eval_c keeps every topic of the sets: B's topics must add none either
        plain = wh.evaluate(SMALL, qrels_id="A", per_query=True, averaging="trec_eval_c")
        composed = wh.evaluate(SMALL, qrels_id="A", fill="B", per_query=True, averaging="trec_eval_c")
        self_fill = wh.evaluate(SMALL, qrels_id="A", fill=["A", "A"], per_query=True, averaging="trec_eval_c")
    assert set(composed["qrels_id"]) <= {"A+B"} and set(self_fill["qrels_id"]) <= {"A+A+A"}
    columns = ["run_id", "query_id", "measure", "value"]
    pd.testing.assert_frame_equal(plain[columns], composed[columns])
    pd.testing.assert_frame_equal(plain[columns], self_fill[columns])


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(a=labels, b=labels, c=labels, scores=run_scores, k=st.integers(1, 12))
def test_shares_by_source_sum_to_one_and_follow_the_first_set_that_judged(a, b, c, scores, k) -> None:
    with small_warehouse({"A": a, "B": b, "C": c}, scores) as wh:
        wh.con.execute("UPDATE qrels_sets SET source = 'llm' WHERE qrels_id = 'B'")
        wh.con.execute("UPDATE qrels_sets SET source = 'inferred' WHERE qrels_id = 'C'")
        sources = ("human", "llm", "inferred", "derived", "none")
        specs = [f"A_p@{k}", *(f"A_p(source={s})@{k}" for s in sources)]
        got = wh.evaluate(specs, qrels_id="A", fill=["B", "C"], per_query=True, averaging="trec_eval_c",
                          wide=True, typed_names=True)  # fmt: skip
    # the expected shares, from the ranking and the merged labels in Python
    owner: dict[tuple[str, str], str] = {}
    for name, grades in (("human", a), ("llm", b), ("inferred", c)):
        for p, g in grades.items():
            if g >= 0:
                owner.setdefault(p, name)
    for row in got.itertuples(index=False):
        values = dict(zip(got.columns, row, strict=True))
        top = _ranking(scores, values["query_id"])[:k]
        counts = {s: sum(owner.get(p) == s for p in top) / k for s in sources[:4]}
        counts["none"] = (k - sum(p in owner for p in top)) / k
        for s in sources:
            assert values[f"A_p(source={s})@{k}"] == pytest.approx(counts[s])
        assert sum(values[f"A_p(source={s})@{k}"] for s in sources) == pytest.approx(1.0)
        assert values[f"A_p@{k}"] == pytest.approx(1.0 - counts["none"])


def _ranking(scores: dict[tuple[str, str], float], topic: str) -> list[tuple[str, str]]:
    """One topic's (topic, document) pairs by score descending, then doc_id descending (evalwh's order)."""
    rows = [(p, s) for p, s in scores.items() if p[0] == topic]
    return [p for p, _ in sorted(rows, key=lambda item: (item[1], item[0][1]), reverse=True)]


# -- compare, matrix, bounds and the report under a composition --------------------------------


@pytest.fixture
def two_sets(tmp_path: Path) -> Path:
    """A small warehouse with a human set A, an LLM set B that fills it, and three runs."""
    a = {("1", "a"): 1, ("1", "b"): -1, ("2", "a"): 0, ("2", "b"): 1, ("3", "c"): 1}
    b = {("1", "a"): 0, ("1", "b"): 1, ("1", "c"): 1, ("2", "c"): 2, ("3", "z"): 1, ("3", "c"): 0}
    runs = {
        "r1": {("1", "a"): 3.0, ("1", "b"): 2.0, ("1", "c"): 1.0, ("2", "a"): 2.0, ("2", "c"): 1.0, ("3", "z"): 1.0},
        "r2": {("1", "b"): 3.0, ("1", "a"): 2.0, ("2", "b"): 2.0, ("3", "c"): 2.0, ("3", "q"): 1.0},
        "r3": {("1", "c"): 3.0, ("1", "x"): 2.0, ("2", "c"): 2.0, ("2", "b"): 1.0, ("3", "c"): 1.0},
    }
    path = tmp_path / "w.duckdb"
    with Warehouse(path) as wh:
        for name, grades in (("A", a), ("B", b)):
            frame = pd.DataFrame([(q, d, g) for (q, d), g in grades.items()], columns=["query_id", "doc_id", "relevance"])
            wh.ingest_qrels(frame, collection="c", qrels_id=name)
        for run, scores in runs.items():
            frame = pd.DataFrame([(q, d, s) for (q, d), s in scores.items()], columns=["query_id", "doc_id", "score"])
            wh.ingest_runs(frame, collection="c", run_id=run)
        wh.con.execute("UPDATE qrels_sets SET source = 'llm', model = 'a model' WHERE qrels_id = 'B'")
        merged_labels = merged(*(wh.sql(f"SELECT query_id, doc_id, relevance FROM qrels WHERE qrels_id = '{n}'") for n in "AB"))
        wh.ingest_qrels(merged_labels, collection="c", qrels_id="merged")
        wh.con.execute("UPDATE qrels_sets SET kind = 'derived' WHERE qrels_id = 'merged'")  # (not a label set)
    return path


def test_compare_matrix_and_bounds_use_the_composition(two_sets: Path) -> None:
    with Warehouse(two_sets) as wh:
        composed = wh.compare(["P@2", "AP"], qrels_id="A", fill="B", test="t")
        plain = wh.compare(["P@2", "AP"], qrels_id="merged", test="t")
        assert set(composed.pairs["qrels_id"]) == {"A+B"} and "qrels_id" not in plain.pairs
        columns = ["measure", "run_a", "run_b", "mean_a", "mean_b", "p_value"]
        pd.testing.assert_frame_equal(composed.pairs[columns], plain.pairs[columns])
        matrix = wh.matrix(qrels_id="A", fill=["B"], depths=[1, 2], full=False, test="t", store=True)
        same = wh.matrix(qrels_id="merged", depths=[1, 2], full=False, test="t", store=False)
        assert set(matrix.pairs["qrels_id"]) == {"A+B"}
        pd.testing.assert_frame_equal(matrix.summary, same.summary)
        stored = wh.sql("SELECT DISTINCT qrels_id FROM decision_pairs").qrels_id.tolist()
        assert stored == ["A+B"]
        bands = wh.bounds(qrels_id="A", fill="B", depths=[1, 2, 3], store=True)
        merged_bands = wh.bounds(qrels_id="merged", depths=[1, 2, 3])
        assert set(bands["qrels_id"]) == {"A+B"}
        cols = ["run_id", "depth", "lower", "upper"]
        pd.testing.assert_frame_equal(bands[cols].reset_index(drop=True), merged_bands[cols].reset_index(drop=True))
        assert wh.sql("SELECT DISTINCT qrels_id FROM bounds").qrels_id.tolist() == ["A+B"]


def test_cli_fill_on_compare_and_bounds(two_sets: Path) -> None:
    with Warehouse(two_sets) as wh:  # A as the default set: compare's option naming it is being renamed
        for table in ("qrels", "qrels_sets"):
            wh.con.execute(f"UPDATE {table} SET qrels_id = 'default' WHERE qrels_id = 'A'")
    pairs = invoke("compare", "--db", str(two_sets), "-c", "c", "--all-runs", "--fill", "B", "-m", "AP", "-f", "csv")
    assert set(pairs["qrels_id"]) == {"default+B"} and len(pairs) == 3
    decision = invoke("compare", "r1", "r2", "--decision", "--db", str(two_sets), "-c", "c", "--fill", "B", "-d", "1,2", "-f", "csv")
    assert set(decision["qrels_id"]) == {"default+B"}
    bands = invoke("bounds", "--db", str(two_sets), "-c", "c", "--fill", "B", "--depths", "1,2", "-f", "csv")
    assert set(bands["qrels_id"]) == {"default+B"}
    matrix = invoke("matrix", "--db", str(two_sets), "-c", "c", "--fill", "B", "-d", "1,2", "--layout", "pairs", "-f", "csv")
    assert set(matrix["qrels_id"]) == {"default+B"}


def test_report_judgments_section(two_sets: Path) -> None:
    from evalwh.present.report import ReportOptions, build_report, render_markdown

    with Warehouse(two_sets) as wh:
        options = ReportOptions(measures=("P@10", "AP"), depths=(1, 2), figures=False, qrels_id="A", fill=("B",))
        report = build_report(wh, "c", options)
        merged_means = wh.evaluate(["P@10"], qrels_id="merged")
        per_set = {name: wh.evaluate(["P@10"], qrels_id=name) for name in ("A", "B")}
        shares = wh.evaluate([f"A_p(source={s})@10" for s in ("human", "llm", "none")], qrels_id="A", fill="B",
                             wide=True, typed_names=True)  # fmt: skip
    j = report.judgments
    assert j is not None and j.reference == "A+B"
    assert j.provenance["qrels_id"].tolist() == ["A", "B"]  # the derived set is no label set
    assert j.provenance.set_index("qrels_id")["source"].to_dict() == {"A": "human", "B": "llm"}
    assert j.agreement is not None and j.agreement["qrels_id"].tolist() == ["B"]
    # the reference ranking is the report's leaderboard, evaluated with A+B = the merged labels
    board = report.leaderboard.set_index("run_id")["P@10"]
    assert board.sort_index().tolist() == pytest.approx(merged_means.set_index("run_id")["value"].sort_index().tolist())
    for name, means in per_set.items():
        rows = j.rankings[j.rankings["qrels_id"] == name].set_index("run_id")
        scores = means.set_index("run_id")["value"]
        assert rows["score"].sort_index().tolist() == pytest.approx(scores.sort_index().tolist())
        expected = scores.reset_index().sort_values(["value", "run_id"], ascending=[False, True])["run_id"].tolist()
        assert rows.sort_values("rank").index.tolist() == expected
        assert (rows["change"] == rows["rank"] - rows["reference_rank"]).all()
    got = j.shares.set_index("run_id")
    assert got[["human", "llm", "none"]].sum(axis=1).tolist() == pytest.approx([1.0] * len(got))
    want = shares.set_index("run_id")
    for source in ("human", "llm", "none"):
        assert got[source].sort_index().tolist() == pytest.approx(want[f"A_p(source={source})@10"].sort_index().tolist())
    text = render_markdown(report)
    assert "## Judgments: the label sets side by side" in text and "| B | llm |" in text
    from evalwh.present.report import render_html

    page = render_html(report)  # the section has a link in the sticky nav, which no longer hides a heading reached by one
    assert '<a href="#judgments">Judgments</a>' in page and "scroll-margin-top" in page
    assert "qrels set 'A+B'" in text


def test_a_report_of_one_label_set_has_no_judgments_section(two_sets: Path) -> None:
    from evalwh.present.report import ReportOptions, build_report, render_markdown

    with Warehouse(two_sets) as wh:
        wh.con.execute("DELETE FROM qrels_sets WHERE qrels_id = 'B'")
        report = build_report(wh, "c", ReportOptions(depths=(1, 2), figures=False, qrels_id="A"))
    assert report.judgments is None
    assert "Judgments" not in render_markdown(report)


def test_report_judgments_rank_means_rounded_to_12_decimals(tmp_path: Path) -> None:
    """Two paths to one mean differ in the last bits (the leaderboard's and each set's evaluation):
    on TREC-8's 129 runs the report's own set against itself gave tau_b 0.998 and a run moved two
    places. Means are ranked at 12 decimals (methods §11.4): the set against itself gives tau_b 1,
    no change and no run named."""
    from evalwh.present.report import ReportOptions
    from evalwh.present.report.judgments import build_judgments

    with Warehouse(tmp_path / "w.duckdb") as wh:
        for name in ("A", "B"):
            wh.ingest_qrels(pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1, 1]}),
                            collection="c", qrels_id=name)  # fmt: skip
        for run, doc in (("r1", "a"), ("r2", "b"), ("r3", "x")):
            wh.ingest_runs(pd.DataFrame({"query_id": ["1"], "doc_id": [doc], "score": [1.0]}), collection="c", run_id=run)
        # r1 and r2 tie at 0.1; the leaderboard's path put r2 a last bit above
        board = pd.DataFrame({"run_id": ["r2", "r1", "r3"], "P@10": [np.nextafter(0.1, 1.0), 0.1, 0.0]})
        j = build_judgments(wh, "c", ReportOptions(qrels_id="A", figures=False), board, "P@10")
    assert j is not None
    shifts = j.shifts.set_index("qrels_id")
    assert shifts["kendall_tau"].tolist() == pytest.approx([1.0, 1.0], abs=1e-12)
    assert shifts["mean_abs_change"].tolist() == [0.0, 0.0] and shifts["run"].tolist() == ["", ""]
    ranks = j.rankings[j.rankings["qrels_id"] == "A"].set_index("run_id")
    assert ranks["reference_rank"].to_dict() == {"r1": 1, "r2": 2, "r3": 3} and (ranks["change"] == 0).all()
