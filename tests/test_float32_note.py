"""The float32 note with a threshold (issue #54 item 3) on a generated collection with planted
float32 collisions: ``eval`` (warehouse, ``--qrels`` quick and direct paths), ``compare`` and
``report`` name exactly the runs whose printed values (four decimals) of the measures shown
change under trec_eval 9's float32 order, with how many; ``evalwh runs`` lists every run
float32 reorders (``float32_lists``).

The reference is pytrec_eval: it keeps scores as float32 (trec_eval 9's order), and given
scores that rank the documents as trec_eval 10 does (a double descending, then the document
id descending) it gives trec_eval 10's values.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from evalwh.cli import app
from typer.testing import CliRunner

from evalwh import Warehouse

pytrec_eval = pytest.importorskip("pytrec_eval")

runner = CliRunner(env={"COLUMNS": "200", "TERMINAL_WIDTH": "200"})
TOPICS = [str(t) for t in range(1, 7)]
DOCS = [f"d{i:02d}" for i in range(20)]


def _collection(folder: Path) -> tuple[Path, list[Path], dict, dict]:
    """qrels and four runs: ``flip`` (a relevant and a nonrelevant document collide in float32 at
    the top of topic 1), ``deep`` (collisions among relevant documents side by side: the order
    changes, no value does), ``none`` (no collision) and ``many`` (random collisions)."""
    rng = np.random.default_rng(54)
    qrels = {t: {d: int(rng.random() < 0.3) for d in DOCS} for t in TOPICS}
    for t in TOPICS:
        qrels[t]["d19"], qrels[t]["d00"] = 0, 1
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for name in ("flip", "deep", "none", "many"):
        runs[name] = {t: {d: float(rng.uniform(1, 100)) for d in DOCS} for t in TOPICS}
    # flip: d00 (relevant) 1e3 + 1e-5 above d19 (not) 1e3 as doubles; one float32: d19 first
    runs["flip"]["1"]["d00"], runs["flip"]["1"]["d19"] = 1000.00001, 1000.0
    # deep: two relevant documents trade places at the top: no value of a rank-based measure moves
    for t in TOPICS:
        rel = sorted(d for d in DOCS if qrels[t][d])[:2]
        runs["deep"][t][rel[0]], runs["deep"][t][rel[1]] = 2000.00001, 2000.0
    # many: scores on a coarse float32 grid with a little noise: many collisions, some that matter
    for t in TOPICS:
        for d in DOCS:
            runs["many"][t][d] = float(np.float32(round(rng.uniform(1, 4)))) + float(rng.integers(0, 3)) * 1e-9
    folder.mkdir(parents=True, exist_ok=True)
    qrels_path = folder / "qrels"
    qrels_path.write_text("".join(f"{t} 0 {d} {r}\n" for t in TOPICS for d, r in qrels[t].items()))
    paths = []
    for name, scores in runs.items():
        path = folder / name
        lines = []
        for t in TOPICS:
            ranked = sorted(scores[t].items(), key=lambda item: (-item[1], [-ord(c) for c in item[0]]))
            lines += [f"{t} Q0 {d} {i + 1} {s!r} {name}\n" for i, (d, s) in enumerate(ranked)]
        path.write_text("".join(lines))
        paths.append(path)
    return qrels_path, paths, qrels, runs


def _reference(qrels: dict, runs: dict, per_query: bool) -> dict[str, int]:
    """Per run, how many values of P@1 and AP print differently (%.4f) in the two orders."""
    out: dict[str, int] = {}
    for name, scores in runs.items():
        as_float32 = pytrec_eval.RelevanceEvaluator(qrels, {"P_1", "map"}).evaluate(scores)
        # trec_eval 10's order as scores that float32 keeps apart (rank-based)
        ranked = {
            t: {d: float(len(s) - i) for i, (d, _) in enumerate(sorted(s.items(), key=lambda x: (-x[1], [-ord(c) for c in x[0]])))}
            for t, s in scores.items()
        }
        as_given = pytrec_eval.RelevanceEvaluator(qrels, {"P_1", "map"}).evaluate(ranked)
        count = 0
        for key in ("P_1", "map"):
            a = [as_given[t][key] for t in TOPICS]
            b = [as_float32[t][key] for t in TOPICS]
            pairs = list(zip(a, b, strict=True)) if per_query else [(sum(a) / len(a), sum(b) / len(b))]
            count += sum(f"{x:.4f}" != f"{y:.4f}" for x, y in pairs)
        if count:
            out[name] = count
    return out


def _named(note: str) -> dict[str, int]:
    """The runs a note names, with their counts: ``flip (2 values), many (1 value)``."""
    import re

    names = note.split("did): ", 1)[1].split(";", 1)[0]
    return {m[0]: int(m[1]) for m in re.findall(r"(\S+) \((\d+) values?\)", names)}


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("f32")
    qrels_path, paths, qrels, runs = _collection(folder)
    db = folder / "w.duckdb"
    with Warehouse(db) as wh:
        wh.ingest_qrels(qrels_path, collection="gen")
        wh.ingest_runs(paths, collection="gen")
    return db, qrels_path, paths, qrels, runs


def _note(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if "rounded to float32" in line]
    assert len(lines) == 1, stderr
    return lines[0]


def test_the_planted_collisions_do_what_they_were_planted_for(collection):
    _, _, _, qrels, runs = collection
    means = _reference(qrels, runs, per_query=False)
    assert "flip" in means and "deep" not in means and "none" not in means
    with Warehouse.open_reader(collection[0]) as wh:
        frame = wh.runs("gen").set_index("run_id")["float32_lists"]
    assert frame["none"] == 0 and frame["flip"] == 1 and frame["deep"] == 6 and frame["many"] > 0


@pytest.mark.parametrize("per_query", [False, True])
def test_eval_on_the_warehouse_names_the_runs_whose_printed_values_change(collection, per_query):
    db, _, _, qrels, runs = collection
    expected = _reference(qrels, runs, per_query)
    args = ["eval", "-c", "gen", "--db", str(db), "-m", "P@1", "-m", "AP", *(["-q"] if per_query else [])]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    note = _note(result.stderr)
    assert _named(note) == expected
    others = 3 - len(expected)  # (flip, deep and many are reordered: float32_lists > 0)
    assert f"the other {others} run" in note and "evalwh runs lists every reordered run" in note


def test_compare_and_report_say_the_same(collection):
    db, _, _, qrels, runs = collection
    expected = _reference(qrels, runs, per_query=False)
    result = runner.invoke(app, ["compare", "flip", "deep", "none", "many", "-c", "gen", "--db", str(db), "-m", "P@1", "-m", "AP"])
    assert result.exit_code == 0, result.output
    assert _named(_note(result.stderr)) == expected
    # a comparison of runs float32 leaves alone, or that print the same, says nothing
    result = runner.invoke(app, ["compare", "deep", "none", "-c", "gen", "--db", str(db), "-m", "P@1", "-m", "AP"])
    assert result.exit_code == 0 and "float32" not in result.stderr

    from evalwh.present.report import ReportOptions, build_report, render_markdown

    with Warehouse.open_reader(db) as wh:
        report = build_report(wh, "gen", ReportOptions(figures=False, measures=("P@1", "AP")))
    assert dict(zip(report.ties["run_id"], report.ties["values"], strict=True)) == expected
    assert "different values when scores are rounded to float32" in render_markdown(report)


def test_eval_qrels_says_it_on_the_quick_and_the_direct_path(collection):
    _, qrels_path, paths, qrels, runs = collection
    expected = _reference(qrels, runs, per_query=True)
    args = ["eval", "--qrels", str(qrels_path), *map(str, paths), "-m", "P@1", "-m", "AP", "-q"]
    for no_quick in ("", "1"):
        env = {**os.environ, "EVALWH_NO_QUICK": no_quick}
        if not no_quick:
            env.pop("EVALWH_NO_QUICK")
        done = subprocess.run([sys.executable, "-m", "evalwh", *args], capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr
        note = _note(done.stderr)
        assert _named(note) == expected, no_quick
        assert "the other" not in note and "--float32-ties prints" in note
    # the direct path in this process (the CLI itself), and --float32-ties says nothing
    result = runner.invoke(app, args)
    assert result.exit_code == 0 and _named(_note(result.stderr)) == expected
    result = runner.invoke(app, [*args, "--float32-ties"])
    assert result.exit_code == 0 and "float32" not in result.stderr
