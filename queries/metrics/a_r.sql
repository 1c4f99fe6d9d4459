-- name: A_r
-- description: Recall of assessment at depth k (whole list without k): judged documents retrieved, divided by the judged set |A|.
-- params: k INTEGER = NULL
-- kind: assessment
-- range: 0, 1
-- unjudged: nonrelevant
-- reference: Baillie, Azzopardi & Ruthven, IP&M 2008; methods §2.3
WITH assessed AS (
    SELECT run_id, query_id, count(*) AS judged
    FROM ev_judged
    WHERE $k IS NULL OR rank <= $k
    GROUP BY run_id, query_id
)
SELECT
    p.run_id,
    p.query_id,
    CASE
        WHEN p.num_rel + p.num_nonrel = 0 THEN 0.0
        ELSE coalesce(a.judged, 0) / (p.num_rel + p.num_nonrel)
    END AS value
FROM ev_pairs AS p
LEFT JOIN assessed AS a USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
