-- name: stored_levels
-- description: The stored per-level results of one reduced-qrels experiment (the latest when experiment_id is NULL).
-- params: collection_id VARCHAR, experiment_id VARCHAR
WITH chosen AS (
    SELECT experiment_id
    FROM experiments
    WHERE collection_id = $collection_id
      AND kind = 'reduced-qrels'
      AND ($experiment_id IS NULL OR experiment_id = $experiment_id)
    ORDER BY created_at DESC, experiment_id
    LIMIT 1
)
SELECT
    l.experiment_id,
    l.measure,
    l.level,
    l.qrels_id,
    l.n_runs,
    l.mean_value,
    l.full_mean,
    l.change_pct,
    l.tau,
    l.tau_p_value
FROM reduced_levels AS l
SEMI JOIN chosen AS c USING (experiment_id)
WHERE l.collection_id = $collection_id
ORDER BY l.measure, l.level DESC;
