-- name: report_conventions_set
-- description: Replace a collection's conventions by one row (all four NULL: remove them).
-- params: collection_id VARCHAR, measures VARCHAR[], baselines VARCHAR[], judged_depth INTEGER, qrels_id VARCHAR
-- Run in one transaction by evalwh.present.report.defaults.store_conventions.
DELETE FROM collection_conventions WHERE collection_id = $collection_id;

INSERT INTO collection_conventions (collection_id, measures, baselines, judged_depth, qrels_id)
SELECT $collection_id, $measures, $baselines, $judged_depth, $qrels_id
WHERE $measures IS NOT NULL OR $baselines IS NOT NULL OR $judged_depth IS NOT NULL OR $qrels_id IS NOT NULL;
