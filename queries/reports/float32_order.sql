-- name: float32_order
-- description: Runs whose order changes when scores are rounded to float32 (trec_eval <= 9.0.8) instead of kept as doubles (trec_eval 10).
-- params: collection_id VARCHAR, runs VARCHAR[]
-- trec_eval 10 orders a list by score (double) descending, then doc_id descending; trec_eval 9
-- read scores into a C float, so scores equal after rounding to float32 tie there and fall
-- back to doc_id descending (--float32-ties). The two orders differ only inside a group of
-- one list whose scores round to the same float32 but are not all equal: such groups are
-- found by one hash aggregate (no sort of the runs; about 3 s of CPU on TREC-8's 6.3 M
-- lines); inside them (a few thousand rows), consecutive documents
-- (trec_eval 10 ranks) with doc_id ascending are the pairs that trade places under float32.
-- $runs NULL: every run of the collection. One row per run that has such a pair: the lists
-- (topics) concerned and the best rank where it happens.
WITH groups AS (
    -- keyed by a hash of the list: one 64-bit key groups 6.3 M TREC-8 lines in about 60 % of
    -- the time that (run_id, query_id) takes; a collision only adds rows of another list, whose
    -- equal scores then keep their order below (no false report)
    SELECT hash(run_id, query_id) AS list, CAST(score AS FLOAT) AS score32
    FROM run_results
    WHERE collection_id = $collection_id
        AND ($runs IS NULL OR list_contains($runs, run_id))
    GROUP BY ALL
    HAVING min(score) <> max(score)
),
members AS (
    SELECT r.run_id, r.query_id, CAST(r.score AS FLOAT) AS score32, r.rank, r.doc_id
    FROM run_results AS r
    SEMI JOIN groups AS g
        ON hash(r.run_id, r.query_id) = g.list AND CAST(r.score AS FLOAT) = g.score32
    WHERE r.collection_id = $collection_id
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
