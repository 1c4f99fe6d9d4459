"""Run results stored by key (schema/013_keyed_results.sql) read back exactly as ingested.

The ingest gives each ranked list a ``list_key`` and each (collection, topic, document) pair a
``doc_key``: the reader's dictionary (``_runlines.documents``) on the fast path, SQL
(``store_ranked.sql``) on the general path, a DataFrame ingest and an import. On random runs
ingested over several commands, in a mix of those paths, with replacements and two
collections sharing ids:

* ``run_results`` gives back every line of every file as written (topic, document, score and
  the rank field as given), each with the rank ``trec_ranked`` gives it;
* every pair has one key, every key one pair, every list one key, and every pair is one a
  stored line refers to (a replaced run's pairs that no other line shares are dropped);
* an export imported into another warehouse gives the same run_results and the same values.
"""

from __future__ import annotations

import random

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalwh import Warehouse
from evalwh.store.transfer import export, import_export

_TOPICS = st.sampled_from(["401", "402", "7"])
_DOCS = st.text(alphabet="abAB09-.", min_size=1, max_size=3)
_SCORES = st.sampled_from(["3", "2", "2.0", "1", "0", "0.5", "-1"])
# a run: its lines (topic, doc, score), and how it is ingested
_RUN = st.tuples(
    st.lists(st.tuples(_TOPICS, _DOCS, _SCORES), min_size=1, max_size=25),
    st.sampled_from(["reader", "general", "frame"]),
)


def _lines(rows: list[tuple[str, str, str]], seed: int) -> list[tuple[str, str, str, str]]:
    """Unique (topic, doc) lines with a rank field (sometimes not the rank), shuffled."""
    seen: set[tuple[str, str]] = set()
    out = []
    for index, (topic, doc, score) in enumerate(rows):
        if (topic, doc) not in seen:
            seen.add((topic, doc))
            out.append((topic, doc, str(index % 7), score))
    random.Random(seed).shuffle(out)
    return out


def _ingest(
    wh: Warehouse, folder, name: str, lines, how: str, collection: str, replace: bool
) -> None:
    if how == "frame":
        frame = pd.DataFrame(lines, columns=["query_id", "doc_id", "rank", "score"])
        frame["score"] = frame["score"].astype(float)
        wh.ingest_runs(frame, collection=collection, run_id=name, replace=replace)
        return
    path = folder / f"{name}-{collection}-{how}"
    body = "".join(f"{t} Q0 {d} {r} {s} {name}\n" for t, d, r, s in lines)
    # a comment sends the file the general way (DuckDB's reader and trec_ranked)
    path.write_text(("# general\n" if how == "general" else "") + body)
    wh.ingest_runs([path], collection=collection, replace=replace)


def _stored(wh: Warehouse) -> list[tuple]:
    return wh.con.execute(
        "SELECT collection_id, run_id, query_id, doc_id, score, rank_given, rank FROM run_results ORDER BY ALL"
    ).fetchall()


# 8 examples of 1-5 runs (3 on average): each way in (reader, general, frame) is drawn for
# about 8 runs (never drawn in one run of the test: (2/3)^24, under 1 in 10,000), a run
# replacing r0 in its collection comes in about half the examples (every way's replacement is
# also held by hand in the test below); each example costs ~2 CPU s (two warehouses, an export
# and an import), hence 8 rather than 20; hypothesis draws new examples on every run.
@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(runs=st.lists(_RUN, min_size=1, max_size=5), seed=st.integers(0, 99), data=st.data())
def test_keys_give_back_every_line_as_ingested(tmp_path_factory, runs, seed, data):
    folder = tmp_path_factory.mktemp("keys", numbered=True)
    expected: dict[tuple[str, str], list[tuple[str, str, str, str]]] = {}
    with Warehouse(":memory:") as wh:
        wh.ingest_qrels(
            pd.DataFrame({"query_id": ["401"], "doc_id": ["a"], "relevance": [1]}), collection="c"
        )
        for index, (rows, how) in enumerate(runs):
            lines = _lines(rows, seed + index)
            # a few runs replace an earlier one; the others are new, in one of two collections
            name = data.draw(st.sampled_from([f"r{index}", "r0"]), label="name")
            collection = data.draw(st.sampled_from(["c", "d"]), label="collection")
            _ingest(wh, folder, name, lines, how, collection, replace=True)
            expected[(collection, name)] = lines

        stored = _stored(wh)
        want = sorted(
            (c, r, t, d, float(s), g) for (c, r), lines in expected.items() for t, d, g, s in lines
        )
        assert sorted(row[:6] for row in stored) == want
        # the stored ranks are trec_ranked's over the stored rows
        assert wh.con.execute(
            "SELECT count(*) FROM run_results AS r JOIN trec_ranked('run_results', false) AS t"
            " USING (collection_id, run_id, query_id, doc_id) WHERE r.rank <> t.rank"
        ).fetchall() == [(0,)]
        # one key per document of a collection and per list, and back
        assert wh.con.execute(
            "SELECT count(*) = count(DISTINCT doc_key),"
            " count(*) = count(DISTINCT (collection_id, doc_id)) FROM documents"
        ).fetchall() == [(True, True)]
        assert wh.con.execute(
            "SELECT count(*) = count(DISTINCT list_key),"
            " count(*) = count(DISTINCT (collection_id, run_id, query_id)) FROM run_topics"
        ).fetchall() == [(True, True)]
        # no line without its list or document, and no document without a line
        assert wh.con.execute("SELECT count(*) FROM run_rows").fetchall() == [(len(stored),)]
        assert wh.con.execute(
            "SELECT count(*) FROM documents ANTI JOIN run_rows USING (doc_key)"
        ).fetchall() == [(0,)]
        values = (
            wh.evaluate(["AP", "P@2", "A_p@3"], collection="c", per_query=True)
            if any(c == "c" for c, _ in expected)
            else None
        )

        out = tmp_path_factory.mktemp("export", numbered=True) / "out"
        export(wh, out)
    with Warehouse(":memory:") as other:
        import_export(other, out)
        assert _stored(other) == stored
        if values is not None:
            again = other.evaluate(["AP", "P@2", "A_p@3"], collection="c", per_query=True)
            keep = ["run_id", "query_id", "measure", "value"]
            pd.testing.assert_frame_equal(again[keep], values[keep])


def test_replacing_a_run_drops_only_the_documents_no_line_refers_to(tmp_path):
    """--replace drops the replaced run's own documents, keeps those another run shares."""
    shared = [("1", "d2", "0", "1"), ("2", "d9", "0", "1")]
    for how in ("reader", "general", "frame"):
        with Warehouse(tmp_path / f"{how}.duckdb") as wh:
            _ingest(wh, tmp_path, "a", [("1", "d1", "0", "2"), *shared], how, "c", replace=True)
            _ingest(wh, tmp_path, "b", shared, "reader", "c", replace=True)
            second = [("1", "d3", "0", "2"), ("1", "d2", "1", "1")]
            _ingest(wh, tmp_path, "a", second, how, "c", replace=True)
            documents = wh.con.execute("SELECT doc_id FROM documents ORDER BY ALL")
            assert documents.fetchall() == [("d2",), ("d3",), ("d9",)], how
            lines = wh.con.execute("SELECT run_id, query_id, doc_id FROM run_results ORDER BY ALL")
            assert lines.fetchall() == [
                ("a", "1", "d2"), ("a", "1", "d3"), ("b", "1", "d2"), ("b", "2", "d9")
            ], how
            # a later run may bring d1 back: it gets a key again, one of its own
            _ingest(wh, tmp_path, "z", [("1", "d1", "0", "1")], how, "c", replace=True)
            assert wh.con.execute(
                "SELECT count(*), count(DISTINCT doc_key) FROM documents"
            ).fetchall() == [(4, 4)], how


def test_a_frame_whose_rank_column_alone_changed_is_not_unchanged():
    """A frame's digest leaves its rank column out; a new rank column replaces the stored one
    (with replace) or clashes (without), and the same frame again is unchanged."""
    from evalwh.errors import IngestError

    first = pd.DataFrame({"query_id": ["1", "2"], "doc_id": ["a", "b"], "score": [2.0, 2.0], "rank": ["0", "1"]})
    again = first.assign(rank=["1", "0"])
    with Warehouse(":memory:") as wh:
        assert [r.status for r in wh.ingest_runs(first, collection="c", run_id="r")] == ["ingested"]
        assert [r.status for r in wh.ingest_runs(first, collection="c", run_id="r")] == ["unchanged"]
        with pytest.raises(IngestError):
            wh.ingest_runs(again, collection="c", run_id="r")
        assert [r.status for r in wh.ingest_runs(again, collection="c", run_id="r", replace=True)] == ["replaced"]
        assert _stored(wh) == [("c", "r", "1", "a", 2.0, "1", 1), ("c", "r", "2", "b", 2.0, "0", 1)]
        assert [r.status for r in wh.ingest_runs(again, collection="c", run_id="r")] == ["unchanged"]
