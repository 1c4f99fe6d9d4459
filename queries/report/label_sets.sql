-- name: report_label_sets
-- description: The label sets of a collection with their provenance and size, for the report's judgments section.
-- params: collection_id VARCHAR
-- A label set is a qrels set someone or something judged: every set but evalwh's own
-- derived ones (pools, reduced samples, completed qrels: kind or source 'derived'). A set
-- without a source (made before schema/015 recorded one) counts as 'human', as the
-- migration marked such sets. pairs counts the judged (topic, document) pairs (grade >= 0),
-- relevant those with grade >= 1, topics the topics with a judged pair.
SELECT
    s.qrels_id,
    coalesce(s.source, 'human') AS source,
    s.judge,
    s.model,
    s.prompt_sha256,
    s.round,
    count(DISTINCT q.query_id) AS topics,
    count(q.doc_id) AS pairs,
    count(q.doc_id) FILTER (WHERE q.relevance >= 1) AS relevant,
    s.source_file
FROM qrels_sets AS s
LEFT JOIN qrels AS q
    ON q.collection_id = s.collection_id AND q.qrels_id = s.qrels_id AND q.relevance >= 0
WHERE s.collection_id = $collection_id
  AND s.kind <> 'derived'
  AND coalesce(s.source, 'human') <> 'derived'
GROUP BY ALL
ORDER BY s.qrels_id;
