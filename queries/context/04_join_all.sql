-- name: eval_join_all
-- description: Join every evaluated run with the judgments (no cache: read-only warehouse or float32 ranks).
-- params:
CREATE OR REPLACE TEMP TABLE ev_join_runs AS
SELECT run_id FROM ev_runs;
