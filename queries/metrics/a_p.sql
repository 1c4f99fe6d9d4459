-- name: A_p
-- description: Assessment precision at depth k: judged documents in the top k, divided by k.
-- params: k INTEGER
-- kind: assessment
-- range: 0, 1
-- unjudged: nonrelevant
-- reference: Baillie, Azzopardi & Ruthven, IP&M 2008 / ECIR 2007; methods §2.2
-- (ir_measures' Judged@k divides by min(k, m) instead: judged.sql.)
-- The divisor is k even for a run shorter than k: missing positions are not assessed
-- (methods §9.1). Judged means any grade >= 0, relevant or not.
WITH assessed AS (
    SELECT run_id, query_id, count(*) AS judged
    FROM ev_judged
    WHERE rank <= $k
    GROUP BY run_id, query_id
)
SELECT
    p.run_id,
    p.query_id,
    coalesce(a.judged, 0) / $k AS value
FROM ev_pairs AS p
LEFT JOIN assessed AS a USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
