-- name: eval_runs
-- description: The runs an evaluation covers: all runs of the collection, or the listed ones.
-- params: collection_id VARCHAR, runs VARCHAR[]
CREATE OR REPLACE TEMP TABLE ev_runs AS
SELECT collection_id, run_id
FROM runs
WHERE collection_id = $collection_id
  AND ($runs IS NULL OR list_contains($runs, run_id));
