-- name: eval_source_direct
-- description: Judged rows with running counts of the evaluated runs, joined now (no cache) and kept for this evaluation.
-- params:
CREATE OR REPLACE TEMP TABLE ev_judged_direct AS
SELECT run_id, query_id, rank, gain, judged_so_far, relevant_so_far
FROM ev_judged_rows;

CREATE OR REPLACE TEMP VIEW ev_judged_source AS
SELECT run_id, query_id, rank, gain, judged_so_far, relevant_so_far
FROM ev_judged_direct;
