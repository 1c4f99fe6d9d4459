"""Excluded documents (methods §17; issue 55, item 1): every path against trec_eval on files filtered by hand.

A generated BEIR-shaped collection holds the three kinds of exclusion: qrels lines labelled
-100 (BRIGHT, ir_datasets), an exclusion file (``topic docid``) and documents whose id is
their topic's id (ArguAna, Quora). The reference is computed without evalwh's exclusions:
the run files are filtered here, line by line, the qrels written without the -100 lines,
and both given to pytrec_eval and to ``evalwh trec_eval`` (trec_eval's output byte for
byte, tests/test_trec_eval.py). Every evalwh path must give the same values on the
unfiltered files with the exclusions asked for.
"""

from __future__ import annotations

import io
import random
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
import pytrec_eval

import evalwh
from evalwh.errors import IngestError, ReplaceError
from evalwh.measures import trec_eval as te
from evalwh.measures.direct import evaluate_files
from evalwh.warehouse import Warehouse

MEASURES = {  # pytrec_eval's name -> evalwh's
    "map": "AP",
    "P_5": "P@5",
    "P_10": "P@10",
    "ndcg_cut_10": "nDCG@10",
    "recip_rank": "RR",
    "bpref": "bpref",
    "Rprec": "Rprec",
    "num_ret": "NumRet",
    "num_rel_ret": "NumRelRet",
}
RUNS = [f"sys{i}" for i in range(6)]


def _generate(folder: Path) -> dict[str, object]:
    """The collection's files, and the excluded pairs as the reference sees them."""
    rng = random.Random(55)
    topics = [f"test-q{i}" for i in (2, 7, 11, 14, 31, 144)]
    corpus = [f"doc{i}" for i in range(80)] + topics  # ArguAna: the queries are documents too
    qrels_lines, labelled = [], set()
    for topic in topics:
        judged = rng.sample(corpus[:80], 30)
        for doc in judged[:26]:
            qrels_lines.append(f"{topic} 0 {doc} {rng.choice([0, 0, 0, 1, 2])}")
        for doc in judged[26:]:
            qrels_lines.append(f"{topic} 0 {doc} -100")
            labelled.add((topic, doc))
    rng.shuffle(qrels_lines)
    (folder / "qrels").write_text("\n".join(qrels_lines) + "\n")
    listed = set()
    for topic in topics:
        for doc in rng.sample(corpus[:80], 3):
            if (topic, doc) not in labelled:
                listed.add((topic, doc))
    # one pair of the file is also judged relevant: a file excludes from runs, it leaves the qrels
    relevant = next(line.split() for line in qrels_lines if line.endswith(" 2"))
    listed.add((relevant[0], relevant[2]))
    # the last topic: sys5 retrieves only excluded documents for it (its list empties)
    empty = [(topics[-1], doc) for doc in corpus[70:76]]
    listed.update(empty)
    lines = ["# excluded documents, BRIGHT-style"] + [f"{t}\t{d}" for t, d in sorted(listed)]
    (folder / "excluded.txt").write_text("\n".join(lines) + "\n")
    for name in RUNS:
        out = []
        for topic in topics:
            if name == "sys5" and topic == topics[-1]:
                chosen = [doc for _, doc in empty]
            else:
                chosen = rng.sample(corpus, 50)
                if rng.random() < 0.7 and topic not in chosen:
                    chosen[0] = topic  # the query itself, retrieved first (identical ids)
            scores = sorted((round(rng.random() * 20, 1) for _ in chosen), reverse=True)
            scores[0] = scores[1] = max(scores[:2])  # a tie at the top
            for rank, (doc, score) in enumerate(zip(chosen, scores), start=1):
                out.append(f"{topic} Q0 {doc} {rank} {score} {name}")
        rng.shuffle(out)  # the order of lines is not the ranking
        (folder / name).write_text("\n".join(out) + "\n")
    return {"labelled": labelled, "listed": listed}


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """The generated files, and the reference's filtered copies (in ``filtered/``)."""
    return make_collection(tmp_path_factory.mktemp("beir"))


def make_collection(folder: Path) -> dict[str, object]:
    """The generated files in ``folder``, and the reference's filtered copies (in ``filtered/``)."""
    made = _generate(folder)
    excluded = made["labelled"] | made["listed"]  # type: ignore[operator]
    ref = folder / "filtered"
    ref.mkdir()
    kept = [line for line in (folder / "qrels").read_text().splitlines() if line.split()[3] != "-100"]
    (ref / "qrels").write_text("\n".join(kept) + "\n")
    lost: Counter[tuple[str, str]] = Counter()
    for name in RUNS:
        out = []
        for line in (folder / name).read_text().splitlines():
            topic, _, doc, *_ = line.split()
            if (topic, doc) in excluded or doc == topic:
                lost[(name, topic)] += 1
                continue
            out.append(line)
        (ref / name).write_text("\n".join(out) + "\n")
    return {"folder": folder, "ref": ref, "lost": lost, **made}


def _pytrec(ref: Path, runs: list[str]) -> pd.DataFrame:
    """pytrec_eval's per-topic values on the filtered files: run_id, query_id, measure, value."""
    qrels: dict[str, dict[str, int]] = {}
    for line in (ref / "qrels").read_text().splitlines():
        topic, _, doc, grade = line.split()
        qrels.setdefault(topic, {})[doc] = int(grade)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES))
    rows = []
    for name in runs:
        run: dict[str, dict[str, float]] = {}
        for line in (ref / name).read_text().splitlines():
            topic, _, doc, _, score, _ = line.split()
            run.setdefault(topic, {})[doc] = float(score)
        for topic, values in evaluator.evaluate(run).items():
            rows += [(name, topic, MEASURES[m], float(v)) for m, v in values.items()]
    return pd.DataFrame(rows, columns=["run_id", "query_id", "measure", "value"])


def _same(frame: pd.DataFrame, reference: pd.DataFrame) -> None:
    """Every reference value is evalwh's (to 1e-12); a topic the reference lacks scores 0 or is absent."""
    got = frame.set_index(["run_id", "query_id", "measure"])["value"]
    want = reference.set_index(["run_id", "query_id", "measure"])["value"]
    joined = pd.concat([want.rename("want"), got.rename("got")], axis=1, join="inner")
    assert len(joined) == len(want), "evalwh lacks values the reference has"
    assert (joined["want"] - joined["got"]).abs().max() < 1e-12, joined[(joined["want"] - joined["got"]).abs() > 1e-12]


def _warehouse(collection: dict[str, object]) -> Warehouse:
    """A warehouse of the collection: three runs before the exclusions are added, three after."""
    folder: Path = collection["folder"]  # type: ignore[assignment]
    wh = Warehouse(":memory:")
    result = wh.ingest_qrels(folder / "qrels", collection="beir")
    assert result.note is not None and "24 lines labelled -100" in result.note
    wh.ingest_runs([folder / name for name in RUNS[:3]], collection="beir")
    done = wh.add_exclusions(folder / "excluded.txt", collection="beir", name="excluded.txt")
    assert done["status"] == "added" and done["runs"] == RUNS[:3]
    wh.exclude_identical_ids(collection="beir")
    wh.ingest_runs([folder / name for name in RUNS[3:]], collection="beir")
    return wh


def test_warehouse_path_equals_trec_eval_on_files_filtered_by_hand(collection: dict[str, object]) -> None:
    reference = _pytrec(collection["ref"], RUNS)  # type: ignore[arg-type]
    with _warehouse(collection) as wh:
        frame = wh.evaluate(list(MEASURES.values()), collection="beir", per_query=True)
        _same(frame, reference)
        # the emptied list: a topic the run did not return (scores 0 in the default averaging)
        emptied = frame[(frame.run_id == "sys5") & (frame.query_id == "test-q144")]
        assert set(emptied["value"]) == {0.0}
        # the -100 pairs are not judgments any more
        ((labelled,),) = wh.con.execute("SELECT count(*) FROM qrels WHERE relevance < 0").fetchall()
        assert labelled == 0


def test_losses_are_what_the_hand_filter_removed(collection: dict[str, object]) -> None:
    lost: Counter[tuple[str, str]] = collection["lost"]  # type: ignore[assignment]
    with _warehouse(collection) as wh:
        per_run = wh.exclusion_losses(collection="beir")
        per_topic = wh.exclusion_losses(collection="beir", per_topic=True)
        sources = wh.exclusion_sources(collection="beir")
    expected = Counter()
    for (name, _), count in lost.items():
        expected[name] += count
    assert dict(zip(per_run["run_id"], per_run["removed"])) == {name: expected[name] for name in RUNS}
    assert {(r, q): n for r, q, n in zip(per_topic["run_id"], per_topic["query_id"], per_topic["removed"])} == dict(lost)
    assert per_topic.loc[(per_topic.run_id == "sys5") & (per_topic.query_id == "test-q144"), "lines"].tolist() == [0]
    assert sorted(zip(sources["origin"], sources["source"], sources["pairs"])) == [
        ("file", "excluded.txt", len(collection["listed"])),  # type: ignore[arg-type]
        ("qrels", "default", 24),
        ("rule", "identical_ids", 0),
    ]


def test_direct_paths_equal_the_reference(collection: dict[str, object]) -> None:
    folder: Path = collection["folder"]  # type: ignore[assignment]
    reference = _pytrec(collection["ref"], RUNS)  # type: ignore[arg-type]
    told: list[str] = []
    frame = evaluate_files(
        folder / "qrels", [folder / n for n in RUNS], list(MEASURES.values()), per_query=True,
        exclusions=[folder / "excluded.txt"], identical_ids=True, said=told.append,
    )  # fmt: skip
    _same(frame, reference)
    assert told[0].endswith("24 lines labelled -100 are excluded documents, not grades: they left the set for "
                            "the collection's exclusions (methods §17)")
    assert len(told) == 1 + len(RUNS)  # and one line per run that lost documents
    # the front door, with run DataFrames (the frames' ingest)
    frames = {n: pd.read_csv(folder / n, sep=" ", header=None, names=["query_id", "q0", "doc_id", "rank", "score", "t"])
              for n in RUNS}  # fmt: skip
    frames = {n: f[["query_id", "doc_id", "score"]] for n, f in frames.items()}
    frame = evalwh.evaluate(folder / "qrels", frames, list(MEASURES.values()), per_query=True,
                            exclusions=[folder / "excluded.txt"], identical_ids=True)  # fmt: skip
    _same(frame, reference)


def test_compare_means_equal_the_reference(collection: dict[str, object]) -> None:
    folder: Path = collection["folder"]  # type: ignore[assignment]
    reference = _pytrec(collection["ref"], RUNS[:3])  # type: ignore[arg-type]
    ap = reference[reference.measure == "AP"].groupby("run_id")["value"].sum() / 6  # every topic has relevant docs
    result = evalwh.compare(folder / "qrels", [folder / n for n in RUNS[:3]], "AP",
                            exclusions=[folder / "excluded.txt"], identical_ids=True)  # fmt: skip
    means = dict(zip(result.runs["run_id"], result.runs["mean"]))
    for name in RUNS[:3]:
        assert means[name] == pytest.approx(ap[name], abs=1e-12)
    with _warehouse(collection) as wh:
        stored = wh.compare("AP", RUNS[:3], collection="beir")
    assert dict(zip(stored.runs["run_id"], stored.runs["mean"])) == pytest.approx(means, abs=1e-12)


def _trec(argv: list[str]) -> str:
    out = io.StringIO()
    assert te.run(argv, out.write) == 0
    return out.getvalue()


def test_trec_eval_front_end_byte_identical_unless_asked(collection: dict[str, object], tmp_path: Path) -> None:
    folder: Path = collection["folder"]  # type: ignore[assignment]
    ref: Path = collection["ref"]  # type: ignore[assignment]
    flags = ["-q", "-c", "-m", "all_trec"]
    asked = _trec([*flags, "--exclude", str(folder / "excluded.txt"), "--exclude-identical-ids", "--exclude-labelled",
                   str(folder / "qrels"), *(str(folder / n) for n in RUNS)])  # fmt: skip
    filtered = _trec([*flags, str(ref / "qrels"), *(str(ref / n) for n in RUNS)])
    assert asked == filtered
    # not asked: a -100 line is what trec_eval reads, a negative grade (any negative alike)
    negative = tmp_path / "qrels"
    negative.write_text((folder / "qrels").read_text().replace(" -100\n", " -1\n"))
    plain = _trec([*flags, str(folder / "qrels"), str(folder / "sys0")])
    assert plain == _trec([*flags, str(negative), str(folder / "sys0")])
    assert plain != _trec([*flags, str(ref / "qrels"), str(ref / "sys0")])


def test_export_import_carries_the_exclusions(collection: dict[str, object], tmp_path: Path, snapshot) -> None:
    folder: Path = collection["folder"]  # type: ignore[assignment]
    tables = ("excluded_documents", "exclusion_sources", "run_exclusions")
    with _warehouse(collection) as wh:
        before = {t: wh.con.execute(f"SELECT * EXCLUDE (created_at) FROM {t} ORDER BY ALL").fetchall()
                  if t == "exclusion_sources" else wh.con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall()
                  for t in tables}  # fmt: skip
        values = wh.evaluate(list(MEASURES.values()), collection="beir", per_query=True)
        wh.export(tmp_path / "out")
    with Warehouse(":memory:") as other:
        other.import_export(tmp_path / "out")
        after = {t: other.con.execute(f"SELECT * EXCLUDE (created_at) FROM {t} ORDER BY ALL").fetchall()
                 if t == "exclusion_sources" else other.con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall()
                 for t in tables}  # fmt: skip
        assert after == before and all(after.values())
        again = other.evaluate(list(MEASURES.values()), collection="beir", per_query=True)
        pd.testing.assert_frame_equal(again, values)
        # the imported losses give their rows back: the file removed, only -100 and the rule hold
        other.remove_exclusions("excluded.txt", collection="beir")
        labelled: set[tuple[str, str]] = collection["labelled"]  # type: ignore[assignment]
        partial = tmp_path / "partial"
        partial.mkdir()
        (partial / "qrels").write_text((collection["ref"] / "qrels").read_text())  # type: ignore[operator]
        for name in RUNS:
            lines = [line for line in (folder / name).read_text().splitlines()
                     if (line.split()[0], line.split()[2]) not in labelled and line.split()[0] != line.split()[2]]
            (partial / name).write_text("\n".join(lines) + "\n")
        _same(other.evaluate(list(MEASURES.values()), collection="beir", per_query=True), _pytrec(partial, RUNS))


def test_rule_off_and_qrels_replaced_give_the_rows_back(collection: dict[str, object], tmp_path: Path) -> None:
    folder: Path = collection["folder"]  # type: ignore[assignment]
    with _warehouse(collection) as wh:
        wh.exclude_identical_ids(False, collection="beir")
        wh.remove_exclusions("excluded.txt", collection="beir")
        plain = tmp_path / "qrels"
        plain.write_text((collection["ref"] / "qrels").read_text())  # type: ignore[operator]
        wh.ingest_qrels(plain, collection="beir", replace=True)  # the same grades, no -100 lines
        assert wh.exclusion_losses(collection="beir")["removed"].sum() == 0
        assert wh.con.execute("SELECT count(*) FROM excluded_documents").fetchall() == [(0,)]
        frame = wh.evaluate(list(MEASURES.values()), collection="beir", per_query=True)
        # every run as given: the ranks of the stored rows are those of an ingest without exclusions
        ranks = wh.con.execute("SELECT run_id, query_id, doc_id, rank, rank_given FROM run_results ORDER BY ALL").fetchall()
    with Warehouse(":memory:") as fresh:
        fresh.ingest_qrels(plain, collection="beir")
        fresh.ingest_runs([folder / n for n in RUNS], collection="beir")
        pd.testing.assert_frame_equal(frame, fresh.evaluate(list(MEASURES.values()), collection="beir", per_query=True))
        assert ranks == fresh.con.execute(
            "SELECT run_id, query_id, doc_id, rank, rank_given FROM run_results ORDER BY ALL"
        ).fetchall()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1 d1\n1 d2 x\n", "excluded.txt:2: expected 2 fields (topic docid), found 3"),
        ("1 d1\n# c\n1 d1\n", "excluded.txt:3: document 'd1' is excluded twice for topic '1' (first on line 1)"),
        ("# nothing\n\n", "excluded.txt: the file holds no (topic, document) pair"),
        ("1 d\x01\n", "excluded.txt:1: the line holds the control character '\\x01'"),
    ],
)
def test_bad_exclusion_files_leave_the_warehouse_as_it_was(
    collection: dict[str, object], tmp_path: Path, snapshot, text: str, message: str
) -> None:
    bad = tmp_path / "excluded.txt"
    bad.write_text(text)
    with _warehouse(collection) as wh:
        before = snapshot(wh)
        with pytest.raises(IngestError) as error:
            wh.add_exclusions(bad, collection="beir")
        assert str(error.value).endswith(message)
        assert snapshot(wh) == before


def test_a_stored_file_of_that_name_with_other_pairs_needs_replace(collection: dict[str, object], tmp_path: Path) -> None:
    other = tmp_path / "excluded.txt"
    other.write_text("test-q2 doc1\n")
    with _warehouse(collection) as wh:
        with pytest.raises(ReplaceError, match="already stored with other pairs"):
            wh.add_exclusions(other, collection="beir", name="excluded.txt")
        assert wh.add_exclusions(other, collection="beir", name="excluded.txt", replace=True)["status"] == "replaced"


def test_the_commands_store_apply_and_report(collection: dict[str, object], tmp_path: Path) -> None:
    from evalwh.cli import app
    from typer.testing import CliRunner

    folder: Path = collection["folder"]  # type: ignore[assignment]
    db = tmp_path / "wh.duckdb"
    lost: Counter[tuple[str, str]] = collection["lost"]  # type: ignore[assignment]

    def run(*args: str) -> object:
        result = CliRunner().invoke(app, ["--db", str(db), *args], env={"COLUMNS": "200", "EVALWH_DB": None})
        assert result.exit_code == 0, result.output
        return result

    said = run("ingest", "qrels", str(folder / "qrels"), "-c", "beir").stdout
    assert "24 lines labelled -100 are excluded documents, not grades" in said
    run("ingest", "runs", *(str(folder / n) for n in RUNS), "-c", "beir")
    said = run("exclusions", "add", str(folder / "excluded.txt"), "-c", "beir").stdout
    assert f"added ({len(collection['listed']):,} pairs); 6 run(s) filtered again" in said  # type: ignore[arg-type]
    run("exclusions", "identical-ids", "-c", "beir")
    table = run("exclusions", "losses", "-c", "beir", "-f", "csv").stdout
    frame = pd.read_csv(io.StringIO(table))
    assert frame["removed"].sum() == sum(lost.values())
    by_topic = pd.read_csv(io.StringIO(run("exclusions", "losses", "-c", "beir", "--per-topic", "-f", "csv").stdout))
    assert len(by_topic) == len(lost)
    stored = pd.read_csv(io.StringIO(run("eval", "-c", "beir", "-m", "AP", "-f", "csv").stdout))
    # the direct path: the same numbers, the losses on standard error
    direct = run("eval", "--qrels", str(folder / "qrels"), *(str(folder / n) for n in RUNS), "-m", "AP", "-f", "csv",
                 "--exclude", str(folder / "excluded.txt"), "--exclude-identical-ids")  # fmt: skip
    assert pd.read_csv(io.StringIO(direct.stdout))["value"].tolist() == pytest.approx(stored["value"].tolist(), abs=1e-12)
    assert "note: exclusions removed" in direct.stderr and direct.stderr.count("\n") == 1 + len(RUNS)


def test_the_report_says_what_was_excluded(collection: dict[str, object], tmp_path: Path) -> None:
    lost: Counter[tuple[str, str]] = collection["lost"]  # type: ignore[assignment]
    with _warehouse(collection) as wh:
        text = wh.report(tmp_path / "report.md", collection="beir", format="md", bounds=False)
    line = next(line for line in text.splitlines() if "Excluded documents" in line)
    assert f"{len(collection['listed']):,} pairs from file excluded.txt" in line  # type: ignore[arg-type]
    assert "24 pairs from -100 lines of qrels set default" in line and "the rule identical_ids" in line
    assert f"Removed from the runs before ranking: {sum(lost.values()):,} lines of 6 of 6 runs" in line


def test_an_import_refuses_losses_of_a_run_it_does_not_hold(collection: dict[str, object], tmp_path: Path, snapshot) -> None:
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from evalwh.store import transfer

    with _warehouse(collection) as wh:
        wh.export(tmp_path / "out")
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    entry = manifest["tables"]["run_exclusions"]["files"][0]
    path = tmp_path / "out" / entry["path"]
    table = pq.read_table(path)
    runs = table.column("run_id").to_pylist()
    runs[1] = "sys9"
    pq.write_table(table.set_column(table.schema.get_field_index("run_id"), "run_id", pa.array(runs)), path)
    entry["sha256"] = transfer._sha256(path)
    (tmp_path / "out" / "manifest.json").write_text(json.dumps(manifest))
    with Warehouse(":memory:") as other:
        before = snapshot(other)
        with pytest.raises(IngestError, match=r":2: run 'sys9' is not among the runs of its collection"):
            other.import_export(tmp_path / "out")
        assert snapshot(other) == before


def test_the_ir_measures_provider_reads_minus_100_as_its_default_provider_does() -> None:
    """ir_measures' default provider (pytrec_eval) reads -100 as a grade; evalwh's provider too."""
    import ir_measures
    from ir_measures import AP, P

    from evalwh.ir_measures import EvalwhProvider

    qrels = pd.DataFrame({"query_id": ["1"] * 4, "doc_id": ["a", "b", "c", "d"], "relevance": [1, -100, 1, 0]})
    run = pd.DataFrame({"query_id": ["1"] * 4, "doc_id": ["b", "a", "d", "c"], "score": [4.0, 3.0, 2.0, 1.0]})
    default = ir_measures.calc_aggregate([AP, P @ 2], qrels, run)
    ours = EvalwhProvider().evaluator([AP, P @ 2], qrels).calc_aggregate(run)
    assert ours == pytest.approx(default, abs=1e-12)
    # what the exclusion would give instead: b leaves the ranking, a and d move up
    excluded = evalwh.evaluate(qrels, {"r": run}, ["AP", "P@2"])
    assert excluded["value"].tolist() == pytest.approx([(1 / 1 + 2 / 3) / 2, 0.5], abs=1e-12)


def test_sources_added_and_removed_in_turn_leave_the_runs_a_hand_filter_gives(
    collection: dict[str, object], tmp_path: Path
) -> None:
    """Two files added, then the first removed: the stored lines (scores, ranks closed up, the
    rank column as given) are those of the run files filtered by the second file alone."""
    folder: Path = collection["folder"]  # type: ignore[assignment]
    listed = sorted(collection["listed"])  # type: ignore[arg-type]
    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    first.write_text("".join(f"{t} {d}\n" for t, d in listed[::2]))
    second.write_text("".join(f"{t} {d}\n" for t, d in listed[1::2]))
    kept = set(listed[1::2])
    plain = tmp_path / "qrels"
    plain.write_text((collection["ref"] / "qrels").read_text())  # type: ignore[operator]
    query = "SELECT run_id, query_id, doc_id, score, rank, rank_given FROM run_results ORDER BY ALL"
    with Warehouse(":memory:") as wh:
        wh.ingest_qrels(plain, collection="beir")
        wh.ingest_runs([folder / n for n in RUNS[:3]], collection="beir")
        wh.add_exclusions(first, collection="beir", name="first")
        wh.add_exclusions(second, collection="beir", name="second")
        wh.ingest_runs([folder / n for n in RUNS[3:]], collection="beir")
        wh.remove_exclusions("first", collection="beir")
        stored = wh.con.execute(query).fetchall()
        values = wh.evaluate(list(MEASURES.values()), collection="beir", per_query=True)
    hand = tmp_path / "hand"
    hand.mkdir()
    for name in RUNS:
        lines = [line for line in (folder / name).read_text().splitlines()
                 if (line.split()[0], line.split()[2]) not in kept]
        (hand / name).write_text("\n".join(lines) + "\n")
    with Warehouse(":memory:") as fresh:
        fresh.ingest_qrels(plain, collection="beir")
        fresh.ingest_runs([hand / n for n in RUNS], collection="beir")
        assert stored == fresh.con.execute(query).fetchall()
        pd.testing.assert_frame_equal(values, fresh.evaluate(list(MEASURES.values()), collection="beir", per_query=True))


def test_a_set_stored_with_minus_100_grades_moves_them_on_replace(collection: dict[str, object]) -> None:
    """A warehouse whose set kept -100 as grades (stored before, or without exclusion labels):
    the same file is not 'unchanged'; --replace moves the lines and filters the runs."""
    from evalwh.store.ingest import ingest_qrels

    folder: Path = collection["folder"]  # type: ignore[assignment]
    with Warehouse(":memory:") as wh:
        with wh.transaction():
            ingest_qrels(wh, folder / "qrels", collection="beir", exclusion_labels=False)
        wh.ingest_runs([folder / n for n in RUNS], collection="beir")
        with pytest.raises(ReplaceError, match="holds its 24 lines labelled -100 as grades .* use --replace"):
            wh.ingest_qrels(folder / "qrels", collection="beir")
        assert wh.ingest_qrels(folder / "qrels", collection="beir", replace=True).status == "replaced"
        assert wh.exclusion_sources(collection="beir")["pairs"].tolist() == [24]
        labelled: set[tuple[str, str]] = collection["labelled"]  # type: ignore[assignment]
        partial = Path(str(folder) + "-labelled")
        partial.mkdir(exist_ok=True)
        (partial / "qrels").write_text((collection["ref"] / "qrels").read_text())  # type: ignore[operator]
        for name in RUNS:
            lines = [line for line in (folder / name).read_text().splitlines()
                     if (line.split()[0], line.split()[2]) not in labelled]
            (partial / name).write_text("\n".join(lines) + "\n")
        _same(wh.evaluate(list(MEASURES.values()), collection="beir", per_query=True), _pytrec(partial, RUNS))
        assert wh.ingest_qrels(folder / "qrels", collection="beir").status == "unchanged"


def test_compare_with_qrels_says_the_losses(collection: dict[str, object], tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from evalwh.cli import app

    folder: Path = collection["folder"]  # type: ignore[assignment]
    result = CliRunner().invoke(
        app,
        ["--db", str(tmp_path / "none.duckdb"), "compare", "--qrels", str(folder / "qrels"),
         *(str(folder / n) for n in RUNS[:2]), "-m", "AP", "--exclude", str(folder / "excluded.txt"),
         "--exclude-identical-ids"],
        env={"COLUMNS": "200", "EVALWH_DB": None},
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lost: Counter[tuple[str, str]] = collection["lost"]  # type: ignore[assignment]
    for name in RUNS[:2]:
        removed = sum(n for (run, _), n in lost.items() if run == name)
        assert f"note: exclusions removed {removed} documents from run {name} (" in result.stderr
    assert not (tmp_path / "none.duckdb").exists()


def test_remove_names_what_it_cannot_remove(collection: dict[str, object]) -> None:
    from evalwh.errors import EvalWhError

    with _warehouse(collection) as wh:
        with pytest.raises(EvalWhError, match="exclusions of qrels set 'default' are its lines labelled -100"):
            wh.remove_exclusions("default", collection="beir")
        with pytest.raises(EvalWhError, match=r"no exclusion file or rule named 'nope' \(it has: file excluded.txt, "
                                               r"qrels default, rule identical_ids\)"):
            wh.remove_exclusions("nope", collection="beir")


def test_random_lists_filtered_and_restored_rank_as_a_fresh_ingest(tmp_path: Path) -> None:
    """Dense exclusions on short lists with tied scores: two files added, the first removed; the
    ranks are those a fresh ingest of the run without the second file's pairs gives."""
    rng = random.Random(3)
    qrels = pd.DataFrame({"query_id": ["1"] * 5 + ["2"] * 5, "doc_id": [f"d{i}" for i in range(5)] * 2,
                          "relevance": [1, 0, 2, 0, 1] * 2})  # fmt: skip
    query = "SELECT query_id, doc_id, rank FROM run_results ORDER BY ALL"
    for trial in range(12):
        rows = [(t, f"d{rng.randint(0, 40)}", float(rng.randint(0, 5))) for t in "12" for _ in range(rng.randint(1, 25))]
        run = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]).drop_duplicates(["query_id", "doc_id"])
        first = {(t, f"d{i}") for t in "12" for i in range(41) if rng.random() < 0.4} or {("1", "zz")}
        second = {(t, f"d{i}") for t in "12" for i in range(41) if rng.random() < 0.3} or {("1", "zz")}
        for name, pairs in (("a", first), ("b", second)):
            (tmp_path / f"{trial}{name}").write_text("".join(f"{t} {d}\n" for t, d in sorted(pairs)))
        with Warehouse(":memory:") as wh:
            wh.ingest_qrels(qrels, collection="c")
            wh.ingest_runs(run, collection="c", run_id="r")
            wh.add_exclusions(tmp_path / f"{trial}a", collection="c", name="a")
            wh.add_exclusions(tmp_path / f"{trial}b", collection="c", name="b")
            wh.remove_exclusions("a", collection="c")
            got = wh.con.execute(query).fetchall()
        kept = run[[(t, d) not in second for t, d in zip(run.query_id, run.doc_id, strict=True)]]
        with Warehouse(":memory:") as wh:
            wh.ingest_qrels(qrels, collection="c")
            if len(kept):
                wh.ingest_runs(kept, collection="c", run_id="r")
            assert got == wh.con.execute(query).fetchall(), trial
