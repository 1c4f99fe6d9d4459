-- name: bpref_BV04
-- description: bpref as printed by Buckley & Voorhees 2004: each retrieved relevant document scores 1 - min(c, R)/R; summed over R.
-- params: k INTEGER = NULL
-- kind: performance
-- range: 0, 1
-- reference: Buckley & Voorhees, SIGIR 2004; methods §1.6(a)
-- Differs from trec_eval's bpref only when N < R.
WITH terms AS (
    SELECT
        j.run_id,
        j.query_id,
        sum(1.0 - least(j.nonrelevant_above, p.num_rel) / p.num_rel ORDER BY j.rank) AS term_sum
    FROM ev_judged AS j
    JOIN ev_pairs AS p USING (run_id, query_id)
    WHERE j.is_rel AND ($k IS NULL OR j.rank <= $k)
    GROUP BY j.run_id, j.query_id
)
SELECT
    p.run_id,
    p.query_id,
    CASE WHEN p.num_rel = 0 THEN 0.0 ELSE coalesce(t.term_sum, 0) / p.num_rel END AS value
FROM ev_pairs AS p
LEFT JOIN terms AS t USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
