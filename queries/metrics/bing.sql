-- name: binG
-- description: Binary G: each relevant document at rank r scores 1 / log2(2 + r - (relevant at or above r)); summed over R.
-- params:
-- trec_eval: binG
-- kind: performance
-- reference: trec_eval m_binG.c (experimental); G with binary gains
-- The discount grows with the non-relevant documents above, not with the rank itself.
WITH terms AS (
    SELECT run_id, query_id, sum(1.0 / log2(2 + rank - relevant_so_far) ORDER BY rank) AS term_sum
    FROM ev_judged
    WHERE is_rel
    GROUP BY run_id, query_id
)
SELECT
    p.run_id,
    p.query_id,
    CASE WHEN p.num_rel = 0 THEN 0.0 ELSE coalesce(t.term_sum, 0) / p.num_rel END AS value
FROM ev_pairs AS p
LEFT JOIN terms AS t USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
