"""Provenance of qrels sets (issue #26, part 1): who made the labels, JSON-lines judgment records.

``evalwh ingest qrels FILE... --source human|llm|inferred [--judge] [--model] [--prompt]
[--round]`` and ``evalwh qrels``, on the LLMJudge label sets (33 LLM sets and NIST's over the
same 4,423 pairs) and the TREC-COVID qrels of ../shared/data, and on small files written here.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
from collections import Counter
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from small_collection import fill
from typer.testing import CliRunner

from evalwh import sql
from evalwh.cli import app
from evalwh.errors import EvalWhError, IngestError, SchemaError
from evalwh.io.judgments import is_jsonl, parse_judgments
from evalwh.methods.experiments.reduced import store_reduced_qrels
from evalwh.warehouse import Warehouse

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
LLMJUDGE = DATA / "llmjudge"
ANSERINI = DATA / "anserini_qrels"
QRELS = "401 0 d1 1\n401 0 d2 0\n402 0 d1 2\n"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner(env={"COLUMNS": "250", "TERMINAL_WIDTH": "250", "EVALWH_DB": None})


def invoke(runner: CliRunner, *args: object):
    return runner.invoke(app, [str(a) for a in args])


def jsonl(path: Path, records: list[dict]) -> Path:
    text = "".join(json.dumps(r) + "\n" for r in records)
    path.write_bytes(gzip.compress(text.encode()) if path.name.endswith(".gz") else text.encode())
    return path


def file_counts(path: Path) -> tuple[int, int, int]:
    """Topics, judged pairs (grade >= 0) and relevant pairs (grade >= 1) of a TREC qrels file, in Python."""
    rows = [line.split() for line in path.read_text().splitlines() if line.strip()]
    assert len({(r[0], r[2]) for r in rows}) == len(rows)  # no pair twice
    return (
        len({r[0] for r in rows}),
        sum(float(r[3]) >= 0 for r in rows),
        sum(float(r[3]) >= 1 for r in rows),
    )


# -- the LLMJudge label sets --------------------------------------------------------------

needs_llmjudge = pytest.mark.skipif(not LLMJUDGE.exists(), reason="../shared/data/llmjudge is not there")


@needs_llmjudge
def test_llmjudge_33_llm_sets_and_the_human_one(runner, tmp_path):
    db = tmp_path / "w.duckdb"
    judges = sorted((LLMJUDGE / "judges").glob("*.txt"))
    assert len(judges) == 33
    result = invoke(runner, "ingest", "qrels", *judges, "-c", "llmjudge", "--source", "llm", "--db", db)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "33 of 33 qrels sets ingested or replaced, 0 unchanged"
    human = LLMJUDGE / "human.test.qrels"
    result = invoke(
        runner, "ingest", "qrels", human, "-c", "llmjudge", "--qrels-id", "human", "--judge", "NIST", "--db", db
    )
    assert (result.exit_code, result.stdout) == (0, f"qrels 'human' from {human}: ingested (4,423 lines)\n")

    result = invoke(runner, "qrels", "-c", "llmjudge", "--db", db, "--format", "csv")
    assert result.exit_code == 0, result.output
    listed = pd.read_csv(pd.io.common.StringIO(result.stdout), dtype={"round": "Int64"})
    assert list(listed.columns) == [
        "qrels_id", "source", "judge", "model", "prompt_sha256", "round",
        "topics", "pairs", "relevant", "file", "created_at",
    ]  # fmt: skip
    listed = listed.set_index("qrels_id")
    assert sorted(listed.index) == sorted([p.stem for p in judges] + ["human"])
    for path in [*judges, human]:
        name = "human" if path == human else path.stem
        row = listed.loc[name]
        assert (row["topics"], row["pairs"], row["relevant"]) == file_counts(path), name
        assert row["file"] == str(path)
        if path == human:
            assert (row["source"], row["judge"]) == ("human", "NIST")
        else:
            assert row["source"] == "llm" and pd.isna(row["judge"])
        assert pd.isna(row["model"]) and pd.isna(row["prompt_sha256"]) and pd.isna(row["round"])
    # every label set covers exactly the 4,423 human-labelled pairs of the 25 test topics
    assert set(listed["pairs"]) == {4423} and set(listed["topics"]) == {25}

    # the same command again changes nothing
    again = invoke(runner, "ingest", "qrels", *judges, "-c", "llmjudge", "--source", "llm", "--db", db)
    assert again.stdout.splitlines()[-1] == "0 of 33 qrels sets ingested or replaced, 33 unchanged"


@needs_llmjudge
def test_a_prompt_is_stored_once_by_its_sha256(tmp_path):
    prompt = LLMJUDGE / "prompts" / "william-umbrela1.txt"  # (the prompt of willia-umbrela1, PROVENANCE.md)
    text = prompt.read_bytes().decode("utf-8").removeprefix("\ufeff")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    with Warehouse(tmp_path / "w.duckdb") as wh:
        results = wh.ingest_qrels(
            [LLMJUDGE / "judges" / "willia-umbrela1.txt", LLMJUDGE / "judges" / "willia-umbrela2.txt"],
            collection="llmjudge", source="llm", judge="willia", model="gpt-4o", prompt=prompt,
        )  # fmt: skip
        assert [(r.name, r.status, r.lines) for r in results] == [
            ("willia-umbrela1", "ingested", 4423),
            ("willia-umbrela2", "ingested", 4423),
        ]
        sets = wh.qrels_sets("llmjudge")
        assert sets[["qrels_id", "source", "judge", "model", "prompt_sha256"]].values.tolist() == [
            ["willia-umbrela1", "llm", "willia", "gpt-4o", digest],
            ["willia-umbrela2", "llm", "willia", "gpt-4o", digest],
        ]
        assert wh.query("SELECT prompt_sha256, prompt, source_file FROM judgment_prompts").values.tolist() == [
            [digest, text, str(prompt)]
        ]
        # the same labels with another provenance: a different set, replaced only on request
        one = LLMJUDGE / "judges" / "willia-umbrela1.txt"
        with pytest.raises(IngestError, match=r"already exists with different provenance .*use --replace"):
            wh.ingest_qrels(one, collection="llmjudge", qrels_id="willia-umbrela1", source="llm")
        again = wh.ingest_qrels(one, collection="llmjudge", qrels_id="willia-umbrela1", source="llm", replace=True)
        assert again.status == "replaced"
        assert wh.qrels_sets("llmjudge").prompt_sha256.isna().tolist() == [True, False]
        # the prompt stays: the other set still refers to it
        assert wh.query("SELECT count(*) AS n FROM judgment_prompts").n.tolist() == [1]


# -- TREC-COVID rounds ----------------------------------------------------------------------


@pytest.mark.skipif(not ANSERINI.exists(), reason="../shared/data/anserini_qrels is not there")
def test_trec_covid_rounds(runner, tmp_path):
    """Each round's judgments a set with --round; the round-5 file is the complete file's round 5.

    The iteration column of the complete qrels holds when a pair was judged: ``0.5`` and ``1``
    in round 1, ..., ``4.5`` and ``5`` in round 5 (the half rounds judged between two).
    """
    db = tmp_path / "w.duckdb"
    complete = ANSERINI / "qrels.covid-complete.txt"
    lines = [line for line in complete.read_text().splitlines() if line.strip()]
    by_round: dict[int, list[str]] = {}
    for line in lines:
        by_round.setdefault(math.ceil(float(line.split()[1])), []).append(line)
    assert sorted(by_round) == [1, 2, 3, 4, 5]
    for number, rows in sorted(by_round.items()):
        path = tmp_path / f"covid-round{number}.qrels"
        path.write_text("\n".join(rows) + "\n")
        result = invoke(
            runner, "ingest", "qrels", path, "-c", "covid", "--qrels-id", f"round{number}", "--round", number,
            "--judge", "NIST", "--db", db,
        )  # fmt: skip
        assert result.exit_code == 0, result.output
    round5 = ANSERINI / "qrels.covid-round5.txt"
    result = invoke(runner, "ingest", "qrels", round5, "-c", "covid", "--qrels-id", "r5", "--round", 5, "--db", db)
    assert result.exit_code == 0, result.output
    with Warehouse.open_reader(db) as wh:
        sets = wh.qrels_sets("covid").set_index("qrels_id")
        same = wh.query(
            "SELECT count(*) AS n FROM qrels AS a JOIN qrels AS b USING (collection_id, query_id, doc_id, relevance)"
            " WHERE a.qrels_id = 'round5' AND b.qrels_id = 'r5'"
        ).n.tolist()
    assert sets["round"].to_dict() == {"r5": 5, "round1": 1, "round2": 2, "round3": 3, "round4": 4, "round5": 5}
    assert set(sets.source) == {"human"}
    assert sets.loc[[f"round{n}" for n in range(1, 6)], "judge"].tolist() == ["NIST"] * 5
    # every pair of the complete qrels is in one round; two are -1 (pooled, unjudged)
    assert sets.loc[[f"round{n}" for n in range(1, 6)], "pairs"].sum() == len(lines) - 2 == 69_316
    assert sets.loc["r5", ["topics", "pairs", "relevant"]].tolist() == list(file_counts(round5))
    assert sets.loc["r5", ["pairs", "relevant"]].tolist() == sets.loc["round5", ["pairs", "relevant"]].tolist()
    assert same == [23_151]  # the round-5 file is exactly round 5 of the complete file


# -- JSON-lines judgment records --------------------------------------------------------------

UMBRELA = [  # as UMBRELA writes them with --include-trace, the pair's ids added as qid and docid
    {"model": "gpt-4o", "query": "flea life cycle", "passage": "The life cycle...", "qid": "264014",
     "docid": "4834547", "prompt": "judge q=flea p=The life cycle", "prediction": "It answers.\n##final score: 3",
     "judgment": 3, "result_status": 1, "reasoning": "The passage answers the question."},
    {"model": "gpt-4o", "query": "flea life cycle", "passage": "Fleas are...", "qid": "264014",
     "docid": "6641238", "prompt": "judge q=flea p=Fleas are", "prediction": "Related only.\n##final score: 1",
     "judgment": 1, "result_status": 1},
    {"qid": 1037798, "docid": 7065735, "judgment": 2.5, "score": 0.83},
]  # fmt: skip


def test_jsonl_with_reasoning_and_prompts(tmp_path):
    path = jsonl(tmp_path / "umbrela.jsonl", UMBRELA)
    with Warehouse(":memory:") as wh:
        result = wh.ingest_qrels(path, collection="c", qrels_id="umbrela", source="llm", model="gpt-4o")
        assert (result.status, result.lines) == ("ingested", 3)
        assert wh.query("SELECT query_id, iteration, doc_id, relevance FROM qrels ORDER BY ALL").values.tolist() == [
            ["1037798", "0", "7065735", 2.5],  # fractional grades kept as given
            ["264014", "0", "4834547", 3.0],
            ["264014", "0", "6641238", 1.0],
        ]
        details = wh.query(
            "SELECT query_id, doc_id, score, reasoning, p.prompt FROM judgment_details"
            " LEFT JOIN judgment_prompts AS p USING (prompt_sha256) ORDER BY ALL"
        )
        assert details.astype(object).where(details.notna(), None).values.tolist() == [
            ["1037798", "7065735", 0.83, None, None],
            ["264014", "4834547", None, "The passage answers the question.", "judge q=flea p=The life cycle"],
            # no reasoning field: the model's raw answer (prediction) is its reasoning
            ["264014", "6641238", None, "Related only.\n##final score: 1", "judge q=flea p=Fleas are"],
        ]
        row = wh.qrels_sets("c").iloc[0]
        assert (row["source"], row["model"], row["pairs"], row["relevant"], row["file"]) == (
            "llm", "gpt-4o", 3, 3, str(path),
        )  # fmt: skip
        assert pd.isna(row["prompt_sha256"])  # the records' prompts differ: each judgment keeps its own
        assert wh.query("SELECT sha256 FROM qrels_sets").sha256.tolist() == [
            hashlib.sha256(path.read_bytes()).hexdigest()
        ]
        # replacing a set replaces its details
        smaller = jsonl(tmp_path / "smaller.jsonl", UMBRELA[2:])
        wh.ingest_qrels(smaller, collection="c", qrels_id="umbrela", source="llm", model="gpt-4o", replace=True)
        assert wh.query("SELECT count(*) AS n FROM judgment_details").n.tolist() == [1]


def test_jsonl_without_reasoning_one_prompt_for_all(tmp_path):
    records = [{"qid": "q1", "docid": f"p{i}", "judgment": i % 4, "prompt": "Grade 0-3."} for i in range(5)]
    path = jsonl(tmp_path / "plain.json.gz", records)
    with Warehouse(":memory:") as wh:
        wh.ingest_qrels(path, collection="c", source="llm")
        assert wh.query("SELECT count(*) AS n FROM judgment_details").n.tolist() == [0]
        digest = hashlib.sha256(b"Grade 0-3.").hexdigest()
        assert wh.qrels_sets("c").prompt_sha256.tolist() == [digest]  # the one prompt is the set's
        assert wh.query("SELECT prompt FROM judgment_prompts").prompt.tolist() == ["Grade 0-3."]
        assert wh.query("SELECT relevance FROM qrels ORDER BY doc_id").relevance.tolist() == [0, 1, 2, 3, 0]


def test_jsonl_is_told_by_name_or_content(tmp_path):
    assert is_jsonl(Path("x.jsonl"), b"") and is_jsonl(Path("x.ndjson.gz"), b"")
    assert is_jsonl(Path("x.txt"), b'\xef\xbb\xbf  \n{"qid": 1}') and not is_jsonl(Path("x.txt"), b"1 0 d 1\n")
    # a .txt file holding records is read as records
    path = jsonl(tmp_path / "records.txt", [{"query_id": "1", "doc_id": "d", "relevance": 1}])
    with Warehouse(":memory:") as wh:
        wh.ingest_qrels(path, collection="c")
        assert wh.query("SELECT query_id, doc_id, relevance FROM qrels").values.tolist() == [["1", "d", 1.0]]


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"qid": "1", "docid": "a", "judgment": 1}', "1 0 a 1"], "2: not a judgment record: not a JSON object"),
        (['{"qid": "1", "docid": "a", "judgment": 1,}'], "1: not a judgment record: the JSON object is broken "
                                                           "(Expecting property name enclosed in double quotes at column 42)"),
        (['{"qid": "1", "docid": "a", "judgment": 1}', "", "[1, 2]"], "3: not a judgment record: a JSON array, not an object"),
        (['{"docid": "a", "judgment": 1}'], "1: not a judgment record: no topic id (qid, query_id or query.qid)"),
        (['{"qid": "1", "judgment": 1}'], "1: not a judgment record: no document id (docid, doc_id, pid, passage_id)"),
        (['{"qid": "1", "docid": "a"}'], "1: not a judgment record: no grade (judgment, relevance)"),
        (['{"qid": "1", "docid": "a", "judgment": "high"}'], '1: judgment "high" is not a finite number'),
        (['{"qid": "1", "docid": "a b", "judgment": 1}'], "1: document id 'a b' holds whitespace or a NUL byte, which no TREC file can hold"),
        (['{"qid": "", "docid": "a", "judgment": 1}'], "1: topic id 'qid' is empty"),
        (['{"qid": true, "docid": "a", "judgment": 1}'], "1: topic id 'qid' is a JSON boolean, not a string or integer"),
        (['{"qid": "1", "docid": "a", "judgment": 1, "reasoning": 5}'], "1: reasoning is a JSON number, not a string"),
        (['{"qid": "1", "docid": "a", "judgment": 1}', '{"qid": 1, "docid": "a", "judgment": 0}'],
         "2: document 'a' is judged twice for topic '1' (first on line 1)"),
    ],
)  # fmt: skip
def test_bad_jsonl_line_names_file_and_line(runner, tmp_path, lines, message):
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    db = tmp_path / "w.duckdb"
    result = invoke(runner, "ingest", "qrels", path, "-c", "c", "--source", "llm", "--db", db)
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", f"Error: {path}:{message}\n")


def test_several_files_are_one_transaction(tmp_path, snapshot):
    good = tmp_path / "a.qrels"
    good.write_text(QRELS)
    bad = tmp_path / "b.jsonl"
    bad.write_text('{"qid": "1", "docid": "a", "judgment": 1}\nnot json\n')
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Grade the passage.")
    with Warehouse(tmp_path / "w.duckdb") as wh:
        wh.ingest_qrels(good, collection="c", qrels_id="default")
        before = snapshot(wh)
        with pytest.raises(IngestError, match=r"b\.jsonl:2: not a judgment record"):
            wh.ingest_qrels([good, bad], collection="c", source="llm", prompt=prompt)
        assert snapshot(wh) == before  # neither set a nor the prompt


def test_names_of_several_files(runner, tmp_path):
    db = tmp_path / "w.duckdb"
    (tmp_path / "x").mkdir()
    a, b, c = tmp_path / "a.qrels", tmp_path / "x" / "a.txt.gz", tmp_path / "b c.qrels"
    a.write_text(QRELS)
    b.write_bytes(gzip.compress(QRELS.encode()))
    c.write_text(QRELS)
    result = invoke(runner, "ingest", "qrels", a, b, "-c", "c", "--qrels-id", "x", "--db", db)
    assert (result.exit_code, result.stderr) == (
        1,
        "Error: --qrels-id names the set of one file; with several files each set is named by its file's stem "
        "(ingest the file alone to name it)\n",
    )
    result = invoke(runner, "ingest", "qrels", a, b, "-c", "c", "--db", db)
    assert (result.exit_code, result.stderr) == (
        1,
        f"Error: {a} and {b} both have the stem 'a', and a set is named by its file's stem: "
        "ingest one of them alone with --qrels-id\n",
    )
    result = invoke(runner, "ingest", "qrels", a, c, "-c", "c", "--db", db)
    assert (result.exit_code, result.stderr) == (
        1, f"Error: qrels id (the stem of {c}) 'b c' holds whitespace or a NUL byte, which no TREC file can hold\n"
    )  # fmt: skip
    assert not db.exists()
    result = invoke(runner, "ingest", "qrels", a, tmp_path / "x" / "a.txt.gz", "-c", "c", "--db", db)
    assert result.exit_code == 1  # (still the same stem)
    result = invoke(runner, "ingest", "qrels", b, c.rename(tmp_path / "c.qrels"), "-c", "c", "--db", db)
    assert result.exit_code == 0, result.output
    with Warehouse.open_reader(db) as wh:
        assert wh.qrels_sets("c")[["qrels_id", "source", "pairs"]].values.tolist() == [["a", "human", 3], ["c", "human", 3]]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--qrels-id", ""], "qrels id argument: the qrels id is empty"),
        (["--qrels-id", "my set"], "qrels id argument: 'my set' holds whitespace or a NUL byte, which no TREC file can hold"),
        (["--judge", " "], "judge is empty"),
        (["--model", ""], "model is empty"),
    ],
)
def test_names_given_as_options_are_checked(runner, tmp_path, options, message):
    path = tmp_path / "q.qrels"
    path.write_text(QRELS)
    db = tmp_path / "w.duckdb"
    result = invoke(runner, "ingest", "qrels", path, "-c", "c", *options, "--db", db)
    assert (result.exit_code, result.stderr) == (1, f"Error: {message}\n")


def test_source_must_be_known(runner, tmp_path):
    path = tmp_path / "q.qrels"
    path.write_text(QRELS)
    result = invoke(runner, "ingest", "qrels", path, "-c", "c", "--source", "derived", "--db", tmp_path / "w.duckdb")
    assert result.exit_code == 2  # click's usage error: not one of human, llm, inferred
    with Warehouse(":memory:") as wh, pytest.raises(EvalWhError, match="source 'derived' is not one of human, llm, inferred"):
        wh.ingest_qrels(path, collection="c", source="derived")


# -- sets evalwh makes itself, and old warehouses ---------------------------------------------


def test_sets_evalwh_derives_are_marked_derived(tmp_path):
    with Warehouse(":memory:") as wh:
        fill(wh)
        wh.build_pool(collection="small", depth=5, runs_from="all", pool_id="pool5")
        wh.complete_qrels(collection="small", completed_id="completed")
        store_reduced_qrels(wh, "small", seed=3, levels=[50])
        sources = wh.qrels_sets("small").set_index("qrels_id").source.to_dict()
    assert sources == {"completed": "derived", "default": "human", "pool5": "derived", "reduced-a50-seed3": "derived"}


def test_an_old_warehouse_upgrades_with_its_sets_marked_human(tmp_path):
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE schema_migrations (name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)"
    )
    for name, file in sql.load_package("evalwh.schema").items():
        if name <= "014":  # as evalwh made a warehouse before migration 015
            con.execute(file.text)
            con.execute("INSERT INTO schema_migrations (name) VALUES (?)", [name])
    con.execute("INSERT INTO collections (collection_id) VALUES ('c')")
    con.execute(
        "INSERT INTO qrels_sets (collection_id, qrels_id, kind, source_file, sha256, line_count, parent_qrels_id)"
        " VALUES ('c', 'default', 'ingested', 'trec.qrels', 'x', 2, NULL), ('c', 'pool', 'derived', 'pool', 'y', 1, 'default')"
    )
    con.execute("INSERT INTO qrels VALUES ('c', 'default', '1', '0', 'a', 1), ('c', 'default', '1', '0', 'b', 0),"
                " ('c', 'pool', '1', '0', 'a', 1)")  # fmt: skip
    con.close()
    with pytest.raises(SchemaError, match="evalwh upgrade"):  # a reader never upgrades
        Warehouse.open_reader(path)
    with Warehouse(path) as wh:  # a writer (evalwh upgrade) does, once
        wh.upgrade()
    with Warehouse.open_reader(path) as wh:
        sets = wh.qrels_sets("c")
        applied = wh.query("SELECT name FROM schema_migrations ORDER BY name").name.tolist()
    assert {"015_judgment_provenance", "016_judgment_detail_prompts"} <= set(applied)
    assert sets[["qrels_id", "source", "judge", "topics", "pairs", "relevant", "file"]].values.tolist() == [
        ["default", "human", None, 1, 2, 1, "trec.qrels"],
        ["pool", "derived", None, 1, 1, 1, "pool"],
    ]


# -- the parser, on generated records ----------------------------------------------------------

_ID = st.one_of(
    # (no whitespace, and no control character: an id holding one is refused, issue 52 class 6)
    st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters=" \u061c\u200e\u200f"
                          "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"), min_size=1, max_size=8),
    st.integers(min_value=0, max_value=10**12),
)
_RECORD = st.fixed_dictionaries(
    {"qid": _ID, "docid": _ID, "judgment": st.one_of(st.integers(-1, 3), st.floats(-1e8, 1e8, allow_nan=False))},
    optional={
        "reasoning": st.text(max_size=20),
        "prompt": st.text(max_size=20),
        "score": st.floats(allow_nan=False, allow_infinity=False),
        "model": st.text(max_size=5),
        "passage": st.text(max_size=5),
    },
)


@settings(max_examples=200, deadline=None)
@given(records=st.lists(_RECORD, min_size=1, max_size=12, unique_by=lambda r: (str(r["qid"]), str(r["docid"]))),
       blank=st.booleans())  # fmt: skip
def test_parser_reads_back_what_was_written(records, blank):
    text = ("\n" if blank else "").join(json.dumps(r) + "\n" for r in records)
    parsed = parse_judgments(text.encode(), "gen.jsonl")
    assert parsed.query_id == [str(r["qid"]) for r in records]
    assert parsed.doc_id == [str(r["docid"]) for r in records]
    assert parsed.relevance == [float(r["judgment"]) for r in records]
    assert parsed.score == [r.get("score") for r in records]
    assert parsed.reasoning == [r.get("reasoning") for r in records]
    assert parsed.prompt == [None if r.get("prompt") == "[redacted]" else r.get("prompt") for r in records]
    assert parsed.line == [(2 if blank else 1) * i + 1 for i in range(len(records))]


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_parser_accepts_or_names_a_line(data):
    try:
        parsed = parse_judgments(data, "x.jsonl")
    except IngestError as error:
        assert error.path == "x.jsonl"
        assert error.line is None or 1 <= error.line <= data.count(b"\n") + 1
    else:
        assert len(parsed) >= 1
        assert len(set(zip(parsed.query_id, parsed.doc_id))) == len(parsed)
        assert Counter(parsed.line).most_common(1)[0][1] == 1


def test_provenance_travels_with_an_export(tmp_path):
    """Export and import keep each set's provenance, details and prompts; a prompt stays stored once."""
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Grade the passage 0-3.")
    path = jsonl(tmp_path / "umbrela.jsonl", UMBRELA)
    qrels = tmp_path / "q.qrels"
    qrels.write_text(QRELS)
    with Warehouse(tmp_path / "a.duckdb") as a:
        a.ingest_qrels(path, collection="c", qrels_id="umbrela", source="llm", model="gpt-4o", prompt=prompt)
        expected = a.qrels_sets("c").drop(columns="created_at")
        details = a.query("SELECT * FROM judgment_details ORDER BY ALL")
        a.export(tmp_path / "out")
    with Warehouse(tmp_path / "b.duckdb") as b:
        # the other warehouse already holds the same prompt, for a set of another collection
        b.ingest_qrels(qrels, collection="other", source="human", prompt=prompt)
        b.import_export(tmp_path / "out")
        assert b.qrels_sets("c").drop(columns="created_at").equals(expected)
        assert b.query("SELECT * FROM judgment_details ORDER BY ALL").equals(details)
        prompts = b.query("SELECT prompt_sha256 FROM judgment_prompts").prompt_sha256
        assert len(prompts) == prompts.nunique() == 3  # the set's, and the two rendered ones


def test_a_given_prompt_and_the_records_own(tmp_path):
    """--prompt names the set's prompt; records carrying another keep theirs, one carrying it does not."""
    template = tmp_path / "template.txt"
    template.write_text("Grade the passage 0-3.")
    same = [{"qid": "q", "docid": f"p{i}", "judgment": 1, "prompt": "Grade the passage 0-3."} for i in range(2)]
    other = [{"qid": "q", "docid": f"p{i}", "judgment": 1, "prompt": "Another prompt."} for i in range(2)]
    with Warehouse(":memory:") as wh:
        wh.ingest_qrels(jsonl(tmp_path / "same.jsonl", same), collection="c", qrels_id="same", prompt=template)
        wh.ingest_qrels(jsonl(tmp_path / "other.jsonl", other), collection="c", qrels_id="other", prompt=template)
        digest = hashlib.sha256(b"Grade the passage 0-3.").hexdigest()
        assert wh.qrels_sets("c").prompt_sha256.tolist() == [digest, digest]
        kept = wh.query(
            "SELECT qrels_id, p.prompt, count(*) AS n FROM judgment_details JOIN judgment_prompts AS p"
            " USING (prompt_sha256) GROUP BY ALL"
        )
        assert kept.values.tolist() == [["other", "Another prompt.", 2]]
