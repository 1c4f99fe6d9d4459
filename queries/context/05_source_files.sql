-- name: eval_source_files
-- description: Judged rows with running counts for a direct evaluation of run files (nothing stored).
-- params:
-- ev_files_judged holds the rows evalwh.direct ranked from file order; ev_judged_direct
-- (05_source_direct.sql) those of the files it left to the general path (ingested into the
-- evaluation's in-memory warehouse, ranked by trec_ranked and joined by 04_judged_rows.sql).
CREATE OR REPLACE TEMP VIEW ev_judged_source AS
SELECT run_id, query_id, rank, gain, judged_so_far, relevant_so_far
FROM ev_judged_direct
UNION ALL
SELECT run_id, query_id, rank, gain, judged_so_far, relevant_so_far
FROM ev_files_judged;
