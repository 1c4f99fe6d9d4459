-- name: eval_source_files
-- description: Judged rows with running counts for a direct evaluation of run files (nothing stored).
-- params:
-- ev_files_judged holds the rows evalwh.direct's reader ranked (an Arrow table it registers).
-- They join ev_judged_direct (05_source_direct.sql, run just before), which holds the rows of
-- the files the reader left to the general path (ingested into the evaluation's in-memory
-- warehouse, ranked by trec_ranked and joined by 04_judged_rows.sql), so ev_judged_source
-- reads both. Only the evaluated topics (ev_topics), as every ev_judged_source, filtered once
-- here into the table that the metrics then scan.
INSERT INTO ev_judged_direct
SELECT f.run_id, f.query_id, f.rank, f.gain, f.judged_so_far, f.relevant_so_far
FROM ev_files_judged AS f
SEMI JOIN ev_topics AS t USING (query_id);
