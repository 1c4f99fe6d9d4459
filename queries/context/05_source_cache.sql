-- name: eval_source_cache
-- description: Judged rows with running counts of the evaluated runs, read from the cache (judged_results).
-- params:
-- The collection and qrels set are session variables (00_runs.sql), constants to the
-- planner, so they and the metrics' filters are applied in the scan of judged_results.
-- Only the evaluated topics (ev_topics), as every ev_judged_source.
CREATE OR REPLACE TEMP VIEW ev_judged_source AS
SELECT c.run_id, c.query_id, c.rank, c.gain, c.judged_so_far, c.relevant_so_far
FROM judged_results AS c
SEMI JOIN ev_runs AS e USING (run_id)
SEMI JOIN ev_topics AS t USING (query_id)
WHERE c.collection_id = getvariable('ev_collection_id')
  AND c.qrels_id = getvariable('ev_qrels_id');
