-- name: qrels_diff_pairs
-- description: The (topic, document) pairs whose label differs between two label sets of a collection.
-- params: collection_id VARCHAR, old VARCHAR, new VARCHAR
-- A negative grade is no judgment (methods §9.10), so a pair graded -1 in one set and absent
-- in the other is not a change. change is added (only the new set judged the pair), removed
-- (only the old set did) or regraded (both, with different grades); a NULL grade is "not
-- judged in that set". Topics in natural order, then documents.
WITH old_labels AS (
    SELECT query_id, doc_id, relevance
    FROM qrels
    WHERE collection_id = $collection_id AND qrels_id = $old AND relevance >= 0
),
new_labels AS (
    SELECT query_id, doc_id, relevance
    FROM qrels
    WHERE collection_id = $collection_id AND qrels_id = $new AND relevance >= 0
)
SELECT
    query_id,
    doc_id,
    o.relevance AS old_relevance,
    n.relevance AS new_relevance,
    CASE
        WHEN o.relevance IS NULL THEN 'added'
        WHEN n.relevance IS NULL THEN 'removed'
        ELSE 'regraded'
    END AS change
FROM old_labels AS o
FULL OUTER JOIN new_labels AS n USING (query_id, doc_id)
WHERE o.relevance IS DISTINCT FROM n.relevance
ORDER BY try_cast(query_id AS BIGINT) NULLS LAST, query_id, doc_id
