-- name: NumQ
-- description: Number of topics the run answered: 1 for a topic with at least one retrieved document, else 0; summed over topics.
-- params:
-- kind: count
-- aggregate: sum
-- reference: ir_measures' NumQ (a topic the run lacks counts 0); trec_eval's num_q without -c
-- One row per (run, topic) pair of the evaluation (ev_pairs): with --averaging trec_eval_c
-- the pairs include the qrels topics a run lacks, which count 0 here, as in ir_measures.
SELECT run_id, query_id, CAST(CASE WHEN num_ret > 0 THEN 1 ELSE 0 END AS DOUBLE) AS value
FROM ev_pairs
ORDER BY run_id, query_id;
