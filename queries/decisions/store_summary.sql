-- name: store_summary
-- description: Keep the case proportions of one decision-matrix run, replacing the same pairing, options and run family.
-- params: collection_id VARCHAR, test VARCHAR, correction VARCHAR, alpha DOUBLE, qrels_id VARCHAR, run_set VARCHAR, n_runs INTEGER
-- dm_summary is the registered frame of evalwh.stats.decision.case_proportions output,
-- grouped by performance, assessment and depth; one row per pairing.
DELETE FROM decision_summary AS d
WHERE d.collection_id = $collection_id
  AND d.test = $test
  AND d.correction = $correction
  AND d.alpha = $alpha
  AND d.qrels_id = $qrels_id
  AND d.run_set = $run_set
  AND EXISTS (
      SELECT 1 FROM dm_summary AS s
      WHERE s.performance = d.performance AND s.assessment = d.assessment
  );

INSERT INTO decision_summary (
    collection_id, performance, assessment, depth, test, correction, alpha, qrels_id,
    run_set, n_runs, n_pairs, c1, c2, c3, c4, c3a, c3b, strong, weak
)
SELECT
    $collection_id, performance, assessment, depth, $test, $correction, $alpha, $qrels_id,
    $run_set, $n_runs, CAST(pairs AS INTEGER), "C1", "C2", "C3", "C4", "C3a", "C3b", strong, weak
FROM dm_summary;
