-- name: eval_judged_lines
-- description: The judged lines of a batch of run files read by the direct evaluation: line number and grade.
-- params:
-- ev_lines is the batch as evalwh.direct registers it (line, query_id, doc_id); the ranks
-- and running counts are computed from file order in evalwh.fastrank, so only the join
-- with the judgments is left to SQL. Same join as 04_judged_rows.sql.
SELECT l.line, q.gain
FROM ev_lines AS l
JOIN ev_qrels AS q USING (query_id, doc_id);
