-- name: lu_runs
-- description: The runs evaluated, numbered from 0 in run_id order (run_no).
-- params: collection_id VARCHAR, runs VARCHAR[]
-- A run without a ranking for a topic of the set scores as an empty ranking (methods §0.4).
CREATE OR REPLACE TEMP TABLE lu_runs AS
SELECT CAST(row_number() OVER (ORDER BY run_id) - 1 AS INTEGER) AS run_no, run_id
FROM runs
WHERE collection_id = $collection_id
  AND ($runs IS NULL OR list_contains($runs, run_id));
