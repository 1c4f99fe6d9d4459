"""What the random-audit commands accept and how they refuse (docs/audits.md, methods §15.2).

Ids: an audit id follows the pool ids' rule and neither kind may take the other's id; sizes,
duplicate ids, an unknown id given to ``pool export`` and a LARA header without its
probability columns are refused in one line that names the limit, the command's verb, both
kinds of id and the missing columns; ``audit list -f json`` gives ISO 8601 timestamps. The
check of a declared pairs audit tests its spread over the topics (Monte Carlo against the
design's own draws): genuine random samples from :func:`draw_sample` pass about as often as
its level says, and samples clustered on a few topics, overall or within a grade stratum, are
refused. A refused command leaves the warehouse as it was.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from evalwh.cli import app
from evalwh.errors import EvalWhError, IngestError, MetricParamError
from evalwh.methods import audits
from evalwh.methods.audits import check_declared, draw_sample
from evalwh.warehouse import Warehouse
from conftest import take_snapshot
from test_audits import judged_trec8

runner = CliRunner()


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """TREC-8 with four runs, a simulated judge ``llm`` over its 86,830 pairs, audit ``audit5`` and pool ``p6``."""
    folder = tmp_path_factory.mktemp("audit_inputs")
    db = judged_trec8(folder)
    with Warehouse(db) as wh:
        wh.draw_audit("audit5", machine="llm", collection="trec8", size=200, seed=1)
        wh.build_pool(collection="trec8", depth=5, runs_from="all", pool_id="p6")
    return db


@pytest.fixture
def db(base: Path, tmp_path: Path) -> Path:
    """A private copy of the module's warehouse, free to write to."""
    copy = tmp_path / "w.duckdb"
    shutil.copy(base, copy)
    return copy


def _cli(db: Path, *args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, [*args, "--db", str(db)])


def _snapshot(db: Path) -> dict[str, list[tuple[object, ...]]]:
    with Warehouse.open_reader(db) as wh:
        return take_snapshot(wh)


def _qrels(db: Path, path: Path, name: str, pairs: pd.DataFrame) -> None:
    """Ingest ``pairs`` (``query_id, doc_id, relevance``) as the qrels set ``name``."""
    path.write_text("".join(f"{r.query_id} 0 {r.doc_id} {r.relevance}\n" for r in pairs.itertuples()))
    with Warehouse(db) as wh:
        wh.ingest_qrels(path, collection="trec8", qrels_id=name)


# -- ids, sizes and messages (items 1-7) ------------------------------------------------------


def test_pool_build_refuses_an_audits_id_as_audit_draw_refuses_a_pools(db: Path) -> None:
    before = _snapshot(db)
    result = _cli(db, "pool", "build", "-c", "trec8", "--depth", "5", "--runs-from", "all", "--pool-id", "audit5")
    assert result.exit_code == 1
    assert result.output == (
        "Error: 'audit5' names an audit of collection 'trec8'; `pool export` must tell them apart\n"
    )
    result = _cli(db, "audit", "draw", "p6", "-c", "trec8", "--machine", "llm", "--size", "20")
    assert result.exit_code == 1
    assert result.output == "Error: 'p6' names a pool of collection 'trec8'; `pool export` must tell them apart\n"
    with Warehouse(db) as wh, pytest.raises(EvalWhError, match="^'audit5' names an audit of collection 'trec8'"):
        wh.build_pool(collection="trec8", depth=5, runs_from="all", pool_id="audit5", replace=True)
    assert _snapshot(db) == before


@pytest.mark.parametrize(
    ("audit_id", "problem"),
    [("", "the audit id is empty"), ("a b", "'a b' holds whitespace or a NUL byte, which no TREC file can hold")],
)
def test_audit_ids_follow_the_pool_ids_rule(db: Path, audit_id: str, problem: str) -> None:
    before = _snapshot(db)
    for command in (["draw", audit_id, "--size", "20"], ["declare", audit_id, "--labels", "llm"]):
        result = _cli(db, "audit", *command, "-c", "trec8", "--machine", "llm")
        assert result.exit_code == 1 and result.output == f"Error: audit id argument: {problem}\n"
    # the same rule, worded the same, as a pool's id
    result = _cli(db, "pool", "build", "-c", "trec8", "--depth", "5", "--runs-from", "all", "--pool-id", audit_id)
    assert result.output == f"Error: pool id argument: {problem.replace('audit', 'pool')}\n"
    with Warehouse(db) as wh, pytest.raises(IngestError, match=re.escape(problem)):
        wh.draw_audit(audit_id, machine="llm", collection="trec8", size=20)
    assert _snapshot(db) == before


def test_a_size_beyond_the_frame_names_the_largest(db: Path) -> None:
    result = _cli(db, "audit", "draw", "big", "-c", "trec8", "--machine", "llm", "--size", "100000")
    assert result.exit_code == 1
    assert result.output == "Error: audit: 100000 pairs asked for; the frame has 86830 (give 2 to 86830)\n"
    result = _cli(db, "audit", "draw", "big", "-c", "trec8", "--machine", "llm", "--design", "topics", "--size", "51")
    assert result.output == "Error: audit: 51 topics asked for; the frame has 50 (give 2 to 50)\n"


def test_pool_export_of_an_unknown_id_names_pools_and_audits(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "tasks.jsonl"
    result = _cli(db, "pool", "export", "nosuch", "-c", "trec8", "-o", str(out))
    assert result.exit_code == 1 and not out.exists()
    assert result.output == (
        "Error: collection 'trec8' has no pool or audit 'nosuch' (pools: p6; audits: audit5); "
        "`evalwh pool build` or `evalwh audit draw` makes one\n"
    )
    empty = tmp_path / "empty.duckdb"
    (tmp_path / "one.qrels").write_text("401 0 d1 1\n")
    with Warehouse(empty) as wh:
        wh.ingest_qrels(tmp_path / "one.qrels", collection="trec8")
    result = _cli(empty, "pool", "export", "audit5", "-c", "trec8", "-o", str(out))
    assert result.output == (
        "Error: collection 'trec8' has no pool or audit 'audit5' (pools: none yet; audits: none yet); "
        "`evalwh pool build` or `evalwh audit draw` makes one\n"
    )
    # both kinds are still exported
    for name, count in (("audit5", 200), ("p6", None)):
        result = _cli(db, "pool", "export", name, "-c", "trec8", "-o", str(out))
        assert result.exit_code == 0, result.output
        with Warehouse.open_reader(db) as wh:
            expected = count or len(wh.pool_order("p6", collection="trec8"))
        assert len(out.read_text().splitlines()) == expected


def test_a_duplicate_id_is_refused_with_the_commands_verb(db: Path, tmp_path: Path) -> None:
    with Warehouse.open_reader(db) as wh:
        truth = wh.sql("SELECT query_id, doc_id, relevance FROM qrels WHERE qrels_id = 'default' ORDER BY 1, 2")
    _qrels(db, tmp_path / "people.qrels", "people", truth.sample(n=1500, random_state=9))
    assert _cli(db, "audit", "declare", "ext", "-c", "trec8", "--labels", "people", "--machine", "llm").exit_code == 0
    before = _snapshot(db)
    result = _cli(db, "audit", "declare", "ext", "-c", "trec8", "--labels", "people", "--machine", "llm")
    assert result.output == "Error: audit 'ext' exists in collection 'trec8'; give --replace to declare it anew\n"
    result = _cli(db, "audit", "draw", "audit5", "-c", "trec8", "--machine", "llm", "--size", "20")
    assert result.output == "Error: audit 'audit5' exists in collection 'trec8'; give --replace to draw it anew\n"
    assert _snapshot(db) == before


def test_audit_tables_in_json_give_iso_8601_timestamps(db: Path) -> None:
    with Warehouse.open_reader(db) as wh:
        stored = wh.audits(collection="trec8")["created_at"].iloc[0]
    result = _cli(db, "audit", "list", "-c", "trec8", "-f", "json")
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert [r["audit_id"] for r in rows] == ["audit5"]
    assert rows[0]["created_at"] == stored.strftime("%Y-%m-%dT%H:%M:%S.%f")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}", rows[0]["created_at"])
    result = _cli(db, "audit", "draw", "a7", "-c", "trec8", "--machine", "llm", "--size", "20", "-f", "json")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}", json.loads(result.output)["created_at"])


@pytest.mark.parametrize(
    ("header", "shown"),
    [("topic_id,doc_id,annotation", "topic_id,doc_id,annotation"), ("qid,doc_id,annotation,", "qid,doc_id,annotation")],
)
def test_a_lara_header_without_probabilities_names_them(wh: Warehouse, tmp_path: Path, header: str, shown: str) -> None:
    path = tmp_path / "l7.csv"
    path.write_text(f"{header}\n401,d1,1{',' if header.endswith(',') else ''}\n401,d2,0\n")
    with pytest.raises(IngestError) as error:
        wh.ingest_qrels(path, collection="c")
    assert str(error.value) == (
        f"{path}:1: the LARA header {shown} lacks the probability columns prob_yes,prob_no (or prob_0,...,prob_k) "
        "after annotation"
    )
    assert wh.sql("SELECT count(*) AS n FROM qrels")["n"].iloc[0] == 0


# -- the topic test of a declared pairs audit (item 8, methods §15.2) -------------------------


def _frame(topics: int = 16, seed: int = 1) -> pd.DataFrame:
    """A synthetic frame: topics of 4-150 pairs, three machine grades, best ranks spread over the bins."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(4, 150, topics)
    query = np.repeat([f"t{i:02d}" for i in range(topics)], sizes)
    return pd.DataFrame({
        "query_id": query, "doc_id": [f"d{i}" for i in range(len(query))],
        "machine_grade": rng.choice([0.0, 0.0, 1.0, 2.0], len(query)),
        "best_rank": rng.choice([1, 2, 5, 15, 30, 70, np.nan], len(query)),
    })  # fmt: skip


def _strata(frame: pd.DataFrame, stratify: str | None) -> pd.Series:
    if stratify == "grade":
        return frame["machine_grade"].map(audits._grade_text)
    return pd.Series("all", index=frame.index)


def _inside(frame: pd.DataFrame, pairs: pd.DataFrame) -> np.ndarray:
    keys = frame.set_index(["query_id", "doc_id"]).index
    return np.asarray(keys.isin(pd.MultiIndex.from_frame(pairs[["query_id", "doc_id"]])))


@pytest.mark.parametrize("stratify", [None, "grade"])
def test_genuine_random_samples_pass_about_as_often_as_the_level_says(stratify: str | None) -> None:
    """p-values of 200 draws of draw_sample are uniform enough: shares below 0.01, 0.05, 0.5 near those."""
    frame = _frame()
    topics, strata = frame["query_id"].to_numpy(str), _strata(frame, stratify).to_numpy(str)
    ps = []
    for seed in range(200):
        pairs, _ = draw_sample(frame, "pairs", 80, stratify=stratify, seed=seed)
        result = audits.topic_spread(topics, strata, _inside(frame, pairs), draws=999, seed=seed)
        assert result is not None
        ps.append(result[0])
    ps = np.array(ps)
    # Binomial(200, q) within 3 standard deviations of 200 q
    assert (ps <= 0.01).sum() <= 6
    assert 2 <= (ps <= 0.05).sum() <= 19
    assert 79 <= (ps <= 0.5).sum() <= 121
    # the whole check (best rank, grade and topics at 0.001 each) refuses none of 40 draws
    refused = [seed for seed in range(40)
               if check_declared(frame, draw_sample(frame, "pairs", 80, stratify=stratify, seed=seed)[0],
                                 _strata(frame, stratify), "pairs")[0] is not None]  # fmt: skip
    assert refused == []


def test_samples_clustered_on_topics_are_refused() -> None:
    frame = _frame()
    two = frame[frame["query_id"].isin(["t00", "t01"])].sample(n=40, random_state=0)
    refusal, note = check_declared(frame, two, _strata(frame, None), "pairs")
    sizes = frame["query_id"].value_counts()
    assert two["query_id"].value_counts().to_dict() == {"t00": 21, "t01": 19} and sizes["t00"] * 40 / len(frame) < 2.35
    assert refusal == (
        "not a plausible random sample of the frame: topic: chi-square p = 0.0001 (Monte Carlo), "
        f"topic t00 has 21 audited pairs where a random sample has {sizes['t00'] * 40 / len(frame):.1f}"
    )
    assert "topic: chi-square p = 0.0001" in note


def test_a_grade_stratified_audit_spreads_within_each_grade() -> None:
    """Each topic has 20 pairs of grade 0 and 20 of grade 1; the audit takes grade 0 from four topics
    and grade 1 from the other four: right in total per topic and per grade, wrong within grades."""
    query = np.repeat([f"t{i}" for i in range(8)], 40)
    frame = pd.DataFrame({"query_id": query, "doc_id": [f"d{i}" for i in range(320)],
                          "machine_grade": np.tile(np.repeat([0.0, 1.0], 20), 8),
                          "best_rank": np.tile([1, 2, 5, 15, 30, 70, np.nan, 200], 40)})  # fmt: skip
    grade0 = frame["machine_grade"] == 0
    first = frame["query_id"].isin([f"t{i}" for i in range(4)])
    audited = pd.concat([frame[grade0 & first].groupby("query_id").head(10),
                         frame[~grade0 & ~first].groupby("query_id").head(10)])  # fmt: skip
    refusal, _ = check_declared(frame, audited, _strata(frame, None), "pairs")
    assert refusal is None  # the pooled counts are those of a random sample: 10 per topic
    refusal, _ = check_declared(frame, audited, _strata(frame, "grade"), "pairs")
    assert refusal == (
        "not a plausible random sample of the frame: topic: chi-square p = 0.0001 (Monte Carlo), "
        "topic t0 has 10 audited pairs of stratum 0 where a random sample has 5.0"
    )
    # stratified by topic the counts are the design's own: no topic test
    strata = frame["query_id"].astype(str)
    assert audits.topic_spread(query, strata.to_numpy(str), _inside(frame, audited)) is None


def test_trec8_pairs_from_two_topics_are_refused(db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """800 pairs of topics 401-402 pass the best-rank and grade tests, and fail the topic test."""
    with Warehouse.open_reader(db) as wh:
        truth = wh.sql(
            "SELECT query_id, doc_id, relevance FROM qrels WHERE qrels_id = 'default' AND query_id IN ('401', '402') "
            "ORDER BY 1, 2"
        )
        llm = wh.sql("SELECT query_id, doc_id, relevance AS grade FROM qrels WHERE qrels_id = 'llm' AND relevance >= 0")
    sample = truth.sample(n=800, random_state=1)
    _qrels(db, tmp_path / "two.qrels", "two", sample)
    before = _snapshot(db)
    # the furthest topic, computed here from the frame (the llm set's 86,830 pairs): overall, and in grade 0
    graded = sample.merge(llm, on=["query_id", "doc_id"])
    audited_0 = graded[graded["grade"] == 0]
    share_401 = (llm["query_id"] == "401").mean()
    share_401_in_0 = (llm.loc[llm["grade"] == 0, "query_id"] == "401").mean()
    cases = {
        None: f"topic 401 has {(sample['query_id'] == '401').sum()} audited pairs where a random sample has "
        f"{800 * share_401:.1f}",
        "grade": f"topic 401 has {(audited_0['query_id'] == '401').sum()} audited pairs of stratum 0 where a random "
        f"sample has {len(audited_0) * share_401_in_0:.1f}",
    }
    assert cases == {
        None: "topic 401 has 496 audited pairs where a random sample has 25.2",
        "grade": "topic 401 has 294 audited pairs of stratum 0 where a random sample has 14.6",
    }
    for stratify, furthest in cases.items():
        args = ["--stratify", stratify] if stratify else []
        result = _cli(db, "audit", "declare", "two", "-c", "trec8", "--labels", "two", "--machine", "llm", *args)
        assert result.exit_code == 1
        assert result.output == (
            "Error: audit 'two' from 'two': not a plausible random sample of the frame: topic: chi-square p = 0.0001 "
            f"(Monte Carlo), {furthest}\n"
        )
    assert _snapshot(db) == before
    # without the topic test the same audit passed (methods §15.2 quotes these p-values)
    monkeypatch.setattr(audits, "topic_spread", lambda *args, **kwargs: None)
    with Warehouse(db) as wh:
        note = wh.declare_audit("two", labels="two", machine="llm", collection="trec8")["check_note"].iloc[0]
    assert note.startswith("best rank: chi-square p = 0.159") and "machine grade: chi-square p = 0.165" in note


def test_draw_sample_names_the_largest_size() -> None:
    frame = _frame()
    with pytest.raises(MetricParamError) as error:
        draw_sample(frame, "pairs", 5000)
    assert str(error.value) == f"audit: 5000 pairs asked for; the frame has {len(frame)} (give 2 to {len(frame)})"
    with pytest.raises(MetricParamError) as error:
        draw_sample(frame, "topics", 17)
    assert str(error.value) == "audit: 17 topics asked for; the frame has 16 (give 2 to 16)"
