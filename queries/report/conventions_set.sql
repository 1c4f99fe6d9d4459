-- name: report_conventions_set
-- description: Replace a collection's conventions by one row (all three NULL: remove them).
-- params: collection_id VARCHAR, measures VARCHAR[], baselines VARCHAR[], judged_depth INTEGER
-- Run in one transaction by evalwh.present.report.defaults.store_conventions.
DELETE FROM collection_conventions WHERE collection_id = $collection_id;

INSERT INTO collection_conventions (collection_id, measures, baselines, judged_depth)
SELECT $collection_id, $measures, $baselines, $judged_depth
WHERE $measures IS NOT NULL OR $baselines IS NOT NULL OR $judged_depth IS NOT NULL;
