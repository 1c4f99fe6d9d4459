-- name: judgment_labels
-- description: Every grade of the chosen label sets, one row per (set, topic, document), for Krippendorff's alpha over several sets.
-- params: collection_id VARCHAR, sets VARCHAR[]
-- A negative grade means "pooled but not judged" (methods §9.10): no value. The set, the
-- unit and the topic come as numbers for numpy: set_index is the set's place in $sets
-- (from 0), unit_index the (topic, document) pair's place among the pairs any chosen set
-- judged, topic_index the topic's place among their topics (both in id order, from 0).
WITH judged AS (
    SELECT qrels_id, query_id, doc_id, relevance
    FROM qrels
    WHERE collection_id = $collection_id
        AND list_contains($sets, qrels_id)
        AND relevance >= 0
),
units AS (
    SELECT
        query_id,
        doc_id,
        row_number() OVER (ORDER BY query_id, doc_id) - 1 AS unit_index,
        dense_rank() OVER (ORDER BY query_id) - 1 AS topic_index
    FROM (SELECT DISTINCT query_id, doc_id FROM judged)
)
SELECT
    list_position($sets, j.qrels_id) - 1 AS set_index,
    u.unit_index,
    u.topic_index,
    j.relevance AS grade
FROM judged AS j
JOIN units AS u USING (query_id, doc_id)
