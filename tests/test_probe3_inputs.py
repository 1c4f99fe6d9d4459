"""The third reliability probe (issue #37), its input classes: bounded reads, strict imports,
full disks that give their space back, the JSON-lines number grammar, newer warehouses, the
demo on a full disk, and spreadsheet-safe CSV.

Each class of docs/safety.md's third probe table (the rows of items 1, 2, 3, 5, 6, 9, 11) has
its tests here. "Refused" means one line, exit 1, and the warehouse, its siblings and the
output files byte for byte as before.
"""

from __future__ import annotations

import contextlib
import doctest
import gzip
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalwh import Warehouse
from evalwh.errors import IngestError
from evalwh.io import formats, judgments

# the small collection, the CLI runner and the one-line check of the first probe's tests
from test_safety import QRELS, RUNS, digest, invoke, one_line_error  # noqa: E402
from test_probe2 import tamper  # noqa: E402

PROMPT = "Judge the passage for the query on a 0-3 scale.\n"
RECORDS = [
    {"qid": "1", "docid": "a", "judgment": 2, "reasoning": "on topic", "prompt": "judge a"},
    {"qid": "1", "docid": "b", "judgment": 0, "reasoning": "off topic", "prompt": "judge b"},
    {"qid": "2", "docid": "c", "judgment": 1, "score": 0.6},
]


def state(db: Path) -> dict[str, str]:
    """The warehouse file and its siblings, by content."""
    return {p.name: digest(p) for p in sorted(db.parent.iterdir()) if p.is_file()}


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A warehouse with a human set, an LLM set with a prompt, details and per-record prompts,
    and its export (``exported`` beside it); built once, copied by each test."""
    folder = tmp_path_factory.mktemp("source")
    path = folder / "W.duckdb"
    prompt = folder / "prompt.txt"
    prompt.write_text(PROMPT)
    records = folder / "llm.jsonl"
    records.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    with Warehouse(path) as wh:
        wh.ingest_qrels(QRELS, collection="c")
        wh.ingest_runs(RUNS, collection="c")
        wh.ingest_qrels(records, collection="c", qrels_id="llm", source="llm", judge="umbrela", model="m", prompt=prompt, round=1)
    with Warehouse.open_reader(path, allowed_directories=[folder]) as wh:
        wh.export(folder / "exported")
    prompt.unlink()
    records.unlink()
    return path


@pytest.fixture
def db(source: Path, tmp_path: Path) -> Path:
    path = tmp_path / "W.duckdb"
    shutil.copy(source, path)
    return path


# -- 1. every input has a bound; a device or an endless stream is refused at once ----------------


class Endless:
    """A named pipe that a thread writes without end (``yes > fifo``) until the reader is gone."""

    opened: list[Endless] = []

    def __init__(self, path: Path, line: bytes = b"y\n") -> None:
        self.path = path
        os.mkfifo(path)
        self.thread = threading.Thread(target=self._write, args=(line * 4096,), daemon=True)
        self.thread.start()
        Endless.opened.append(self)

    def _write(self, block: bytes) -> None:
        with contextlib.suppress(OSError), open(self.path, "wb") as out:
            while True:
                out.write(block)

    def stop(self) -> None:
        """Open and close the reading end, so a writer still waiting for a reader ends (EPIPE)."""
        with contextlib.suppress(OSError):
            os.close(os.open(self.path, os.O_RDONLY | os.O_NONBLOCK))
        self.thread.join(timeout=10)


@pytest.fixture(autouse=True)
def _stop_endless_pipes():
    yield
    while Endless.opened:
        Endless.opened.pop().stop()


def _inputs(tmp_path: Path, kind: str, suffix: str, limit: int) -> Path:
    """A device (through a link: ``x.sql -> /dev/zero``), an endless named pipe, or a regular
    file one byte over ``limit``."""
    if kind == "device":
        link = tmp_path / f"zero{suffix}"
        link.symlink_to("/dev/zero")
        return link
    if kind == "pipe":
        return Endless(tmp_path / f"endless{suffix}").path
    path = tmp_path / f"big{suffix}"
    with open(path, "wb") as out:
        out.truncate(limit + 1)  # (sparse: no disk used)
    return path


BOUNDED = [
    # (command, where the input goes, its suffix, its bound, what the message calls it)
    (["ingest", "qrels", "{q}", "-c", "c", "--qrels-id", "z", "--prompt", "{x}"], ".txt", formats.PROMPT_BYTES, "a prompt file"),
    (["ingest", "run-metadata", "{x}", "-c", "c"], ".tsv", formats.TABLE_BYTES, "a run-metadata table"),
    (["sql", "{x}"], ".sql", formats.TABLE_BYTES, "an SQL file"),
    (["pool", "build", "-c", "c", "--runs-file", "{x}"], ".txt", formats.TABLE_BYTES, "a list of runs"),
    (["adjust", "r1", "-c", "c", "--pool", "p", "--common-topics", "{x}"], ".txt", formats.TABLE_BYTES, "a list of topics"),
]


@pytest.mark.parametrize("kind", ["device", "pipe", "oversize"])
@pytest.mark.parametrize(("command", "suffix", "limit", "what"), BOUNDED, ids=[c[0][1] if c[0][0] != "sql" else "sql" for c in BOUNDED])
def test_a_device_an_endless_pipe_and_an_oversize_file_are_refused_at_once(command, suffix, limit, what, kind, db, tmp_path):
    (tmp_path / "in").mkdir()
    source = _inputs(tmp_path / "in", kind, suffix, limit)
    qrels = tmp_path / "in" / "q.txt"
    qrels.write_text("1 0 a 1\n")
    before = state(db)
    args = [a.replace("{x}", str(source)).replace("{q}", str(qrels)) for a in command]
    result = invoke(*args, "--db", db)
    message = f"{source}: holds more than {formats.size_text(limit)}, the most {what} may hold"
    if command[0] == "sql" and kind != "oversize":  # (evalwh sql names what a .sql that is no file is)
        message = f"{source}: not a regular file ({'a character device' if kind == 'device' else 'a named pipe'}), so not a SQL file"
    assert one_line_error(result, message), result.output
    assert state(db) == before


def test_sql_on_standard_input_is_bounded(db):
    with open("/dev/zero", "rb") as zero:
        result = subprocess.run([sys.executable, "-m", "evalwh", "sql", "-", "--db", str(db)], stdin=zero, capture_output=True, timeout=120)
    assert result.returncode == 1
    assert result.stderr.decode() == "Error: <stdin>: holds more than 16 MiB, the most an SQL file may hold\n"


def test_a_judgments_file_a_score_file_and_a_manifest_are_bounded(db, tmp_path, monkeypatch):
    # the bounds are hundreds of MiB: tried here with small ones, in the same code
    from evalwh.io import score_files
    from evalwh.store import transfer

    records = tmp_path / "j.jsonl"
    records.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    monkeypatch.setattr(formats, "JUDGMENTS_BYTES", 100)
    with Warehouse(db) as wh, pytest.raises(IngestError) as caught:
        wh.ingest_qrels(records, collection="c", qrels_id="j")
    assert str(caught.value) == f"{records}: holds more than 100 bytes, the most a judgments file may hold"

    scores = tmp_path / "s.txt.gz"
    scores.write_bytes(gzip.compress(b"map 1 0.5\n" * 1000))  # 10,000 bytes inflated from a few dozen
    monkeypatch.setattr(score_files, "SCORES_BYTES", 1000)
    with pytest.raises(IngestError) as caught:
        score_files.read_scores([scores])
    assert str(caught.value) == f"{scores}: holds more than 1,000 bytes decompressed, the most a score file may hold"
    plain = tmp_path / "s.txt"
    plain.write_bytes(b"map 1 0.5\n" * 1000)
    with pytest.raises(IngestError) as caught:
        score_files.read_scores([plain])
    assert str(caught.value) == f"{plain}: holds more than 1,000 bytes, the most a score file may hold"

    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "manifest.json").write_bytes(b" " * (formats.TABLE_BYTES + 1))
    with pytest.raises(IngestError) as caught:
        transfer.read_manifest(folder)
    assert str(caught.value) == f"{folder / 'manifest.json'}: holds more than 16 MiB, the most a manifest may hold"


def test_parquet_inputs_must_be_regular_files(db, tmp_path):
    pipe = Endless(tmp_path / "run.parquet").path
    before = state(db)
    result = invoke("ingest", "runs", pipe, "-c", "c", "--db", db)
    assert one_line_error(result, f"{pipe}: is not a regular file (a device, pipe or socket); a Parquet file is read from a regular file")
    assert state(db) == before


def test_an_export_file_that_is_a_pipe_is_refused(exported, tmp_path):
    folder = exported
    manifest = json.loads((folder / "manifest.json").read_text())
    path = folder / manifest["tables"]["qrels"]["files"][0]["path"]
    path.unlink()
    Endless(path)
    result = invoke("import", folder, "--db", tmp_path / "t.duckdb")
    assert one_line_error(result, f"{path}: is not a regular file (a device, pipe or socket); an export holds regular files")
    assert not (tmp_path / "t.duckdb").exists()


def test_bounded_reads_keep_what_is_within_the_bound(tmp_path):
    small = tmp_path / "p.txt.gz"
    small.write_bytes(gzip.compress(b"x" * 100))
    assert formats.read_bounded(small, 100, "a prompt file") == b"x" * 100
    with pytest.raises(IngestError, match="holds more than 99 bytes, the most a prompt file may hold"):
        formats.read_bounded(small, 99, "a prompt file")
    assert [formats.size_text(n) for n in (1 << 20, 512 << 10, 1000, 3 << 30)] == ["1 MiB", "512 KiB", "1,000 bytes", "3 GiB"]


def test_the_doctests_of_the_changed_modules():
    from evalwh.cli import _render
    from evalwh.io import files

    for module in (formats, files, _render):
        failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert tried > 0 and failures == 0, module.__name__


# -- 2. import applies ingest's rules to every table, recomputes every hash, checks references ------


@pytest.fixture
def exported(source: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(source.parent / "exported", tmp_path / "exported"))


def _at(frame: pd.DataFrame, column: str, where: pd.Series, value: object) -> pd.DataFrame:
    frame = frame.copy()
    frame.loc[where, column] = value
    return frame


def _llm(frame: pd.DataFrame) -> pd.Series:
    return frame["qrels_id"] == "llm"


def _edit_prompt(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy()
    frame["prompt"] = frame["prompt"] + " (edited)"
    return frame


IMPORT_RULES = [
    ("source bogus", "qrels_sets", lambda f: _at(f, "source", _llm(f), "bogus"), "source 'bogus' of a set of kind 'ingested' is not one of human, llm, inferred"),
    ("round -1", "qrels_sets", lambda f: _at(f, "round", _llm(f), -1), "round -1 is not a whole number >= 0"),
    ("judge with a newline", "qrels_sets", lambda f: _at(f, "judge", _llm(f), "um\nbrela"), "judge 'um\\nbrela' is empty or holds a line break or a NUL byte"),
    ("empty model", "qrels_sets", lambda f: _at(f, "model", _llm(f), " "), "model ' ' is empty or holds a line break or a NUL byte"),
    ("kind bogus", "qrels_sets", lambda f: _at(f, "kind", _llm(f), "bogus"), "kind 'bogus' is not ingested or derived"),
    ("sha256 not a digest", "qrels_sets", lambda f: _at(f, "sha256", _llm(f), "fff"), "sha256 'fff' is not a SHA-256 (64 hexadecimal digits)"),
    ("prompt of no stored prompt", "qrels_sets", lambda f: _at(f, "prompt_sha256", _llm(f), "0" * 64), f"prompt_sha256 '{'0' * 64}' names no stored prompt (judgment_prompts)"),
    ("parent of no set", "qrels_sets", lambda f: _at(f, "parent_qrels_id", _llm(f), "nowhere"), "parent_qrels_id 'nowhere' names no qrels set of its collection"),
    ("prompt texts edited", "judgment_prompts", _edit_prompt, "is not the SHA-256 of its prompt's text (recomputed: "),
    ("details of an unjudged pair", "judgment_details", lambda f: _at(f, "doc_id", f.index == 0, "zz"), "details of topic '1', document 'zz' that qrels set 'llm' does not judge"),
    ("details row twice", "judgment_details", lambda f: pd.concat([f, f.iloc[[0]]], ignore_index=True), "repeats the qrels_id, query_id, doc_id of row 1 (a duplicate)"),
    ("details prompt of no stored prompt", "judgment_details", lambda f: _at(f, "prompt_sha256", f.index == 0, "1" * 64), f"prompt_sha256 '{'1' * 64}' names no stored prompt (judgment_prompts)"),
    ("qrels of no set", "qrels", lambda f: _at(f, "qrels_id", f.index == 0, "ghost"), "qrels_id 'ghost' names no qrels set of its collection (qrels_sets)"),
    ("grade of ten digits", "qrels", lambda f: _at(f, "relevance", f.index == 0, 1e10), "relevance 10000000000.0 is not a grade (at most nine integer digits)"),
    ("lines of no run", "run_topics", lambda f: _at(f, "run_id", f.index == 0, "ghost"), "run 'ghost' is not among the runs of its collection (runs)"),
]


@pytest.mark.parametrize(("case", "table", "change", "message"), IMPORT_RULES, ids=[c[0] for c in IMPORT_RULES])
def test_import_applies_ingests_rules_to_every_table(case, table, change, message, exported, db, tmp_path):
    rows = None
    if case == "details row twice":
        rows = len(pd.read_parquet(next((exported / table).rglob("*.parquet")))) + 1
    path = tamper(exported, table, change, rows=rows)
    # into a new warehouse (nothing left) and into the source itself with --replace (unchanged)
    target = tmp_path / "target.duckdb"
    result = invoke("import", exported, "--db", target)
    assert one_line_error(result, message), result.output
    assert result.stderr.startswith(f"Error: {path}:"), result.stderr
    assert not target.exists()
    if case in ("source bogus", "prompt texts edited", "details of an unjudged pair"):
        before = state(db)
        result = invoke("import", exported, "--replace", "--db", db)
        assert one_line_error(result, message), result.output
        assert state(db) == before


def test_a_set_digest_no_file_can_prove_does_not_block_the_genuine_file(exported, tmp_path):
    # an ingested set's sha256 names its file, which no export holds: a forged well-formed one
    # imports, and the genuine judgments are then "unchanged", not "different content"
    tamper(exported, "qrels_sets", lambda f: _at(f, "sha256", ~_llm(f), "f" * 64))
    target = tmp_path / "t.duckdb"
    assert invoke("import", exported, "--db", target).exit_code == 0
    with Warehouse(target) as wh:
        assert wh.ingest_qrels(QRELS, collection="c").status == "unchanged"
        changed = QRELS.assign(relevance=1 - QRELS.relevance)
        with pytest.raises(IngestError, match="already exists with different content; use --replace"):
            wh.ingest_qrels(changed, collection="c")


def test_an_untampered_export_with_provenance_imports_equal(exported, db, tmp_path):
    target = tmp_path / "t.duckdb"
    result = invoke("import", exported, "--db", target)
    assert result.exit_code == 0, result.output
    query = "SELECT * EXCLUDE (created_at) FROM qrels_sets ORDER BY ALL"
    with Warehouse.open_reader(target) as copy, Warehouse.open_reader(db) as source:
        for relation in (query, "FROM judgment_prompts ORDER BY ALL", "FROM judgment_details ORDER BY ALL"):
            assert copy.con.execute(relation).fetchall() == source.con.execute(relation).fetchall()
    result = invoke("import", exported, "--replace", "--db", db)
    assert result.exit_code == 0, result.output


# -- 3. a full disk: the file gets its committed size back, an empty log goes, messages are true -----


@pytest.fixture
def small_disk(tmp_path: Path):
    """A 4 MiB tmpfs (needs root and mount; CI here has both)."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    point = tmp_path / "disk"
    point.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(point)], capture_output=True).returncode:
        pytest.skip("this machine cannot mount a tmpfs")
    try:
        yield point
    finally:
        subprocess.run(["umount", "-l", str(point)], check=False)


def _run_file(path: Path, name: str, topics: int = 20, depth: int = 500) -> Path:
    rows = [f"{t} Q0 d{t}-{(d * 7919 + len(name)) % 5000} {d + 1} {depth - d} {name}\n" for t in range(topics) for d in range(depth)]
    path.write_text("".join(rows))
    return path


def _leave_free(folder: Path, free: int) -> None:
    stats = os.statvfs(folder)
    with open(folder / "filler", "wb") as out:
        out.write(b"x" * max(0, stats.f_bavail * stats.f_frsize - free))


def _runs(db: Path) -> list[str]:
    with Warehouse.open_reader(db) as wh:
        return wh.run_ids("c")


def test_a_full_disk_ingest_gives_the_space_back_or_commits_and_says_so(small_disk, tmp_path):
    base = tmp_path / "base.duckdb"
    with Warehouse(base) as wh:
        wh.ingest_qrels(QRELS, collection="c")
        wh.ingest_runs(RUNS, collection="c")
    files = [_run_file(tmp_path / f"m{i}.txt", f"m{i}") for i in range(12)]
    db = small_disk / "W.duckdb"
    shutil.copy(base, db)
    result = invoke("ingest", "runs", *files, "-c", "c", "--db", db)
    if result.exit_code == 1:  # failed before its commit: the file is as it was, byte for byte
        assert one_line_error(result, "the disk is full"), result.output
        assert sorted(p.name for p in small_disk.iterdir()) == ["W.duckdb"]
        assert digest(db) == digest(base)
    else:  # committed, and only the checkpoint after found the disk full: the log holds the runs
        assert result.exit_code == 0, result.output
        assert result.stdout.endswith("12 of 12 runs ingested or replaced, 0 unchanged\n")
        assert (small_disk / "W.duckdb.wal").stat().st_size > 0  # (the disk was full: not checkpointed)
        assert _runs(db) == sorted(["r1", "r2", *(f"m{i}" for i in range(12))])


@pytest.mark.parametrize("free", [16 << 10, 64 << 10, 512 << 10])
def test_a_full_disk_replace_gives_the_space_back_and_removes_the_empty_log(free, small_disk, tmp_path):
    sets = [tmp_path / f"s{i}.txt" for i in range(8)]
    for i, path in enumerate(sets):
        path.write_text("".join(f"{t} 0 d{t}-{d} {(t + d + i) % 3}\n" for t in range(20) for d in range(300)))
    db = small_disk / "W.duckdb"
    assert invoke("ingest", "qrels", *sets, "-c", "c", "--db", db).exit_code == 0
    committed = db.stat().st_size
    with Warehouse.open_reader(db) as wh:
        before = wh.con.execute("FROM qrels ORDER BY ALL").fetchall()
    for path in sets:
        path.write_text(path.read_text().replace(" 0\n", " 2\n"))
    _leave_free(small_disk, free)
    result = invoke("ingest", "qrels", *sets, "-c", "c", "--replace", "--db", db)
    assert one_line_error(result, "the disk is full"), result.output
    # the size the last checkpoint uses, no log; free blocks inside may hold the failed write
    assert db.stat().st_size == committed
    assert sorted(p.name for p in small_disk.iterdir()) == ["W.duckdb", "filler"]
    with Warehouse.open_reader(db) as wh:
        assert wh.con.execute("FROM qrels ORDER BY ALL").fetchall() == before


def test_committed_size_reads_the_newer_database_header(tmp_path):
    from evalwh.store.connection import committed_size, give_back_space

    db = tmp_path / "W.duckdb"
    with Warehouse(db) as wh:
        wh.ingest_qrels(QRELS, collection="c")
    size = db.stat().st_size
    assert committed_size(db) == size
    with open(db, "ab") as out:
        out.write(b"\0" * 262144)  # what a failed transaction leaves: blocks past the checkpoint's
    (tmp_path / "W.duckdb.wal").write_bytes(b"")
    give_back_space(db)
    assert db.stat().st_size == size and not (tmp_path / "W.duckdb.wal").exists()
    (tmp_path / "W.duckdb.wal").write_bytes(b"x")  # a log with content: the file's end may be in use
    with open(db, "ab") as out:
        out.write(b"\0" * 262144)
    give_back_space(db)
    assert db.stat().st_size == size + 262144
    assert committed_size(tmp_path / "W.duckdb.wal") is None


# -- 5. JSON-lines grades and scores as text: the TREC number grammar ------------------------------


def _grade(value: object) -> float | None:
    record = json.dumps({"qid": "1", "docid": "a", "judgment": value}).encode()
    try:
        return judgments.parse_judgments(record, "j.jsonl").relevance[0]
    except IngestError:
        return None


@pytest.mark.parametrize("text", ["1_0", "３", "٣", "1e0", "0x10", "nan", "inf", "1,5", "", " ", "+", "1234567890"])
def test_grades_as_text_outside_the_grammar_are_refused(text):
    with pytest.raises(IngestError) as caught:
        judgments.parse_judgments(json.dumps({"qid": "1", "docid": "a", "judgment": text}).encode(), "j.jsonl")
    assert str(caught.value) == f"j.jsonl:1: judgment {json.dumps(text, ensure_ascii=False)} is not a finite number"


@given(st.text(max_size=12))
@settings(max_examples=300, deadline=None)
def test_a_grade_as_text_is_read_exactly_when_a_qrels_file_would_read_it(text):
    expected = float(text.strip(" \t\n\r\x0b\x0c")) if formats.is_relevance(text.strip(" \t\n\r\x0b\x0c")) else None
    assert _grade(text) == expected


@given(st.from_regex(r"[+-]?[0-9]{1,9}(\.[0-9]{0,4})?", fullmatch=True))
def test_a_grade_a_qrels_file_reads_is_read_the_same_as_text(text):
    assert _grade(text) == float(text)


def test_raw_scores_as_text_follow_the_run_score_grammar():
    def score(value: object) -> float | None:
        record = json.dumps({"qid": "1", "docid": "a", "judgment": 1, "score": value}).encode()
        try:
            return judgments.parse_judgments(record, "j.jsonl").score[0]
        except IngestError:
            return None

    assert [score(v) for v in ("9.998186e-02", ".5", "-3", 0.25)] == [0.09998186, 0.5, -3.0, 0.25]
    assert [score(v) for v in ("1_000", "٣", "0x10", "Infinity")] == [None] * 4


# -- 6. a warehouse from a newer evalwh is refused by every command ---------------------------------


NEWER = "Error: {db}: written by a newer evalwh (it has schema step 999_future; evalwh {version} knows steps up to {newest}); left as it is: use the newer evalwh\n"


@pytest.mark.parametrize(
    "command",
    [["eval", "-m", "P@10"], ["runs"], ["sql", "SELECT 1"], ["schema"], ["upgrade"], ["ingest", "runs", "{run}", "-c", "c"], ["export", "{out}"]],
    ids=lambda c: c[0],
)
def test_a_newer_warehouse_is_refused_by_every_command(command, db, tmp_path):
    from evalwh import __version__, sql

    with duckdb.connect(str(db)) as con:
        con.execute("INSERT INTO schema_migrations (name) VALUES ('999_future')")
    run = _run_file(tmp_path / "r.txt", "r9", topics=1, depth=2)
    before = state(db)
    args = [a.replace("{run}", str(run)).replace("{out}", str(tmp_path / "out")) for a in command]
    result = invoke(*args, "--db", db)
    newest = max(sql.load_package("evalwh.schema"))
    assert result.exit_code == 1 and result.stderr == NEWER.format(db=db, version=__version__, newest=newest), result.output
    assert "up to date" not in result.output
    assert state(db) == before and not (tmp_path / "out").exists()


def test_a_retired_step_name_is_not_a_newer_warehouse(db):
    with duckdb.connect(str(db)) as con:
        con.execute("INSERT INTO schema_migrations (name) VALUES ('016_table_comments')")
    assert invoke("runs", "--db", db).exit_code == 0


# -- 9. the demo on a full disk leaves nothing ------------------------------------------------------


@pytest.mark.parametrize("free", [0, 200 << 10])
def test_the_demo_on_a_full_disk_leaves_nothing(free, small_disk):
    _leave_free(small_disk, free)
    result = invoke("demo", "--out", small_disk / "demo" / "files", "--db", small_disk / "d.duckdb")
    assert one_line_error(result, "the disk is full"), result.output
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler"]


def test_a_failed_demo_keeps_a_folder_that_was_there(tmp_path):
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "mine.txt").write_text("keep")
    db = tmp_path / "d.duckdb"
    db.write_text("not a database")  # the ingest fails after the files were written
    result = invoke("demo", "--out", folder, "--db", db)
    assert result.exit_code == 1
    assert sorted(p.name for p in folder.iterdir()) == ["mine.txt"]


# -- 11. CSV for spreadsheets: --csv-safe and EVALWH_CSV_SAFE=1 --------------------------------------


FORMULAS = pd.DataFrame(
    {
        "run_id": ["=1+1", "@SUM(A1)", "+cmd|calc", "-x", "＝1", "bm25", "a=b"],
        "query_id": ["1"] * 7,
        "doc_id": ["d"] * 7,
        "score": [-1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0],
    }
)


def test_csv_keeps_ids_as_they_are_by_default_and_guards_them_when_asked(tmp_path, monkeypatch):
    db = tmp_path / "W.duckdb"
    with Warehouse(db) as wh:
        wh.ingest_runs(FORMULAS, collection="c")
    query = "SELECT run_id, -1 AS n FROM runs ORDER BY run_id"
    plain = invoke("sql", query, "-f", "csv", "--db", db)
    assert plain.exit_code == 0
    ids = sorted(FORMULAS.run_id)
    assert plain.stdout == "run_id,n\n" + "".join(f"{i},-1\n" for i in ids)  # as the warehouse holds them
    expected = '"run_id","n"\n' + "".join('"' + ("'" if i[0] in "=+-@＝" else "") + i + '",-1\n' for i in ids)
    safe = invoke("--csv-safe", "sql", query, "-f", "csv", "--db", db)
    assert safe.exit_code == 0 and safe.stdout == expected
    monkeypatch.setenv("EVALWH_CSV_SAFE", "1")
    out = tmp_path / "o.csv"
    assert invoke("sql", query, "-f", "csv", "-o", out, "--db", db).exit_code == 0
    assert out.read_text() == expected


def test_csv_safe_guards_text_cells_and_names_not_numbers():
    from evalwh.cli._render import csv_text

    frame = pd.DataFrame([["\tq", -2.5, "\rx"], ["ok", 1.0, None]], columns=["=a", "value", "-b"])
    assert csv_text(frame, safe=True) == '"\'=a","value","\'-b"\n"\'\tq",-2.5,"\'\rx"\n"ok",1.0,""\n'
    assert csv_text(frame) == frame.to_csv(index=False)
