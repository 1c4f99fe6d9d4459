-- name: Rprec_mult
-- description: Precision at a multiple of R: P@c with c = floor(mult·R + 0.9); 0 when c = 0.
-- params: mult DOUBLE = 1.0 (mult > 0)
-- trec_eval: Rprec_mult
-- kind: performance
-- range: 0, 1
-- reference: trec_eval m_Rprec_mult.c
-- As P@k, positions past the end of a short run count as non-relevant.
WITH cuts AS (
    SELECT run_id, query_id, CAST(floor($mult * num_rel + 0.9) AS BIGINT) AS cut
    FROM ev_pairs
),
hits AS (
    SELECT j.run_id, j.query_id, count(*) AS relevant_retrieved
    FROM ev_judged AS j
    JOIN cuts AS c USING (run_id, query_id)
    WHERE j.is_rel AND j.rank <= c.cut
    GROUP BY j.run_id, j.query_id
)
SELECT
    c.run_id,
    c.query_id,
    CASE WHEN c.cut <= 0 THEN 0.0 ELSE coalesce(h.relevant_retrieved, 0) / c.cut END AS value
FROM cuts AS c
LEFT JOIN hits AS h USING (run_id, query_id)
ORDER BY c.run_id, c.query_id;
