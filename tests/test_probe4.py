"""The fourth reliability probe (issue #52): one section per class of docs/safety.md's fourth
probe table that this file holds (classes 2, 4, 5, 6, 7, 8; class 1 is in tests/test_conventions
and class 3 in the experiment-id tests).

Every test names its class ("Issue 52, class N") and fails on the code before the fix. "Refused"
means one line naming the problem, exit code 1 (2 for a usage error), and the warehouse and
every output byte for byte as before.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalwh import Warehouse
from evalwh.errors import ArgumentError, EvalWhError, IngestError
from evalwh.io.probabilities import parse_probabilities

from test_probe2 import _set  # noqa: E402
from test_safety import QRELS, RUNS, digest, invoke  # noqa: E402

HEADER = b"topic_id,doc_id,annotation,prob_yes,prob_no\n"


def one_line(result) -> str:  # type: ignore[no-untyped-def]
    """The single line a failed command printed (and nothing on standard output)."""
    text = result.output.strip()
    assert result.exit_code in (1, 2), (result.exit_code, text)
    assert "\n" not in text and "Traceback" not in text and "unexpected" not in text, text
    return text


def _synthetic(n_topics: int = 4, n_runs: int = 4, depth: int = 10, seed: int = 1, path: object = ":memory:") -> Warehouse:
    """Runs of graded quality over a small binary collection, in memory (or at ``path``)."""
    rng = np.random.default_rng(seed)
    wh = Warehouse(path)  # type: ignore[arg-type]
    qrels, rows = [], []
    for t in range(n_topics):
        docs = [f"d{t}-{j}" for j in range(30)]
        relevant = set(docs[:8])
        qrels += [(str(t), d, int(d in relevant)) for d in docs]
        for r in range(n_runs):
            weight = np.where(np.isin(docs, list(relevant)), 1.0 + 2.0 * r, 1.0)
            ranked = rng.choice(docs, size=depth, replace=False, p=weight / weight.sum())
            rows += [(f"run{r}", str(t), d, float(depth - k)) for k, d in enumerate(ranked)]
    wh.ingest_qrels(pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]), collection="s")
    wh.ingest_runs(pd.DataFrame(rows, columns=["run_id", "query_id", "doc_id", "score"]), collection="s")
    return wh


# -- class 7: silent wrong answers ------------------------------------------------------------


@pytest.mark.parametrize(
    "row",
    [
        "1,d1,1_0,0.6,0.2",  # float() reads 10
        "1,d1,\uff11,0.6,0.2",  # full-width 1
        "1,d1,\u0661,0.6,0.2",  # Arabic-Indic 1
        "1,d1,1,0.6,0.2\u0661",  # a probability with an Arabic-Indic digit
        "1,d1,1,0_6,0.2",
        "1,d1,1, infinity ,0.2",
        "1,d1,1e3,0.6,0.2",  # no qrels grade is written so
    ],
)
def test_lara_reader_has_the_number_grammar_of_every_reader(row: str) -> None:
    """Issue 52, class 7: the LARA reader reads numbers as the qrels reader does, not with float()."""
    with pytest.raises(IngestError, match=r"^x\.csv:2: (annotation|probability) .* is not a number"):
        parse_probabilities(HEADER + row.encode() + b"\n", "x.csv")
    # what a qrels file holds is still read
    ok = parse_probabilities(HEADER + b" 1 , d1 ,2,.6,2e-1\n", "x.csv")
    assert ok.annotation == [2.0] and ok.probs == [[0.2, 0.6]]


def test_score_files_have_the_number_grammar(tmp_path: Path) -> None:
    """Issue 52, class 7: per-topic score files read no "1_0" or full-width digits either."""
    from evalwh.io.score_files import read_scores

    for value in ("1_0", "\uff11", "\u0661"):
        path = tmp_path / "s.csv"
        path.write_text(f"run_id,query_id,measure,value\nr,1,P@10,0.5\nr,2,P@10,{value}\n", encoding="utf-8")
        with pytest.raises(IngestError, match=r"s\.csv:3: value .* is not a number"):
            read_scores([path])
    path.write_text("run_id,query_id,measure,value\nr,1,P@10,0.5\nr,2,P@10,1e-1\n")
    assert read_scores([path])["value"].tolist() == [0.5, 0.1]


def test_provider_refuses_graded_rbp_it_does_not_compute() -> None:
    """Issue 52, class 7: the provider called directly, as the docs show, refuses ir_measures'
    graded RBP (which its supports() declines) instead of answering with the binary RBP."""
    import ir_measures
    from ir_measures import RBP

    import evalwh.ir_measures  # noqa: F401

    provider = ir_measures.providers.registry["evalwh"]
    qrels = pd.DataFrame({"query_id": ["1"] * 3, "doc_id": ["a", "b", "c"], "relevance": [3, 1, 0]})
    run = pd.DataFrame({"query_id": ["1"] * 3, "doc_id": ["b", "a", "c"], "score": [3.0, 2.0, 1.0]})
    assert not provider.supports(RBP)
    with pytest.raises(ValueError, match=r"unsupported measure RBP by the evalwh provider: .*graded"):
        provider.calc_aggregate([RBP], qrels, run)
    # RBP(rel=1) is evalwh's binary RBP, which it does support: (1-p) * sum p^(i-1) over relevant ranks
    value = provider.calc_aggregate([RBP(rel=1)], qrels, run)[RBP(rel=1)]
    assert value == pytest.approx(0.2 * (1 + 0.8))


def test_budget_counts_above_the_pool_and_fractions_are_refused() -> None:
    """Issue 52, class 7: a count budget above the pool (budget share 2.30) and a budget or
    depth that is a fraction are refused, not stored rounded."""
    from evalwh.methods.budget import parse_budgets

    with pytest.raises(EvalWhError, match=r"budget: 500 judgments is more than the pool's 300 pairs"):
        parse_budgets([500], 300, 5, "total")
    for bad in ("1.5", "1_0", "\uff11\uff10", "0", "-3", "", "10 %%", "150%"):
        with pytest.raises(EvalWhError, match=r"budget: .* is neither a share of the pool"):
            parse_budgets([bad], 300, 5, "total")
    assert parse_budgets(["10%", "12", 30.0], 300, 5, "total") == [12, 30]  # 10% of 300 is 30: one budget
    with pytest.raises(EvalWhError, match=r"^budget: '5%' is given twice; give each budget once$"):
        parse_budgets(["5%", " 5%"], 300, 5, "total")
    wh = _synthetic()
    before = wh.df("SELECT count(*) AS n FROM pools")["n"].iloc[0]
    for options, message in (
        ({"strategy": "take", "budget": 1.5}, r"budget \(a number of judgments\) 1\.5: expected a whole number"),
        ({"strategy": "take", "budget": True}, r"budget \(a number of judgments\) True: expected a whole number"),
        ({"strategy": "take", "budget": "10"}, r"budget \(a number of judgments\) '10': expected a whole number"),
        ({"depth": 5.5}, r"depth 5\.5: expected a whole number >= 1"),
        ({"depth": "5"}, r"depth '5': expected a whole number >= 1"),
        ({"strategy": "rrf", "rrf_k": math.nan}, r"RRF constant nan: expected a number >= 0"),
    ):
        options = {"depth": 5, **options}
        with pytest.raises(ArgumentError, match=message):
            wh.build_pool(collection="s", runs_from="all", **options)
    assert wh.df("SELECT count(*) AS n FROM pools")["n"].iloc[0] == before
    # a whole float is that number: the pool is the same as with the int
    row = wh.build_pool(collection="s", runs_from="all", depth=5.0, strategy="take", budget=2.0).iloc[0]
    assert (int(row["depth"]), int(row["budget"])) == (5, 2)
    kept = wh.df("SELECT query_id, count(*) AS n FROM qrels WHERE qrels_id = $p GROUP BY ALL", {"p": row["pool_id"]})
    assert (kept["n"] == 2).all()


def test_hybrid_count_budget_above_its_pairs_is_refused(tmp_path: Path) -> None:
    """Issue 52, class 7: the hybrid's count budget above the machine's pairs was stored with a
    budget share of 2.30; it is refused and nothing is stored."""
    from evalwh.methods import budget

    wh = _synthetic(seed=2)
    truth = wh.df("SELECT query_id, doc_id, relevance FROM qrels WHERE qrels_id = 'default'")
    frame = budget.simulated_judge(truth, bias=2.5, seed=4)
    wh.con.execute("BEGIN")
    from evalwh.store.ingest.qrels import Provenance, _ingest_qrels

    judged = frame.rename(columns={"topic_id": "query_id", "annotation": "relevance"})[["query_id", "doc_id", "relevance"]]
    _ingest_qrels(wh, judged, "DataFrame", "s", "llm", False, Provenance(source="llm"))
    wh.con.register("p", frame)
    wh.con.execute("INSERT INTO judgment_probabilities SELECT 's', 'llm', topic_id, doc_id, [prob_no, prob_yes], prob_yes FROM p")
    wh.con.execute("COMMIT")
    with pytest.raises(EvalWhError, match=r"budget: 276 judgments is more than the pool's 120 pairs"):
        wh.budget(collection="s", machine="llm", budgets=["276"], selections=["random"], experiment_id="h")
    assert wh.df("SELECT count(*) AS n FROM budget_results")["n"].iloc[0] == 0
    rows = wh.budget(collection="s", machine="llm", budgets=["120"], selections=["random"], experiment_id="h")
    assert rows["budget_share"].max() == 1.0


# -- class 6: output security -----------------------------------------------------------------

ESC = "\x1b]0;owned\x07\x1b[2J\x1b[31m"  # a window title, a cleared screen, red


def test_control_characters_are_refused_in_ids(tmp_path: Path) -> None:
    """Issue 52, class 6: ESC is not whitespace, but no id may hold it (nor DEL, C1, a
    direction override): refused in a DataFrame, an option and a run file's tag, in one line."""
    db = tmp_path / "W.duckdb"
    with Warehouse(db) as wh:
        wh.ingest_qrels(QRELS, collection="c")
        for bad in ("r\x1b[31m", "r\x7f", "r\u202egnp.exe", "r\x85"):
            with pytest.raises(IngestError, match=r"run_id .* holds a control character"):
                wh.ingest_runs(RUNS.assign(run_id=bad), collection="c")
            with pytest.raises(IngestError, match=r"run id argument: .* holds a control character"):
                wh.ingest_runs(RUNS.drop(columns="run_id"), collection="c", run_id=bad)
    before = digest(db)
    run = tmp_path / "run.txt"
    run.write_text("1 Q0 a 1 5.0 r\x1bx\n1 Q0 c 2 3.0 r\x1bx\n")
    text = one_line(invoke("ingest", "runs", run, "-c", "c", "--db", db))
    assert text.endswith(r"/run.txt:1: the run tag 'r\x1bx' holds a control character, which a run id may not hold")
    assert digest(db) == before
    assert one_line(invoke("ingest", "qrels", run, "-c", "c", "--qrels-id", "q\x1b", "--db", db)).startswith(
        "Error: qrels id argument: 'q\\x1b' holds a control character"
    )


def test_terminal_output_escapes_control_characters(tmp_path: Path) -> None:
    """Issue 52, class 6: what `evalwh runs` prints from the warehouse (a source file's name, an
    ir_metadata block, an id stored by an older evalwh) reaches the terminal escaped."""
    db = tmp_path / "W.duckdb"
    run = tmp_path / f"bm25{ESC}.txt"
    run.write_text("1 Q0 a 1 5.0 bm25\n1 Q0 c 2 3.0 bm25\n2 Q0 a 1 1.0 bm25\n")
    with Warehouse(db) as wh:
        wh.ingest_qrels(QRELS, collection="c")
        wh.ingest_runs([run], collection="c")
        # as an older evalwh (or `sql --write`) could have stored them
        wh.con.execute("INSERT INTO runs (collection_id, run_id, tag, source_file, sha256, line_count) SELECT collection_id, 'old\x1b[2J', ?, source_file, sha256, line_count FROM runs", [ESC])
    for fmt in ("table", "markdown"):
        result = invoke("runs", "-c", "c", "-f", fmt, "--db", db)
        assert result.exit_code == 0, result.output
        assert "\x1b" not in result.output and "\x07" not in result.output
        assert "\\x1b]0;owned\\x07\\x1b[2J" in result.output
    # a rich table on a terminal gets Text cells: "[red]" in an id is not markup
    from evalwh.cli._render import _cells, _rich_table

    table = _rich_table(_cells(pd.DataFrame({"run_id": ["[red]x\x1b"]}), 4), "t\x1b", 80)
    assert [str(c) for c in table.columns[0]._cells] == ["[red]x\\x1b"] and str(table.title) == "t\\x1b"


def test_markdown_outputs_carry_no_html_and_no_broken_rows(tmp_path: Path) -> None:
    """Issue 52, class 6: run ids, set ids and judges holding <script>, <img onerror> or <svg
    onload> and a line break in provenance are escaped in every Markdown output (the report,
    compare -f md), as the HTML report escapes them."""
    db = tmp_path / "W.duckdb"
    script, svg = "<script>alert(1)</script>", "<svg/onload=alert(2)>"
    with Warehouse(db) as wh:
        wh.ingest_qrels(QRELS, collection="c")
        wh.ingest_qrels(QRELS.assign(relevance=[1, 1, 0, 1, 1]), collection="c", qrels_id=svg, source="llm",
                        judge="<img src=x onerror=alert(3)>", model="m")  # fmt: skip
        wh.ingest_runs(RUNS.replace({"r1": script, "r2": "r2"}), collection="c")
        # a line break in stored text (an older evalwh, `sql --write`) splits no row
        wh.con.execute("UPDATE qrels_sets SET model = 'm\n| broken | row |' WHERE source = 'llm'")
    with pytest.raises(EvalWhError, match=r"judge 'a\\x1b' holds a control character"):
        with Warehouse(db) as wh:
            wh.ingest_qrels(QRELS, collection="c", qrels_id="x", judge="a\x1b")
    report = tmp_path / "r.md"
    result = invoke("report", "-c", "c", "-f", "md", "-o", report, "--db", db)
    assert result.exit_code == 0, result.output
    text = report.read_text()
    assert "&lt;script>alert(1)&lt;/script>" in text and "&lt;svg/onload=alert(2)>" in text
    for tag in ("<script", "<svg", "<img"):
        assert tag not in text
    assert "| broken | row |" not in text and "\\x0a\\| broken \\| row \\|" in text
    compare = invoke("compare", "-c", "c", "-m", "P@2", "--all-runs", "-f", "markdown", "--db", db)
    assert compare.exit_code == 0, compare.output
    assert "&lt;script>" in compare.output and "<script" not in compare.output


CONTROL_LINES = [
    # (kind, file content, bad line, the problem)
    ("runs", b"1 Q0 a\x1b[31m 1 5.0 r\n1 Q0 c 2 3.0 r\n", 1, r"document id 'a\x1b[31m'"),
    ("runs", b"1 Q0 a 1 5.0 r\n1 Q0 c 2 3.0 r\n2\x7f Q0 a 1 1.0 r\n", 3, r"topic id '2\x7f'"),
    ("runs", "1\tQ0\tab\u0085\t1\t5.0\tr\n".encode(), 1, r"document id 'ab\x85'"),
    ("runs", "# a comment\n1 Q0 gnp\u202e.exe 1 5.0 r\n".encode(), 2, r"document id 'gnp\u202e.exe'"),
    ("runs", b"1 Q0 a 1 5.0 r\n1\x01 Q0 c 2 3.0 r\n", 2, r"topic id '1\x01'"),
    ("qrels", b"1 0 a 1\n1 0 c\x1b]0;owned\x07 0\n", 2, r"document id 'c\x1b]0;owned\x07'"),
    ("qrels", "1\u0085 0 a 1\n".encode(), 1, r"topic id '1\x85'"),
]


@pytest.mark.parametrize(("kind", "content", "line", "shown"), CONTROL_LINES)
def test_control_characters_in_run_and_qrels_files_are_refused(
    tmp_path: Path, kind: str, content: bytes, line: int, shown: str
) -> None:
    """Issue 52, class 6: an ESC, DEL, C1 or direction override in a topic or document id of a
    run or qrels file was stored (and later printed); every reader refuses it in one line naming
    the file and the line: ingest, the direct evaluation and `evalwh trec_eval`."""
    db = tmp_path / "W.duckdb"
    with Warehouse(db) as wh:
        wh.ingest_qrels(QRELS, collection="c")
    before = digest(db)
    bad = tmp_path / f"bad.{kind}"
    bad.write_bytes(content)
    good_qrels, good_run = tmp_path / "q.txt", tmp_path / "r.txt"
    good_qrels.write_text("1 0 a 1\n1 0 c 0\n2 0 a 1\n")
    good_run.write_text("1 Q0 a 1 5.0 r\n1 Q0 c 2 3.0 r\n")
    problem = f"{bad}:{line}: {shown} holds a control character, which an id may not hold"
    commands = [("ingest", kind, bad, "-c", "c", "--db", db)]
    if kind == "runs":
        commands += [("eval", "--qrels", good_qrels, bad), ("trec_eval", good_qrels, bad)]
    else:
        commands += [("eval", "--qrels", bad, good_run), ("trec_eval", bad, good_run)]
    for command in commands:
        assert one_line(invoke(*command)) == f"Error: {problem}", command
    assert digest(db) == before


def test_control_characters_split_across_read_chunks_are_found(tmp_path: Path) -> None:
    """Issue 52, class 6: the scan reads a file a MiB at a time; a C1 character whose two UTF-8
    bytes fall into two chunks is found all the same. A comment may hold control characters."""
    db = tmp_path / "W.duckdb"
    with Warehouse(db) as wh:
        wh.ingest_qrels(QRELS, collection="c")
    before = digest(db)
    lines = [f"1 Q0 d{i:07d} {i + 1} {-i}.0 r\n".encode() for i in range(60_000)]
    prefix = b"".join(lines[:30_000])
    comment = b"# " + b"p" * ((1 << 20) - 7 - len(prefix) - 3) + b"\n"
    body = prefix + comment + b"2 Q0 x\xc2\x85 1 1.0 r\n" + b"".join(lines[30_000:])
    assert body.index(b"\xc2\x85") == (1 << 20) - 1  # its first byte ends the first chunk
    run = tmp_path / "split.txt"
    run.write_bytes(body)
    assert one_line(invoke("ingest", "runs", run, "-c", "c", "--db", db)).endswith(
        ":30002: document id 'x\\x85' holds a control character, which an id may not hold"
    )
    assert digest(db) == before
    commented = tmp_path / "commented.txt"
    commented.write_bytes(b"# made by \x1b[1mbm25\x1b[0m\n1 Q0 a 1 5.0 r\n1 Q0 c 2 3.0 r\n")
    assert invoke("ingest", "runs", commented, "-c", "c", "--db", db).exit_code == 0


def test_control_characters_in_json_lines_qrels_are_refused(tmp_path: Path) -> None:
    """Issue 52, class 6: the JSON-lines judgment reader refused whitespace in ids but let an ESC
    through to the DataFrame check, which named "DataFrame:1"; it names the file and line."""
    db = tmp_path / "W.duckdb"
    with Warehouse(db) as wh:
        wh.ingest_qrels(QRELS, collection="c")
    before = digest(db)
    path = tmp_path / "llm.jsonl"
    path.write_text('{"qid": "1", "docid": "a", "judgment": 1}\n{"qid": "1", "docid": "c\\u001b[2J", "judgment": 0}\n')
    text = one_line(invoke("ingest", "qrels", path, "-c", "c", "--qrels-id", "llm", "--source", "llm", "--db", db))
    assert text == f"Error: {path}:2: document id 'c\\x1b[2J' holds a control character, which an id may not hold"
    assert digest(db) == before


def test_the_c_scan_finds_what_the_pattern_finds() -> None:
    """Issue 52, class 6: the C reader's one-pass control_bytes and the pattern the locators use
    (evalwh.io.printable.FILE_CONTROL) agree on random text of separators, ASCII, accents, dashes,
    C0, DEL, C1, direction marks and their neighbours (U+00A0, U+2030, U+2065, U+206A)."""
    from evalwh.io import _runlines
    from evalwh.io.printable import FILE_CONTROL

    pieces = [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x00", "a", "Q0", "1.5", "\u00e9", "\u2014", "\u00a0", "\u2030",
              "\u2065", "\u206a", "\u202f", "\u061b", "\u061d", "\x1b", "\x7f", "\x01", "\x1f", "\x80", "\x85", "\x9f",
              "\u061c", "\u200e", "\u200f", "\u202a", "\u202e", "\u2066", "\u2069", "\u2028", "\u2029"]  # fmt: skip
    rng = np.random.default_rng(52)
    hits = 0
    for _ in range(4000):
        text = "".join(rng.choice(pieces, size=int(rng.integers(0, 6))))
        expected = FILE_CONTROL.search(text) is not None
        hits += expected
        assert _runlines.control_bytes(text.encode()) is expected, repr(text)
    assert 1000 < hits < 3900


@pytest.mark.parametrize(
    ("table", "column", "value", "shown"),
    [("run_results", "doc_id", "d\x1b[2J", "'d\\x1b[2J'"), ("qrels", "query_id", "1\u202e", "'1\\u202e'"), ("runs", "run_id", "r\x7f", "'r\\x7f'")],
)
def test_import_refuses_control_characters_in_ids(
    export_copy: Path, tmp_path: Path, table: str, column: str, value: str, shown: str
) -> None:
    """Issue 52, class 6: import refused whitespace and NUL in ids but not ESC, DEL, C1 or a
    direction override, which the ingest refuses; now it refuses them too, in one line."""
    from test_probe2 import tamper

    tamper(export_copy, table, lambda f: _set(f, column, 0, value))
    db = tmp_path / "I.duckdb"
    with Warehouse(db) as wh:
        wh.ingest_qrels(QRELS, collection="other")
    before = digest(db)
    text = one_line(invoke("import", export_copy, "--db", db))
    assert f":1: {column} {shown} holds a control character, which an id may not hold" in text, text
    assert "\x1b" not in text and digest(db) == before


# -- class 4: denial of service and unbounded reads ---------------------------------------------


def _run_with_block(tmp_path: Path, yaml_lines: list[str]) -> Path:
    run = tmp_path / "run.txt"
    block = "".join(f"# {line}\n" for line in yaml_lines)
    run.write_text(f"# ir_metadata.start\n{block}# ir_metadata.end\n1 Q0 a 1 5.0 r\n1 Q0 c 2 3.0 r\n")
    return run


@pytest.mark.parametrize(
    ("yaml_lines", "problem"),
    [
        # the probe's 2.2 KB of nested aliases: 110 s and 5.1 GB before
        (["l0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
         + [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, 12)]
         + ["tag: *l11"], r"YAML expands to more than 100,000 values"),
        (["a: &a [x, *a]"], r"YAML holds an alias that contains itself"),
        (["tag: " + "[" * 20000 + "]" * 20000], r"YAML nested more than 64 levels deep"),
        (["tag: " + "[" * 100 + "]" * 100], r"YAML nested more than 64 levels deep"),
    ],
)
def test_yaml_aliases_and_depth_are_bounded(tmp_path: Path, yaml_lines: list[str], problem: str) -> None:
    """Issue 52, class 4: an ir_metadata block's YAML is measured before it is built."""
    import time

    db = tmp_path / "W.duckdb"
    with Warehouse(db) as wh:
        wh.ingest_qrels(QRELS, collection="c")
    before = digest(db)
    run = _run_with_block(tmp_path, yaml_lines)
    start = time.monotonic()
    text = one_line(invoke("ingest", "runs", run, "-c", "c", "--db", db))
    assert time.monotonic() - start < 30
    assert text.startswith("Error: ") and "run.txt:2: ir_metadata block: " in text and __import__("re").search(problem, text), text
    assert digest(db) == before


def test_deep_json_is_one_line(tmp_path: Path) -> None:
    """Issue 52, class 4: 20,000 nested brackets in JSON lines end in one line, not RecursionError."""
    db = tmp_path / "W.duckdb"
    with Warehouse(db) as wh:
        wh.ingest_qrels(QRELS, collection="c")
    before = digest(db)
    judged = tmp_path / "llm.jsonl"
    judged.write_text('{"qid": "1", "docid": "a", "judgment": 1, "x": ' + "[" * 20000 + "]" * 20000 + "}\n")
    text = one_line(invoke("ingest", "qrels", judged, "-c", "c", "--qrels-id", "llm", "--source", "llm", "--db", db))
    assert text.endswith("llm.jsonl:1: not a judgment record: the JSON is nested too deeply"), text
    scores = tmp_path / "s.json"
    scores.write_text("[" * 20000 + "]" * 20000)
    from evalwh.io.score_files import read_scores

    with pytest.raises(IngestError, match="the JSON is nested too deeply"):
        read_scores([scores])
    assert digest(db) == before


def test_gzip_bombs_are_refused_by_their_ratio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 52, class 4: a small gzip that inflates far beyond text's ratio (19 MB of 4 GB) is
    refused once it passes the bound, for qrels, runs and the LARA and topics readers alike.
    (The floor is lowered here so the bomb is small.)"""
    import gzip

    from evalwh.io import formats

    monkeypatch.setattr(formats, "GZIP_FLOOR", 1 << 20)
    bomb = tmp_path / "bomb.qrels.gz"
    bomb.write_bytes(gzip.compress(b"1 0 a 1\n" * (1 << 20), 9))  # 8 MiB from ~20 KiB
    assert bomb.stat().st_size * formats.GZIP_RATIO < 8 << 20
    with pytest.raises(formats.InflatesTooMuch, match=r"inflates to more than [0-9,]+ bytes, over 100 times its size"):
        formats.read_bytes(bomb)
    with pytest.raises(formats.InflatesTooMuch):
        formats.scan(bomb)
    db = tmp_path / "W.duckdb"
    with Warehouse(db) as wh:
        with pytest.raises(IngestError, match=r"bomb\.qrels\.gz: cannot read the file: it inflates to more than"):
            wh.ingest_qrels(bomb, collection="c")
    # text-like gzip within the ratio is read as ever
    fine = tmp_path / "fine.qrels.gz"
    fine.write_bytes(gzip.compress("".join(f"{q} 0 d{q}-{d} {d % 2}\n" for q in range(200) for d in range(500)).encode()))
    assert len(formats.read_bytes(fine)) > 1 << 20


def test_a_long_line_is_found_while_streaming(tmp_path: Path) -> None:
    """Issue 52, class 4: the qrels reader found a long line only after reading the whole file
    into memory; the scan finds it as the file streams by (lines across chunk boundaries too)."""
    from evalwh.io import formats

    for body in (b"1 0 a 1\n" + b"x" * (formats.MAX_LINE + 10) + b"\n1 0 b 1\n",
                 b"1 0 a 1\n" * 200_000 + b"y" * (3 * formats.MAX_LINE),
                 b"1 0 a 1\n" + b"z" * (formats.MAX_LINE // 2) + b" " + b"z" * (formats.MAX_LINE // 2 + 10) + b"\n"):  # fmt: skip
        path = tmp_path / "q.txt"
        path.write_bytes(body)
        assert formats.scan(path).long_line
    path.write_bytes(b"1 0 a 1\n" + b"w" * formats.MAX_LINE + b"\r\n")
    assert not formats.scan(path).long_line
    db = tmp_path / "W.duckdb"
    path.write_bytes(b"1 0 a 1\n" + b"x" * (formats.MAX_LINE + 10) + b"\n")
    text = one_line(invoke("ingest", "qrels", path, "-c", "c", "--db", db))
    assert text.endswith("q.txt:2: " + formats.TOO_LONG), text


def test_an_endless_pipe_stops_before_the_disk_fills(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 52, class 4: a FIFO fed without end was copied to the temporary folder until the
    disk was full; the copy stops at its bound (lowered here) and is removed."""
    import tempfile

    from evalwh.io import formats
    from test_probe3_inputs import Endless

    monkeypatch.setattr(formats, "STREAM_BYTES", 8 << 20)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    pipe = Endless(tmp_path / "endless.txt", b"1 Q0 a 1 5.0 r\n")
    try:
        db = tmp_path / "W.duckdb"
        with Warehouse(db) as wh:
            with pytest.raises(IngestError, match=r"endless\.txt: the stream holds more than 8 MiB, the most evalwh copies"):
                wh.ingest_runs([pipe.path], collection="c")
    finally:
        pipe.stop()
    assert list((tmp_path / "tmp").iterdir()) == []


def test_sigterm_removes_the_copy_of_a_stream(tmp_path: Path) -> None:
    """Issue 52, class 4: SIGTERM during the copy of a pipe left the copy behind; it is taken
    as Ctrl-C is (exit 130, the line says nothing was committed) and the copy goes."""
    import os
    import signal
    import subprocess
    import sys
    import threading
    import time

    pipe = tmp_path / "slow.txt"
    os.mkfifo(pipe)
    stop = threading.Event()

    def feed() -> None:
        import contextlib

        with contextlib.suppress(OSError), open(pipe, "wb") as out:  # (EPIPE once the reader is gone)
            while not stop.is_set():
                out.write(b"1 Q0 a 1 5.0 r\n" * 100)
                out.flush()
                time.sleep(0.01)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    db = tmp_path / "W.duckdb"
    process = subprocess.Popen(
        [sys.executable, "-m", "evalwh", "ingest", "runs", str(pipe), "-c", "c", "--db", str(db)],
        env=env, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not any(p.name.startswith("evalwh-ingest-") for p in temp.iterdir()) and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    finally:
        stop.set()
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err
    assert err.strip().count("\n") == 0, err
    assert [p.name for p in temp.iterdir() if p.name.startswith("evalwh-ingest-")] == []


# -- class 2: "as they were" after a commit -------------------------------------------------------


@pytest.fixture
def synthetic_db(tmp_path: Path) -> Path:
    path = tmp_path / "S.duckdb"
    _synthetic(path=path).close()
    return path


def _siblings(db: Path) -> dict[str, str]:
    return {p.name: digest(p) for p in sorted(db.parent.iterdir()) if p.is_file()}


def test_outputs_are_checked_before_a_writer_commits(synthetic_db: Path, tmp_path: Path) -> None:
    """Issue 52, class 2: `-o` into a missing folder and `--figure` onto the warehouse are
    refused before `pool build` / `experiment budget` store anything."""
    db = synthetic_db
    before = _siblings(db)
    text = one_line(invoke("pool", "build", "-c", "s", "--depth", "5", "--runs-from", "all", "-o", tmp_path / "missing" / "p.csv", "--db", db))
    assert text.endswith("p.csv: the folder " + str(tmp_path / "missing") + " does not exist; nothing was done"), text
    text = one_line(invoke("experiment", "budget", "-c", "s", "--runs-from", "all", "--depth", "5", "--budgets", "50%",
                           "--strategies", "depth", "--figure", db, "--experiment-id", "e", "--db", db))  # fmt: skip
    assert "refusing to write output over it" in text, text
    assert _siblings(db) == before
    with Warehouse.open_reader(db) as wh:
        assert wh.df("SELECT count(*) AS n FROM pools")["n"].iloc[0] == 0
        assert wh.df("SELECT count(*) AS n FROM budget_results")["n"].iloc[0] == 0


def test_a_failed_output_after_the_commit_says_what_was_committed(synthetic_db: Path) -> None:
    """Issue 52, class 2: when the output fails after the commit (/dev/full), the line no
    longer says "as they were": it says the warehouse holds the command's changes."""
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    text = one_line(invoke("pool", "build", "-c", "s", "--depth", "5", "--runs-from", "all", "-o", "/dev/full", "-f", "csv", "--db", synthetic_db))
    assert "the command had committed its changes to the warehouse before this failed (it holds them)" in text, text
    assert "as they were;" not in text and not text.endswith("the warehouse and the output files are as they were")
    with Warehouse.open_reader(synthetic_db) as wh:
        assert wh.df("SELECT count(*) AS n FROM pools")["n"].iloc[0] == 1


def test_pool_bias_checks_its_options_before_it_commits(synthetic_db: Path) -> None:
    """Issue 52, class 2: `experiment pool-bias` stored the completed qrels set (Q*) and only
    then found a pool width above the runs there are; now the one line comes with the
    warehouse byte for byte as before."""
    before = _siblings(synthetic_db)
    text = one_line(invoke("experiment", "pool-bias", "-c", "s", "--widths", "50", "--repeats", "2",
                           "--topic-samples", "2", "--common-topics", "2", "--db", synthetic_db))  # fmt: skip
    assert "50" in text and "committed" not in text, text
    assert _siblings(synthetic_db) == before


def test_a_closed_standard_output_after_the_commit_is_reported(synthetic_db: Path) -> None:
    """Issue 52, class 2: a writer whose standard output was closed after its commit exited 0
    in silence (the rule for filters such as `| head -1`); it now ends with one line saying the
    warehouse holds its changes, and exit code 1. A reader keeps the quiet exit 0."""
    import os
    import subprocess
    import sys

    cli = [sys.executable, "-c", "from evalwh.__main__ import main; main()"]

    def closed(*args: object) -> subprocess.CompletedProcess[str]:
        read, write = os.pipe()
        os.close(read)  # the reader went away before the first byte
        try:
            return subprocess.run([*cli, *map(str, args)], stdout=write, stderr=subprocess.PIPE, text=True, timeout=600)
        finally:
            os.close(write)

    done = closed("experiment", "pool-bias", "-c", "s", "--widths", "2", "--repeats", "2", "--topic-samples", "2",
                  "--common-topics", "2", "--db", synthetic_db)  # fmt: skip
    assert done.returncode == 1 and done.stderr == (
        "Error: standard output was closed; the command had committed its changes to the warehouse "
        "before it wrote its output (it holds them)\n"
    ), done.stderr
    with Warehouse.open_reader(synthetic_db) as wh:
        assert wh.df("SELECT count(*) AS n FROM pool_experiments")["n"].iloc[0] == 1
    reader = closed("eval", "-c", "s", "-m", "P@10", "--db", synthetic_db)
    assert (reader.returncode, reader.stderr) == (0, "")


def test_ctrl_c_in_a_replay_before_its_store_says_nothing_was_committed(synthetic_db: Path) -> None:
    """Issue 52, class 2: the replay's scoring commits temporary tables only; a Ctrl-C right
    after that commit said "had committed its changes" while the file was byte-identical."""
    import os
    import subprocess
    import sys

    before = _siblings(synthetic_db)
    result = subprocess.run(
        [sys.executable, "-m", "evalwh", "experiment", "budget", "-c", "s", "--runs-from", "all", "--depth", "5",
         "--budgets", "50%", "--strategies", "depth", "--experiment-id", "e", "--db", str(synthetic_db)],
        env={**os.environ, "EVALWH_TEST_INTERRUPT": "after-commit"}, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 130, result.stderr
    assert result.stderr.strip().splitlines()[-1] == "Interrupted; nothing was committed by the interrupted command."
    assert _siblings(synthetic_db) == before


def test_hybrid_stores_results_and_sets_in_one_transaction(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Issue 52, class 2: the hybrid stored its results and its label sets in two transactions;
    a failure storing the sets left the results (a WAL replay replaced them with the sets missing)."""
    from evalwh.methods import budget
    from evalwh.store.ingest.qrels import Provenance, _ingest_qrels

    wh = _synthetic(seed=2, path=tmp_path / "H.duckdb")
    truth = wh.df("SELECT query_id, doc_id, relevance FROM qrels WHERE qrels_id = 'default'")
    frame = budget.simulated_judge(truth, bias=2.5, seed=4)
    with wh.transaction():
        judged = frame.rename(columns={"topic_id": "query_id", "annotation": "relevance"})[["query_id", "doc_id", "relevance"]]
        _ingest_qrels(wh, judged, "DataFrame", "s", "llm", False, Provenance(source="llm"))
        wh.con.register("p", frame)
        wh.con.execute("INSERT INTO judgment_probabilities SELECT 's', 'llm', topic_id, doc_id, [prob_no, prob_yes], prob_yes FROM p")

    def full_disk(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    from evalwh.methods.budget import hybrids

    monkeypatch.setattr(hybrids, "_store_hybrid_sets", full_disk)
    with pytest.raises(OSError):
        wh.budget(collection="s", machine="llm", budgets=["20%"], selections=["random"], experiment_id="h", store_sets=True)
    assert wh.df("SELECT count(*) AS n FROM budget_results")["n"].iloc[0] == 0
    assert wh.df("SELECT count(*) AS n FROM budget_experiments")["n"].iloc[0] == 0
    wh.close()


# -- class 5: trusting files -------------------------------------------------------------------


@pytest.fixture(scope="module")
def rich_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An export holding every later table: a pool with its runs and order, a budget replay, LLM
    probabilities, an ir_metadata block, conventions."""
    from evalwh.methods import budget
    from evalwh.store.ingest.qrels import Provenance, _ingest_qrels

    folder = tmp_path_factory.mktemp("rich")
    wh = _synthetic(path=folder / "R.duckdb")
    run = folder / "meta.txt"
    run.write_text("# ir_metadata.start\n# tag: meta\n# method:\n#   automatic: true\n# ir_metadata.end\n0 Q0 d0-1 1 2.0 meta\n0 Q0 d0-2 2 1.0 meta\n")
    wh.ingest_runs([run], collection="s")
    wh.build_pool(collection="s", depth=5, runs_from="all", pool_id="p5")
    wh.budget(collection="s", strategies=["depth"], budgets=["50%"], runs_from="all", depth=5, experiment_id="e")
    truth = wh.df("SELECT query_id, doc_id, relevance FROM qrels WHERE qrels_id = 'default'")
    frame = budget.simulated_judge(truth, bias=2.5, seed=4)
    with wh.transaction():
        judged = frame.rename(columns={"topic_id": "query_id", "annotation": "relevance"})[["query_id", "doc_id", "relevance"]]
        _ingest_qrels(wh, judged, "DataFrame", "s", "llm", False, Provenance(source="llm"))
        wh.con.register("p", frame)
        wh.con.execute("INSERT INTO judgment_probabilities SELECT 's', 'llm', topic_id, doc_id, [prob_no, prob_yes], prob_yes FROM p")
        wh.con.execute("INSERT INTO collection_conventions (collection_id, measures, baselines, judged_depth) VALUES ('s', ['P@10'], ['run0'], 5)")
    wh.close()
    with Warehouse.open_reader(folder / "R.duckdb", allowed_directories=[folder]) as reader:
        reader.export(folder / "exported")
    return folder / "exported"


@pytest.fixture
def export_copy(rich_export: Path, tmp_path: Path) -> Path:
    import shutil

    target = tmp_path / "exported"
    shutil.copytree(rich_export, target)
    return target


LATER_TABLE_CASES = [
    ("pool_order", lambda f: _set(f, "pool_id", 0, "nowhere"), "pool 'nowhere' is not among the pools"),
    ("judgment_probabilities", lambda f: _set(f, "prob_relevant", 0, 1.5), "are not in [0, 1] or sum above 1"),
    ("budget_results", lambda f: _set(f, "kendall_tau_b", 0, 5.0), "tau_b 5.0 or tau_ap"),
    ("budget_results", lambda f: _set(f, "experiment_id", 0, "gone"), "experiment 'gone' is not among the budget experiments"),
    ("budget_experiments", lambda f: _set(f, "params", 0, "{not json"), "params '{not json' is not JSON"),
    ("run_ir_metadata", lambda f: _set(f, "metadata", 0, "{broken"), "metadata '{broken' is not a JSON object"),
    ("run_ir_metadata", lambda f: _set(f, "run_id", 0, "ghost"), "run 'ghost' is not among the runs"),
    ("pools", lambda f: _set(f, "depth", 0, -5), "depth -5 is not a whole number >= 1"),
    ("pool_runs", lambda f: _set(f, "run_id", 0, "ghost"), "run 'ghost' is not among the runs"),
    ("pool_runs", lambda f: pd.concat([f, f.iloc[[0]]], ignore_index=True), "repeats the pool_id, run_id of row 1"),
    ("collection_conventions", lambda f: _set(f, "judged_depth", 0, -1), "judged_depth -1 is not a whole number >= 1"),
]


@pytest.mark.parametrize(("table", "change", "problem"), LATER_TABLE_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(LATER_TABLE_CASES)])
def test_import_checks_every_later_table(export_copy: Path, tmp_path: Path, table: str, change, problem: str) -> None:  # type: ignore[no-untyped-def]
    """Issue 52, class 5: import checks the tables of pools, budgets, probabilities, ir_metadata
    and conventions as it checks the older ones: one line, nothing stored."""
    from test_probe2 import tamper

    rows = None
    if "repeats" in problem:
        manifest = __import__("json").loads((export_copy / "manifest.json").read_text())
        rows = manifest["tables"][table]["files"][0]["rows"] + 1
    tamper(export_copy, table, change, rows=rows)
    db = tmp_path / "I.duckdb"
    with Warehouse(db) as wh:
        wh.ingest_qrels(QRELS, collection="other")
    before = digest(db)
    text = one_line(invoke("import", export_copy, "--db", db))
    assert problem in text, text
    assert digest(db) == before


def test_import_of_the_untampered_export_round_trips(rich_export: Path, tmp_path: Path) -> None:
    """The rules refuse nothing a real export holds."""
    with Warehouse(tmp_path / "I.duckdb") as wh:
        imported = wh.import_export(rich_export)
    for table in ("pools", "pool_runs", "pool_order", "judgment_probabilities", "budget_results", "run_ir_metadata", "collection_conventions"):
        assert imported.get(table, 0) > 0, table


def test_spark_runs_parquet_checks_as_import(export_copy: Path) -> None:
    """Issue 52, class 5: `spark eval --runs-parquet` checked no checksum, row count or duplicate
    key, and read a manifest path that is absolute from anywhere; it checks as import does,
    before Spark reads a file."""
    import json

    from evalwh.spark import CONTEXT_TABLES, register_export
    from test_probe2 import tamper

    manifest_path = export_copy / "manifest.json"
    original = manifest_path.read_text()
    table = next(t for t in CONTEXT_TABLES if t != "qrels" and json.loads(original)["tables"].get(t, {}).get("files"))
    path = export_copy / json.loads(original)["tables"][table]["files"][0]["path"]
    data = path.read_bytes()
    path.write_bytes(data[:-8] + b"XXXXXXXX")
    with pytest.raises(EvalWhError, match="SHA-256 differs from the manifest"):
        register_export(None, export_copy, CONTEXT_TABLES)
    path.write_bytes(data)
    manifest = json.loads(original)
    manifest["tables"][table]["files"][0]["path"] = str(path.resolve())
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(EvalWhError, match="is not a path inside the export"):
        register_export(None, export_copy, CONTEXT_TABLES)
    manifest_path.write_text(original)
    tamper(export_copy, "runs", lambda f: pd.concat([f, f.iloc[[0]]], ignore_index=True))
    with pytest.raises(EvalWhError, match="rows, the manifest says|repeats the"):
        register_export(None, export_copy, CONTEXT_TABLES)


# -- class 8: messages and the Python API's arguments ---------------------------------------------


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        (["--budgets", ""], "budget: give at least one budget"),
        (["--seeds=-1"], "budget: seed -1: a seed is a whole number >= 0"),
        (["--experiment-id", "a b"], "experiment id argument: 'a b' holds whitespace"),
        (["--budgets", "1_0"], "budget: '1_0' is neither a share of the pool"),
    ],
)
def test_budget_options_are_one_line(synthetic_db: Path, options: list[str], problem: str) -> None:
    """Issue 52, class 8: `--budgets ''` and `--seeds=-1` ended in `unexpected ValueError`;
    `--experiment-id 'a b'` made set ids with a space."""
    before = _siblings(synthetic_db)
    text = one_line(invoke("experiment", "budget", "-c", "s", "--runs-from", "all", "--depth", "5",
                           "--strategies", "depth", *options, "--db", synthetic_db))  # fmt: skip
    assert problem in text, text
    assert _siblings(synthetic_db) == before


def test_python_api_arguments_are_checked_as_the_cli_options() -> None:
    """Issue 52, class 8: `strategies='depth'` was split into characters; alpha=1.5, rrf_k=nan,
    depth='5', agreement(binary_at=nan) were accepted or bare TypeErrors."""
    wh = _synthetic()
    rows = wh.budget(collection="s", strategies="depth", budgets="50%", runs_from="all", depth=5, store=False)
    assert set(rows["strategy"]) == {"depth"} and len(rows) == 1 and rows["budget_share"].iloc[0] == pytest.approx(0.5, abs=0.02)
    for options, message in (
        ({"alpha": 1.5}, r"budget: alpha 1\.5: expected a number in \(0, 1\)"),
        ({"rrf_k": math.nan}, r"budget: rrf_k nan: expected a number >= 0"),
        ({"depth": "5"}, r"budget: depth '5': expected a whole number >= 1"),
        ({"depth": 5.5}, r"budget: depth 5\.5: expected a whole number >= 1"),
        ({"seeds": [-1]}, r"budget: seed -1"),
        ({"strategies": ["depth", 3]}, r"budget: strategies: 3 is not a name"),
    ):
        with pytest.raises(ArgumentError, match=message):
            wh.budget(collection="s", **{"strategies": ["depth"], "budgets": ["50%"], "runs_from": "all", "depth": 5, "store": False, **options})
    with pytest.raises(IngestError, match=r"experiment id argument: 'a b' holds whitespace"):
        wh.budget(collection="s", strategies=["depth"], budgets=["50%"], runs_from="all", depth=5, experiment_id="a b")
    wh.ingest_qrels(wh.df("SELECT query_id, doc_id, relevance FROM qrels WHERE qrels_id = 'default'"), collection="s", qrels_id="copy")
    with pytest.raises(ArgumentError, match=r"agreement: binary_at nan: expected a finite number"):
        wh.agreement("default", "copy", collection="s", binary_at=math.nan)
    assert len(wh.agreement("default", "copy", collection="s", binary_at=1)) == 1


def test_ir_datasets_log_lines_are_held_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 52, class 8: ir_datasets printed 5-7 log lines before evalwh's one error."""
    ir_datasets = pytest.importorskip("ir_datasets")
    log = ir_datasets.log.easy("ir_datasets.test_probe4")

    def noisy_load(name: str) -> None:
        for i in range(6):
            (log.info if i % 2 else log.warn)(f"step {i} of downloading {name}")
        raise KeyError(name)

    monkeypatch.setattr(ir_datasets, "load", noisy_load)
    result = invoke("ingest", "qrels", "irds:nowhere/x", "-c", "c", "--db", tmp_path / "W.duckdb")
    text = one_line(result)
    assert text == "Error: irds:nowhere/x: ir_datasets has no dataset 'nowhere/x' (ir_datasets list names them)"


# SIGINT sent by the process to itself when a module is first looked up: a point of the start-up
# named exactly, not a timer. The launcher is named `evalwh` and does what the console script
# does (or what `python -m evalwh` does), so that evalwh.__main__ takes the process as the CLI's.
_LAUNCHER = """\
import os, signal, sys

class Interrupting:
    def find_spec(self, name, path=None, target=None):
        if name == TARGET:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None

TARGET = os.environ["EVALWH_PROBE_TARGET"]
sys.meta_path.insert(0, Interrupting())
if os.environ.get("EVALWH_PROBE_AS") == "module":
    import runpy
    runpy.run_module("evalwh", run_name="__main__", alter_sys=True)
else:
    from evalwh.__main__ import main
    sys.exit(main())
"""


@pytest.mark.parametrize(
    ("target", "how"),
    [
        ("evalwh.cli.eval", "script"),  # typer loads the command's module: it exited 130 in silence
        ("evalwh.cli.eval", "module"),  # the same through python -m evalwh
        ("evalwh.store.connection", "script"),  # the command's error handling imports DuckDB
        ("evalwh.cli._lazy", "script"),  # the CLI's own modules (main's import)
    ],
)
def test_ctrl_c_while_the_cli_starts_is_one_line_at_every_point(tmp_path: Path, target: str, how: str) -> None:
    """Issue 52, class 8: a Ctrl-C in the first quarter second printed a traceback (while
    evalwh.__main__'s modules imported) or nothing (exit 130 in silence: typer takes a
    KeyboardInterrupt while it parses the command line and loads the command's module, before
    the command's own error handling). Now each is one line and exit code 130."""
    import os
    import subprocess
    import sys

    launcher = tmp_path / "evalwh"
    launcher.write_text(_LAUNCHER)
    env = {**os.environ, "EVALWH_PROBE_TARGET": target, "EVALWH_PROBE_AS": how}
    done = subprocess.run(
        [sys.executable, str(launcher), "eval", "-c", "c", "-m", "P@10", "--db", str(tmp_path / "none.duckdb")],
        env=env, capture_output=True, text=True, timeout=300, preexec_fn=_default_sigint,
    )  # fmt: skip
    # (the start-up's line, or the command's own where its error handling had begun)
    lines = ("Interrupted; nothing was changed.\n", "Interrupted; nothing was committed by the interrupted command.\n")
    assert done.returncode == 130 and done.stderr in lines, (done.returncode, done.stderr)
    assert not (tmp_path / "none.duckdb").exists()


def _default_sigint() -> None:
    """A child takes Ctrl-C as a user's shell gives it (a test run in the background ignores it)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_inside_a_command_is_still_the_commands() -> None:
    """Issue 52, class 8: the start-up's handler hands a SIGINT inside a command (the watcher
    thread's interrupt_main, the quick paths) to the command as KeyboardInterrupt, which says
    what was committed (outside, it ends the process: the start-up tests above)."""
    import sys

    from evalwh import __main__ as entry
    from evalwh.cli._errors import handle_errors

    @handle_errors
    def command() -> None:
        entry._interrupted(2, sys._getframe())

    with pytest.raises(SystemExit) as caught:
        command()
    assert caught.value.code == 130  # (handle_errors took the KeyboardInterrupt: its line, 130)
    quick: dict[str, object] = {"entry": entry, "sys": sys}  # a function named as main's quick paths, in its file
    exec(compile("def _trec_eval():\n    entry._interrupted(2, sys._getframe())\n", entry.__file__, "exec"), quick)
    with pytest.raises(KeyboardInterrupt):
        quick["_trec_eval"]()  # type: ignore[operator]


# -- class 2, every writer: an output that fails leaves the warehouse as it was or says so ----------

# Every command that writes the warehouse, with an output it writes after (or around) its work.
# ``{db}`` is the warehouse, ``{files}`` a folder of small inputs (a qrels and a run file of a
# collection ``x``, an exclusion file, run metadata, an export of collection ``y``), ``{out}`` the
# output tried. Commands with ``-o`` are tried with an output into a missing folder, /dev/full
# and the warehouse itself; every command with standard output closed. Readers cannot commit
# (`Warehouse.open_reader`) and are not listed: agreement, sensitivity, label-uncertainty, meta,
# qrels diff, pool order, pool export, experiment exclusions, plot, export, ... .
WRITERS: dict[str, list[str]] = {
    "eval --store": ["eval", "-c", "s", "-m", "P@10", "--store"],
    "eval --into": ["eval", "--qrels", "{files}/x.qrels", "{files}/xrun.txt", "-c", "x", "-m", "P@10", "--into", "{db}"],
    "matrix --store": ["matrix", "-c", "s", "-m", "P", "-d", "5,10", "--store"],
    "bounds --store": ["bounds", "-c", "s", "--depths", "5,10", "--store"],
    "adjust": ["adjust", "run3", "-c", "s", "--pool", "p3", "--resamples", "20"],
    "sql --write": ["sql", "--write", "CREATE TABLE notes AS SELECT 1 AS x; SELECT * FROM notes"],
    "report (ingesting)": ["report", "--qrels", "{files}/x.qrels", "{files}/xrun.txt", "-c", "x", "-f", "md", "--measures", "P@10"],
    "experiment swap-rates": ["experiment", "swap-rates", "-c", "s", "-m", "P@10", "-B", "3", "--cap", "10", "--experiment-id", "sw"],
    "experiment reduced-qrels": ["experiment", "reduced-qrels", "-c", "s", "-m", "P@10", "--levels", "50", "--cap", "10", "--experiment-id", "rq"],
    "experiment pool-bias": ["experiment", "pool-bias", "-c", "s", "--widths", "2", "--repeats", "2", "--topic-samples", "2",
                             "--common-topics", "2", "--experiment-id", "pb"],  # fmt: skip
    "experiment budget": ["experiment", "budget", "-c", "s", "--runs-from", "all", "--depth", "5", "--budgets", "50%",
                          "--strategies", "depth", "--experiment-id", "b"],  # fmt: skip
    "pool build": ["pool", "build", "-c", "s", "--depth", "5", "--runs-from", "all", "--pool-id", "p5"],
    "pool complete": ["pool", "complete", "-c", "s", "--completed-id", "done"],
    "audit draw": ["audit", "draw", "a1", "-c", "s", "--machine", "llm", "--share", "0.5", "--seed", "1"],
    "audit declare": ["audit", "declare", "a2", "-c", "s", "--labels", "default", "--machine", "llm"],
    "demo": ["demo", "--out", "{here}/demo"],
    "conventions": ["conventions", "-c", "s", "--measures", "P@10"],
    "exclusions add": ["exclusions", "add", "{files}/excluded.txt", "-c", "s"],
    "exclusions identical-ids": ["exclusions", "identical-ids", "-c", "s"],
    "exclusions remove": ["exclusions", "remove", "old.txt", "-c", "s"],
    "ingest qrels": ["ingest", "qrels", "{files}/x.qrels", "-c", "s", "--qrels-id", "more"],
    "ingest runs": ["ingest", "runs", "{files}/xrun.txt", "-c", "s", "--run-id", "more"],
    "ingest run-metadata": ["ingest", "run-metadata", "{files}/meta.tsv", "-c", "s"],
    "import": ["import", "{files}/exported"],
}
# the writers whose output is a file (-o): all but those that print a few lines
WITH_OUTPUT = [name for name in WRITERS if not name.startswith(("conventions", "exclusions", "ingest", "import", "demo"))]
# the command's own committed line, and the two lines that say nothing changed
COMMITTED = ("the command had committed its changes to the warehouse", "(it holds them)")


@pytest.fixture(scope="module")
def writers_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small warehouse each writer can work on (a pool of three runs, a machine's label set, a
    stored exclusion file) and the folder of inputs the writers read."""
    from evalwh.methods import budget

    folder = tmp_path_factory.mktemp("writers")
    files = folder / "files"
    files.mkdir()
    (files / "x.qrels").write_text("".join(f"{t} 0 e{t}-{j} {int(j < 2)}\n" for t in range(3) for j in range(5)))
    (files / "xrun.txt").write_text("".join(f"{t} Q0 e{t}-{j} {j + 1} {5 - j} xr\n" for t in range(3) for j in range(5)))
    (files / "excluded.txt").write_text("0 d0-1\n1 d1-2\n")
    (files / "old.txt").write_text("2 d2-3\n")
    (files / "meta.tsv").write_text("run_id\tgroup\ttype\tpooled\nrun0\tg\tautomatic\ttrue\n")
    other = _synthetic(n_topics=2, n_runs=2, depth=3, seed=5)
    other.con.execute("UPDATE runs SET collection_id = 'y'")  # (a collection the warehouse lacks)
    with Warehouse(folder / "Y.duckdb") as y:
        y.ingest_qrels(other.df("SELECT query_id, doc_id, relevance FROM qrels"), collection="y")
        y.ingest_runs(other.df("SELECT run_id, query_id, doc_id, score FROM run_results"), collection="y")
    other.close()
    with Warehouse.open_reader(folder / "Y.duckdb", allowed_directories=[files]) as y:
        y.export(files / "exported")
    wh = _synthetic(path=folder / "W.duckdb")
    wh.build_pool(collection="s", depth=5, runs=["run0", "run1", "run2"], pool_id="p3")
    truth = wh.df("SELECT query_id, doc_id, relevance FROM qrels WHERE qrels_id = 'default'")
    budget.simulated_judge(truth, bias=1.0, seed=3).to_csv(files / "llm.csv", index=False)
    wh.ingest_qrels(files / "llm.csv", collection="s", qrels_id="llm", source="llm")
    wh.add_exclusions(files / "old.txt", collection="s", name="old.txt")
    wh.close()
    return folder


@pytest.fixture
def writer_db(writers_template: Path, tmp_path: Path) -> Path:
    import shutil

    shutil.copy(writers_template / "W.duckdb", tmp_path / "W.duckdb")
    return tmp_path / "W.duckdb"


def _writer_argv(name: str, db: Path, files: Path, *extra: object) -> list[str]:
    argv = [part.format(db=db, files=files, here=db.parent) for part in WRITERS[name]]
    return [*argv, *map(str, extra), *([] if "--into" in argv else ["--db", str(db)])]


def _holds_the_truth(text: str, db: Path, before: dict[str, str]) -> None:
    """One line that says what is true: nothing changed (and the warehouse is byte for byte as
    before), or the command had committed (and the warehouse holds its changes)."""
    if all(part in text for part in COMMITTED) or "Interrupted after the command had committed" in text:
        assert _siblings(db) != before, f"says committed, but the warehouse is as it was: {text}"
    else:
        assert _siblings(db) == before, f"the warehouse changed, but the line does not say so: {text}"


def test_every_writer_works_on_the_fixture(writers_template: Path, writer_db: Path, tmp_path: Path) -> None:
    """The table's commands succeed as given and change the warehouse (so the cases below try a
    commit, not a refusal)."""
    for name in WRITERS:
        db = tmp_path / f"{len(name)}-{name.replace(' ', '_')}.duckdb"
        import shutil

        shutil.copy(writer_db, db)
        before = _siblings(db)
        result = invoke(*_writer_argv(name, db, writers_template / "files"))
        assert result.exit_code == 0, (name, result.output)
        assert {k: v for k, v in _siblings(db).items() if k.startswith(db.name)} != {
            k: v for k, v in before.items() if k.startswith(db.name)
        }, name


@pytest.mark.parametrize(
    ("name", "output"),
    [(name, output) for name in WITH_OUTPUT for output in ("missing", "/dev/full", "warehouse", "wal")]
    + [("experiment budget", "figure")],  # (the one writer that draws a figure)
)
def test_a_writers_failed_output_leaves_the_warehouse_or_says_it_committed(
    writers_template: Path, writer_db: Path, tmp_path: Path, name: str, output: str
) -> None:
    """Issue 52, class 2: for every writer, an output that cannot be written (a missing folder,
    /dev/full, the warehouse or its WAL, a figure onto the warehouse) gives one line, and the
    warehouse is byte for byte as before, or the line says the command had committed."""
    if output == "/dev/full" and not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    option = "--figure" if output == "figure" else "-o"
    target = {"missing": tmp_path / "missing" / "out.csv", "/dev/full": "/dev/full", "warehouse": writer_db,
              "wal": f"{writer_db}.wal", "figure": writer_db}[output]  # fmt: skip
    before = _siblings(writer_db)
    fmt = [] if output == "figure" else ["-f", "csv"] if not name.startswith("report") else []
    result = invoke(*_writer_argv(name, writer_db, writers_template / "files", option, target, *fmt))
    text = one_line(result)
    if output != "/dev/full":  # refused before any work
        assert "committed" not in text, text
        assert _siblings(writer_db) == before, text
    _holds_the_truth(text, writer_db, before)


@pytest.mark.parametrize("name", list(WRITERS))
def test_a_writer_whose_standard_output_is_closed_says_what_it_committed(
    writers_template: Path, writer_db: Path, name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 52, class 2: every writer run with standard output closed (`>&-`, which
    evalwh.__main__ turns into its closed-output stream, as here) gives one line, and the
    warehouse is byte for byte as before or the line says the command had committed."""
    import sys

    from evalwh.__main__ import _ClosedOutput
    from evalwh.cli import app

    before = _siblings(writer_db)
    monkeypatch.setattr(sys, "stdout", _ClosedOutput())
    with pytest.raises(SystemExit) as caught:
        app(_writer_argv(name, writer_db, writers_template / "files"))
    text = capsys.readouterr().err.strip()
    assert caught.value.code == 1, (caught.value.code, text)
    assert "\n" not in text and "Traceback" not in text and "unexpected" not in text, text
    assert "standard output" in text, text
    _holds_the_truth(text, writer_db, before)


def test_a_closed_standard_output_is_held_so_no_file_takes_its_place(writer_db: Path, tmp_path: Path) -> None:
    """Issue 52, class 2: with standard output closed (`>&-`) the first file the process opened
    took descriptor 1, and that was the warehouse (O_RDWR): whatever wrote to standard output
    below Python (a C library's printf, a child process) wrote into it. The CLI now holds a
    closed descriptor 0-2 with /dev/null, and standard output still counts as closed."""
    import os
    import subprocess
    import sys

    launcher = tmp_path / "evalwh"  # (as the console script, which evalwh.__main__ recognises)
    launcher.write_text(
        "import os, sys\n"
        "from evalwh.__main__ import main\n"
        "seen = os.readlink('/proc/self/fd/1') if os.path.exists('/proc/self/fd/1') else 'closed'\n"
        "sys.stderr.write(seen + '\\n')\n"
        "main()\n"
    )
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("no /proc")
    done = subprocess.run(
        [sys.executable, str(launcher), "conventions", "-c", "s", "--measures", "AP", "--db", str(writer_db)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=300,
        preexec_fn=lambda: os.close(1),
    )  # fmt: skip
    seen, line = done.stderr.splitlines()
    assert seen == "/dev/null", seen
    assert done.returncode == 1 and "standard output is closed" in line and "(it holds them)" in line, line
    with Warehouse.open_reader(writer_db) as wh:
        assert wh.df("SELECT measures FROM collection_conventions")["measures"].iloc[0].tolist() == ["AP"]
