-- name: gm_bpref
-- description: bpref per topic (trec_eval's), averaged over topics by the geometric mean of max(bpref, 0.00001).
-- params:
-- trec_eval: gm_bpref
-- kind: performance
-- aggregate: gmean
-- reference: trec_eval m_gm_bpref.c; the per-topic value is bpref.sql's (see there)
WITH terms AS (
    SELECT
        j.run_id,
        j.query_id,
        sum(
            CASE
                WHEN j.nonrelevant_above = 0 THEN 1.0
                ELSE 1.0 - least(j.nonrelevant_above, p.num_rel) / least(p.num_rel, p.num_nonrel)
            END
            ORDER BY j.rank
        ) AS term_sum
    FROM ev_judged AS j
    JOIN ev_pairs AS p USING (run_id, query_id)
    WHERE j.is_rel
    GROUP BY j.run_id, j.query_id
)
SELECT
    p.run_id,
    p.query_id,
    CASE WHEN p.num_rel = 0 THEN 0.0 ELSE coalesce(t.term_sum, 0) / p.num_rel END AS value
FROM ev_pairs AS p
LEFT JOIN terms AS t USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
