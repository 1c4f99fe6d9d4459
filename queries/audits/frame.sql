-- name: frame
-- description: An audit's frame: every judged pair of a qrels set (every pooled pair of a pool), with the machine set's grade.
-- params: collection_id VARCHAR, frame_id VARCHAR, machine_id VARCHAR
-- reference: methods §15.1
-- A pool's qrels hold its unjudged pairs with grade -1: they are pooled, so in the frame. In
-- any other set a negative grade is no judgment (methods §9.10) and not in the frame.
-- machine_grade is NULL where the machine set has no label (grade >= 0) for the pair.
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
machine AS (
    SELECT query_id, doc_id, relevance AS grade
    FROM qrels
    WHERE collection_id = $collection_id AND qrels_id = $machine_id AND relevance >= 0
)
SELECT f.query_id, f.doc_id, m.grade AS machine_grade
FROM frame AS f
LEFT JOIN machine AS m USING (query_id, doc_id)
ORDER BY f.query_id, f.doc_id;
