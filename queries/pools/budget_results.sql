-- name: budget_results
-- description: The stored rows of budget experiments: one per (experiment, strategy, seed, budget).
-- params: collection_id VARCHAR, experiment_id VARCHAR
-- $experiment_id NULL gives every experiment of the collection. Rows come in budget order,
-- strategies by name within a budget, seeds ascending.
SELECT
    r.experiment_id,
    e.kind,
    r.strategy,
    r.seed,
    r.budget,
    r.budget_share,
    r.judged,
    r.relevant_found,
    r.relevant_share,
    r.kendall_tau_b,
    r.tau_ap,
    r.significant_kept,
    r.judged_share
FROM budget_results AS r
JOIN budget_experiments AS e USING (collection_id, experiment_id)
WHERE r.collection_id = $collection_id AND ($experiment_id IS NULL OR r.experiment_id = $experiment_id)
ORDER BY r.experiment_id, r.budget, r.strategy, r.seed;
