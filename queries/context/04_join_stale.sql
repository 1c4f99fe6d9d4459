-- name: eval_join_stale
-- description: The evaluated runs whose cached judged rows are missing or were built from other content.
-- params: fingerprint VARCHAR
-- A cache entry is valid for a run while the run's sha256 and the qrels set's content
-- fingerprint are those it was built from; anything else is rebuilt, never trusted.
CREATE OR REPLACE TEMP TABLE ev_join_runs AS
SELECT e.run_id, e.sha256
FROM ev_runs AS e
CROSS JOIN ev_key AS k
LEFT JOIN judged_builds AS b
    ON b.collection_id = k.collection_id AND b.qrels_id = k.qrels_id AND b.run_id = e.run_id
WHERE b.run_id IS NULL
   OR b.run_sha256 <> e.sha256
   OR b.qrels_fingerprint <> $fingerprint;
