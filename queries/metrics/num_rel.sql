-- name: NumRel
-- description: Number of relevant documents of the topic, R; summed over topics.
-- params:
-- aliases: num_rel
-- trec_eval: num_rel
-- kind: count
-- aggregate: sum
SELECT run_id, query_id, CAST(num_rel AS DOUBLE) AS value
FROM ev_pairs
ORDER BY run_id, query_id;
