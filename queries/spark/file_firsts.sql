-- name: file_firsts
-- description: Per run file: its first line's tag (the run's name) and whether that line is readable with the right field count.
-- params: ignore_extra_fields BOOLEAN
-- Spark SQL over spark_run_fields. The warehouse sniffs each file's first data line before
-- anything else (evalwh.store.ingest.files._sniff): a file without lines, or whose first line is bad,
-- is refused before run names are compared; the same order is kept here.
SELECT
    file_index,
    min_by(tag, line_number) AS first_tag,
    min_by(
        problem IS NULL AND (field_count = 6 OR (field_count > 6 AND :ignore_extra_fields)),
        line_number
    ) AS first_ok
FROM spark_run_fields
GROUP BY file_index;
