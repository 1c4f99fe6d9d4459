-- name: qrels_diff_topics
-- description: Per topic, how two label sets of a collection differ: pairs added, removed, regraded and kept as they were.
-- params: collection_id VARCHAR, old VARCHAR, new VARCHAR
-- A negative grade is no judgment (methods §9.10): such a line counts as absent. "Added" is a
-- pair the new set judged and the old did not, "removed" the reverse, "regraded" a pair both
-- judged with different grades. relevant_* count grades >= 1 (trec_eval's relevance level).
-- One row per topic either set judged, topics in natural order (2 before 10).
WITH old_labels AS (
    SELECT query_id, doc_id, relevance
    FROM qrels
    WHERE collection_id = $collection_id AND qrels_id = $old AND relevance >= 0
),
new_labels AS (
    SELECT query_id, doc_id, relevance
    FROM qrels
    WHERE collection_id = $collection_id AND qrels_id = $new AND relevance >= 0
),
both_sides AS (
    -- every pair of either set, with its grade on each side (NULL: not judged there)
    SELECT
        coalesce(o.query_id, n.query_id) AS query_id,
        o.relevance AS old_relevance,
        n.relevance AS new_relevance
    FROM old_labels AS o
    FULL OUTER JOIN new_labels AS n USING (query_id, doc_id)
)
SELECT
    query_id,
    count(old_relevance) AS pairs_old,
    count(new_relevance) AS pairs_new,
    count(*) FILTER (WHERE old_relevance IS NULL) AS added,
    count(*) FILTER (WHERE new_relevance IS NULL) AS removed,
    count(*) FILTER (WHERE old_relevance <> new_relevance) AS regraded,
    count(*) FILTER (WHERE old_relevance = new_relevance) AS unchanged,
    count(*) FILTER (WHERE old_relevance >= 1) AS relevant_old,
    count(*) FILTER (WHERE new_relevance >= 1) AS relevant_new
FROM both_sides
GROUP BY query_id
ORDER BY try_cast(query_id AS BIGINT) NULLS LAST, query_id
