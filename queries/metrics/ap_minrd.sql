-- name: AP_minRd
-- description: Average precision at depth k divided by min(R, k), the machine-learning "AP@k" (not trec_eval's).
-- params: k INTEGER
-- kind: performance
-- range: 0, 1
-- reference: methods §1.2 (offered under its own name only)
WITH precision_sums AS (
    -- precision at the rank of each relevant document: relevant_so_far / rank
    SELECT run_id, query_id, sum(relevant_so_far / rank ORDER BY rank) AS precision_sum
    FROM ev_judged
    WHERE is_rel AND rank <= $k
    GROUP BY run_id, query_id
)
SELECT
    p.run_id,
    p.query_id,
    CASE
        WHEN p.num_rel = 0 THEN 0.0
        ELSE coalesce(s.precision_sum, 0) / least(p.num_rel, $k)
    END AS value
FROM ev_pairs AS p
LEFT JOIN precision_sums AS s USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
