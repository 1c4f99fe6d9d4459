-- name: store_results
-- description: Keep an evaluation's per-topic values and means in the results table, replacing the same (run, measure, options).
-- params: collection_id VARCHAR, qrels_id VARCHAR, rel INTEGER, unjudged VARCHAR, depth_cap INTEGER, float32_ties BOOLEAN, averaging VARCHAR
-- ev_values holds measure, aggregate, run_id, query_id, value of this evaluation; ev_means its means
-- (means.sql: the mean, the sum for counts, the geometric mean for gm_map and gm_bpref), stored as
-- the rows of topic 'all'.
DELETE FROM results AS r
WHERE r.collection_id = $collection_id
  AND r.qrels_id = $qrels_id
  AND r.rel = $rel
  AND r.unjudged = $unjudged
  AND r.depth_cap IS NOT DISTINCT FROM $depth_cap
  AND r.float32_ties = $float32_ties
  AND r.averaging = $averaging
  AND EXISTS (
      SELECT 1 FROM ev_values AS v WHERE v.run_id = r.run_id AND v.measure = r.measure
  );

INSERT INTO results (
    collection_id, run_id, query_id, measure, value, n_topics, n_undefined,
    qrels_id, rel, unjudged, depth_cap, float32_ties, averaging
)
SELECT
    $collection_id, run_id, query_id, measure, value, NULL, NULL,
    $qrels_id, $rel, $unjudged, $depth_cap, $float32_ties, $averaging
FROM ev_values
UNION ALL
SELECT
    $collection_id, run_id, 'all', measure, value, n_topics, n_undefined,
    $qrels_id, $rel, $unjudged, $depth_cap, $float32_ties, $averaging
FROM ev_means;
