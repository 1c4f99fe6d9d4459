-- name: insert_judged
-- description: Record the builds of the judged rows the run-file reader found at ingest (insert_judged_rows.sql stores the rows).
-- params: collection_id VARCHAR, qrels_id VARCHAR, fingerprint VARCHAR, run_ids VARCHAR[], sha256s VARCHAR[], build_keys INTEGER[]
-- A build row per newly ingested run records what its cached rows were made from: run
-- $run_ids[i] had content $sha256s[i], this qrels set had $fingerprint, and its rows carry
-- build_key $build_keys[i] (schema/013_keyed_results.sql).
INSERT INTO judged_builds (collection_id, qrels_id, run_id, run_sha256, qrels_fingerprint, build_key)
SELECT $collection_id, $qrels_id, unnest($run_ids), unnest($sha256s), $fingerprint, unnest($build_keys);
