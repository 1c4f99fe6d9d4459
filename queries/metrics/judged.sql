-- name: Judged
-- description: ir_measures' Judged@k: judged documents in the top k, divided by the number of documents there, min(k, m); the whole list without k.
-- params: k INTEGER = NULL
-- kind: assessment
-- range: 0, 1
-- unjudged: nonrelevant
-- reference: ir_measures' judged provider (from OpenNIR); methods §2.2 for A_p, whose divisor is k
-- Beside A_p@k: a run that stops before depth k is divided by what it returned, so a short
-- fully judged list scores 1 here and m/k in A_p. An empty list (a topic the run lacks)
-- scores 0, as ir_measures scores a missing topic. A negative grade is unjudged here, as
-- everywhere in evalwh (ir_measures counts any qrels line as judged).
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
        WHEN p.num_ret = 0 THEN 0.0
        ELSE coalesce(a.judged, 0) / least(coalesce($k, p.num_ret), p.num_ret)
    END AS value
FROM ev_pairs AS p
LEFT JOIN assessed AS a USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
