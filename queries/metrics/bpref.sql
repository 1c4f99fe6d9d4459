-- name: bpref
-- description: trec_eval's bpref: each retrieved relevant document scores 1 - min(c, R)/min(R, N), c = judged non-relevant above it; summed over R.
-- params: k INTEGER = NULL
-- trec_eval: bpref
-- kind: performance
-- range: 0, 1
-- reference: Buckley & Voorhees, SIGIR 2004; methods §1.6(b); trec_eval m_bpref.c (>= 8.0)
-- Unjudged documents are skipped. A relevant document with no judged non-relevant one
-- above it scores 1 (which keeps N = 0 defined). Relevant documents not retrieved within
-- depth k score 0 while R stays in the denominator.
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
