-- name: RR
-- description: Reciprocal rank of the first relevant document within depth k (whole list without k); 0 if none.
-- params: k INTEGER = NULL
-- aliases: MRR, recip_rank
-- trec_eval: recip_rank
-- kind: performance
-- range: 0, 1
-- reference: trec_eval m_recip_rank.c
WITH first_hit AS (
    SELECT run_id, query_id, min(rank) AS first_rank
    FROM ev_judged
    WHERE is_rel AND ($k IS NULL OR rank <= $k)
    GROUP BY run_id, query_id
)
SELECT
    p.run_id,
    p.query_id,
    coalesce(1.0 / f.first_rank, 0.0) AS value
FROM ev_pairs AS p
LEFT JOIN first_hit AS f USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
