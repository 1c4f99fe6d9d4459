"""The measure grammar (evalwh.measures.catalog.parse): ir_measures' syntax, round trips, names as typed."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from evalwh.measures import catalog
from evalwh.cli import app
from evalwh.errors import MetricParamError, UnknownMetricError


def _value(param: catalog.Param) -> st.SearchStrategy[str]:
    if param.type == "INTEGER":
        return st.integers(1, 1000).map(str)
    if param.type == "DOUBLE":
        # within the declared domain (0 < p < 1, ...); a bound naming another parameter is left to assume()
        (low, low_in), (high, high_in) = [
            side if side is not None and not isinstance(side[0], str) else (bound, True)
            for side, bound in zip(param.bounds, (-5.0, 5.0), strict=True)
        ]
        values = st.floats(low, min(high, low + 10), allow_nan=False).map(lambda v: round(v, 3))
        return values.filter(lambda v: (v > low or (low_in and v == low)) and (v < high or (high_in and v == high))).map(repr)
    if param.type == "BOOLEAN":
        return st.sampled_from(["true", "false", "True", "False"])
    if param.type == "GAINS":
        pairs = st.dictionaries(st.integers(-1, 4), st.integers(0, 9), min_size=1, max_size=4)
        return pairs.map(lambda d: "{" + ", ".join(f"{g}: {v}" for g, v in d.items()) + "}")
    if param.choices:
        return st.sampled_from(param.choices)
    return st.nothing()


@st.composite
def specs(draw):
    """A spec for a random metric with random parameters and options, spaced at random."""
    metric = draw(st.sampled_from(catalog.metrics()))
    parts = []
    for param in metric.params:
        if param.name == "k" or (param.type == "VARCHAR" and not param.choices):
            continue
        if param.required or draw(st.booleans()):
            parts.append(f"{param.name}{draw(st.sampled_from(['=', ' = ']))}{draw(_value(param))}")
    for option in metric.options:
        if draw(st.booleans()):
            value = draw(st.integers(0, 3).map(str)) if option == "rel" else draw(st.sampled_from(["true", "False"]))
            parts.append(f"{option}={value}")
    parts = draw(st.permutations(parts))
    text = metric.name + (f"({', '.join(parts)})" if parts else "")
    k = metric.param("k")
    if k is not None and (k.required or draw(st.booleans())):
        text += f"@{draw(st.integers(1, 1000))}"
    try:
        catalog.parse(text)
    except MetricParamError as error:  # a domain between parameters (SDCG: max_rel > min_rel)
        assume("outside the domain" not in str(error))
    return text


@settings(max_examples=300, deadline=None)
@given(specs())
def test_round_trip_and_name_as_typed(spec):
    measure = catalog.parse(spec)
    assert measure.name == spec.strip()  # reported as typed
    again = catalog.parse(str(measure))  # the canonical string parses to the same measure
    assert again == measure
    assert str(again) == str(measure)


@pytest.mark.parametrize(
    ("spec", "canonical", "params", "options"),
    [
        ("P(rel=2)@10", "P(rel=2)@10", {"k": 10}, (("rel", 2.0),)),
        ("nDCG(dcg=exp-log2, gains={0:0,1:1,2:3})@10", "nDCG_gains(dcg=exp-log2,gains={0:0,1:1,2:3})@10", {"k": 10, "dcg": "exp-log2"}, ()),
        ("nDCG(dcg='exp-log2')", "nDCG_gains(dcg=exp-log2)", {"dcg": "exp-log2"}, ()),
        ("RBP(p=0.5, rel=2)", "RBP(p=0.5,rel=2)", {"p": 0.5}, (("rel", 2.0),)),
        ("RBP(p=0.5, gain=trec_eval)", "RBP_graded(p=0.5,gain=trec_eval)", {"p": 0.5, "gain": "trec_eval"}, ()),
        ("AP(judged_only=True)", "AP(judged_only=true)", {"k": None}, (("judged_only", True),)),
        ("Judged@10", "Judged@10", {"k": 10}, ()),
        ("ERR@20", "ERR@20", {"k": 20, "max_rel": 4.0}, ()),
        ("IPrec@0.5", "iprec_at_recall(recall=0.5)", {"recall": 0.5}, ()),
        ("SetP(relative=True)", "set_relative_P", {}, ()),
        ("SetRelP", "set_relative_P", {}, ()),
        ("map", "AP", {"k": None}, ()),
    ],
)
def test_ir_measures_specs(spec, canonical, params, options):
    measure = catalog.parse(spec)
    assert str(measure) == canonical
    assert measure.name == spec
    assert params.items() <= measure.params.items()
    assert measure.options == options


def test_gain_map_binds_as_a_map():
    measure = catalog.parse("nDCG(gains={2:3, 0:0, 1:1})")
    assert measure.sql_params["gains"] == {"key": [0.0, 1.0, 2.0], "value": [0.0, 1.0, 3.0]}


@pytest.mark.parametrize(
    ("spec", "error", "message"),
    [
        ("nDGC@10", UnknownMetricError, "Did you mean nDCG"),
        ("nDCG(dcg=exp)", MetricParamError, "dcg='exp' must be log2 or exp-log2"),
        ("nDCG(gains={0:1,0:2})", MetricParamError, "must be a gain map"),
        ("nDCG(rel=2)", MetricParamError, "nDCG has no parameter 'rel'"),
        ("A_p(judged_only=true)@10", MetricParamError, "A_p has no parameter 'judged_only'"),
        ("P(rel=2, rel=3)@5", MetricParamError, "given twice"),
        ("P(rel=high)@5", MetricParamError, "rel='high' must be a finite number"),
        ("SDCG@10", MetricParamError, "needs (max_rel=...)"),
    ],
)
def test_bad_specs(spec, error, message):
    with pytest.raises(error, match=None) as raised:
        catalog.parse(spec)
    assert message in str(raised.value)


def test_metrics_lists_trec_eval_and_ir_measures_names():
    result = CliRunner().invoke(app, ["metrics", "--format", "csv"])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(io.StringIO(result.stdout)).set_index("name")
    assert table.loc["P", "trec_eval"] == "P_{k}" and table.loc["P", "ir_measures"] == "P@k"
    assert table.loc["set_P", "ir_measures"] == "SetP"
    assert table.loc["Judged", "ir_measures"] == "Judged@k"
    assert pd.isna(table.loc["A_p", "ir_measures"])


def test_eval_reports_measures_as_typed(tmp_path):
    """evalwh eval -m ... --format csv: ir_measures specs and aliases come back under the names typed."""
    (tmp_path / "qrels").write_text("1 0 a 2\n1 0 b 1\n1 0 c 0\n2 0 a 1\n")
    (tmp_path / "run").write_text("1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 x 3 1 r\n2 Q0 a 1 1 r\n")
    specs = ["P(rel=2)@10", "ERR@20", "map", "Judged@10", "nDCG(dcg=exp-log2)@10", "A_p@10"]
    args = [arg for spec in specs for arg in ("-m", spec)]
    result = CliRunner().invoke(
        app, ["eval", "--qrels", str(tmp_path / "qrels"), str(tmp_path / "run"), *args, "--format", "csv", "-q"]
    )
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(io.StringIO(result.stdout))
    assert list(dict.fromkeys(frame["measure"])) == specs
    value = frame.set_index(["query_id", "measure"])["value"]
    assert value[(1, "P(rel=2)@10")] == pytest.approx(0.1)
    assert value[(1, "Judged@10")] == pytest.approx(2 / 3)  # ir_measures: divided by min(k, m)
    assert value[(1, "A_p@10")] == pytest.approx(0.2)  # evalwh: divided by k
    assert value[(1, "ERR@20")] == pytest.approx(3 / 16 + (1 - 3 / 16) * (1 / 16) / 2)
