-- name: utility
-- description: Set utility a·(relevant retrieved) + b·(non-relevant retrieved) + c·(relevant missed) + d·(non-relevant missed), default a = 1, b = -1.
-- params: a DOUBLE = 1.0, b DOUBLE = -1.0, c DOUBLE = 0.0, d DOUBLE = 0.0, docs DOUBLE = 0.0 (docs >= 0)
-- trec_eval: utility
-- kind: performance
-- reference: trec_eval m_utility.c (TREC filtering track)
-- "Non-relevant" is everything retrieved that is not relevant, judged or not. docs is the
-- collection size (trec_eval -N, default 0 as there), so that d·(docs - retrieved - R +
-- relevant retrieved) counts the non-relevant documents not retrieved.
WITH hits AS (
    SELECT run_id, query_id, count(*) AS relevant_retrieved
    FROM ev_judged
    WHERE is_rel
    GROUP BY run_id, query_id
)
SELECT
    p.run_id,
    p.query_id,
    $a * coalesce(h.relevant_retrieved, 0)
        + $b * (p.num_ret - coalesce(h.relevant_retrieved, 0))
        + $c * (p.num_rel - coalesce(h.relevant_retrieved, 0))
        + $d * ($docs + coalesce(h.relevant_retrieved, 0) - p.num_ret - p.num_rel) AS value
FROM ev_pairs AS p
LEFT JOIN hits AS h USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
