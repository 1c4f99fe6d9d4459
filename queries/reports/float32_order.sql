-- name: float32_order
-- description: Runs whose order changes when scores are rounded to float32 (trec_eval <= 9.0.8) instead of kept as doubles (trec_eval 10).
-- params: collection_id VARCHAR, runs VARCHAR[]
-- trec_eval 10 orders a list by score (double) descending, then doc_id descending; trec_eval 9
-- read scores into a C float, so scores equal after rounding to float32 tie there and fall
-- back to doc_id descending (--float32-ties). The two orders differ only inside a group of
-- one list whose scores round to the same float32 but are not all equal: such groups are
-- found by one hash aggregate over the stored keys (run_rows: list key, score; no sort of
-- the runs and no document ids); inside them (a few thousand rows), consecutive documents
-- (trec_eval 10 ranks) with doc_id ascending are the pairs that trade places under float32.
-- $runs NULL: every run of the collection. One row per run that has such a pair: the lists
-- (topics) concerned and the best rank where it happens.
-- This is the reference and the fallback, not what `eval` runs for every run: the ingest
-- stores the same two figures with each run (runs.float32_lists, float32_first_rank; schema
-- 021), counted by its reader while it ranks (evalwh/io/_runlines.c) or, for runs stored
-- without it, by this query; evalwh.present.report.ties.float32_order reads them and runs
-- this only for runs stored before 021 (figures NULL). float32_score is C's (float) cast.
WITH lists AS (
    -- the lists asked for: one row per (run, topic), not per line
    SELECT list_key, run_id, query_id
    FROM run_topics
    WHERE collection_id = $collection_id
        AND ($runs IS NULL OR list_contains($runs, run_id))
),
groups AS (
    SELECT r.list_key, float32_score(r.score) AS score32
    FROM run_rows AS r
    SEMI JOIN lists AS l ON r.list_key = l.list_key
    GROUP BY ALL
    HAVING min(r.score) <> max(r.score)
),
members AS (
    -- only now the document ids, for the few rows in such groups
    SELECT l.run_id, l.query_id, g.score32, r.rank, d.doc_id
    FROM run_rows AS r
    JOIN groups AS g ON r.list_key = g.list_key AND float32_score(r.score) = g.score32
    JOIN lists AS l ON r.list_key = l.list_key
    JOIN documents AS d ON r.doc_key = d.doc_key
),
swapped AS (
    SELECT
        run_id,
        query_id,
        rank,
        doc_id,
        lag(doc_id) OVER (PARTITION BY run_id, query_id, score32 ORDER BY rank) AS before
    FROM members
)
SELECT run_id, count(DISTINCT query_id) AS lists, min(rank) AS first_rank
FROM swapped
WHERE before < doc_id
GROUP BY run_id
ORDER BY run_id;
