-- name: insert_qrels
-- description: Store the staged, already validated qrels lines as one qrels set and record new topics.
-- params: collection_id VARCHAR, qrels_id VARCHAR
INSERT INTO qrels (collection_id, qrels_id, query_id, iteration, doc_id, relevance)
SELECT $collection_id, $qrels_id, query_id, iteration, doc_id, CAST(relevance_text AS DOUBLE)
FROM staged_qrels;

INSERT INTO topics (collection_id, query_id)
SELECT DISTINCT $collection_id, s.query_id
FROM staged_qrels AS s
WHERE NOT EXISTS (
    SELECT 1 FROM topics AS t
    WHERE t.collection_id = $collection_id AND t.query_id = s.query_id
);
