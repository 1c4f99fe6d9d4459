"""evalwh trec_eval's quick path (evalwh/measures/quick.py): the C reader and Python, no warehouse.

Issue #54, item 1: a shell loop calls ``evalwh trec_eval QRELS RUN`` once per file, so the
path must not load pandas or DuckDB (nor numpy, whose import alone is 0.05 to 0.1 CPU s).
The values are held against trec_eval 10.0's own output for every TREC-8 run
(../shared/data/trec8_adhoc/eval_all_trec, PROVENANCE.md there), and the import list of the
command is held in a fresh process (not its time, which depends on the machine).
"""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalwh.measures import quick
from evalwh.measures import trec_eval as te

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
TREC8 = SHARED / "trec8_adhoc"
SUITE = SHARED / "trec_eval_test"

# every trec_eval measure the quick path computes (the "official" set and these)
QUICK_MEASURES = (
    "official recall ndcg_cut map_cut success ndcg set_P set_recall num_nonrel_judged_ret "
    "gm_bpref relstring set_F"
).split()
# what no quick evaluation may import
HEAVY = ("pandas", "duckdb", "pyarrow", "typer", "click", "rich", "scipy", "sqlglot", "matplotlib")
HEAVY += ("numpy",)


def _need(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"{path} is not there (CI checks out ../shared beside the repository)")


def _quick(argv: list[str]) -> str | None:
    out = io.StringIO()
    status = te.run_quick(argv, out.write)
    return None if status is None else out.getvalue()


def _direct(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> str:
    """``evalwh trec_eval`` through the direct path (the in-memory warehouse), quick path off."""
    out = io.StringIO()
    with monkeypatch.context() as patch:
        patch.setenv("EVALWH_NO_QUICK", "1")
        assert te.run(argv, out.write) == 0
    return out.getvalue()


def _names(measures: list[str]) -> list[str]:
    flags: list[str] = []
    for name in measures:
        flags += ["-m", name]
    return flags


def test_trec8_every_run_byte_identical_to_trec_eval_on_the_quick_measures() -> None:
    """All 129 TREC-8 runs in one call, -q, every quick measure: trec_eval 10.0's lines."""
    _need(TREC8 / "eval_all_trec")
    runs = sorted((TREC8 / "runs").glob("input.*.gz"))
    argv = ["-q", *_names(QUICK_MEASURES), str(TREC8 / "trec8.qrels"), *map(str, runs)]
    got = _quick(argv)
    assert got is not None, "the quick path declined TREC-8"
    # trec_eval's all_trec output of each run, kept to the lines of these measures
    request = te.parse_args(argv)
    printed = {p.name for p in te.printed_measures(request)}
    expected = []
    for run in runs:
        tag = run.name[len("input.") : -len(".gz")]
        with gzip.open(TREC8 / "eval_all_trec" / f"eval.{tag}.gz", "rt") as handle:
            expected += [line for line in handle if line.split("\t", 1)[0].rstrip() in printed]
    assert len(runs) == 129
    assert got == "".join(expected)


@pytest.mark.parametrize(
    "flags",
    [
        [],
        ["-q", "-c"],
        ["-q", "-M", "7"],
        ["-q", "-l", "2"],
        ["-q", "--v9"],
        ["-q", "--v9", "-c"],
        [
            "-q",
            "-n",
            "-m",
            "P.1,3,1001",
            "-m",
            "ndcg_cut.2,9",
            "-m",
            "map_cut.4",
            "-m",
            "recall.3",
            "-m",
            "success.2",
        ],
        ["-q", "-m", "iprec_at_recall.0,0.05,0.33,0.5,1", "-m", "relstring.25"],
    ],
    ids=lambda flags: " ".join(flags) or "official",
)
def test_quick_equals_the_direct_path(flags: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Options and parameters: the quick path prints what the direct path prints (TREC-8 runs)."""
    _need(TREC8 / "runs")
    runs = [str(TREC8 / "runs" / f"input.{tag}.gz") for tag in ("INQ601", "pir9At0", "weaver1")]
    argv = [*flags, str(TREC8 / "trec8.qrels"), *runs]
    got = _quick(argv)
    assert got is not None
    assert got == _direct(argv, monkeypatch)


def test_quick_equals_the_direct_path_on_trec_evals_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """trec_eval's own test files (sparse topics), -q, -c, -l 2 and --v9.

    results.test pads its scores with blanks, a form the C reader hands back; the lines are
    rewritten with one tab between fields (the same run) for the quick path to take them.
    """
    _need(SUITE)
    run = tmp_path / "results.test"
    lines = (SUITE / "results.test").read_text().splitlines()
    run.write_text("".join("\t".join(line.split()) + "\n" for line in lines))
    for qrels in ("qrels.test",):  # (qrels.rel_level has pooled, unjudged -1 grades: declined)
        for flags in ([], ["-q"], ["-q", "-c", "-l", "2"], ["-q", "--v9"]):
            argv = [*flags, *_names(QUICK_MEASURES), str(SUITE / qrels), str(run)]
            got = _quick(argv)
            assert got is not None, (qrels, flags)
            assert got == _direct(argv, monkeypatch), (qrels, flags)


@pytest.mark.parametrize(
    ("qrels", "why"),
    [
        ("1 0 a 1\n1 0 b -1\n1 0 c 0\n", "a pooled, unjudged document (-1)"),
        ("1 0 a 1\n1 0 b 2.5\n", "a fractional grade"),
        ("# comment\n1 0 a 1\n", "a comment line"),
        ("1 0 a 1\n1 0 a 0\n", "a pair judged twice"),
        ("1 0 a 1\r\n1 0 b 0\r\n", "CR line ends"),
        ("1  0 a 1\n", "two blanks"),
        ("1 0 a 1\n\n1 0 b 1\n", "a blank line"),
        ("1 0 a\n", "three fields"),
        ("1 0 a\n1 1 0 b 1\n", "three fields, then five (four per line on average)"),
        ("1 0 a 1\n1\t0 b 1\n", "a tab in one line, blanks in the other"),
        ("1 0 a 1234567890\n", "a grade of ten digits"),
        ("1 0 a +1\n", "a sign"),
    ],
)
def test_the_quick_path_declines_what_it_does_not_read(
    tmp_path: Path, qrels: str, why: str
) -> None:
    """Anything but the plainest qrels goes to the direct path, which reads it or names its line."""
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text("1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n")
    assert quick.read_qrels(tmp_path / "qrels") is None, why
    assert _quick([str(tmp_path / "qrels"), str(tmp_path / "run")]) is None


def test_an_unsorted_tab_separated_qrels_file_with_wide_grades(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The qrels reader's other branches (lines in no order, grades of two digits, tabs): the
    quick path prints what the direct path prints."""
    _need(TREC8 / "runs")
    lines = [
        line.split()
        for line in (TREC8 / "trec8.qrels").read_text().splitlines()
        if line.split()[0] <= "410"
    ]
    order = sorted(range(len(lines)), key=lambda i: (i * 7919) % len(lines))  # (a fixed shuffle)
    widen = {"0": "0", "1": "12", "2": "3"}
    qrels = tmp_path / "qrels"
    qrels.write_text("".join("\t".join([*lines[i][:3], widen[lines[i][3]]]) + "\n" for i in order))
    assert quick.read_qrels(qrels) is not None
    runs = [str(TREC8 / "runs" / f"input.{tag}.gz") for tag in ("INQ601", "weaver1")]
    for flags in (["-q"], ["-q", "-l", "5"]):
        argv = [*flags, *_names(QUICK_MEASURES), str(qrels), *runs]
        got = _quick(argv)
        assert got is not None, flags
        assert got == _direct(argv, monkeypatch), flags


@pytest.mark.parametrize("seed", range(4))
def test_generated_files_quick_equals_the_direct_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Generated qrels and runs (lines in any order, grades 0-12, tabs or blanks, ties in the
    scores, a run topic the qrels lack, ids of two to forty-odd characters): the quick path's
    output is the direct path's (an independent evaluation, in DuckDB) under several flags.
    (A qrels topic the run lacks ends trec_eval 10 with an error, or takes -c: declined.)"""
    import random

    rng = random.Random(seed)
    sep = rng.choice(["\t", " "])
    topics = [str(rng.randrange(1, 400)) for _ in range(rng.randint(1, 6))]
    docs = ["d" + "x" * rng.randrange(0, 40) + str(i) for i in range(60)]
    qrels = [
        (topic, doc, rng.choice([0, 0, 1, 1, 2, 3, 12]))
        for topic in dict.fromkeys(topics)
        for doc in rng.sample(docs, rng.randint(1, 30))
    ]
    rng.shuffle(qrels)
    (tmp_path / "qrels").write_text(
        "".join(sep.join([t, "0", d, str(g)]) + "\n" for t, d, g in qrels)
    )
    runs = []
    for r in range(2):
        lines = []
        for topic in dict.fromkeys([*topics, str(rng.randrange(400, 500))]):  # (one unjudged)
            for rank, doc in enumerate(rng.sample(docs, rng.randint(1, 50)), 1):
                lines.append(
                    f"{topic}\tQ0\t{doc}\t{rank}\t{rng.choice([1, 2, 2.5, 3]) * 1.0}\tr{r}\n"
                )
        (tmp_path / f"run{r}").write_text("".join(lines))
        runs.append(str(tmp_path / f"run{r}"))
    assert quick.read_qrels(tmp_path / "qrels") is not None
    for flags in (["-q"], ["-q", "-l", "2", "-M", "7"], ["-q", "--v9"], ["-m", "ndcg_cut.3,12"]):
        argv = [*flags, *_names(QUICK_MEASURES), str(tmp_path / "qrels"), *runs]
        got = _quick(argv)
        assert got is not None, flags
        assert got == _direct(argv, monkeypatch), flags


def test_declined_runs_and_options(tmp_path: Path) -> None:
    (tmp_path / "qrels").write_text("1 0 a 1\n1 0 b 0\n2 0 c 1\n")
    (tmp_path / "run").write_text("1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n2 Q0 c 1 1.0 r\n")
    (tmp_path / "comment").write_text("# a comment\n1 Q0 a 1 2.0 s\n2 Q0 c 1 1.0 s\n")
    (tmp_path / "short").write_text("1 Q0 a 1 2.0 t\n")
    qrels, run = str(tmp_path / "qrels"), str(tmp_path / "run")
    assert _quick([qrels, run]) is not None
    assert _quick(["-J", qrels, run]) is None  # judged only
    assert _quick(["-M", "0", qrels, run]) is None
    assert _quick(["-m", "infAP", qrels, run]) is None  # not computed here
    assert _quick([qrels, str(tmp_path / "comment")]) is None  # the C reader hands it back
    assert _quick(["-c", qrels, str(tmp_path / "short")]) is None  # -c with a topic missing
    assert _quick([qrels, run, run]) is None  # the same file twice


def _imports(argv: list[str]) -> tuple[str, set[str]]:
    """Standard output of ``python -m evalwh ARGV`` and every module it imported."""
    env = {k: v for k, v in os.environ.items() if k != "EVALWH_NO_QUICK"}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "evalwh", *argv],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    modules = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }
    return done.stdout, modules


def test_trec_eval_imports_neither_pandas_nor_duckdb() -> None:
    """Issue #54: `evalwh trec_eval` on a TREC-8 run loads the C reader, not numpy or more."""
    _need(TREC8 / "runs")
    run = TREC8 / "runs" / "input.INQ601.gz"
    out, modules = _imports(["trec_eval", "-q", str(TREC8 / "trec8.qrels"), str(run)])
    assert "evalwh.io._runlines" in modules
    loaded = sorted(m for m in modules if m.split(".")[0] in HEAVY)
    assert loaded == []
    assert "evalwh.cli" not in modules and "evalwh.store" not in modules
    with gzip.open(TREC8 / "eval_all_trec" / "eval.INQ601.gz", "rt") as handle:
        names = {p.name for p in te.printed_measures(te.parse_args(["q", "r"]))}
        expected = "".join(line for line in handle if line.split("\t", 1)[0].rstrip() in names)
    assert out == expected


def test_trec_evals_own_messages_stay_light() -> None:
    """Usage and -h: trec_eval's text, without the CLI's modules."""
    out, modules = _imports(["trec_eval", "-h"])
    assert out.startswith("evalwh trec_eval: trec_eval's command line")
    assert not [m for m in modules if m.split(".")[0] in HEAVY]


# ---------------------------------------------------------------------------------------
# evalwh eval --qrels (evalwh/measures/quick_eval.py)


def _cli(argv: list[str]) -> str:
    """``evalwh eval ARGV`` through the CLI (which never takes the quick path)."""
    from evalwh.cli import app
    from typer.testing import CliRunner

    result = CliRunner().invoke(app, ["eval", *argv])
    assert result.exit_code == 0, result.output
    return result.stdout


def _quick_eval(argv: list[str]) -> str | None:
    from evalwh.measures import quick_eval

    out = io.StringIO()
    status = quick_eval.run(argv, out.write, terminal=False)
    return None if status is None else out.getvalue()


@pytest.mark.parametrize(
    "flags",
    [
        [],
        ["-q"],
        ["-f", "trec", "-q", "-m", "P@10", "-m", "AP", "-m", "nDCG@20"],
        ["-m", "R@100", "-m", "Rprec", "-m", "RR", "-M", "20", "--rel", "1"],
        ["--format=trec", "--float32-ties", "-m", "Success@5", "-m", "A_p@30", "-m", "bpref"],
    ],
    ids=lambda flags: " ".join(flags) or "defaults",
)
def test_eval_qrels_quick_equals_the_cli(tmp_path: Path, flags: list[str]) -> None:
    """Two TREC-8 runs, one of them lacking a topic (an empty ranking for the default averaging)."""
    _need(TREC8 / "runs")
    short = tmp_path / "short.txt"
    with gzip.open(TREC8 / "runs" / "input.weaver1.gz", "rt") as handle:
        short.write_text("".join(line for line in handle if not line.startswith("403 ")))
    argv = [
        "--qrels",
        str(TREC8 / "trec8.qrels"),
        str(TREC8 / "runs" / "input.INQ601.gz"),
        str(short),
        *flags,
    ]
    got = _quick_eval(argv)
    assert got is not None
    assert got == _cli(argv)


@pytest.mark.parametrize("seed", range(2))
def test_eval_qrels_quick_equals_the_cli_on_generated_files(tmp_path: Path, seed: int) -> None:
    """Generated files (as in test_generated_files_quick_equals_the_direct_path, a topic one run
    lacks): eval --qrels' quick path prints the CLI's means and per-topic values."""
    import random

    rng = random.Random(100 + seed)
    topics = [str(t) for t in rng.sample(range(1, 99), 5)]
    docs = [f"doc{i}" for i in range(40)]
    qrels = [(t, d, rng.choice([0, 1, 2, 3])) for t in topics for d in rng.sample(docs, 15)]
    rng.shuffle(qrels)
    (tmp_path / "qrels").write_text("".join(f"{t} 0 {d} {g}\n" for t, d, g in qrels))
    runs = []
    for r in range(2):
        lines = [
            f"{t} Q0 {d} {i} {rng.choice([1.0, 2.0, 2.5])} r{r}\n"
            for t in topics[r:]
            for i, d in enumerate(rng.sample(docs, 25), 1)
        ]
        (tmp_path / f"run{r}").write_text("".join(lines))
        runs.append(str(tmp_path / f"run{r}"))
    base = ["--qrels", str(tmp_path / "qrels"), *runs]
    for flags in ([], ["-q", "-l", "2", "-m", "nDCG@5", "-m", "Rprec", "-m", "RR"]):
        got = _quick_eval(base + flags)
        assert got is not None, flags
        assert got == _cli(base + flags), flags


def test_eval_qrels_declines_the_rest(tmp_path: Path) -> None:
    (tmp_path / "qrels").write_text("1 0 a 1\n1 0 b 0\n")
    (tmp_path / "run").write_text("1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n")
    base = ["--qrels", str(tmp_path / "qrels"), str(tmp_path / "run")]
    assert _quick_eval(base) is not None
    for extra in (
        ["-f", "csv"],
        ["--averaging", "trec_eval_c"],
        ["-m", "ERR@10"],
        ["-m", "all_trec"],
        ["-M", "0"],
    ):
        assert _quick_eval(base + extra) is None, extra
    from evalwh.measures import quick_eval

    assert quick_eval.run(base, io.StringIO().write, terminal=True) is None  # the CLI's rich table


def test_eval_qrels_imports_neither_pandas_nor_duckdb() -> None:
    _need(TREC8 / "runs")
    run = TREC8 / "runs" / "input.INQ601.gz"
    out, modules = _imports(["eval", "--qrels", str(TREC8 / "trec8.qrels"), str(run)])
    assert not [m for m in modules if m.split(".")[0] in HEAVY]
    assert out.splitlines()[2].split() == ["INQ601", "P@10", "0.4360"]


def test_a_gzip_that_inflates_past_the_bound_is_declined(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The quick path reads a ``.gz`` up to its bound only (it may inflate without end)."""
    (tmp_path / "qrels").write_text("1 0 d0 1\n")
    with gzip.open(tmp_path / "run.gz", "wb") as handle:
        handle.write(b"".join(b"1 Q0 d%d %d 1.0 r\n" % (i, i + 1) for i in range(100_000)))
    argv = [str(tmp_path / "qrels"), str(tmp_path / "run.gz")]
    assert _quick(argv) is not None
    monkeypatch.setattr(quick, "_RUN_BYTES", 1 << 20)  # (2 MB inflated)
    assert _quick(argv) is None


def _shell(command: str, *paths: Path) -> subprocess.CompletedProcess[str]:
    """``command`` in bash, with ``$1``... the paths and ``$PY`` this Python."""
    env = {k: v for k, v in os.environ.items() if k != "EVALWH_NO_QUICK"}
    env["PY"] = sys.executable
    return subprocess.run(
        ["bash", "-c", command, "bash", *map(str, paths)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def test_a_reader_gone_or_a_closed_output_ends_as_through_the_cli() -> None:
    """`| head -1` ends the quick path quietly (exit 0); `>&-` is the CLI's one-line error."""
    _need(TREC8 / "runs")
    qrels = TREC8 / "trec8.qrels"
    runs = sorted((TREC8 / "runs").glob("input.*.gz"))[:20]  # (more output than a pipe holds)
    for sub in ('trec_eval -q "$@"', 'eval -q -f trec --qrels "$@"'):
        done = _shell(f'"$PY" -m evalwh {sub} | head -1; exit "${{PIPESTATUS[0]}}"', qrels, *runs)
        assert (done.returncode, done.stderr) == (0, ""), sub
        assert len(done.stdout.splitlines()) == 1
        closed = _shell(f'"$PY" -m evalwh {sub} >&-', qrels, runs[0])
        assert closed.returncode == 1, sub
        assert closed.stderr.startswith("Error: standard output is closed"), closed.stderr
