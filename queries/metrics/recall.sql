-- name: R
-- description: Recall at depth k: relevant documents in the top k, divided by R.
-- params: k INTEGER = NULL
-- aliases: Recall, recall
-- trec_eval: recall_{k}
-- kind: performance
-- range: 0, 1
-- reference: methods §1.3; trec_eval m_recall.c
-- Without k the whole list counts. A topic with R = 0 scores 0, as in trec_eval (by
-- default such topics are not in T at all).
WITH hits AS (
    SELECT run_id, query_id, count(*) AS relevant_retrieved
    FROM ev_judged
    WHERE is_rel AND ($k IS NULL OR rank <= $k)
    GROUP BY run_id, query_id
)
SELECT
    p.run_id,
    p.query_id,
    CASE WHEN p.num_rel = 0 THEN 0.0 ELSE coalesce(h.relevant_retrieved, 0) / p.num_rel END AS value
FROM ev_pairs AS p
LEFT JOIN hits AS h USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
