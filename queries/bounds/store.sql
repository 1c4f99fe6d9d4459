-- name: bounds_store
-- description: Replace the stored bounds of the same collection, runs, measure, aggregations and options with the rows of bd_values.
-- params: collection_id VARCHAR, measure VARCHAR, qrels_id VARCHAR, rel INTEGER, depth_cap INTEGER
-- bd_values is the aggregated frame registered by evalwh.methods.bounds (one row per run, depth,
-- aggregation). A recomputation replaces rows with the same key, so a depth stored once
-- has one current value per option set.
DELETE FROM bounds AS b
WHERE b.collection_id = $collection_id
  AND b.measure = $measure
  AND b.qrels_id = $qrels_id
  AND b.rel = $rel
  AND b.depth_cap IS NOT DISTINCT FROM $depth_cap
  AND EXISTS (
      SELECT 1
      FROM bd_values AS v
      WHERE v.run_id = b.run_id AND v.depth = b.depth AND v.aggregation = b.aggregation
  );

INSERT INTO bounds (
    collection_id, run_id, measure, kind, depth, aggregation, lower, upper,
    m_rel, m_nonrel, m_theta, conflict, n_topics, note, qrels_id, rel, depth_cap
)
SELECT
    $collection_id,
    run_id,
    $measure,
    kind,
    depth,
    aggregation,
    lower,
    upper,
    m_rel,
    m_nonrel,
    m_theta,
    conflict,
    n_topics,
    note,
    $qrels_id,
    $rel,
    $depth_cap
FROM bd_values;
