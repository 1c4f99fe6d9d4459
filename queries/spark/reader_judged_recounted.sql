-- name: reader_judged_recounted
-- description: reader_judged.sql for another relevance threshold than the reader counted with: relevant_so_far counted again over the judged rows.
-- params: rel INTEGER
-- As reader_judged.sql, for an evaluation whose threshold (:rel) differs from the one the
-- runs were read with (evalwh.spark.files.load_runs(rel=...)): the relevant lines at or
-- above each judged line are counted again, by a window over the judged rows only (the
-- ranks and judged_so_far do not depend on the threshold).
SELECT
    r.run_id,
    r.query_id,
    r.rank,
    CAST(r.gain AS DOUBLE) AS gain,
    r.judged_so_far,
    CAST(sum(CASE WHEN r.gain >= :rel THEN 1 ELSE 0 END) OVER (
        PARTITION BY r.run_id, r.query_id ORDER BY r.rank ROWS UNBOUNDED PRECEDING
    ) AS INT) AS relevant_so_far
FROM spark_reader_judged AS r
LEFT SEMI JOIN ev_runs AS e ON e.run_id = r.run_id
LEFT SEMI JOIN ev_topics AS t ON t.query_id = r.query_id
UNION ALL
SELECT run_id, query_id, rank, gain, judged_so_far, relevant_so_far
FROM ev_judged_direct
