-- name: unj
-- description: Unjudged share of the top k as trec_eval counts it: unjudged documents retrieved within depth k, divided by k.
-- params: k INTEGER
-- trec_eval: unj_{k}
-- kind: assessment
-- range: 0, 1
-- reference: trec_eval m_unjudged.c (10.0)
-- Unlike U@k, positions past the end of a short list are not counted as unjudged: a run
-- of 3 judged documents has unj@10 = 0 but U@10 = 0.7.
WITH judged AS (
    SELECT run_id, query_id, count(*) AS judged
    FROM ev_judged
    WHERE rank <= $k
    GROUP BY run_id, query_id
)
SELECT
    p.run_id,
    p.query_id,
    (least($k, p.num_ret) - coalesce(j.judged, 0)) / $k AS value
FROM ev_pairs AS p
LEFT JOIN judged AS j USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
