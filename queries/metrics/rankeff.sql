-- name: RankEff
-- description: RankEff: each retrieved relevant document scores 1 - c/N (the share of judged non-relevant documents below it); summed over R.
-- params: k INTEGER = NULL
-- kind: performance
-- range: 0, 1
-- reference: Ahlgren & Grönqvist, IP&M 2008; methods §1.7
-- With S4's adjustment every judged non-relevant document not retrieved (or below k) ranks
-- below every retrieved one, so b(x) = N - c(x). Undefined (NULL) when R = 0 or N = 0;
-- NULL values are left out of means and counted.
WITH terms AS (
    SELECT
        j.run_id,
        j.query_id,
        sum(1.0 - j.nonrelevant_above / p.num_nonrel ORDER BY j.rank) AS term_sum
    FROM ev_judged AS j
    JOIN ev_pairs AS p USING (run_id, query_id)
    WHERE j.is_rel AND ($k IS NULL OR j.rank <= $k) AND p.num_nonrel > 0
    GROUP BY j.run_id, j.query_id
)
SELECT
    p.run_id,
    p.query_id,
    CASE
        WHEN p.num_rel = 0 OR p.num_nonrel = 0 THEN NULL
        ELSE coalesce(t.term_sum, 0) / p.num_rel
    END AS value
FROM ev_pairs AS p
LEFT JOIN terms AS t USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
