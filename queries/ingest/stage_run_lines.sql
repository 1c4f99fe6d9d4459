-- name: stage_run_lines
-- description: Read a batch of TREC run files (qid Q0 docid rank score tag) with DuckDB's CSV reader into staged_lines.
-- params: files VARCHAR[], delim VARCHAR, tags VARCHAR[], ignore_extra_fields BOOLEAN
-- The fast path: the files of a batch share one delimiter character (a tab or a space), so the
-- CSV reader splits them, in parallel. file_index is the file's position in $files, and $tags
-- holds each file's expected tag (that of its first line).
-- Nothing is rejected here; every line gets flags that run_checks.sql counts:
--   fields_ok  the line split into six non-empty fields (more only with $ignore_extra_fields).
--              False also for lines this reader cannot split (a run of delimiters, a leading
--              or trailing one); their files are read again by restage_run_lines.sql, which
--              splits on any run of whitespace, so false here means "not yet known".
--   score_ok   the score is a finite decimal number of the documented form, optional sign,
--              digits with an optional point, optional exponent (evalwh.io.formats.SCORE):
--              DuckDB's DOUBLE cast alone also takes '+-5' and '1_000', which are refused.
--   tag_ok     the tag equals the file's first one.
-- No field can hold a newline, so nullstr = newline keeps empty fields as '' and leaves NULL
-- only for columns a line does not have: c7 IS NULL means "no seventh field at all".
-- Comments ('#' as first character) are dropped; the reader itself skips empty lines, a
-- leading byte-order mark and the \r of \r\n.
CREATE OR REPLACE TEMP TABLE staged_lines AS
SELECT
    CAST(file_index AS INTEGER) AS file_index,
    c1 AS query_id,
    c3 AS doc_id,
    c4 AS rank_given,
    TRY_CAST(c5 AS DOUBLE) AS score,
    -- six non-empty fields and no seventh column (cheapest test of emptiness: the length)
    coalesce(
        least(strlen(c1), strlen(c2), strlen(c3), strlen(c4), strlen(c5), strlen(c6)) > 0
            AND (c7 IS NULL OR $ignore_extra_fields),
        false
    ) AS fields_ok,
    coalesce(isfinite(TRY_CAST(c5 AS DOUBLE))
        AND regexp_full_match(c5, '[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?'), false) AS score_ok,
    coalesce(c6 = $tags[CAST(file_index AS INTEGER) + 1], false) AS tag_ok
FROM read_csv(
    $files,
    columns = {'c1': 'VARCHAR', 'c2': 'VARCHAR', 'c3': 'VARCHAR', 'c4': 'VARCHAR',
               'c5': 'VARCHAR', 'c6': 'VARCHAR', 'c7': 'VARCHAR'},
    delim = $delim, quote = '', escape = '', header = false, auto_detect = false,
    null_padding = true, strict_mode = false, nullstr = chr(10)
)
-- c1 is never NULL (only missing columns are); a line of delimiters only (blank) is left to
-- restage_run_lines.sql like any line this reader cannot split
WHERE NOT starts_with(c1, '#');
