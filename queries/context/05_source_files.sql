-- name: eval_source_files
-- description: Judged rows with running counts for a direct evaluation of run files (nothing stored).
-- params:
-- ev_files.judged (05_files_store.sql) holds the rows evalwh.measures.direct's reader ranked, runs and
-- topics by number. The files the reader left to the general path were ingested into the
-- evaluation's in-memory warehouse, ranked by trec_ranked and joined by 04_judged_rows.sql
-- into ev_judged_direct (05_source_direct.sql, run just before). ev_judged_source reads
-- both. Only the evaluated topics (ev_topics), as every ev_judged_source: the reader's rows
-- of other topics are deleted once here (every judged row's topic is one of ev_files.topics,
-- the judged topics; where all of them are evaluated, the list is empty and DuckDB reads no
-- row: 0.28 CPU s on the shared XL's 34 M rows for the form that listed the topics kept).
DELETE FROM ev_files.judged
WHERE topic IN (
    SELECT t.topic
    FROM ev_files.topics AS t
    ANTI JOIN ev_topics AS e USING (query_id)
);

CREATE OR REPLACE TEMP VIEW ev_judged_source AS
SELECT
    r.run_id,
    t.query_id,
    j.rank,
    CAST(j.gain AS DOUBLE) AS gain,
    j.judged_so_far,
    j.relevant_so_far
FROM ev_files.judged AS j
JOIN ev_files.runs AS r USING (run)
JOIN ev_files.topics AS t USING (topic)
UNION ALL
SELECT run_id, query_id, rank, gain, judged_so_far, relevant_so_far
FROM ev_judged_direct;
