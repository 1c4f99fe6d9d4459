-- name: strength_changes
-- description: Pairs whose verdict changed strength between two depths of the same stored decision matrix.
-- params: collection_id VARCHAR, measure VARCHAR, from_depth INTEGER, to_depth INTEGER
-- $measure is the performance metric without depth ('P' or 'AP'); both depths must have been
-- stored with the same test, correction, alpha, qrels set and run family, which the join
-- requires. Example: which pairs moved from strong to weak between depth 30 and 100?
SELECT
    f.run_a,
    f.run_b,
    f.test,
    f.correction,
    f.alpha,
    f."case" AS from_case,
    t."case" AS to_case,
    f.strength AS from_strength,
    t.strength AS to_strength
FROM decision_pairs AS f
JOIN decision_pairs AS t
    ON  t.collection_id = f.collection_id
    AND t.test = f.test
    AND t.correction = f.correction
    AND t.alpha = f.alpha
    AND t.qrels_id = f.qrels_id
    AND t.run_set = f.run_set
    AND t.run_a = f.run_a
    AND t.run_b = f.run_b
WHERE f.collection_id = $collection_id
  AND f.performance = $measure || '@' || CAST($from_depth AS VARCHAR)
  AND t.performance = $measure || '@' || CAST($to_depth AS VARCHAR)
  AND f.depth = $from_depth
  AND t.depth = $to_depth
  AND f.strength <> t.strength
ORDER BY f.test, f.correction, f.alpha, f.run_a, f.run_b;
