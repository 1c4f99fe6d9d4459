-- name: pool_judged
-- description: The judged rows of every evaluation key against its own qrels, with each list's running counts: ev_judged for the metric queries.
-- params: max_rank INTEGER
-- The shared last step of loo_judged, sample_loo_judged and spec_judged. Each of them leaves
-- ev_pool_rows (run_id, query_id, rank, gain, is_rel): one row per document of an evaluated
-- list that is judged in that evaluation's own (restricted) qrels, with the evaluation key in
-- place of run_id. This is the per-key counterpart of queries/context/04_judged_rows.sql and
-- 06_judged.sql. $max_rank keeps only ranks up to that depth (enough for metrics at depth
-- <= it; deeper documents count as non-relevant); NULL keeps every rank (condensed lists
-- need them). Running counts are over the judged rows at or above, within one list:
--   relevant_so_far    relevant documents at or above this rank
--   judged_so_far      judged documents at or above this rank (= the condensed rank)
--   nonrelevant_above  judged non-relevant documents strictly above this rank (bpref's c)
CREATE OR REPLACE TEMP TABLE ev_judged AS
WITH judged AS (
    SELECT run_id, query_id, rank, gain, is_rel
    FROM ev_pool_rows
    WHERE $max_rank IS NULL OR rank <= $max_rank
),
running AS (
    SELECT
        run_id,
        query_id,
        rank,
        gain,
        is_rel,
        CAST(count(*) FILTER (WHERE is_rel) OVER w AS INTEGER) AS relevant_so_far,
        CAST(count(*) OVER w AS INTEGER) AS judged_so_far
    FROM judged
    WINDOW w AS (PARTITION BY run_id, query_id ORDER BY rank ROWS UNBOUNDED PRECEDING)
)
SELECT
    run_id,
    query_id,
    rank,
    gain,
    is_rel,
    relevant_so_far,
    judged_so_far,
    judged_so_far - relevant_so_far - CASE WHEN is_rel THEN 0 ELSE 1 END AS nonrelevant_above
FROM running;
