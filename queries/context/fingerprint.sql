-- name: qrels_fingerprint
-- description: A content fingerprint of one qrels set (row count and an order-free hash), for cache validity.
-- params: collection_id VARCHAR, qrels_id VARCHAR
-- Not a cryptographic digest: a changed qrels set gets a different fingerprint with
-- overwhelming probability, and a changed hash function (another DuckDB version) only
-- makes the cache rebuild.
SELECT concat(count(*), ':', coalesce(bit_xor(hash(query_id, doc_id, relevance)), 0)) AS fingerprint
FROM qrels
WHERE collection_id = $collection_id AND qrels_id = $qrels_id;
