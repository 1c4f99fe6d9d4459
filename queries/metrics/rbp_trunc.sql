-- name: RBP_trunc
-- description: Truncated RBP at depth k (Webber & Park): weights of ranks 1..k rescaled to sum to 1, nothing beyond k.
-- params: p DOUBLE = 0.8 (0 < p < 1), k INTEGER, rescale BOOLEAN = true
-- kind: performance
-- range: 0, 1
-- reference: Webber & Park, SIGIR 2009; methods §1.5
-- w_i = (1-p)·p^(i-1) / (1 - p^k); with rescale=false the plain truncation (1-p)·p^(i-1),
-- whose maximum is 1 - p^k. The two differ by a constant factor only.
WITH weights AS (
    SELECT run_id, query_id, sum(pow($p, rank - 1) ORDER BY rank) AS weight
    FROM ev_judged
    WHERE is_rel AND rank <= $k
    GROUP BY run_id, query_id
)
SELECT
    p.run_id,
    p.query_id,
    (1 - $p) * coalesce(w.weight, 0.0) / CASE WHEN $rescale THEN 1 - pow($p, $k) ELSE 1.0 END AS value
FROM ev_pairs AS p
LEFT JOIN weights AS w USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
