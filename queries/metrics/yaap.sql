-- name: yaap
-- description: Yet another AP: log((1 + S) / (1 + R - S)), S the sum of precision at each relevant document retrieved (AP·R).
-- params:
-- trec_eval: yaap
-- kind: performance
-- reference: trec_eval m_yaap.c (Robertson's log-odds form of AP)
-- A mean over topics of log-odds; not bounded to [0, 1]. Not in trec_eval's all_trec.
WITH precision_sums AS (
    SELECT run_id, query_id, sum(relevant_so_far / rank ORDER BY rank) AS precision_sum
    FROM ev_judged
    WHERE is_rel
    GROUP BY run_id, query_id
)
SELECT
    p.run_id,
    p.query_id,
    ln((1.0 + coalesce(s.precision_sum, 0)) / (1.0 + p.num_rel - coalesce(s.precision_sum, 0))) AS value
FROM ev_pairs AS p
LEFT JOIN precision_sums AS s USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
