-- name: gm_map
-- description: Geometric mean average precision: AP per topic, averaged over topics by the geometric mean of max(AP, 0.00001).
-- params:
-- aliases: GMAP
-- trec_eval: gm_map
-- kind: performance
-- aggregate: gmean
-- reference: Robertson, CIKM 2006 (GMAP); trec_eval m_gm_map.c
-- The per-topic value is AP (trec_eval prints gm_map only for all topics). The floor of
-- 0.00001 keeps a topic with AP = 0 from making the mean 0 (trec_eval's MIN_GEO_MEAN).
WITH precision_sums AS (
    SELECT run_id, query_id, sum(relevant_so_far / rank ORDER BY rank) AS precision_sum
    FROM ev_judged
    WHERE is_rel
    GROUP BY run_id, query_id
)
SELECT
    p.run_id,
    p.query_id,
    CASE WHEN p.num_rel = 0 THEN 0.0 ELSE coalesce(s.precision_sum, 0) / p.num_rel END AS value
FROM ev_pairs AS p
LEFT JOIN precision_sums AS s USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
