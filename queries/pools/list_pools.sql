-- name: list_pools
-- description: One row per stored pool of a collection: depth, parent qrels, members and the size of its qrels.
-- params: collection_id VARCHAR, pool_id VARCHAR
-- pooled counts every pooled (topic, document); judged those the parent set judges (grade >= 0),
-- unjudged those it does not (stored with grade -1). $pool_id NULL lists every pool. strategy,
-- budget, budget_scope and seed say how the judging order was made (schema/019).
WITH members AS (
    SELECT pool_id, count(*) AS runs
    FROM pool_runs
    WHERE collection_id = $collection_id
    GROUP BY pool_id
),
sizes AS (
    SELECT
        qrels_id AS pool_id,
        count(DISTINCT query_id) AS topics,
        count(*) AS pooled,
        count(*) FILTER (WHERE relevance >= 0) AS judged,
        count(*) FILTER (WHERE relevance >= 1) AS relevant,
        count(*) FILTER (WHERE relevance < 0) AS unjudged
    FROM qrels
    WHERE collection_id = $collection_id
    GROUP BY qrels_id
)
SELECT
    p.pool_id,
    p.depth,
    p.parent_qrels_id,
    p.selection,
    coalesce(p.strategy, 'depth') AS strategy,
    p.budget,
    p.budget_scope,
    p.seed,
    coalesce(m.runs, 0) AS runs,
    coalesce(s.topics, 0) AS topics,
    coalesce(s.pooled, 0) AS pooled,
    coalesce(s.judged, 0) AS judged,
    coalesce(s.relevant, 0) AS relevant,
    coalesce(s.unjudged, 0) AS unjudged
FROM pools AS p
LEFT JOIN members AS m USING (pool_id)
LEFT JOIN sizes AS s USING (pool_id)
WHERE p.collection_id = $collection_id AND ($pool_id IS NULL OR p.pool_id = $pool_id)
ORDER BY p.pool_id;
