-- name: ordered_pool_qrels
-- description: Store the qrels of an ordered pool: the parent judgments restricted to the documents in its judging order.
-- params: collection_id VARCHAR, pool_id VARCHAR, parent_qrels_id VARCHAR
-- Reads the pool's rows in pool_order (the documents the strategy and budget kept). As in
-- pool_qrels.sql, a pooled document the parent does not judge gets grade -1 (trec_eval's
-- "pooled, not judged"), documents outside the pool are absent. For the depth strategy
-- without a budget the rows are exactly pool_qrels.sql's: the same union of top lambda.
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
