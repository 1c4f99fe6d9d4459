-- name: P
-- description: Precision at depth k: relevant documents in the top k, divided by k.
-- params: k INTEGER
-- aliases: Precision
-- trec_eval: P_{k}
-- kind: performance
-- range: 0, 1
-- reference: methods §1.1; trec_eval m_P.c
-- The divisor is always k, also when the run returned fewer than k documents: missing
-- positions count as non-relevant, as in trec_eval's P_k.
WITH hits AS (
    SELECT run_id, query_id, count(*) AS relevant_retrieved
    FROM ev_judged
    WHERE is_rel AND rank <= $k
    GROUP BY run_id, query_id
)
SELECT
    p.run_id,
    p.query_id,
    coalesce(h.relevant_retrieved, 0) / $k AS value
FROM ev_pairs AS p
LEFT JOIN hits AS h USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
