-- name: eval_source_direct
-- description: Judged rows with running counts of the evaluated runs, joined now (no cache) and kept for this evaluation.
-- params:
-- Only the evaluated topics (ev_topics), as every ev_judged_source; kept as a table, so
-- that the metrics do not filter (or join) again.
CREATE OR REPLACE TEMP TABLE ev_judged_direct AS
SELECT j.run_id, j.query_id, j.rank, j.gain, j.judged_so_far, j.relevant_so_far
FROM ev_judged_rows AS j
SEMI JOIN ev_topics AS t USING (query_id);

CREATE OR REPLACE TEMP VIEW ev_judged_source AS
SELECT run_id, query_id, rank, gain, judged_so_far, relevant_so_far
FROM ev_judged_direct;
