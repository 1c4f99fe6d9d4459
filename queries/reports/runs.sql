-- name: runs
-- description: One row per run of a collection: topics, documents, shortest and longest ranking, provenance.
-- ir_method, ir_team and ir_metadata come from the ir_metadata block the run file opened
-- with (schema/020_external_sources.sql); NULL for a run without one. float32_lists: how many
-- of its lists trec_eval 9's float32 scores order differently (stored at ingest, schema 021;
-- NULL for a run stored before it): the full list behind eval's, compare's and report's note.
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
    r.sha256,
    r.float32_lists,
    m.method AS ir_method,
    m.team AS ir_team,
    m.metadata AS ir_metadata
FROM runs AS r
JOIN depth AS d USING (run_id)
LEFT JOIN run_ir_metadata_fields AS m ON m.collection_id = r.collection_id AND m.run_id = r.run_id
WHERE r.collection_id = $collection_id
ORDER BY r.run_id;
