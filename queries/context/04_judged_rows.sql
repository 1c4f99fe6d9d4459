-- name: eval_judged_rows
-- description: THE join of ranked results with the judgments, with each list's running counts.
-- params:
-- One row per judged document of a ranked list (runs in ev_join_runs: all evaluated runs,
-- or only those whose cached rows are missing or stale). The running counts count rows
-- at or above in the same list, so they do not depend on a metric's depth, the depth cap
-- or condensing; they are computed here once, in one window pass, for AP, bpref, RankEff
-- and AA alike:
--   judged_so_far    judged documents at or above this rank (= the condensed rank)
--   relevant_so_far  relevant documents (gain >= the threshold of ev_key) at or above
--   positive_so_far  judged documents with a gain above 0 at or above (the cache's stretches
--                    of grade 0 end at them, 05_cache_refresh.sql; unused columns of a
--                    window cost nothing: DuckDB drops them from the plan)
CREATE OR REPLACE TEMP VIEW ev_judged_rows AS
WITH judged AS (
    SELECT r.run_id, r.query_id, r.rank, q.gain
    FROM ev_ranked AS r
    SEMI JOIN ev_join_runs AS j USING (run_id)
    JOIN ev_qrels AS q USING (query_id, doc_id)
)
SELECT
    j.run_id,
    j.query_id,
    j.rank,
    j.gain,
    CAST(row_number() OVER w AS INTEGER) AS judged_so_far,
    CAST(sum(CASE WHEN j.gain >= k.rel THEN 1 ELSE 0 END) OVER w AS INTEGER) AS relevant_so_far,
    CAST(sum(CASE WHEN j.gain > 0 THEN 1 ELSE 0 END) OVER w AS INTEGER) AS positive_so_far
FROM judged AS j
CROSS JOIN ev_key AS k
WINDOW w AS (PARTITION BY j.run_id, j.query_id ORDER BY j.rank ROWS UNBOUNDED PRECEDING);
