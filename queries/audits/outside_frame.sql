-- name: outside_frame
-- description: The labels of a qrels set on pairs of the given topics outside an audit's frame: how many, and the first.
-- params: collection_id VARCHAR, frame_id VARCHAR, qrels_id VARCHAR, topics VARCHAR[]
-- reference: methods §15.3
-- A topics audit scores each topic under a set's whole labels, so a label of a pair outside the
-- frame would count in them (a relevant document in AP's R); the estimate refuses such a set.
-- The frame is that of frame.sql: a set's judged pairs, or every pooled pair of a pool. One row
-- (outside 0 and no pair) when the set keeps to the frame.
WITH is_pool AS (
    SELECT count(*) > 0 AS pool
    FROM pools
    WHERE collection_id = $collection_id AND pool_id = $frame_id
),
frame AS (
    SELECT q.query_id, q.doc_id
    FROM qrels AS q, is_pool
    WHERE q.collection_id = $collection_id AND q.qrels_id = $frame_id AND (q.relevance >= 0 OR is_pool.pool)
),
outside AS (
    SELECT l.query_id, l.doc_id
    FROM qrels AS l
    WHERE l.collection_id = $collection_id AND l.qrels_id = $qrels_id AND l.relevance >= 0
      AND list_contains($topics, l.query_id)
      AND NOT EXISTS (SELECT 1 FROM frame AS f WHERE f.query_id = l.query_id AND f.doc_id = l.doc_id)
)
SELECT
    count(*) AS outside,
    min(query_id) AS query_id,
    min(doc_id) FILTER (WHERE query_id = (SELECT min(query_id) FROM outside)) AS doc_id
FROM outside;
