-- name: stage_run_lines
-- description: The run lines as the warehouse's staged_lines (file_index, query_id, doc_id, rank_given, score and the three check flags).
-- params: ignore_extra_fields BOOLEAN
-- Spark SQL over spark_run_fields (run_fields.sql) and spark_file_tags (each file's first
-- tag). The columns and flags mean what they mean in queries/ingest/stage_run_lines.sql, so
-- that the warehouse's own run_checks.sql and insert_run_results.sql (transpiled) run on it:
--   fields_ok  six fields (more only with :ignore_extra_fields); false for unreadable lines
--   score_ok   the score is a finite number
--   tag_ok     the tag equals the file's first one
SELECT
    l.file_index,
    l.line_number,
    l.query_id,
    l.doc_id,
    l.rank_given,
    l.score,
    l.problem IS NULL AND (l.field_count = 6 OR (l.field_count > 6 AND :ignore_extra_fields)) AS fields_ok,
    coalesce(NOT isnan(l.score) AND abs(l.score) <= 1.7976931348623157E308D, false) AS score_ok,
    coalesce(l.tag = t.first_tag, false) AS tag_ok
FROM spark_run_fields AS l
JOIN spark_file_tags AS t USING (file_index);
