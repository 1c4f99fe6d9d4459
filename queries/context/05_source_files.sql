-- name: eval_source_files
-- description: Judged rows with running counts for a direct evaluation of run files (nothing stored).
-- params:
-- ev_files_judged holds the rows evalwh.direct's reader ranked (an Arrow table it registers);
-- ev_judged_direct (05_source_direct.sql) those of the files it left to the general path
-- (ingested into the evaluation's in-memory warehouse, ranked by trec_ranked and joined by
-- 04_judged_rows.sql). Only the evaluated topics (ev_topics), as every ev_judged_source,
-- filtered once here into a table that the metrics then scan.
CREATE OR REPLACE TEMP TABLE ev_files_source AS
SELECT f.run_id, f.query_id, f.rank, f.gain, f.judged_so_far, f.relevant_so_far
FROM ev_files_judged AS f
SEMI JOIN ev_topics AS t USING (query_id);

CREATE OR REPLACE TEMP VIEW ev_judged_source AS
SELECT run_id, query_id, rank, gain, judged_so_far, relevant_so_far
FROM ev_judged_direct
UNION ALL
SELECT run_id, query_id, rank, gain, judged_so_far, relevant_so_far
FROM ev_files_source;
