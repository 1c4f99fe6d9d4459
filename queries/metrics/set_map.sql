-- name: set_map
-- description: Set AP: set precision times set recall, (relevant retrieved)^2 / (retrieved · R).
-- params:
-- trec_eval: set_map
-- kind: performance
-- range: 0, 1
-- reference: trec_eval m_set_map.c
-- The retrieved set is the whole list (after the depth cap, trec_eval -M).
WITH hits AS (
    SELECT run_id, query_id, count(*) AS relevant_retrieved
    FROM ev_judged
    WHERE is_rel
    GROUP BY run_id, query_id
)
SELECT
    p.run_id,
    p.query_id,
    CASE WHEN p.num_ret = 0 OR p.num_rel = 0 THEN 0.0 ELSE (CAST(coalesce(h.relevant_retrieved, 0) AS DOUBLE) * coalesce(h.relevant_retrieved, 0)) / (CAST(p.num_ret AS DOUBLE) * p.num_rel) END AS value
FROM ev_pairs AS p
LEFT JOIN hits AS h USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
