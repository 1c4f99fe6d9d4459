-- name: report_topics_composed
-- description: One row per topic of a composed label set (A filled from B, ...): judged, relevant and unjudged-but-pooled documents.
-- params: collection_id VARCHAR, qrels_ids VARCHAR[], rel INTEGER
-- topics.sql for a composition (evalwh report --fill): each (topic, document) pair takes the
-- grade of the first set in qrels_ids that judged it (grade >= 0), as the evaluation does
-- (queries/context/01_qrels_composed.sql); a pair no set judged, but some set pooled with a
-- negative grade, counts as unjudged but pooled.
WITH labels AS (
    SELECT query_id, doc_id, relevance, list_position($qrels_ids, qrels_id) AS layer
    FROM qrels
    WHERE collection_id = $collection_id AND list_contains($qrels_ids, qrels_id)
),
chosen AS (
    SELECT query_id, doc_id, relevance
    FROM labels
    QUALIFY row_number() OVER (PARTITION BY query_id, doc_id ORDER BY relevance < 0, layer) = 1
)
SELECT
    query_id,
    count(*) FILTER (WHERE relevance >= 0) AS judged,
    count(*) FILTER (WHERE relevance >= $rel) AS relevant,
    count(*) FILTER (WHERE relevance < 0) AS unjudged_pooled
FROM chosen
GROUP BY query_id
ORDER BY query_id;
