-- name: AA
-- description: Average assessment to depth k (whole list without k): A_p at the rank of each judged document, summed, divided by |A|; its mean over topics is MAA.
-- params: k INTEGER = NULL
-- aliases: MAA
-- kind: assessment
-- range: 0, 1
-- unjudged: nonrelevant
-- reference: Baillie, Azzopardi & Ruthven, ECIR 2007; methods §2.4
-- AP with "relevant" replaced by "judged": the denominator is |A| = R + N (methods §9.2).
WITH sums AS (
    SELECT run_id, query_id, sum(judged_so_far / rank ORDER BY rank) AS precision_sum
    FROM ev_judged
    WHERE $k IS NULL OR rank <= $k
    GROUP BY run_id, query_id
)
SELECT
    p.run_id,
    p.query_id,
    CASE
        WHEN p.num_rel + p.num_nonrel = 0 THEN 0.0
        ELSE coalesce(s.precision_sum, 0) / (p.num_rel + p.num_nonrel)
    END AS value
FROM ev_pairs AS p
LEFT JOIN sums AS s USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
