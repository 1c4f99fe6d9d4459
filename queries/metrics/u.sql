-- name: U
-- description: Uncertainty at depth k: the share of the top k that is unjudged or missing, 1 - A_p@k.
-- params: k INTEGER
-- kind: assessment
-- range: 0, 1
-- unjudged: nonrelevant
-- reference: Baillie, Azzopardi & Ruthven, IP&M 2008; methods §2.2
WITH assessed AS (
    SELECT run_id, query_id, count(*) AS judged
    FROM ev_judged
    WHERE rank <= $k
    GROUP BY run_id, query_id
)
SELECT
    p.run_id,
    p.query_id,
    1.0 - coalesce(a.judged, 0) / $k AS value
FROM ev_pairs AS p
LEFT JOIN assessed AS a USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
