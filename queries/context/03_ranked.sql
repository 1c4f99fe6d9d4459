-- name: eval_ranked
-- description: The ranked results of the chosen runs, with the ranks materialised at ingest.
-- params:
-- Ranks were computed once, at ingest, by trec_ranked (schema/001_core.sql): score
-- descending, then doc_id descending byte-wise. Nothing here sorts a run again.
CREATE OR REPLACE TEMP VIEW ev_ranked AS
SELECT r.run_id, r.query_id, r.doc_id, r.rank
FROM run_results AS r
SEMI JOIN ev_runs AS e USING (collection_id, run_id);
