-- name: NumRelRet
-- description: Number of relevant documents retrieved within depth k (whole list without k); summed over topics.
-- params: k INTEGER = NULL
-- aliases: num_rel_ret
-- trec_eval: num_rel_ret
-- kind: count
-- aggregate: sum
WITH hits AS (
    SELECT run_id, query_id, count(*) AS relevant_retrieved
    FROM ev_judged
    WHERE is_rel AND ($k IS NULL OR rank <= $k)
    GROUP BY run_id, query_id
)
SELECT
    p.run_id,
    p.query_id,
    CAST(coalesce(h.relevant_retrieved, 0) AS DOUBLE) AS value
FROM ev_pairs AS p
LEFT JOIN hits AS h USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
