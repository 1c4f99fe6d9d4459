-- name: eval_pairs
-- description: One row per evaluated (run, topic) with m (documents retrieved), R and N.
-- params: collection_id VARCHAR, depth_cap INTEGER, condensed BOOLEAN, only_retrieved_topics BOOLEAN
-- A run that lacks a topic of T is scored as an empty ranking, m = 0 (methods §0.4,
-- trec_eval -c); with only_retrieved_topics the pair is dropped instead, as trec_eval does
-- without -c (9.0.8). On condensed lists m counts the judged documents only.
CREATE OR REPLACE TEMP TABLE ev_pairs AS
WITH retrieved AS (
    SELECT rt.run_id, rt.query_id, least(rt.num_ret, $depth_cap) AS num_ret
    FROM run_topics AS rt
    SEMI JOIN ev_runs AS e USING (collection_id, run_id)
    WHERE rt.collection_id = $collection_id
      AND rt.num_ret > 0  -- (a list excluded documents emptied, methods §17: not returned)
),
judged_counts AS (
    -- read on condensed lists only (the variable is a constant to the planner)
    SELECT run_id, query_id, count(*) AS num_judged
    FROM ev_judged
    WHERE getvariable('ev_condensed')
    GROUP BY run_id, query_id
)
SELECT
    e.run_id,
    t.query_id,
    CAST(
        CASE
            WHEN $condensed THEN coalesce(j.num_judged, 0)
            ELSE coalesce(r.num_ret, 0)
        END AS INTEGER
    ) AS num_ret,
    t.num_rel,
    t.num_nonrel
FROM ev_runs AS e
CROSS JOIN ev_topics AS t
LEFT JOIN retrieved AS r ON r.run_id = e.run_id AND r.query_id = t.query_id
LEFT JOIN judged_counts AS j ON j.run_id = e.run_id AND j.query_id = t.query_id
WHERE NOT $only_retrieved_topics OR r.num_ret IS NOT NULL;
