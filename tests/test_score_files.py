"""Score files for `evalwh compare --scores`: trec_eval -q output and long tables."""

from __future__ import annotations

import gzip
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalwh.errors import IngestError
from evalwh.io.score_files import read_scores

names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_.", min_size=1, max_size=8)
values = st.floats(0.0, 1.0, allow_nan=False).map(lambda v: round(v, 4))


@settings(max_examples=30, deadline=None)
@given(
    run=names.filter(lambda n: n != "all"),
    rows=st.dictionaries(
        st.tuples(names, names.filter(lambda n: n != "all")), values, min_size=1, max_size=20
    ),
    gz=st.booleans(),
)
def test_trec_eval_q_round_trip(tmp_path_factory: pytest.TempPathFactory, run: str,
                                rows: dict[tuple[str, str], float], gz: bool) -> None:  # fmt: skip
    rows = {k: v for k, v in rows.items() if k[0] not in ("runid", "relstring")}
    if not rows:
        return
    lines = [f"runid                 \tall\t{run}"]
    lines += [f"{m:<22}\t{q}\t{v:.4f}" for (m, q), v in rows.items()]
    lines.append(f"{next(iter(rows))[0]:<22}\tall\t0.5000")
    text = "\n".join(lines) + "\n"
    path = tmp_path_factory.mktemp("te") / ("run.txt.gz" if gz else "run.txt")
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    frame = read_scores([path])
    assert frame["run_id"].unique().tolist() == [run]
    got = {(m, q): v for m, q, v in frame[["measure", "query_id", "value"]].itertuples(index=False)}
    assert got == pytest.approx(rows)


@settings(max_examples=30, deadline=None)
@given(
    rows=st.dictionaries(st.tuples(names, names, names), values, min_size=1, max_size=20),
    sep=st.sampled_from([",", "\t"]),
)
def test_long_table_round_trip(tmp_path_factory: pytest.TempPathFactory,
                               rows: dict[tuple[str, str, str], float], sep: str) -> None:  # fmt: skip
    frame = pd.DataFrame(
        [(r, q, m, v) for (r, q, m), v in rows.items()],
        columns=["run_id", "query_id", "measure", "value"],
    ).assign(extra="ignored")
    path = tmp_path_factory.mktemp("long") / ("s.tsv" if sep == "\t" else "s.csv")
    frame.to_csv(path, sep=sep, index=False)
    out = read_scores([path])
    pd.testing.assert_frame_equal(out, frame.drop(columns="extra"), check_dtype=False)


def test_errors_name_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_text("run_id,query_id,measure,value\na,1,AP,0.5\na,2,AP,high\n")
    with pytest.raises(IngestError, match=r"s\.csv:3: value 'high' is not a number"):
        read_scores([path])
    path.write_text("map 401\n")
    with pytest.raises(IngestError, match=r"s\.csv:1: expected 'measure query_id value'"):
        read_scores([path])
    path.write_text("runid all x\nmap all 0.3\n")
    with pytest.raises(IngestError, match="no per-topic scores"):
        read_scores([path])
    parquet = tmp_path / "s.parquet"
    parquet.write_bytes(b"not parquet")
    with pytest.raises(IngestError, match="not a readable Parquet file"):
        read_scores([parquet])
    twice = tmp_path / "t.csv"
    twice.write_text("run_id,query_id,measure,value\na,1,AP,0.5\n")
    with pytest.raises(IngestError, match="more than one value for run 'a', topic '1'"):
        read_scores([twice, twice])
