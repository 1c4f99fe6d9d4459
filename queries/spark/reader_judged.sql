-- name: reader_judged
-- description: The judged rows of every evaluated list: those evalwh's reader gave on the executors, and those Spark SQL ranked and joined.
-- params:
-- Spark SQL (not transpiled), run by evalwh.spark.build_context in place of the context's
-- ev_judged_source (queries/context/05_source_direct.sql) when evalwh's C reader read run
-- files on the executors (evalwh/spark/executors.py). spark_reader_judged holds, per judged
-- line of those files, what 04_judged_rows.sql computes for the others: rank, grade and
-- the running counts (judged and relevant lines at or above it, relevant meaning grade >=
-- the threshold the reader was given, which is this evaluation's). No line of those files
-- was joined or sorted by Spark. ev_judged_direct holds the rows of the files Spark SQL
-- read. As every ev_judged_source: only the evaluated runs (ev_runs) and topics (ev_topics).
-- The query is registered as the view ev_judged_source.
SELECT r.run_id, r.query_id, r.rank, CAST(r.gain AS DOUBLE) AS gain, r.judged_so_far, r.relevant_so_far
FROM spark_reader_judged AS r
LEFT SEMI JOIN ev_runs AS e ON e.run_id = r.run_id
LEFT SEMI JOIN ev_topics AS t ON t.query_id = r.query_id
UNION ALL
SELECT run_id, query_id, rank, gain, judged_so_far, relevant_so_far
FROM ev_judged_direct
