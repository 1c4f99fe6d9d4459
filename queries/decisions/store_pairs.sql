-- name: store_pairs
-- description: Keep the classified pairs of one decision-matrix run, replacing the same pairing, options and run family.
-- params: collection_id VARCHAR, test VARCHAR, correction VARCHAR, alpha DOUBLE, qrels_id VARCHAR, run_set VARCHAR, n_runs INTEGER
-- dm_pairs is the registered frame of evalwh.stats.decision.decision_pairs output with the
-- columns performance, assessment and depth added; one row per (pairing, pair of runs).
DELETE FROM decision_pairs AS d
WHERE d.collection_id = $collection_id
  AND d.test = $test
  AND d.correction = $correction
  AND d.alpha = $alpha
  AND d.qrels_id = $qrels_id
  AND d.run_set = $run_set
  AND EXISTS (
      SELECT 1 FROM dm_pairs AS p
      WHERE p.performance = d.performance AND p.assessment = d.assessment
  );

INSERT INTO decision_pairs (
    collection_id, performance, assessment, depth, test, correction, alpha, qrels_id,
    run_set, n_runs, run_a, run_b, n_topics,
    perf_mean_a, perf_mean_b, perf_statistic, perf_p_value, perf_p_adjusted, perf_outcome,
    assess_mean_a, assess_mean_b, assess_statistic, assess_p_value, assess_p_adjusted,
    assess_outcome, "case", case_group, strength
)
SELECT
    $collection_id, performance, assessment, depth, $test, $correction, $alpha, $qrels_id,
    $run_set, $n_runs, run_a, run_b, n_topics,
    perf_mean_a, perf_mean_b, perf_statistic, perf_p_value, perf_p_adjusted, perf_outcome,
    assess_mean_a, assess_mean_b, assess_statistic, assess_p_value, assess_p_adjusted,
    assess_outcome, "case", case_group, strength
FROM dm_pairs;
