-- name: delete_run
-- description: Delete one stored run (ingest --replace): its rows and cached rows by key, its lists, builds and entry.
-- params: collection_id VARCHAR, run_id VARCHAR
-- Its (topic, document) pairs stay in documents, where other runs may share them.
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

DELETE FROM runs WHERE collection_id = $collection_id AND run_id = $run_id;
