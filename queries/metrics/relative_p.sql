-- name: relative_P
-- description: Relative precision at depth k: relevant documents in the top k divided by min(k, R), precision up to R and recall beyond.
-- params: k INTEGER
-- trec_eval: relative_P_{k}
-- kind: performance
-- range: 0, 1
-- reference: trec_eval m_rel_P.c
-- 0 for a topic with R = 0.
WITH hits AS (
    SELECT run_id, query_id, count(*) AS relevant_retrieved
    FROM ev_judged
    WHERE is_rel AND rank <= $k
    GROUP BY run_id, query_id
)
SELECT
    p.run_id,
    p.query_id,
    CASE WHEN p.num_rel = 0 THEN 0.0 ELSE coalesce(h.relevant_retrieved, 0) / least($k, p.num_rel) END AS value
FROM ev_pairs AS p
LEFT JOIN hits AS h USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
