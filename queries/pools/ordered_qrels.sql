-- name: ordered_pool_qrels
-- description: Store the qrels of an ordered pool: the parent judgments restricted to the documents in its judging order.
-- params: collection_id VARCHAR, pool_id VARCHAR, parent_qrels_id VARCHAR
-- Reads the pool's rows in pool_order (the documents the strategy and budget kept, out of
-- Pool_lambda(S, t), the union of every member's top lambda of methods §5.1, read in trec_eval
-- order from the rank materialised at ingest: queries/pools/candidates.sql). A pooled
-- document that the parent set does not judge gets grade -1, trec_eval's "pooled but not
-- judged": every metric reads it as unjudged, and the pool's membership stays complete in
-- the table. Documents outside the pool are absent, hence unjudged. For the depth strategy
-- without a budget the rows are the whole union of top lambda: the official TREC-8 pool for
-- the 71 pooled runs at depth 100 (tests/test_pools.py, tests/test_budget.py).
INSERT INTO qrels (collection_id, qrels_id, query_id, iteration, doc_id, relevance)
WITH parent AS (
    SELECT query_id, iteration, doc_id, relevance
    FROM qrels
    WHERE collection_id = $collection_id AND qrels_id = $parent_qrels_id
)
SELECT
    $collection_id AS collection_id,
    $pool_id AS qrels_id,
    o.query_id,
    coalesce(q.iteration, '0') AS iteration,
    o.doc_id,
    coalesce(q.relevance, -1) AS relevance
FROM pool_order AS o
LEFT JOIN parent AS q USING (query_id, doc_id)
WHERE o.collection_id = $collection_id AND o.pool_id = $pool_id
ORDER BY o.query_id, o.doc_id;
