-- name: pool_pairs
-- description: One row per evaluated (run or evaluation key, topic) with m, and R and N of that evaluation's own qrels.
-- params: collection_id VARCHAR, condensed BOOLEAN
-- The counterpart of queries/context/06_pairs.sql for per-run qrels (ev_eval_counts). A run
-- missing a topic is an empty ranking (m = 0); on condensed lists m counts judged documents.
CREATE OR REPLACE TEMP TABLE ev_pairs AS
WITH judged_counts AS (
    SELECT run_id, query_id, count(*) AS num_judged
    FROM ev_judged
    GROUP BY run_id, query_id
)
SELECT
    c.run_id,
    c.query_id,
    CAST(
        CASE WHEN $condensed THEN coalesce(j.num_judged, 0) ELSE coalesce(rt.num_ret, 0) END AS INTEGER
    ) AS num_ret,
    c.num_rel,
    c.num_nonrel
FROM ev_eval_counts AS c
LEFT JOIN run_topics AS rt
    ON rt.collection_id = $collection_id AND rt.run_id = c.source_run_id AND rt.query_id = c.query_id
LEFT JOIN judged_counts AS j ON j.run_id = c.run_id AND j.query_id = c.query_id;
