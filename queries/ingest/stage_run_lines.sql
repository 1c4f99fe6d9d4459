-- name: stage_run_lines
-- description: Read TREC run files (qid Q0 docid rank score tag) with DuckDB's CSV reader into a staging table.
-- params: files VARCHAR[], delim VARCHAR
-- The fast path: one delimiter character per batch of files (sniffed from the first line).
-- Lines whose fields hold the other whitespace character, or that have empty fields
-- (a run of delimiters), are flagged as `messy`; their files are re-read by
-- stage_run_lines_regex.sql, which splits on any run of whitespace.
-- A line is a comment only when '#' is its first character; blank lines are skipped.
CREATE OR REPLACE TEMP TABLE staged_lines AS
WITH raw AS (
    SELECT filename, c1, c2, c3, c4, c5, c6, c7
    FROM read_csv(
        $files,
        columns = {'c1': 'VARCHAR', 'c2': 'VARCHAR', 'c3': 'VARCHAR', 'c4': 'VARCHAR',
                   'c5': 'VARCHAR', 'c6': 'VARCHAR', 'c7': 'VARCHAR'},
        delim = $delim, quote = '', escape = '', header = false, auto_detect = false,
        filename = true, null_padding = true, strict_mode = false
    )
)
SELECT
    filename,
    trim(c1) AS query_id,
    trim(c3) AS doc_id,
    trim(c4) AS rank_text,
    trim(c5) AS score_text,
    trim(c6) AS tag,
    -- more than six fields: the seventh column is filled (extra ones are dropped by the reader)
    coalesce(trim(c7), '') <> '' AS extra_fields,
    -- a field that is missing, empty or still holds whitespace needs the any-whitespace split
    (c2 IS NULL OR c3 IS NULL OR c4 IS NULL OR c5 IS NULL OR c6 IS NULL
        OR trim(c1) = '' OR trim(c2) = '' OR trim(c3) = '' OR trim(c4) = ''
        OR trim(c5) = '' OR trim(c6) = ''
        OR contains(concat_ws(chr(1), trim(c1), c2, c3, c4, trim(c5), trim(c6)), ' ')
        OR contains(concat_ws(chr(1), c1, c2, c3, c4, c5, c6), chr(9))
    ) AS messy
FROM raw
WHERE NOT (c1 IS NULL AND c2 IS NULL)   -- blank line
  AND NOT starts_with(coalesce(c1, ''), '#');
