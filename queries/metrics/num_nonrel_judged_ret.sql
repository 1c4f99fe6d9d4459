-- name: num_nonrel_judged_ret
-- description: Number of judged non-relevant documents retrieved (after the depth cap); summed over topics.
-- params:
-- trec_eval: num_nonrel_judged_ret
-- kind: count
-- aggregate: sum
-- reference: trec_eval m_num_nonrel_judged_ret.c
-- Judged means a grade >= 0; a negative grade (pooled, not judged) counts as unjudged.
WITH judged AS (
    SELECT run_id, query_id, count(*) AS nonrelevant_retrieved
    FROM ev_judged
    WHERE NOT is_rel
    GROUP BY run_id, query_id
)
SELECT
    p.run_id,
    p.query_id,
    CAST(coalesce(j.nonrelevant_retrieved, 0) AS DOUBLE) AS value
FROM ev_pairs AS p
LEFT JOIN judged AS j USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
