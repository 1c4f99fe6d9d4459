"""evalwh trec_eval against trec_eval's own outputs: TREC-8 all_trec and trec_eval's test suite.

The expected files were printed by trec_eval 10.0 and 9.0.8 (../shared/data, PROVENANCE.md
there); every comparison is byte for byte.
"""

from __future__ import annotations

import gzip
import io
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalwh.measures import trec_eval as te

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
TREC8 = SHARED / "trec8_adhoc"
SUITE = SHARED / "trec_eval_test"

MEAS_PARAMS = (
    "-q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000 -m Rprec_mult.5.0,0.2,0.35 "
    "-mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 -mndcg.1=3,2=9,4=4.5 -mndcg_cut.10,20,23.4 -msuccess.2,5,20"
)
# (expected output, flags, qrels, results) as in trec_eval's Makefile (quicktest)
CASES = [
    ("out.test", "", "qrels.test", "results.test"),
    ("out.test.a", "-m all_trec", "qrels.test", "results.test"),
    ("out.test.aq", "-m all_trec -q", "qrels.test", "results.test"),
    ("out.test.aqc", "-m all_trec -q -c", "qrels.test", "results.trunc"),
    ("out.test.aqcM", "-m all_trec -q -c -M100", "qrels.test", "results.trunc"),
    ("out.test.aql", "-m all_trec -mrelstring.20 -q -l2", "qrels.rel_level", "results.test"),
    ("out.test.meas_params", MEAS_PARAMS, "qrels.test", "results.test"),
]
V10_ONLY = [
    ("out.test", "", "qrels.test.with-comments", "results.test"),
    ("out.comment.test", "", "qrels.comment.test", "results.comment.test"),
]


def _run(argv: list[str]) -> str:
    out = io.StringIO()
    assert te.run(argv, out.write) == 0
    return out.getvalue()


def _need(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"{path} is not there (CI checks out ../shared beside the repository)")


# the V10_ONLY cases were added to trec_eval's suite after 9.0.8: no 9.0.8 expected output
SUITE_RUNS = [("10.0", *case) for case in CASES + V10_ONLY] + [("9.0.8", *case) for case in CASES]


@pytest.mark.parametrize(("version", "expected", "flags", "qrels", "results"), SUITE_RUNS)
def test_trec_eval_suite(version: str, expected: str, flags: str, qrels: str, results: str) -> None:
    _need(SUITE)
    folder = SUITE if version == "10.0" else SUITE / "v9.0.8_expected"
    argv = [*flags.split(), *(["--v9"] if version == "9.0.8" else []), str(SUITE / qrels), str(SUITE / results)]
    assert _run(argv) == (folder / expected).read_text()


def test_pooled_unjudged_documents_seen_in_plain_run_files(tmp_path: Path) -> None:
    """A run file the compiled reader takes still shows pooled, unjudged documents ('.', infAP)."""
    _need(SUITE)
    plain = tmp_path / "results"
    lines = (SUITE / "results.test").read_text().splitlines()
    plain.write_text("".join(" ".join(line.split()) + "\n" for line in lines))
    argv = ["-m", "all_trec", "-mrelstring.20", "-q", "-l2", str(SUITE / "qrels.rel_level"), str(plain)]
    assert _run(argv) == (SUITE / "out.test.aql").read_text()


def test_missing_topic_without_c_is_trec_evals_error() -> None:
    _need(SUITE)
    with pytest.raises(te.TrecEvalExit) as caught:
        _run([str(SUITE / "qrels.test"), str(SUITE / "results.trunc")])
    assert (caught.value.status, caught.value.message) == (4, "trec_eval: result qid '302' not found in qrels")


def test_trec_eval_9_evaluates_the_topics_the_run_has() -> None:
    _need(SUITE)
    out = _run(["--v9", "-m", "num_q", "-m", "P.10", str(SUITE / "qrels.test"), str(SUITE / "results.trunc")])
    assert out.splitlines()[0] == "num_q                 \tall\t2"


@pytest.mark.parametrize(
    ("argv", "status", "message"),
    [
        (["-m", "nope", "q", "r"], 1, "trec_eval: illegal measure 'nope'"),
        (["-m", "P.", "q", "r"], 1, "trec_eval: improper measure in parameter 'P'\ntrec_eval: illegal measure 'P'"),
        (["-m", "rbp", "--v9", "q", "r"], 1, "trec_eval: illegal measure 'rbp'"),
        (["-m", "P.0,5", "q", "r"], 2, "trec_eval: Negative cutoff detected\ntrec_eval: Cannot initialize measure 'P'"),
        (["-m", "P.5,5", "q", "r"], 2, "trec_eval: duplicate cutoffs detected\ntrec_eval: Cannot initialize measure 'P'"),
    ],
)
def test_command_line_errors(argv: list[str], status: int, message: str) -> None:
    with pytest.raises(te.TrecEvalExit) as caught:
        te.printed_measures(te.parse_args(argv))  # type: ignore[arg-type]
    assert (caught.value.status, caught.value.message) == (status, message)


def test_measure_names_as_trec_eval_prints_them() -> None:
    request = te.parse_args(["-m", "P.20,5", "-m", "iprec_at_recall.0.5", "-m", "rbp.p=0.5", "-m", "ndcg", "q", "r"])
    assert isinstance(request, te.Request)
    names = [p.name for p in te.printed_measures(request)]
    assert names == ["iprec_at_recall_0.50", "P_5", "P_20", "ndcg", "rbp_p=0.5"]


@given(st.from_regex(r"\s{0,2}[+-]?\d{0,4}(\.\d{0,3})?([eE][+-]?\d{1,2})?[a-z,]{0,3}", fullmatch=True))
def test_atof_reads_the_leading_number_as_c_does(text: str) -> None:
    """C's atof reads the longest leading decimal number; Python's float of that prefix agrees."""
    stripped = text.lstrip()
    prefix = ""
    for end in range(len(stripped), 0, -1):
        try:
            float(stripped[:end])
        except ValueError:
            continue
        if stripped[:end].strip() == stripped[:end] and not stripped[:end].lower().startswith(("i", "n")):
            prefix = stripped[:end]
            break
    value = te.atof(text)
    assert value == (float(prefix) if prefix else 0.0) or (math.isnan(value) and math.isnan(float(prefix)))


@given(st.integers(min_value=-(10**9), max_value=10**9), st.sampled_from(["", ".7", "abc", ",3"]))
def test_atol_reads_the_leading_integer(number: int, tail: str) -> None:
    assert te.atol(f" {number}{tail}") == number


def test_trec8_all_trec_byte_identical_for_all_runs() -> None:
    """trec_eval -q -m all_trec trec8.qrels input.R, for all 129 runs, in one evaluation."""
    _need(TREC8)
    runs = sorted((TREC8 / "runs").glob("input.*.gz"))
    assert len(runs) == 129
    got = _run(["-q", "-m", "all_trec", str(TREC8 / "trec8.qrels"), *map(str, runs)])
    expected = []
    for run in runs:
        tag = run.name[len("input.") : -len(".gz")]
        with gzip.open(TREC8 / "eval_all_trec" / f"eval.{tag}.gz", "rt") as handle:
            expected.append(handle.read())
    assert got == "".join(expected)


def test_eval_speaks_trec_eval_names() -> None:
    """evalwh eval -m with trec_eval's names: the values of evalwh trec_eval, under the names typed."""
    from evalwh.measures.direct import evaluate_files

    _need(SUITE)
    specs = ["P_10", "P.5,20", "ndcg_cut.10", "map_cut_100", "gm_map", "iprec_at_recall_0.50"]
    frame = evaluate_files(SUITE / "qrels.test", [SUITE / "results.test"], specs)
    got = dict(zip(frame["measure"], frame["value"], strict=True))
    assert list(got) == ["P_10", "P_5", "P_20", "ndcg_cut.10", "map_cut_100", "gm_map", "iprec_at_recall_0.50"]
    # trec_eval 10.0's own numbers for these (out.test.a / out.test.meas_params)
    printed = {}
    for line in (SUITE / "out.test.a").read_text().splitlines():
        name, query, value = (part.strip() for part in line.split("\t"))
        if query == "all":
            printed[name] = value
    for name, trec in [("P_10", "P_10"), ("P_5", "P_5"), ("P_20", "P_20"), ("ndcg_cut.10", "ndcg_cut_10"),
                       ("map_cut_100", "map_cut_100"), ("gm_map", "gm_map"),
                       ("iprec_at_recall_0.50", "iprec_at_recall_0.50")]:  # fmt: skip
        assert f"{got[name]:.4f}" == printed[trec], name


def test_eval_unknown_name_keeps_did_you_mean() -> None:
    from evalwh.measures import evaluation
    from evalwh.errors import UnknownMetricError

    with pytest.raises(UnknownMetricError, match="Did you mean nDCG"):
        evaluation.parse_measures(["nDGC@10"], None, evaluation.Options())

