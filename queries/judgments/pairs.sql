-- name: judgment_pairs
-- description: The (topic, document) pairs that the reference and another label set both judged, with both grades.
-- params: collection_id VARCHAR, reference VARCHAR, sets VARCHAR[]
-- A negative grade means "pooled but not judged" (methods §9.10), so such rows are no
-- judgment on either side. One row per (set, topic, document) judged by both, in no
-- particular order (the statistics do not depend on it). The set and the topic come as
-- numbers, so that a few hundred thousand pairs reach numpy without string columns:
-- set_index is the set's place in $sets (from 0), topic_index the topic's place among the
-- topics of coverage.sql (every topic the reference or a set judged, in id order, from 0).
WITH judged AS (
    SELECT qrels_id, query_id, doc_id, relevance
    FROM qrels
    WHERE collection_id = $collection_id
        AND (qrels_id = $reference OR list_contains($sets, qrels_id))
        AND relevance >= 0
),
topics AS (
    SELECT query_id, row_number() OVER (ORDER BY query_id) - 1 AS topic_index
    FROM (SELECT DISTINCT query_id FROM judged)
),
reference AS (
    SELECT query_id, doc_id, relevance FROM judged WHERE qrels_id = $reference
)
SELECT
    list_position($sets, o.qrels_id) - 1 AS set_index,
    t.topic_index,
    r.relevance AS reference,
    o.relevance AS label
FROM judged AS o
JOIN reference AS r USING (query_id, doc_id)
JOIN topics AS t USING (query_id)
WHERE list_contains($sets, o.qrels_id)
