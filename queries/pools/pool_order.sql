-- name: pool_order
-- description: A stored pool's judging order: one row per pooled (topic, document), first to judge first.
-- params: collection_id VARCHAR, pool_id VARCHAR
-- topic_order is the place within the topic (a budget per topic keeps the first places),
-- overall_order the place across topics (a total budget keeps the first places).
SELECT query_id, doc_id, topic_order, overall_order, weight
FROM pool_order
WHERE collection_id = $collection_id AND pool_id = $pool_id
ORDER BY overall_order;
