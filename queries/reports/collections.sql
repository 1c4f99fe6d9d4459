-- name: collections
-- description: One row per collection: topics, judged and relevant documents of its default qrels, runs.
-- params:
-- "judged" counts qrels rows with a grade >= 0 (negative grades are pooled but unjudged);
-- "relevant" counts grades >= 1, trec_eval's default threshold.
WITH judgments AS (
    SELECT
        collection_id,
        count(DISTINCT query_id) AS topics,
        count(*) FILTER (WHERE relevance >= 0) AS judged,
        count(*) FILTER (WHERE relevance >= 1) AS relevant
    FROM qrels
    WHERE qrels_id = 'default'
    GROUP BY collection_id
),
run_counts AS (
    SELECT collection_id, count(*) AS runs
    FROM runs
    GROUP BY collection_id
),
qrels_set_counts AS (
    SELECT collection_id, count(*) AS qrels_sets
    FROM qrels_sets
    GROUP BY collection_id
)
SELECT
    c.collection_id,
    coalesce(j.topics, 0) AS topics,
    coalesce(j.judged, 0) AS judged,
    coalesce(j.relevant, 0) AS relevant,
    coalesce(r.runs, 0) AS runs,
    coalesce(s.qrels_sets, 0) AS qrels_sets
FROM collections AS c
LEFT JOIN judgments AS j USING (collection_id)
LEFT JOIN run_counts AS r USING (collection_id)
LEFT JOIN qrels_set_counts AS s USING (collection_id)
ORDER BY c.collection_id;
