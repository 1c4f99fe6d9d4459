-- name: locate_run_error
-- description: The first bad line of each rejected run file, with what is wrong with it.
-- params: ignore_extra_fields BOOLEAN, one_tag BOOLEAN
-- Spark SQL over spark_run_fields and spark_rejected (file_index of the rejected files); the
-- error path only (run_checks.sql decides whether a file is bad). A line's problem is the
-- first of: unreadable, field count, score, tag (with :one_tag), document already on an
-- earlier line for the topic; the first line with any problem is the one
-- evalwh.io.formats.locate_run_error names. Lines before it are good, so the tag to compare with
-- is the file's first line's, and a repeated document's first line is the earliest line of
-- its topic and document.
WITH lines AS (
    SELECT
        l.*,
        min_by(l.tag, l.line_number) OVER (PARTITION BY l.file_index) AS first_tag,
        min(l.line_number) OVER (PARTITION BY l.file_index) AS first_tag_line,
        min(l.line_number) OVER (PARTITION BY l.file_index, l.query_id, l.doc_id) AS first_line_of_doc
    FROM spark_run_fields AS l
    LEFT SEMI JOIN spark_rejected AS r ON r.file_index = l.file_index
),
judged AS (
    SELECT
        *,
        CASE
            WHEN problem IS NOT NULL THEN problem
            WHEN field_count < 6 OR (field_count > 6 AND NOT :ignore_extra_fields) THEN 'fields'
            WHEN score IS NULL OR isnan(score) OR abs(score) > 1.7976931348623157E308D THEN 'score'
            WHEN :one_tag AND tag <> first_tag THEN 'tag'
            WHEN line_number > first_line_of_doc THEN 'duplicate'
        END AS kind
    FROM lines
)
SELECT
    file_index,
    min_by(
        struct(kind, line_number, field_count, query_id, doc_id, score_text, tag, first_tag,
               first_tag_line, first_line_of_doc),
        line_number
    ) AS first_bad
FROM judged
WHERE kind IS NOT NULL
GROUP BY file_index;
