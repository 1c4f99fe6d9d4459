-- name: eval_source_cache
-- description: Judged rows with running counts of the evaluated runs, read from the cache (judged_results).
-- params:
CREATE OR REPLACE TEMP VIEW ev_judged_source AS
SELECT c.run_id, c.query_id, c.rank, c.gain, c.judged_so_far, c.relevant_so_far
FROM judged_results AS c
JOIN ev_key AS k ON c.collection_id = k.collection_id AND c.qrels_id = k.qrels_id
SEMI JOIN ev_runs AS e USING (run_id);
