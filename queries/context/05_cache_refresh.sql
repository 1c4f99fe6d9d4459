-- name: eval_cache_refresh
-- description: Rebuild the cached judged rows of the stale runs (ev_join_runs) for this qrels set.
-- params: fingerprint VARCHAR
-- Only used at the default threshold (relevant = grade >= 1), for which the cached
-- running counts hold; other thresholds join directly (05_source_direct.sql). Rows go in
-- relevant first, then by rank (schema/010_judged_cache_order.sql): the row groups' min/max
-- then let a metric's "rank <= k" or "is_rel" skip most of them.
DELETE FROM judged_results AS c
USING ev_key AS k
WHERE c.collection_id = k.collection_id AND c.qrels_id = k.qrels_id
  AND c.run_id IN (SELECT run_id FROM ev_join_runs);

DELETE FROM judged_builds AS b
USING ev_key AS k
WHERE b.collection_id = k.collection_id AND b.qrels_id = k.qrels_id
  AND b.run_id IN (SELECT run_id FROM ev_join_runs);

INSERT INTO judged_results
    (collection_id, qrels_id, run_id, query_id, rank, gain, judged_so_far, relevant_so_far)
SELECT k.collection_id, k.qrels_id, j.run_id, j.query_id, j.rank, j.gain, j.judged_so_far, j.relevant_so_far
FROM ev_judged_rows AS j
CROSS JOIN ev_key AS k
ORDER BY j.gain >= 1 DESC, j.rank;

INSERT INTO judged_builds (collection_id, qrels_id, run_id, run_sha256, qrels_fingerprint)
SELECT k.collection_id, k.qrels_id, s.run_id, s.sha256, $fingerprint
FROM ev_join_runs AS s
CROSS JOIN ev_key AS k;
