-- name: AA_ret
-- description: Average assessment over the judged documents retrieved: A_p at each judged rank, averaged over those ranks.
-- params: k INTEGER = NULL
-- kind: assessment
-- range: 0, 1
-- unjudged: nonrelevant
-- reference: methods §2.4 (the literal reading, offered as a variant); NULL when none is judged
WITH sums AS (
    SELECT run_id, query_id, sum(judged_so_far / rank ORDER BY rank) AS precision_sum, count(*) AS judged
    FROM ev_judged
    WHERE $k IS NULL OR rank <= $k
    GROUP BY run_id, query_id
)
SELECT
    p.run_id,
    p.query_id,
    s.precision_sum / s.judged AS value
FROM ev_pairs AS p
LEFT JOIN sums AS s USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
