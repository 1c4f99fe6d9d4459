-- name: A_p_ret
-- description: Assessment precision over what was retrieved: judged documents in the top k, divided by min(k, m).
-- params: k INTEGER
-- kind: assessment
-- range: 0, 1
-- unjudged: nonrelevant
-- reference: methods §2.2 (the |X| divisor, offered as a variant); NULL for an empty list
WITH assessed AS (
    SELECT run_id, query_id, count(*) AS judged
    FROM ev_judged
    WHERE rank <= $k
    GROUP BY run_id, query_id
)
SELECT
    p.run_id,
    p.query_id,
    CASE WHEN p.num_ret = 0 THEN NULL ELSE coalesce(a.judged, 0) / least($k, p.num_ret) END AS value
FROM ev_pairs AS p
LEFT JOIN assessed AS a USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
