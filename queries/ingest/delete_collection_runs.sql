-- name: delete_collection_runs
-- description: Delete the run results of whole collections (import --replace): lines, lists, documents and cache, by key.
-- params: collections VARCHAR[]
DELETE FROM run_rows
WHERE list_key IN (SELECT list_key FROM run_topics WHERE list_contains($collections, collection_id));

DELETE FROM judged_results
WHERE build_key IN (SELECT build_key FROM judged_builds WHERE list_contains($collections, collection_id));

DELETE FROM judged_builds WHERE list_contains($collections, collection_id);

DELETE FROM documents WHERE list_contains($collections, collection_id);

DELETE FROM run_topics WHERE list_contains($collections, collection_id);
