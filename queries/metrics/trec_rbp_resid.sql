-- name: trec_rbp_resid
-- description: trec_eval 10's rbp_resid: the RBP residual (weight of the unjudged positions plus the tail past the list), but 0 when the list holds no unjudged document.
-- params: p DOUBLE = 0.9 (0 < p < 1)
-- trec_eval: rbp_resid
-- kind: uncertainty
-- reference: Moffat & Zobel, TOIS 2008; trec_eval m_rbp_resid.c (10.0)
-- A trec_eval quirk kept for byte-identical output: a fully judged list still leaves the
-- tail p^m unknown, which RBP_resid reports and this does not. Otherwise equal to
-- RBP_resid(p) without depth: 1 - (1 - p)·Σ over judged documents of p^(rank - 1).
WITH judged_weights AS (
    SELECT run_id, query_id, sum(pow($p, rank - 1) ORDER BY rank) AS weight, count(*) AS judged
    FROM ev_judged
    GROUP BY run_id, query_id
)
SELECT
    p.run_id,
    p.query_id,
    CASE
        WHEN p.num_ret - coalesce(w.judged, 0) = 0 THEN 0.0
        ELSE 1.0 - (1 - $p) * coalesce(w.weight, 0.0)
    END AS value
FROM ev_pairs AS p
LEFT JOIN judged_weights AS w USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
