-- name: NumRet
-- description: Number of documents retrieved for the topic (after the depth cap); summed over topics.
-- params:
-- aliases: num_ret
-- trec_eval: num_ret
-- kind: count
-- aggregate: sum
SELECT run_id, query_id, CAST(num_ret AS DOUBLE) AS value
FROM ev_pairs
ORDER BY run_id, query_id;
