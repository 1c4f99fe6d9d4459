"""Agreement between label sets: evalwh.stats.agreement, evalwh agreement, on LLMJudge and small cases.

The references are scikit-learn's ``cohen_kappa_score`` and the ``krippendorff`` package,
fed with the pairs read straight from the files (pandas merge), not from the warehouse.
"""

from __future__ import annotations

import io
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest
from conftest import SHARED_DATA
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score
from typer.testing import CliRunner

from evalwh import Warehouse
from evalwh.cli import app
from evalwh.errors import InsufficientDataError, NotFoundError
from evalwh.stats import agreement as ag

LLMJUDGE = SHARED_DATA / "llmjudge"
runner = CliRunner(env={"COLUMNS": "200", "TERMINAL_WIDTH": "200"})


def _read(path: Path) -> pd.DataFrame:
    return pd.read_csv(
        path, sep=r"\s+", header=None, names=["query_id", "iteration", "doc_id", "relevance"],
        dtype={"query_id": str, "doc_id": str, "relevance": float},
    )  # fmt: skip


@pytest.fixture(scope="module")
def llmjudge(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The human test labels and the 33 LLM label sets, one qrels set each."""
    if not LLMJUDGE.is_dir():
        pytest.skip(f"{LLMJUDGE} is not there (CI checks out ../shared beside the repository)")
    db = tmp_path_factory.mktemp("llmjudge") / "llm.duckdb"
    with Warehouse(db) as wh:
        wh.ingest_qrels(LLMJUDGE / "human.test.qrels", collection="llmjudge", qrels_id="human")
        for path in sorted((LLMJUDGE / "judges").glob("*.txt")):
            wh.ingest_qrels(path, collection="llmjudge", qrels_id=path.stem)
    return db


def _judges() -> list[Path]:
    return sorted((LLMJUDGE / "judges").glob("*.txt")) if LLMJUDGE.is_dir() else []


@pytest.fixture(scope="module")
def table(llmjudge: Path) -> pd.DataFrame:
    with Warehouse.open_reader(llmjudge) as wh:
        return wh.agreement("human", binary_at=2).set_index("qrels_id")


def _codes(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Grades as category positions (scikit-learn accepts no fractional labels; order is kept)."""
    _, inverse = np.unique(np.concatenate([a, b]), return_inverse=True)
    return inverse[: len(a)], inverse[len(a) :]


def test_all_33_sets_are_compared(table: pd.DataFrame) -> None:
    assert len(table) == 33 == len(_judges())
    assert (table["pairs"] == 4423).all()
    assert (table[["only_reference", "only_set"]] == 0).all().all()
    assert (table["note"] == "").all()


@pytest.mark.parametrize("path", _judges(), ids=lambda p: p.stem)
def test_llmjudge_against_references(table: pd.DataFrame, path: Path) -> None:
    human = _read(LLMJUDGE / "human.test.qrels")
    merged = human.merge(_read(path), on=["query_id", "doc_id"], suffixes=("_h", "_j"))
    a, b = merged["relevance_h"].to_numpy(), merged["relevance_j"].to_numpy()
    row = table.loc[path.stem]
    assert row["pairs"] == len(merged)
    ca, cb = _codes(a, b)
    assert row["kappa"] == pytest.approx(cohen_kappa_score(ca, cb), abs=1e-12)
    assert row["kappa_linear"] == pytest.approx(cohen_kappa_score(ca, cb, weights="linear"), abs=1e-12)
    assert row["kappa_quadratic"] == pytest.approx(cohen_kappa_score(ca, cb, weights="quadratic"), abs=1e-12)
    assert row["agreement"] == pytest.approx(np.mean(a == b), abs=1e-15)
    assert row["kappa_binary"] == pytest.approx(cohen_kappa_score(a >= 2, b >= 2), abs=1e-12)
    assert row["agreement_binary"] == pytest.approx(np.mean((a >= 2) == (b >= 2)), abs=1e-15)
    data = np.vstack([a, b])
    for level in ("nominal", "ordinal", "interval"):
        expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        assert row[f"alpha_{level}"] == pytest.approx(expected, abs=1e-9), level


def test_per_query_matches_references(llmjudge: Path) -> None:
    """Per topic, weights take the positions of the categories the set uses overall."""
    with Warehouse.open_reader(llmjudge) as wh:
        frame = wh.agreement("human", ["RMITIR-llama70B", "Olz-gpt4o"], per_query=True)
    human = _read(LLMJUDGE / "human.test.qrels")
    assert len(frame) == 2 * human["query_id"].nunique()
    for name, mine in frame.groupby("qrels_id"):
        merged = human.merge(_read(LLMJUDGE / "judges" / f"{name}.txt"), on=["query_id", "doc_id"])
        labels = np.unique(np.concatenate([merged["relevance_x"], merged["relevance_y"]]))
        for row in mine.itertuples():
            topic = merged[merged["query_id"] == row.query_id]
            a, b = topic["relevance_x"].to_numpy(), topic["relevance_y"].to_numpy()
            assert row.pairs == len(topic)
            if len(np.unique(a)) < 2 and len(np.unique(b)) < 2 and a[0] == b[0]:
                assert np.isnan(row.kappa) and "kappa and alpha undefined" in row.note
                continue
            if len(np.unique(a)) < 2 or len(np.unique(b)) < 2:
                assert row.kappa == 0.0 and row.kappa_linear == 0.0 and "kappa is 0" in row.note
                continue
            ca, cb = np.searchsorted(labels, a), np.searchsorted(labels, b)
            full = np.arange(len(labels))
            assert row.kappa == pytest.approx(cohen_kappa_score(ca, cb, labels=full), abs=1e-12)
            assert row.kappa_linear == pytest.approx(cohen_kappa_score(ca, cb, labels=full, weights="linear"), abs=1e-12)
            assert row.alpha_ordinal == pytest.approx(
                krippendorff.alpha(reliability_data=np.vstack([a, b]), level_of_measurement="ordinal"), abs=1e-9
            )


def test_cli_sorted_table(llmjudge: Path) -> None:
    result = runner.invoke(
        app, ["agreement", "-c", "llmjudge", "--reference", "human", "--sort", "kappa", "-f", "csv", "--db", str(llmjudge)]
    )
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(io.StringIO(result.stdout))
    assert len(frame) == 33
    assert frame["kappa"].is_monotonic_decreasing
    # the range PROVENANCE.md reports: TREMA-nuggets 0.06 to willia-umbrela1 0.29
    assert frame["qrels_id"].iloc[0] == "willia-umbrela1" and round(frame["kappa"].iloc[0], 2) == 0.29
    assert frame["qrels_id"].iloc[-1] == "TREMA-nuggets" and round(frame["kappa"].iloc[-1], 2) == 0.06


# -- small cases ------------------------------------------------------------------------------


@pytest.fixture
def small(tmp_path: Path) -> Path:
    """Two topics; the set misses one reference pair, adds one, and has a negative grade."""
    db = tmp_path / "small.duckdb"
    ref = pd.DataFrame({"query_id": ["1"] * 4 + ["2"] * 3, "doc_id": list("abcdxyz"), "relevance": [0, 1, 2, 2, 0, 1, 1]})
    other = pd.DataFrame(
        {"query_id": ["1"] * 4 + ["2"] * 3, "doc_id": list("abceyzw"), "relevance": [0, 2, 2, 1, 1, -1, 0]}
    )
    with Warehouse(db) as wh:
        wh.ingest_qrels(ref, collection="c", qrels_id="human")
        wh.ingest_qrels(other, collection="c", qrels_id="llm")
    return db


def test_counts_each_side_lacks(small: Path) -> None:
    with Warehouse.open_reader(small) as wh:
        total = wh.agreement("human", "llm")
        topics = wh.agreement("human", ["llm"], per_query=True)
    # shared: 1/a 1/b 1/c 2/y (2/z is -1 on the set's side: not judged)
    assert total[["pairs", "only_reference", "only_set"]].values.tolist() == [[4, 3, 2]]
    assert topics[["query_id", "pairs", "only_reference", "only_set"]].values.tolist() == [
        ["1", 3, 1, 1], ["2", 1, 2, 1],
    ]  # fmt: skip
    assert "only 4 shared pairs (under 30)" in total.loc[0, "note"]
    assert "kappa and alpha undefined: both sides give every pair grade 1" in topics.loc[1, "note"]
    assert np.isnan(topics.loc[1, "kappa"])


def test_swapping_the_reference_swaps_only_the_counts(small: Path) -> None:
    with Warehouse.open_reader(small) as wh:
        one = wh.agreement("human", "llm", binary_at=1).iloc[0]
        two = wh.agreement("llm", "human", binary_at=1).iloc[0]
    assert (one["only_reference"], one["only_set"]) == (two["only_set"], two["only_reference"])
    for column in ("pairs", "agreement", "kappa", "kappa_linear", "kappa_quadratic", "alpha_nominal",
                   "alpha_ordinal", "alpha_interval", "kappa_binary", "agreement_binary"):  # fmt: skip
        assert one[column] == pytest.approx(two[column], abs=1e-12), column


def test_confusion_layout(small: Path) -> None:
    with Warehouse.open_reader(small) as wh:
        frame = wh.agreement("human", ["llm", "human"], layout="confusion")
    assert list(frame.columns) == ["qrels_id", "reference", "0", "1", "2"]
    llm = frame[frame["qrels_id"] == "llm"]
    assert llm[["reference", "0", "1", "2"]].values.tolist() == [["0", 1, 0, 0], ["1", 0, 1, 1], ["2", 0, 0, 1]]
    human = frame[frame["qrels_id"] == "human"].set_index("reference")
    assert human[["0", "1", "2"]].to_numpy().trace() == 7  # the diagonal: every pair agrees


def test_confusion_layout_cut_at_binary_at(llmjudge: Path, table: pd.DataFrame) -> None:
    """--binary-at with --layout confusion: the 2 x 2 matrices of relevant and not, against a crosstab of the files."""
    name = "willia-umbrela1"
    with Warehouse.open_reader(llmjudge) as wh:
        frame = wh.agreement("human", [name], layout="confusion", binary_at=2)
    shared = _read(LLMJUDGE / "human.test.qrels").merge(
        _read(LLMJUDGE / "judges" / f"{name}.txt"), on=["query_id", "doc_id"], suffixes=("_h", "_m")
    )
    expected = pd.crosstab(shared["relevance_h"] >= 2, shared["relevance_m"] >= 2)
    assert list(frame.columns) == ["qrels_id", "reference", "0", "1"]
    assert frame[["0", "1"]].to_numpy().tolist() == expected.to_numpy().tolist()
    agreeing = np.trace(frame[["0", "1"]].to_numpy()) / frame[["0", "1"]].to_numpy().sum()
    assert agreeing == pytest.approx(table.loc[name, "agreement_binary"], abs=1e-12)
    result = runner.invoke(app, ["agreement", "-c", "llmjudge", "--reference", "human", name, "--layout", "raters",
                                 "--binary-at", "2", "--db", str(llmjudge)])  # fmt: skip
    assert result.exit_code == 1
    assert result.stderr.strip() == "Error: --binary-at applies to the summary and confusion layouts, not to --layout raters"


def test_unknown_set_did_you_mean(small: Path) -> None:
    with Warehouse.open_reader(small) as wh, pytest.raises(NotFoundError, match="Did you mean llm"):
        wh.agreement("human", ["lml"])
    result = runner.invoke(app, ["agreement", "-c", "c", "--reference", "humna", "--db", str(small)])
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        "Error: agreement: collection 'c' has no qrels set 'humna'. Did you mean human? (its sets: human, llm)"
    )


def test_cli_warns_on_few_pairs(small: Path) -> None:
    result = runner.invoke(app, ["agreement", "-c", "c", "--reference", "human", "llm", "--db", str(small)])
    assert result.exit_code == 0
    assert "warning: llm: only 4 shared pairs (under 30): the statistics are unreliable" in result.stderr


def test_scalar_functions_say_why_undefined() -> None:
    with pytest.raises(InsufficientDataError, match="kappa and alpha undefined: both sides give every pair grade 1"):
        ag.cohen_kappa([1, 1], [1, 1])
    with pytest.raises(InsufficientDataError, match="kappa and alpha undefined"):
        ag.krippendorff_alpha([1, 1], [1, 1])


def test_kappa_is_empty_exactly_when_undefined_and_0_where_it_is_0() -> None:
    """Issue 37: kappa 0.0 was printed beside "kappa undefined" for a side with one grade.

    One side constant against a side with several grades: p_o = p_e, kappa is 0 (as
    scikit-learn computes it), alpha is defined. Both sides one and the same grade: 0/0.
    """
    assert ag.cohen_kappa([2, 2, 2], [0, 1, 2]) == 0.0 == cohen_kappa_score([2, 2, 2], [0, 1, 2])
    assert ag.cohen_kappa([0, 0], [1, 1]) == 0.0  # two constant sides, two grades
    table = ag.agreement_table([2, 2, 2, 0, 0, 1, 1], [0, 1, 2, 0, 0, 0, 0], groups=[0, 0, 0, 1, 1, 2, 2], binary_at=1)
    assert table.loc[0, "note"].startswith("the reference gives every pair grade 2: kappa is 0")
    assert table.loc[0, "alpha_nominal"] == pytest.approx(
        krippendorff.alpha(reliability_data=np.array([[2, 2, 2], [0, 1, 2]]), level_of_measurement="nominal")
    )
    assert table.loc[1, "note"].startswith("kappa and alpha undefined: both sides give every pair grade 0")
    assert np.isnan(table.loc[1, "kappa"]) and np.isnan(table.loc[1, "alpha_nominal"])
    assert table.loc[2, "kappa"] == 0.0  # reference 1, set 0 throughout
    assert table.loc[2, "note"].startswith("the reference gives every pair grade 1 and the set gives every pair grade 0")


def test_fractional_grades_are_categories() -> None:
    a = np.array([0, 0.5, 1, 2, 0.5, 1, 0, 2])
    b = np.array([0, 1, 1, 2, 0.5, 0.5, 0, 1])
    ca, cb = _codes(a, b)
    assert ag.cohen_kappa(a, b, weights="linear") == pytest.approx(cohen_kappa_score(ca, cb, weights="linear"))
    assert ag.krippendorff_alpha(a, b, level="interval") == pytest.approx(
        krippendorff.alpha(reliability_data=np.vstack([a, b]), level_of_measurement="interval")
    )


# -- properties -------------------------------------------------------------------------------

grades = st.sampled_from([0.0, 1.0, 2.0, 3.0, 0.5])


@st.composite
def label_pairs(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    n = draw(st.integers(2, 40))
    a = draw(st.lists(grades, min_size=n, max_size=n))
    b = draw(st.lists(grades, min_size=n, max_size=n))
    return np.array(a), np.array(b)


@settings(max_examples=200, deadline=None)
@given(label_pairs())
def test_kappa_and_alpha_are_symmetric(pair: tuple[np.ndarray, np.ndarray]) -> None:
    a, b = pair
    one, two = ag.agreement_table(a, b), ag.agreement_table(b, a)
    columns = ["agreement", "kappa", "kappa_linear", "kappa_quadratic", "alpha_nominal", "alpha_ordinal", "alpha_interval"]
    np.testing.assert_allclose(one[columns].to_numpy(), two[columns].to_numpy(), rtol=1e-9, atol=1e-12)


@settings(max_examples=200, deadline=None)
@given(label_pairs())
def test_identical_sets_agree_fully(pair: tuple[np.ndarray, np.ndarray]) -> None:
    a, _ = pair
    row = ag.agreement_table(a, a).iloc[0]
    assert row["agreement"] == 1.0
    if len(np.unique(a)) >= 2:
        for column in ("kappa", "kappa_linear", "kappa_quadratic", "alpha_nominal", "alpha_ordinal", "alpha_interval"):
            assert row[column] == pytest.approx(1.0), column
    else:
        assert np.isnan(row["kappa"]) and row["note"].startswith("kappa and alpha undefined")


@settings(max_examples=100, deadline=None)
@given(label_pairs())
def test_matches_references_on_random_labels(pair: tuple[np.ndarray, np.ndarray]) -> None:
    a, b = pair
    if len(np.unique(a)) < 2 or len(np.unique(b)) < 2:
        return
    ca, cb = _codes(a, b)
    for weights in ("linear", "quadratic"):
        assert ag.cohen_kappa(a, b, weights=weights) == pytest.approx(
            cohen_kappa_score(ca, cb, weights=weights), abs=1e-12
        )
    for level in ("nominal", "ordinal", "interval"):
        assert ag.krippendorff_alpha(a, b, level=level) == pytest.approx(
            krippendorff.alpha(reliability_data=np.vstack([a, b]), level_of_measurement=level), abs=1e-9
        )


def test_docstring_examples() -> None:
    import doctest

    import evalwh.methods.judgments
    import evalwh.stats.rankings

    for module in (ag, evalwh.stats.rankings, evalwh.methods.judgments):
        failures, tried = doctest.testmod(module)
        assert tried > 0 and failures == 0, module.__name__


# -- intervals and several raters (issue 36) ---------------------------------------------------


def _three_sets(seed: int) -> pd.DataFrame:
    """Six topics of 12 documents, grades 0-3 by a 'human', an 'llm' that errs by a grade on a
    third of them, and a 'third' set that judged only some of the documents."""
    generator = np.random.default_rng(seed)
    rows = [(str(t), f"d{d}") for t in range(1, 7) for d in range(12)]
    human = generator.integers(0, 4, len(rows))
    llm = np.clip(human + generator.choice([-1, 0, 0, 1], len(rows)) * (generator.random(len(rows)) < 0.5), 0, 3)
    third = np.where(generator.random(len(rows)) < 0.6, np.clip(human + generator.integers(-1, 2, len(rows)), 0, 3), -1)
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id"])
    return frame.assign(human=human, llm=llm, third=third)


@pytest.fixture
def three_sets(tmp_path: Path) -> tuple[Path, pd.DataFrame]:
    frame = _three_sets(36)
    db = tmp_path / "sets.duckdb"
    with Warehouse(db) as wh:
        for name in ("human", "llm", "third"):
            qrels = frame[["query_id", "doc_id", name]].rename(columns={name: "relevance"})
            wh.ingest_qrels(qrels, collection="c", qrels_id=name)
    return db, frame


def test_kappa_and_alpha_intervals_equal_a_loop_over_replicates(three_sets: tuple[Path, pd.DataFrame]) -> None:
    """Topics drawn as documented; each replicate's kappa by scikit-learn, alpha by krippendorff."""
    from scipy import stats

    db, frame = three_sets
    with Warehouse.open_reader(db) as wh:
        row = wh.agreement("human", "llm", resamples=200, seed=4, level="interval").iloc[0]
    topics = sorted(frame["query_id"].unique())
    drawn = np.random.default_rng(4).integers(0, len(topics), size=(200, len(topics)))
    kappas, alphas = [], []
    for draw in drawn:
        sample = pd.concat([frame[frame["query_id"] == topics[t]] for t in draw])
        kappas.append(cohen_kappa_score(sample["human"], sample["llm"]))
        alphas.append(krippendorff.alpha(reliability_data=np.vstack([sample["human"], sample["llm"]]).astype(float),
                                         level_of_measurement="interval"))  # fmt: skip
    z = stats.norm.ppf(0.975)
    kappa = cohen_kappa_score(frame["human"], frame["llm"])
    alpha = krippendorff.alpha(reliability_data=np.vstack([frame["human"], frame["llm"]]).astype(float),
                               level_of_measurement="interval")  # fmt: skip
    assert row["kappa"] == pytest.approx(kappa, abs=1e-12)
    assert (row["kappa_low"], row["kappa_high"]) == pytest.approx(
        (kappa - z * np.std(kappas, ddof=1), kappa + z * np.std(kappas, ddof=1)), abs=1e-9
    )
    assert (row["alpha_interval_low"], row["alpha_interval_high"]) == pytest.approx(
        (alpha - z * np.std(alphas, ddof=1), alpha + z * np.std(alphas, ddof=1)), abs=1e-9
    )
    assert row["kappa_low"] < row["kappa"] < row["kappa_high"]


def test_several_raters_equal_the_krippendorff_package(three_sets: tuple[Path, pd.DataFrame]) -> None:
    """Three sets, 'third' with holes: units with one value are not pairable (as the package has it)."""
    from scipy import stats

    db, frame = three_sets
    with Warehouse.open_reader(db) as wh:
        row = wh.agreement("human", ["llm", "third"], layout="raters", resamples=100, seed=2).iloc[0]
    data = frame[["human", "llm", "third"]].to_numpy(dtype=float).T
    data[data < 0] = np.nan
    assert row["sets"] == "human, llm, third" and row["raters"] == 3
    assert (row["topics"], row["units"], row["values"]) == (6, 72, 144 + int((frame["third"] >= 0).sum()))
    for level in ("nominal", "ordinal", "interval"):
        expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        assert row[f"alpha_{level}"] == pytest.approx(expected, abs=1e-12), level
    # the interval: the same topic draws, the package on each replicate's units
    topics = sorted(frame["query_id"].unique())
    drawn = np.random.default_rng(2).integers(0, len(topics), size=(100, len(topics)))
    replicates = [
        krippendorff.alpha(reliability_data=np.hstack([data[:, (frame["query_id"] == topics[t]).to_numpy()] for t in d]),
                           level_of_measurement="ordinal")  # fmt: skip
        for d in drawn
    ]
    half = stats.norm.ppf(0.975) * np.std(replicates, ddof=1)
    assert (row["alpha_ordinal_low"], row["alpha_ordinal_high"]) == pytest.approx(
        (row["alpha_ordinal"] - half, row["alpha_ordinal"] + half), abs=1e-9
    )


def test_two_raters_equal_the_pairwise_alpha(three_sets: tuple[Path, pd.DataFrame]) -> None:
    db, _ = three_sets
    with Warehouse.open_reader(db) as wh:
        two = wh.agreement("human", "third", layout="raters").iloc[0]
        pairwise = wh.agreement("human", "third").iloc[0]
    for level in ("nominal", "ordinal", "interval"):
        assert two[f"alpha_{level}"] == pytest.approx(pairwise[f"alpha_{level}"], abs=1e-12)
    assert two["units"] == pairwise["pairs"]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31), st.integers(2, 5))
def test_coincidence_of_several_coders_equals_the_package(seed: int, coders: int) -> None:
    generator = np.random.default_rng(seed)
    values = generator.integers(-1, 4, size=(15, coders))  # -1: no value
    cats = np.arange(4.0)
    coincidence = ag.coincidence_per_group(values, np.zeros(15, dtype=np.int64), 1, 4)
    data = np.where(values >= 0, values, np.nan).astype(float).T
    pairable = (values >= 0).sum(axis=1) >= 2
    for level in ("nominal", "ordinal", "interval"):
        mine = ag.alpha_from_coincidence(coincidence, cats, level=level)[0]
        values_in_units = data[:, pairable]
        if len(np.unique(values_in_units[~np.isnan(values_in_units)])) < 2:
            assert np.isnan(mine)
            continue
        assert mine == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement=level), abs=1e-9)


def test_agreement_cli_intervals_and_raters(three_sets: tuple[Path, pd.DataFrame]) -> None:
    db, _ = three_sets
    result = runner.invoke(app, ["agreement", "-c", "c", "--reference", "human", "--seed", "1", "-f", "csv", "--db", str(db)])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(io.StringIO(result.stdout))
    assert list(table["qrels_id"]) == ["llm", "third"]
    assert ((table["kappa_low"] <= table["kappa"]) & (table["kappa"] <= table["kappa_high"])).all()
    assert ((table["alpha_ordinal_low"] <= table["alpha_ordinal"]) & (table["alpha_ordinal"] <= table["alpha_ordinal_high"])).all()
    result = runner.invoke(app, ["agreement", "-c", "c", "--reference", "human", "--layout", "raters", "--bootstrap", "0",
                                 "-f", "csv", "--db", str(db)])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert pd.read_csv(io.StringIO(result.stdout))["raters"].tolist() == [3]


@pytest.mark.parametrize("k", [2, 3, 5])
def test_kappa_interval_equals_statsmodels(k: int) -> None:
    """Issue 51, item 7: kappa's large-sample interval per topic is statsmodels' (Fleiss, Cohen and Everitt)."""
    from statsmodels.stats.inter_rater import cohens_kappa

    generator = np.random.default_rng(k)
    tables = generator.integers(0, 12, size=(200, k, k)).astype(float)
    tables[:, 0, 0] += 1  # at least one pair
    tables[:3] = 0.0
    tables[0, 0, 0] = 5.0  # both sides one grade: undefined
    tables[1, :, 0] = 4.0  # one side one grade: kappa 0
    tables[2] = np.diag(np.arange(1.0, k + 1))  # full agreement: kappa 1, variance 0
    low, high = ag.kappa_interval(tables)
    for table, lo, hi in zip(tables, low, high, strict=True):
        with np.errstate(divide="ignore", invalid="ignore"):
            reference = cohens_kappa(table)
        if not np.isfinite(reference.kappa) or min((table.sum(0) > 0).sum(), (table.sum(1) > 0).sum()) < 2:
            assert np.isnan(lo) and np.isnan(hi)  # undefined, or kappa 0 by construction
            continue
        assert lo == pytest.approx(max(reference.kappa_low, -1.0), abs=1e-12)
        assert hi == pytest.approx(min(reference.kappa_upp, 1.0), abs=1e-12)


def test_per_query_intervals_are_statsmodels_per_topic(llmjudge: Path) -> None:
    from statsmodels.stats.inter_rater import cohens_kappa

    with Warehouse.open_reader(llmjudge) as wh:
        frame = wh.agreement("human", ["Olz-gpt4o"], per_query=True, resamples=1)
    merged = _read(LLMJUDGE / "human.test.qrels").merge(_read(LLMJUDGE / "judges" / "Olz-gpt4o.txt"), on=["query_id", "doc_id"])
    checked = 0
    for row in frame.itertuples():
        topic = merged[merged["query_id"] == row.query_id]
        table = pd.crosstab(topic["relevance_x"], topic["relevance_y"]).reindex(
            index=sorted(set(topic["relevance_x"]) | set(topic["relevance_y"])),
            columns=sorted(set(topic["relevance_x"]) | set(topic["relevance_y"])), fill_value=0,
        )  # fmt: skip
        reference = cohens_kappa(table.to_numpy())
        if not np.isfinite(reference.kappa) or min(table.shape) < 2 or (table.to_numpy().sum(0) > 0).sum() < 2 \
                or (table.to_numpy().sum(1) > 0).sum() < 2:
            assert np.isnan(row.kappa_low)
            continue
        assert row.kappa_low == pytest.approx(max(reference.kappa_low, -1.0), abs=1e-12)
        assert row.kappa_high == pytest.approx(min(reference.kappa_upp, 1.0), abs=1e-12)
        checked += 1
    assert checked >= 20
