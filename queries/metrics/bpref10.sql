-- name: bpref10
-- description: bpref-10: each retrieved relevant document scores 1 - min(c, 10 + R)/(10 + R); summed over R.
-- params: k INTEGER = NULL
-- aliases: bpref-10
-- kind: performance
-- range: 0, 1
-- reference: Buckley & Voorhees, SIGIR 2004; Ahlgren & Grönqvist, IP&M 2008; methods §1.6(c)
-- The denominator stays 10 + R even when N < 10 + R, so the value cannot then reach 0.
WITH terms AS (
    SELECT
        j.run_id,
        j.query_id,
        sum(1.0 - least(j.nonrelevant_above, 10 + p.num_rel) / (10 + p.num_rel) ORDER BY j.rank) AS term_sum
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
