"""The evalwh provider for ir_measures orders tied scores as ir_measures' default provider does.

Issue #54, item 2: ir_measures' default provider for trec_eval's measures is pytrec_eval,
which keeps scores as 32-bit floats (as trec_eval 9): two scores that differ only beyond
float32's precision tie there, and the tie goes by doc_id descending. The ``evalwh``
provider orders the same way by default and so gives the same value per query, on a
generated collection full of such collisions and on the TREC-8 runs where float32 reorders a
list; ``evalwh_trec_eval10`` orders on the scores as given (trec_eval 10, ``evalwh eval``).
The reference is pytrec_eval itself, through ir_measures' registry.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ir_measures = pytest.importorskip("ir_measures")
pytest.importorskip("pytrec_eval")
evalwh_ir_measures = pytest.importorskip("evalwh.ir_measures")

from ir_measures import (  # noqa: E402
    AP,
    RR,
    Bpref,
    IPrec,
    NumRel,
    NumRelRet,
    NumRet,
    P,
    R,
    Rprec,
    SetF,
    SetP,
    SetR,
    Success,
    infAP,
    nDCG,
)

TREC8 = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec8_adhoc"
# measures of pytrec_eval's that evalwh computes too (the last three by the warehouse)
SHARED = [AP, nDCG, nDCG @ 5, nDCG @ 10, P @ 5, P @ 10, R @ 5, R @ 100, RR, Rprec, Bpref,
          Success @ 3, NumRet, NumRel, NumRelRet, SetP, SetR, IPrec @ 0.5, IPrec @ 0.0, AP @ 10,
          AP(rel=2), SetF(beta=0.5), infAP]  # fmt: skip
# the TREC-8 runs where scores rounded to float32 reorder a list (11 of 129), and one that has none
FLOAT32_RUNS = ["Dm8Nbn", "Dm8NbnR", "Dm8TFbn", "Dm8TFidf", "Flab8ax", "UB99T", "ibmg99a",
                "ibmg99c", "ric8tpx", "uwmt8a0", "uwmt8a2", "INQ601"]  # fmt: skip


def _per_query(provider: str, measures: list, qrels: pd.DataFrame, run: pd.DataFrame) -> dict:
    import warnings

    from evalwh.ir_measures import Float32TiesWarning

    registry = ir_measures.providers.registry
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Float32TiesWarning)  # (held by the tests below)
        metrics = list(registry[provider].iter_calc(measures, qrels, run))
    return {(m.query_id, str(m.measure)): m.value for m in metrics}


def _tied_collection(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """30 topics x 200 documents, grades 0-3, scores in groups that collide in float32
    (base + k * 1e-9 for small k) or tie exactly."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for topic in range(1, 31):
        docs = [f"d{i:04d}" for i in rng.permutation(400)[:200]]
        base = rng.choice([0.1, 1.0, 2.5, 17.0, 123.25], size=200)
        step = rng.integers(0, 4, size=200) * rng.choice([0.0, 1e-9, 1e-8], size=200)
        for doc, score in zip(docs, base + step, strict=True):
            run.append((str(topic), doc, float(score)))
        for doc in rng.choice(docs, size=60, replace=False):
            qrels.append((str(topic), str(doc), int(rng.integers(0, 4))))
        qrels.append(
            (str(topic), "d9999", 3)
        )  # (a top grade in every topic: pytrec_eval needs one)
    return (
        pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]),
        pd.DataFrame(run, columns=["query_id", "doc_id", "score"]),
    )


def test_the_generated_collection_collides_in_float32() -> None:
    _, run = _tied_collection(0)
    scores = run["score"].to_numpy()
    distinct64 = run.groupby("query_id")["score"].nunique().sum()
    distinct32 = pd.Series(scores.astype(np.float32)).groupby(run["query_id"]).nunique().sum()
    assert distinct32 < distinct64  # (else the test below proves nothing)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_equals_pytrec_eval_per_query_on_float32_collisions(seed: int) -> None:
    qrels, run = _tied_collection(seed)
    expected = _per_query("pytrec_eval", SHARED, qrels, run)
    got = _per_query("evalwh", SHARED, qrels, run)
    assert got.keys() == expected.keys()
    different = {
        key: (got[key], expected[key])
        for key in got
        if got[key] != pytest.approx(expected[key], abs=1e-12)
    }
    assert different == {}


def test_trec_eval_10_order_is_one_provider_away() -> None:
    """evalwh_trec_eval10 orders on the 64-bit scores: values differ from pytrec_eval's on
    these collisions and equal ``evalwh eval``'s (the direct path, trec_eval 10's order)."""
    from evalwh.measures.direct import evaluate_frames

    qrels, run = _tied_collection(0)
    measures = [AP, nDCG @ 10, P @ 5, RR]
    ten = _per_query("evalwh_trec_eval10", measures, qrels, run)
    nine = _per_query("pytrec_eval", measures, qrels, run)
    assert sum(ten[key] != pytest.approx(nine[key], abs=1e-12) for key in ten) > 0
    frame = evaluate_frames(
        qrels, {"run": run}, ["AP", "nDCG@10", "P@5", "RR"], per_query=True, averaging="trec_eval_c"
    )
    names = {"AP": "AP", "nDCG@10": "nDCG@10", "P@5": "P@5", "RR": "RR"}
    direct = {(r.query_id, names[r.measure]): r.value for r in frame.itertuples()}
    assert {key: pytest.approx(value, abs=1e-12) for key, value in direct.items()} == ten


def _trec_run(tag: str) -> pd.DataFrame:
    with gzip.open(TREC8 / "runs" / f"input.{tag}.gz", "rt") as handle:
        rows = [line.split() for line in handle]
    return pd.DataFrame(
        {
            "query_id": [r[0] for r in rows],
            "doc_id": [r[2] for r in rows],
            "score": [float(r[4]) for r in rows],
        }
    )


def _nested(frame: pd.DataFrame, column: str) -> dict[str, dict[str, object]]:
    """``{query_id: {doc_id: value}}`` of a qrels or run frame."""
    out: dict[str, dict[str, object]] = {}
    for query, doc, value in zip(frame["query_id"], frame["doc_id"], frame[column].tolist(), strict=True):
        out.setdefault(query, {})[doc] = value
    return out


def test_equals_pytrec_eval_per_query_on_trec8() -> None:
    """The TREC-8 runs where float32 reorders a list: every per-query value of pytrec_eval."""
    if not (TREC8 / "runs").is_dir():
        pytest.skip(f"{TREC8} is not there (CI checks out ../shared beside the repository)")
    qrels = pd.read_csv(
        TREC8 / "trec8.qrels",
        sep=" ",
        names=["query_id", "it", "doc_id", "relevance"],
        dtype={"query_id": str},
    )[["query_id", "doc_id", "relevance"]]
    measures = [m for m in SHARED if m not in (infAP, AP(rel=2))]
    # the reference is given the qrels and runs as the dicts pytrec_eval reads (ir_measures
    # converted the frames row by row for every run; the values are the same)
    judged = _nested(qrels, "relevance")
    differences = 0
    for tag in FLOAT32_RUNS:
        run = _trec_run(tag)
        expected = _per_query("pytrec_eval", measures, judged, _nested(run, "score"))
        got = _per_query("evalwh", measures, qrels, run)
        assert got.keys() == expected.keys(), tag
        assert {k: v for k, v in got.items() if v != pytest.approx(expected[k], abs=1e-12)} == {}, (
            tag
        )
        ten = _per_query("evalwh_trec_eval10", [AP, P @ 10], qrels, run)
        differences += sum(ten[k] != pytest.approx(got[k], abs=1e-12) for k in ten)
    assert differences > 0  # (trec_eval 10's order does change some of these values)


def _warnings(provider: str, measures: list, qrels: pd.DataFrame, run: pd.DataFrame) -> list[str]:
    import warnings

    from evalwh.ir_measures import Float32TiesWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ir_measures.providers.registry[provider].calc_aggregate(measures, qrels, run)
    return [str(w.message) for w in caught if issubclass(w.category, Float32TiesWarning)]


@pytest.mark.parametrize("provider", ["evalwh", "evalwh_trec_eval10"])
def test_the_warning_counts_the_values_the_other_order_changes(provider: str) -> None:
    """Issue #54, item 3 (provider): once per run, the per-topic values that differ at four
    decimals between the two orders, counted here from the two providers' own outputs."""
    qrels, run = _tied_collection(1)
    measures = [AP, P @ 10, nDCG @ 10, RR]
    nine = _per_query("evalwh", measures, qrels, run)
    ten = _per_query("evalwh_trec_eval10", measures, qrels, run)
    changed = [key for key in nine if f"{nine[key]:.4f}" != f"{ten[key]:.4f}"]
    names = ", ".join(m for m in ("AP", "P@10", "nDCG@10", "RR") if any(k[1] == m for k in changed))
    (message,) = _warnings(provider, measures, qrels, run)
    assert f": {len(changed)} per-topic values of {names} differ at four decimals" in message
    assert f"on {len({k[0] for k in changed})} topics" in message
    assert ("provider evalwh_trec_eval10" in message) == (provider == "evalwh")


def test_no_warning_without_float32_collisions() -> None:
    qrels, run = _tied_collection(2)
    run = run.assign(score=np.arange(len(run), dtype=np.float64))  # distinct in float32 as well
    assert _warnings("evalwh", [AP, P @ 10], qrels, run) == []
    if (TREC8 / "runs").is_dir():
        trec_qrels = pd.read_csv(
            TREC8 / "trec8.qrels",
            sep=" ",
            names=["query_id", "it", "doc_id", "relevance"],
            dtype={"query_id": str},
        )[["query_id", "doc_id", "relevance"]]
        assert _warnings("evalwh", [AP, P @ 10], trec_qrels, _trec_run("INQ601")) == []
        # Dm8TFbn: float32 swaps two documents, which changes no value at four decimals
        assert _warnings("evalwh", [AP, P @ 10], trec_qrels, _trec_run("Dm8TFbn")) == []


def _printed_changes() -> dict[str, int]:
    """TREC-8 runs of FLOAT32_RUNS whose means of AP, P@10 and nDCG@10 print differently
    (%.4f) in pytrec_eval (float32 order) and in trec_eval 10's own output (eval_all_trec)."""
    import pytrec_eval

    qrels = pd.read_csv(
        TREC8 / "trec8.qrels",
        sep=" ",
        names=["query_id", "it", "doc_id", "relevance"],
        dtype={"query_id": str},
    )
    judged = {
        q: dict(zip(g["doc_id"], g["relevance"].astype(int), strict=True))
        for q, g in qrels.groupby("query_id")
    }
    names = ("map", "P_10", "ndcg_cut_10")
    expected = {}
    for tag in FLOAT32_RUNS:
        run = _trec_run(tag)
        scored = {
            q: dict(zip(g["doc_id"], g["score"], strict=True)) for q, g in run.groupby("query_id")
        }
        values = pytrec_eval.RelevanceEvaluator(judged, set(names)).evaluate(scored)
        with gzip.open(TREC8 / "eval_all_trec" / f"eval.{tag}.gz", "rt") as handle:
            lines = [line.rstrip("\n").split("\t") for line in handle]
            kept = [f for f in lines if f[1] == "all" and f[0].strip() in names]
            ten = {f[0].strip(): float(f[2]) for f in kept}
        nine = {m: float(np.mean([v[m] for v in values.values()])) for m in names}
        changed = sum(f"{nine[m]:.4f}" != f"{ten[m]:.4f}" for m in names)
        if changed:
            expected[tag] = changed
    assert expected  # (else the tests below prove nothing: on TREC-8, uwmt8a0 changes)
    return expected


def _named(expected: dict[str, int]) -> str:
    return ", ".join(f"{t} ({n} value{'s' if n != 1 else ''})" for t, n in sorted(expected.items()))


def test_eval_note_names_the_runs_whose_printed_values_change(tmp_path: Path) -> None:
    """Issue #54, item 3 (warehouse): ``evalwh eval``'s note names the runs whose printed means
    of the measures shown change under float32 order, with how many values."""
    if not (TREC8 / "eval_all_trec").is_dir():
        pytest.skip(f"{TREC8} is not there (CI checks out ../shared beside the repository)")
    from evalwh.cli import app
    from typer.testing import CliRunner

    from evalwh import Warehouse

    expected = _printed_changes()
    db = tmp_path / "w.duckdb"
    with Warehouse(db) as wh:
        wh.ingest_qrels(TREC8 / "trec8.qrels", collection="trec8")
        wh.ingest_runs([TREC8 / "runs" / f"input.{t}.gz" for t in FLOAT32_RUNS], collection="trec8")
    result = CliRunner().invoke(
        app, ["eval", "--db", str(db), "-m", "AP", "-m", "P@10", "-m", "nDCG@10"]
    )
    assert result.exit_code == 0, result.output
    runs = "1 run prints" if len(expected) == 1 else f"{len(expected)} runs print"
    assert f"note: {runs} different values when scores are rounded to float32" in result.stderr
    others = 11 - len(expected)
    assert (
        f"TREC tables did): {_named(expected)}; the other {others} runs it reorders"
        in result.stderr
    )


def test_eval_qrels_note_names_the_same_runs() -> None:
    """Issue #54, item 3 (direct path): ``evalwh eval --qrels`` says the same of the same runs."""
    if not (TREC8 / "eval_all_trec").is_dir():
        pytest.skip(f"{TREC8} is not there (CI checks out ../shared beside the repository)")
    import os
    import subprocess
    import sys

    expected = _printed_changes()
    runs = [str(TREC8 / "runs" / f"input.{t}.gz") for t in FLOAT32_RUNS]
    measures = ["-m", "AP", "-m", "P@10", "-m", "nDCG@10"]
    env = {k: v for k, v in os.environ.items() if k != "EVALWH_NO_QUICK"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "evalwh",
            "eval",
            "--qrels",
            str(TREC8 / "trec8.qrels"),
            *runs,
            *measures,
        ],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    lead = "1 run prints" if len(expected) == 1 else f"{len(expected)} runs print"
    assert done.stderr == (
        f"note: {lead} different values when scores are rounded to float32 (as trec_eval 9 and "
        f"the published TREC tables did): {_named(expected)}; "
        "--float32-ties prints trec_eval 9's values\n"
    )
    quiet = subprocess.run(
        [
            sys.executable,
            "-m",
            "evalwh",
            "eval",
            "--qrels",
            str(TREC8 / "trec8.qrels"),
            runs[-1],
            *measures,
        ],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert quiet.stderr == ""  # (INQ601: no float32 collision)
