-- name: audit_order
-- description: An audit's pairs as judging tasks, in the order drawn: the columns of a pool's judging order.
-- params: collection_id VARCHAR, audit_id VARCHAR
-- topic_order is the place within the topic, overall_order the place drawn; weight is NULL.
SELECT
    query_id,
    doc_id,
    CAST(row_number() OVER (PARTITION BY query_id ORDER BY draw_order) AS INTEGER) AS topic_order,
    draw_order AS overall_order,
    CAST(NULL AS DOUBLE) AS weight
FROM audit_pairs
WHERE collection_id = $collection_id AND audit_id = $audit_id
ORDER BY draw_order;
