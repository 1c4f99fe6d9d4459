-- name: set_P
-- description: Precision of the retrieved set: relevant retrieved / retrieved (0 for an empty list).
-- params:
-- trec_eval: set_P
-- kind: performance
-- range: 0, 1
-- reference: trec_eval m_set_P.c
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
    CASE WHEN p.num_ret = 0 THEN 0.0 ELSE coalesce(h.relevant_retrieved, 0) / p.num_ret END AS value
FROM ev_pairs AS p
LEFT JOIN hits AS h USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
