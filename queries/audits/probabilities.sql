-- name: probabilities
-- description: A machine set's stored relevance probabilities by grade (LARA's), one row per pair.
-- params: collection_id VARCHAR, machine_id VARCHAR
-- reference: methods §15.3
SELECT query_id, doc_id, probs
FROM judgment_probabilities
WHERE collection_id = $collection_id AND qrels_id = $machine_id
ORDER BY query_id, doc_id;
