-- name: delete_run
-- description: Delete one stored run (ingest --replace): its rows and cached rows by key, its lists, builds, losses to exclusions and entry.
-- params: collection_id VARCHAR, run_id VARCHAR
-- The documents its lines referred to are noted in dropped_pairs first: other runs may
-- share them, so drop_unused_pairs.sql, once the command's deletions are done,
-- drops only those no line refers to any more.
CREATE TEMP TABLE IF NOT EXISTS dropped_pairs (doc_key BIGINT);

INSERT INTO dropped_pairs
SELECT DISTINCT doc_key
FROM run_rows
WHERE list_key IN (
    SELECT list_key FROM run_topics WHERE collection_id = $collection_id AND run_id = $run_id
);

DELETE FROM run_rows
WHERE list_key IN (
    SELECT list_key FROM run_topics WHERE collection_id = $collection_id AND run_id = $run_id
);

DELETE FROM judged_results
WHERE build_key IN (
    SELECT build_key FROM judged_builds WHERE collection_id = $collection_id AND run_id = $run_id
);

DELETE FROM judged_builds WHERE collection_id = $collection_id AND run_id = $run_id;

DELETE FROM run_topics WHERE collection_id = $collection_id AND run_id = $run_id;

DELETE FROM run_exclusions WHERE collection_id = $collection_id AND run_id = $run_id;

DELETE FROM runs WHERE collection_id = $collection_id AND run_id = $run_id;
