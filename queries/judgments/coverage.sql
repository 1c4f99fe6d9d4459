-- name: judgment_coverage
-- description: Per label set and topic, how many pairs the set and the reference both judged and how many only one of them did.
-- params: collection_id VARCHAR, reference VARCHAR, sets VARCHAR[]
-- A negative grade is no judgment (methods §9.10). One row per (set, topic) for every topic
-- that the reference or any compared set judged, so a set that skips a topic shows the
-- reference's pairs there as unmatched (and a topic nobody compared judged shows zeros).
-- set_index and topic_index number the sets and topics as pairs.sql does.
WITH judged AS (
    SELECT qrels_id, query_id, doc_id
    FROM qrels
    WHERE collection_id = $collection_id
        AND (qrels_id = $reference OR list_contains($sets, qrels_id))
        AND relevance >= 0
),
topics AS (
    SELECT query_id, row_number() OVER (ORDER BY query_id) - 1 AS topic_index
    FROM (SELECT DISTINCT query_id FROM judged)
),
chosen AS (
    SELECT s.qrels_id, s.set_index - 1 AS set_index
    FROM unnest($sets) WITH ORDINALITY AS s (qrels_id, set_index)
),
reference AS (
    SELECT query_id, doc_id FROM judged WHERE qrels_id = $reference
),
per_set AS (
    -- pairs each compared set judged per topic
    SELECT qrels_id, query_id, count(*) AS judged
    FROM judged
    WHERE list_contains($sets, qrels_id)
    GROUP BY qrels_id, query_id
),
per_reference AS (
    SELECT query_id, count(*) AS judged
    FROM reference
    GROUP BY query_id
),
shared AS (
    -- pairs both judged: a set's row meets the reference's row of the same document
    SELECT o.qrels_id, o.query_id, count(*) AS pairs
    FROM judged AS o
    JOIN reference AS r USING (query_id, doc_id)
    WHERE list_contains($sets, o.qrels_id)
    GROUP BY o.qrels_id, o.query_id
)
SELECT
    c.qrels_id,
    c.set_index,
    t.query_id,
    t.topic_index,
    coalesce(b.pairs, 0) AS pairs,
    coalesce(r.judged, 0) - coalesce(b.pairs, 0) AS only_reference,
    coalesce(s.judged, 0) - coalesce(b.pairs, 0) AS only_set
FROM chosen AS c
CROSS JOIN topics AS t
LEFT JOIN shared AS b ON b.qrels_id = c.qrels_id AND b.query_id = t.query_id
LEFT JOIN per_reference AS r ON r.query_id = t.query_id
LEFT JOIN per_set AS s ON s.qrels_id = c.qrels_id AND s.query_id = t.query_id
ORDER BY c.set_index, t.topic_index
