-- name: reduced_source
-- description: The judged documents of a qrels set with their stratum, in the fixed order the reduced-qrels sampler draws from.
-- params: collection_id VARCHAR, qrels_id VARCHAR, rel INTEGER
-- Negative grades are unjudged (trec_eval) and never enter a sample. The order (topic,
-- stratum, doc_id) makes a seed reproduce the same sample whatever the insertion order was.
SELECT
    query_id,
    relevance >= $rel AS is_rel,
    doc_id,
    iteration,
    relevance
FROM qrels
WHERE collection_id = $collection_id
  AND qrels_id = $qrels_id
  AND relevance >= 0
ORDER BY query_id, is_rel, doc_id;
