-- name: qrels_fields
-- description: The qrels lines that are not comments or blank, split into fields, with the first problem of each (NULL when good).
-- params:
-- Spark SQL over spark_lines (text_lines.sql) of one or more qrels files. A line's problem is
-- the first of: unreadable, field count (four), grade, document judged on an earlier line for
-- the topic (in any of the files: one qrels set); the first bad line is what
-- evalwh.io.formats.locate_qrels_error names. A grade is a finite decimal number (integers or
-- fractions, as the warehouse's DOUBLE grades take them), read by the pattern of
-- run_fields.sql.
WITH split AS (
    SELECT
        file_index,
        line_number,
        problem,
        CASE
            WHEN problem IS NOT NULL THEN NULL
            -- a run of separators leaves empty fields: dropped (the rare slow case)
            WHEN contains(spaced, '  ') THEN filter(split(spaced, ' '), x -> x <> '')
            ELSE split(spaced, ' ')
        END AS f
    FROM spark_lines
    WHERE problem IS NOT NULL OR NOT skipped
),
fields AS (
    SELECT
        file_index,
        line_number,
        problem,
        CAST(coalesce(size(f), 0) AS INT) AS field_count,
        get(f, 0) AS query_id,
        get(f, 1) AS iteration,
        get(f, 2) AS doc_id,
        get(f, 3) AS relevance_text,
        CASE
            -- the warehouse's grade rule (queries/ingest/qrels_checks.sql): a decimal number,
            -- at most nine integer digits, optional sign
            WHEN get(f, 3) RLIKE '^[+-]?([0-9]{1,9}(\\.[0-9]*)?|\\.[0-9]+)$'
                THEN CAST(get(f, 3) AS DOUBLE)
        END AS relevance
    FROM split
),
ordered AS (
    SELECT
        *,
        min(struct(file_index, line_number)) OVER (PARTITION BY query_id, doc_id) AS first_of_doc
    FROM fields
)
SELECT
    file_index,
    line_number,
    query_id,
    iteration,
    doc_id,
    relevance_text,
    relevance,
    field_count,
    first_of_doc.line_number AS first_line_of_doc,
    CASE
        WHEN problem IS NOT NULL THEN problem
        WHEN field_count <> 4 THEN 'fields'
        WHEN relevance IS NULL THEN 'grade'
        WHEN struct(file_index, line_number) <> first_of_doc THEN 'duplicate'
    END AS kind
FROM ordered;
