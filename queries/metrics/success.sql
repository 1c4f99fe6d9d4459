-- name: Success
-- description: 1 if a relevant document is in the top k, else 0.
-- params: k INTEGER
-- trec_eval: success_{k}
-- kind: performance
-- range: 0, 1
-- reference: trec_eval m_success.c
WITH hits AS (
    SELECT DISTINCT run_id, query_id
    FROM ev_judged
    WHERE is_rel AND rank <= $k
)
SELECT
    p.run_id,
    p.query_id,
    CASE WHEN h.run_id IS NULL THEN 0.0 ELSE 1.0 END AS value
FROM ev_pairs AS p
LEFT JOIN hits AS h USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
