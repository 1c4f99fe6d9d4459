-- name: RBP_upper
-- description: Upper RBP value at depth k: base plus residual, the value if every unjudged or missing position were relevant.
-- params: p DOUBLE = 0.8 (0 < p < 1), k INTEGER = NULL
-- kind: uncertainty
-- range: 0, 1
-- reference: Moffat & Zobel, TOIS 2008; methods §1.5, §3.3
-- base + resid = 1 - (1-p)·Σ_{judged non-relevant k <= d} p^(k-1).
WITH nonrelevant_weights AS (
    SELECT run_id, query_id, sum(pow($p, rank - 1) ORDER BY rank) AS weight
    FROM ev_judged
    WHERE NOT is_rel AND ($k IS NULL OR rank <= $k)
    GROUP BY run_id, query_id
)
SELECT
    p.run_id,
    p.query_id,
    1.0 - (1 - $p) * coalesce(w.weight, 0.0) AS value
FROM ev_pairs AS p
LEFT JOIN nonrelevant_weights AS w USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
