-- name: RBP_resid
-- description: RBP residual at depth k: the weight of every unjudged position within depth k plus the whole tail beyond the list.
-- params: p DOUBLE = 0.8 (0 < p < 1), k INTEGER = NULL
-- kind: uncertainty
-- range: 0, 1
-- reference: Moffat & Zobel, TOIS 2008; methods §1.5
-- resid = (1-p)·Σ_{unjudged k <= min(d,m)} p^(k-1) + p^min(d,m). The positions 1..min(d,m)
-- weigh 1 - p^min(d,m) in all, so resid = 1 - (1-p)·Σ_{judged} p^(k-1): only judged rows
-- are needed. Missing positions past the end of a short run count as unknown. Unlike
-- trec_eval's rbp_resid this is not set to 0 when the list has no unjudged document.
WITH judged_weights AS (
    SELECT run_id, query_id, sum(pow($p, rank - 1) ORDER BY rank) AS weight
    FROM ev_judged
    WHERE $k IS NULL OR rank <= $k
    GROUP BY run_id, query_id
)
SELECT
    p.run_id,
    p.query_id,
    1.0 - (1 - $p) * coalesce(w.weight, 0.0) AS value
FROM ev_pairs AS p
LEFT JOIN judged_weights AS w USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
