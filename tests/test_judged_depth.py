"""The judged depth a report infers, and the measures it leads with (issue 51, items 1 and 2).

The depth is the most common depth at which the (pooled) lists stop being judged, read with
ties as trec_eval orders them, provided most lists are judged to it or deeper: one list
cannot move it, and the run metadata (which runs were pooled) does not change it. The
reference below recomputes every list's judged prefix from the rows as ingested.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from evalwh import Warehouse
from evalwh.present.report import ReportOptions, build_report, defaults
from evalwh.present.report.render import render_markdown

from conftest import TREC8  # noqa: E402
from report_collections import pooled_collection  # noqa: E402


# Every list's judged prefix, computed afresh from the rows as ingested: ranks by trec_eval's
# order (score descending, doc_id descending) from the scores and ids, not the stored ranks;
# the groups of tied scores found by grouping on the score, not by the first document outside
# the pool as judged_depth.sql does. (Written once in pandas, 17 s on TREC-8's 6.3 M rows;
# the same computation in DuckDB gives the same frame in 2 s.)
_PREFIXES = """
WITH pool AS (
    SELECT DISTINCT query_id, doc_id FROM qrels WHERE collection_id = $c AND qrels_id = $q
),
rows AS (
    SELECT r.run_id, r.query_id, r.score, p.doc_id IS NOT NULL AS in_pool,
        row_number() OVER (PARTITION BY r.run_id, r.query_id ORDER BY r.score DESC, r.doc_id DESC) AS rank
    FROM run_results AS r
    LEFT JOIN pool AS p ON p.query_id = r.query_id AND p.doc_id = r.doc_id
    WHERE r.collection_id = $c AND r.query_id IN (SELECT query_id FROM pool)
),
lists AS (
    SELECT run_id, query_id, count(*) AS n, bool_and(in_pool) AS ended,
        coalesce(min(rank) FILTER (WHERE NOT in_pool) - 1, count(*)) AS strict
    FROM rows
    GROUP BY run_id, query_id
),
ties AS (
    SELECT run_id, query_id, min(rank) AS first, count(*) AS size, count(*) FILTER (WHERE in_pool) AS got
    FROM rows
    GROUP BY run_id, query_id, score
),
short AS (
    -- the first group of tied documents not wholly in the pool: its pooled ones fill its first ranks
    SELECT run_id, query_id, arg_min(first - 1 + got, first) AS tied
    FROM ties
    WHERE got < size
    GROUP BY run_id, query_id
)
SELECT l.run_id, l.query_id, l.strict, coalesce(s.tied, l.n) AS tied, l.ended,
    coalesce(u.pooled, false) AS pooled
FROM lists AS l
LEFT JOIN short AS s USING (run_id, query_id)
JOIN runs AS u ON u.collection_id = $c AND u.run_id = l.run_id
ORDER BY l.run_id, l.query_id
"""


def _prefixes(wh: Warehouse, collection: str, qrels_id: str) -> pd.DataFrame:
    """Every list's judged prefix, by trec_eval's order and tie-aware (``_PREFIXES``).

    ``strict``: ranks 1..k in the pool with documents in trec_eval's order (score descending,
    doc_id descending). ``tied``: the deepest k that some order of the tied documents fills
    from the pool. ``ended``: every document of the list is in the pool.
    """
    lists = wh.query(_PREFIXES, {"c": collection, "q": qrels_id})
    return lists.astype({"strict": int, "tied": int, "ended": bool, "pooled": bool})


def _reference(lists: pd.DataFrame) -> tuple[int, int, int, int]:
    """(depth, exactly there, there or deeper, lists): the most common stop, the shallower on a tie."""
    stops = lists.loc[~lists["ended"] & (lists["tied"] >= 1), "tied"].value_counts()
    depth = int(min(stops[stops == stops.max()].index))
    exact = int(stops[depth])
    deeper = int((lists["tied"] >= depth).sum())
    assert deeper * 2 > len(lists)
    return depth, exact, deeper, len(lists)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, Path]:
    """A 150-run graded collection pooled to depth 7, one pooled list tied across rank 7,
    with and without run metadata."""
    out = {}
    for metadata in (True, False):
        path = tmp_path_factory.mktemp("judged") / f"g{int(metadata)}.duckdb"
        with Warehouse(path) as wh:
            pooled_collection(
                wh, 150, topics=12, docs=1000, depth=30, pool_depth=7, tied_boundary=True,
                metadata=metadata, seed=3,
            )  # fmt: skip
        out[metadata] = path
    return out


@pytest.mark.parametrize("metadata", [True, False], ids=["with-metadata", "without-metadata"])
def test_generated_pool_depth_7_with_a_tie_across_the_boundary(generated: dict[bool, Path], metadata: bool) -> None:
    """Issue 51, item 2: depth 7 with and without run metadata, although one pooled list is
    judged only to rank 5 in trec_eval's order (its ranks 6-8 tie; the pool took two of them)."""
    with Warehouse.open_reader(generated[metadata]) as wh:
        lists = _prefixes(wh, "gen", "default")
        found = defaults.collection_defaults(wh, "gen")
    counted = lists[lists["pooled"]] if metadata else lists
    # the tie: by trec_eval's order one pooled list stops at 5; read with its ties, at 7
    with Warehouse.open_reader(generated[True]) as wh:
        flagged = _prefixes(wh, "gen", "default")
    pooled = flagged[flagged["pooled"]]
    assert pooled["strict"].min() == 5 and (pooled["strict"] == 5).sum() == 1
    assert pooled["tied"].min() == 7
    depth, exact, deeper, total = _reference(counted)
    assert depth == 7 and found.judged.depth == 7
    which = "pooled lists" if metadata else "lists"
    assert found.judged.evidence == (
        f"{exact:,} of {total:,} {which} are judged to exactly rank 7, {deeper:,} to rank 7 or deeper"
    )
    assert found.judged.source == ("inferred from the pooled runs' lists" if metadata else "inferred from the runs' lists")
    # issue 51, item 1: trec_eval's cutoffs, whatever the depth; the matrix at 5 and 10
    assert found.measures == ("nDCG@10", "P@10", "AP", "bpref") and found.depths == (5, 10)


def test_one_list_cannot_move_the_depth() -> None:
    """The depth of the mass of lists: a few runs judged shallower change nothing, and
    --pool-depth still wins."""
    with Warehouse(":memory:") as wh:
        pooled_collection(wh, 8, topics=6, docs=400, depth=20, pool_depth=5, seed=1)
        before = defaults.collection_defaults(wh, "gen").judged
        # one pooled run's first document of topic 1 leaves the pool: that list stops at 0
        wh.sql(
            "DELETE FROM qrels WHERE query_id = '1' AND doc_id = (SELECT doc_id FROM run_results "
            "WHERE run_id = 'r000' AND query_id = '1' AND rank = 1)",
            write=True,
        )
        after = defaults.collection_defaults(wh, "gen").judged
        given = defaults.collection_defaults(wh, "gen", pool_depth=3).judged
    assert before.depth == after.depth == 5
    assert (given.depth, given.source) == (3, "given (--pool-depth)")


def test_report_leads_with_trec_eval_cutoffs_and_marks_every_measure_past_the_depth(
    generated: dict[bool, Path],
) -> None:
    """Issue 51, item 1: nDCG@10 leads a graded depth-7 pool (P@10 a binary one), and every
    measure that reads past rank 7 carries the same mark and reason: AP and bpref too."""
    with Warehouse.open_reader(generated[False]) as wh:
        report = build_report(wh, "gen", ReportOptions(figures=False, n_resamples=99))
    assert report.options.measures == ("nDCG@10", "P@10", "AP", "bpref")
    assert report.options.depths == (5, 10)
    assert set(report.deeper) >= {"nDCG@10", "P@10", "AP", "bpref"} and "P@5" not in report.deeper
    text = render_markdown(report)
    assert "| nDCG@10 † | P@10 † | MAP † | bpref † |" in text
    assert (
        "† Past the judged depth (7): ranks 8 and deeper are judged only where a pooled run put the "
        "document in the pool, so these measures count the unjudged documents there as non-relevant: "
        "nDCG@10 (to rank 10), P@10 (to rank 10), MAP (the whole ranking, to rank 30), "
        "bpref (the whole ranking, to rank 30)"
    ) in text
    assert "- Judged depth: 7, inferred from the runs' lists: " in text
    assert "Pool depth: 7:" not in text
    with Warehouse(":memory:") as wh:
        pooled_collection(wh, 4, topics=6, docs=400, depth=20, pool_depth=7, graded=False, seed=2)
        binary = build_report(wh, "gen", ReportOptions(figures=False, n_resamples=99))
    assert binary.options.measures == ("P@10", "AP", "nDCG@10", "bpref")


def test_trec8_depth_10_pool_with_and_without_run_metadata(trec8_copy: Path) -> None:
    """Issue 51, item 2: TREC-8's depth-10 pool (shared data: the top 10 of all 129 runs, its
    ties taken in file order, not trec_eval's) reads depth 10 with and without the pooled
    flags, as the independent prefixes say; the official depth-100 pool reads 100."""
    with Warehouse(trec8_copy) as wh:
        wh.ingest_qrels(TREC8 / "depth10" / "depth10.qrels", collection="trec8", qrels_id="depth10")
        with_flags = defaults.judged_depth(defaults.read_judged_depth(wh, "trec8", "depth10"))
        official = defaults.judged_depth(defaults.read_judged_depth(wh, "trec8", "default"))
        lists = _prefixes(wh, "trec8", "depth10")
        # binary labels: P@10 leads; P@10 and nDCG@10 stay within the pool, AP and bpref do not
        found = defaults.collection_defaults(wh, "trec8", qrels_id="depth10")
        assert found.measures == ("P@10", "AP", "nDCG@10", "bpref") and found.depths == (10,)
        marked = defaults.deeper_than_judged(found.measures, found.judged.depth, 1000)
        assert marked == {"AP": "the whole ranking, to rank 1000", "bpref": "the whole ranking, to rank 1000"}
        wh.sql("UPDATE runs SET pooled = NULL WHERE collection_id = 'trec8'", write=True)
        without = defaults.judged_depth(defaults.read_judged_depth(wh, "trec8", "depth10"))
    assert with_flags.depth == without.depth == 10 and official.depth == 100
    assert with_flags.source == "inferred from the pooled runs' lists"
    assert without.source == "inferred from the runs' lists"
    depth, exact, deeper, total = _reference(lists)
    assert depth == 10
    assert without.evidence == f"{exact:,} of {total:,} lists are judged to exactly rank 10, {deeper:,} to rank 10 or deeper"
    depth, exact, deeper, total = _reference(lists[lists["pooled"]])
    assert with_flags.evidence.startswith(f"{exact:,} of {total:,} pooled lists")
    # by trec_eval's order alone some lists stop short of 10 (the pool took its ties in file
    # order); read with their ties none does (but lists shorter than 10, judged to their end)
    stopping = lists[~lists["ended"]]
    assert (stopping["strict"] < 10).sum() > 0 and (stopping["tied"] < 10).sum() == 0
