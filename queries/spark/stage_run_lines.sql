-- name: stage_run_lines
-- description: The run lines as the warehouse's staged_lines: file_index, line_number, query_id, doc_id, rank_given, score, tag and two check flags.
-- params: ignore_extra_fields BOOLEAN
-- Spark SQL over spark_run_fields (run_fields.sql). The columns and flags mean what they mean
-- in queries/ingest/stage_run_lines.sql:
--   fields_ok  six fields (more only with :ignore_extra_fields); false for unreadable lines
--   score_ok   the score is a finite number
-- The tag is kept instead of the warehouse's tag_ok flag: run_file_checks.sql compares the
-- tags of a file with its first one. evalwh.spark.files materialises this relation once (the
-- checks, the ranking and the lists' sizes read it); the texts of the lines (score_text,
-- problem) are not kept: the error path reads the rejected files again (locate_run_error.sql).
SELECT
    file_index,
    line_number,
    query_id,
    doc_id,
    rank_given,
    score,
    tag,
    problem IS NULL AND (field_count = 6 OR (field_count > 6 AND :ignore_extra_fields)) AS fields_ok,
    coalesce(NOT isnan(score) AND abs(score) <= 1.7976931348623157E308D, false) AS score_ok
FROM spark_run_fields;
