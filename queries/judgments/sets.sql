-- name: judgment_sets
-- description: The qrels sets of a collection, for checking the names a command was given.
-- params: collection_id VARCHAR
SELECT qrels_id
FROM qrels_sets
WHERE collection_id = $collection_id
ORDER BY qrels_id
