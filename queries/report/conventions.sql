-- name: report_conventions
-- description: A collection's stored conventions (measures, baselines, judged depth, default qrels set); no row when none are set.
-- params: collection_id VARCHAR
SELECT measures, baselines, judged_depth, qrels_id, updated_at
FROM collection_conventions
WHERE collection_id = $collection_id;
