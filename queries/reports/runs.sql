-- name: runs
-- description: One row per run of a collection: topics, documents, shortest and longest ranking, provenance.
-- params: collection_id VARCHAR
WITH depth AS (
    SELECT
        run_id,
        count(*) AS topics,
        CAST(sum(num_ret) AS BIGINT) AS docs,  -- sum() of INTEGER is HUGEINT, a float in pandas
        min(num_ret) AS min_depth,
        max(num_ret) AS max_depth
    FROM run_topics
    WHERE collection_id = $collection_id
    GROUP BY run_id
)
SELECT
    r.run_id,
    d.topics,
    d.docs,
    d.min_depth,
    d.max_depth,
    r.group_name,
    r.run_type,
    r.pooled,
    r.source_file,
    r.sha256
FROM runs AS r
JOIN depth AS d USING (run_id)
WHERE r.collection_id = $collection_id
ORDER BY r.run_id;
