-- name: insert_judged
-- description: Store the judged rows the run-file reader found at ingest in the evaluation cache, with their builds.
-- params: collection_id VARCHAR, qrels_id VARCHAR, fingerprint VARCHAR, run_ids VARCHAR[], sha256s VARCHAR[], build_keys INTEGER[], files VARCHAR[]
-- $files (Parquet, staged by evalwh.ingest) hold, per newly ingested run, the rows
-- queries/context/04_judged_rows.sql would join for this qrels set (rank, gain = grade >= 0,
-- running counts at the default threshold), computed by evalwh/_runlines.c while it ranked
-- the file, with the keys of their build and ranked list (schema/013_keyed_results.sql).
-- They go in as the evaluation's own refresh puts them (05_cache_refresh.sql): relevant
-- rows first, then by rank, so that the row groups' min/max let a metric's "rank <= k" or
-- "is_rel" skip most of them. A build row per run records what the rows were made from
-- ($run_ids[i] has content $sha256s[i] and build $build_keys[i]).
INSERT INTO judged_builds (collection_id, qrels_id, run_id, run_sha256, qrels_fingerprint, build_key)
SELECT $collection_id, $qrels_id, unnest($run_ids), unnest($sha256s), $fingerprint, unnest($build_keys);

INSERT INTO judged_results (build_key, list_key, rank, gain, judged_so_far, relevant_so_far)
SELECT build_key, list_key, rank, gain, judged_so_far, relevant_so_far
FROM read_parquet($files);
