-- name: qrels_sets
-- description: One row per qrels set of a collection with its provenance and size: evalwh qrels.
-- params: collection_id VARCHAR
-- source, judge, model, prompt_sha256 and round say who made the labels (schema 015);
-- "pairs" counts judged (topic, document) pairs, grades >= 0 (a negative grade means
-- pooled but unjudged); "relevant" counts grades >= 1, trec_eval's default threshold;
-- "file" is the file the set came from, or how evalwh derived it.
WITH sizes AS (
    SELECT
        qrels_id,
        count(DISTINCT query_id) AS topics,
        count(*) FILTER (WHERE relevance >= 0) AS pairs,
        count(*) FILTER (WHERE relevance >= 1) AS relevant
    FROM qrels
    WHERE collection_id = $collection_id
    GROUP BY qrels_id
)
SELECT
    s.qrels_id,
    s.source,
    s.judge,
    s.model,
    s.prompt_sha256,
    s.round,
    coalesce(z.topics, 0) AS topics,
    coalesce(z.pairs, 0) AS pairs,
    coalesce(z.relevant, 0) AS relevant,
    s.source_file AS file,
    s.created_at
FROM qrels_sets AS s
LEFT JOIN sizes AS z USING (qrels_id)
WHERE s.collection_id = $collection_id
ORDER BY s.qrels_id;
