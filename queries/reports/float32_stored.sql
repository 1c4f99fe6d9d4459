-- name: float32_stored
-- description: The float32 figures the ingest stored with each run (schema 021): lists reordered and the best rank, NULL where not known.
-- params: collection_id VARCHAR, runs VARCHAR[]
-- float32_order.sql's answer without reading a run line: lists 0 for a run that nothing
-- reorders, NULL for a run stored before schema 021 (the caller asks float32_order.sql
-- about those). $runs NULL: every run of the collection.
SELECT run_id, float32_lists AS lists, float32_first_rank AS first_rank
FROM runs
WHERE collection_id = $collection_id
    AND ($runs IS NULL OR list_contains($runs, run_id))
ORDER BY run_id;
