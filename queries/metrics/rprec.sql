-- name: Rprec
-- description: R-precision: precision at depth R, the number of relevant documents of the topic.
-- params:
-- aliases: R-prec, RPrec
-- trec_eval: Rprec
-- kind: performance
-- range: 0, 1
-- reference: trec_eval m_Rprec.c
WITH hits AS (
    SELECT j.run_id, j.query_id, count(*) AS relevant_retrieved
    FROM ev_judged AS j
    JOIN ev_pairs AS p USING (run_id, query_id)
    WHERE j.is_rel AND j.rank <= p.num_rel
    GROUP BY j.run_id, j.query_id
)
SELECT
    p.run_id,
    p.query_id,
    CASE WHEN p.num_rel = 0 THEN 0.0 ELSE coalesce(h.relevant_retrieved, 0) / p.num_rel END AS value
FROM ev_pairs AS p
LEFT JOIN hits AS h USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
