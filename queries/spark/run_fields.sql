-- name: run_fields
-- description: The fields of every run line that is not a comment or blank (unreadable lines kept, without fields).
-- params:
-- Spark SQL over spark_lines (text_lines.sql). Fields are split on runs of whitespace (space,
-- tab, vertical tab, form feed), as restage_run_lines.sql and evalwh.io.formats.split_fields do.
-- A score is read only when it is a finite decimal number as evalwh.io.formats.SCORE takes
-- it (digits, an optional fraction and exponent: 12, -3.5, .5, 9.998186e-02; no underscores,
-- no hexadecimal, no 'd'/'f' suffix that Java's parser would take): the pattern decides, the
-- cast only converts.
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
)
SELECT
    file_index,
    line_number,
    problem,
    CAST(coalesce(size(f), 0) AS INT) AS field_count,
    get(f, 0) AS query_id,
    get(f, 2) AS doc_id,
    get(f, 3) AS rank_given,
    get(f, 4) AS score_text,
    CASE
        WHEN get(f, 4) RLIKE '^[+-]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?$'
            THEN CAST(get(f, 4) AS DOUBLE)
    END AS score,
    get(f, 5) AS tag
FROM split;
