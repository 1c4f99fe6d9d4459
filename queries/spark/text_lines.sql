-- name: text_lines
-- description: Every line of every text file, numbered from 1, with what makes it unreadable; comments and blank lines marked.
-- params:
-- Spark SQL (not transpiled): the reader of run and qrels files on Spark (evalwh/spark/files.py).
-- spark_texts holds one row per file: file_index and value, the whole decompressed text as
-- Spark's text reader gives it with wholetext. A line's number is therefore its position in
-- its file, whatever the partitioning (a line reader's row order is not a line number once
-- a file is split), and one task reads one file.
-- The line grammar is evalwh.io.formats' (module docstring there): lines end with \n or \r\n,
-- a leading byte-order mark is dropped, a line holding NUL, a \r that does not end it, or
-- invalid UTF-8 is unreadable (first of these wins, as in formats._numbered_lines); '#' as
-- first character is a comment, whitespace only (space, tab, vertical tab, form feed) blank.
-- A line that is not a comment and holds a control character no id may hold (C0 but the
-- separators, DEL, C1, Unicode's direction marks, overrides and isolates, its line and
-- paragraph separators: evalwh.io.printable.FILE_CONTROL) is 'control' (after the three above):
-- every field of a legal line is an id, a number or a tag (a comment may hold one).
-- A file that is not valid UTF-8 is split as ISO-8859-1 (one character per byte) and each
-- line turned back into its bytes: splitting a string runs through Java strings, which would
-- replace invalid bytes before they are seen; such a file's lines are handled as bytes
-- (BINARY) up to the checks, so that an invalid byte is never rewritten.
-- spaced is the line with every separator turned into a space and trimmed, for splitting.
WITH texts AS (
    SELECT file_index, value, is_valid_utf8(value) AS utf8
    FROM spark_texts
),
split_lines AS (
    SELECT
        t.file_index,
        t.utf8,
        CAST(l.pos + 1 AS INT) AS line_number,
        l.line
    FROM texts AS t
    LATERAL VIEW posexplode(
        split(
            CASE WHEN t.utf8 THEN t.value ELSE decode(CAST(t.value AS BINARY), 'ISO-8859-1') END,
            '\n'
        )
    ) l AS pos, line
),
bodies AS (
    -- valid UTF-8 (nearly every file): string functions; otherwise the bytes
    SELECT
        file_index,
        line_number,
        utf8,
        CASE
            WHEN utf8 THEN
                CASE
                    WHEN line_number = 1 AND startswith(line, '\uFEFF')
                        THEN substr(line, 2, length(line) - 1 - CAST(endswith(line, chr(13)) AS INT))
                    WHEN endswith(line, chr(13)) THEN substr(line, 1, length(line) - 1)
                    ELSE line
                END
            ELSE CAST(
                CASE
                    WHEN line_number = 1 AND substr(raw, 1, 3) = X'EFBBBF'
                        THEN substr(raw, 4, octet_length(raw) - 3 - CAST(substr(raw, -1) = X'0D' AS INT))
                    WHEN substr(raw, -1) = X'0D' THEN substr(raw, 1, octet_length(raw) - 1)
                    ELSE raw
                END AS STRING
            )
        END AS body
    FROM (
        SELECT *, CASE WHEN NOT utf8 THEN encode(line, 'ISO-8859-1') END AS raw
        FROM split_lines
    )
),
checked AS (
    SELECT
        file_index,
        line_number,
        body,
        CASE
            WHEN contains(body, chr(0)) THEN 'nul'
            WHEN contains(body, chr(13)) THEN 'cr'
            WHEN NOT utf8 AND NOT is_valid_utf8(body) THEN 'utf8'
            WHEN NOT startswith(body, '#')
                AND body RLIKE '[\\x01-\\x08\\x0e-\\x1f\\x7f-\\x9f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069\\u2028\\u2029]'
                THEN 'control'
        END AS problem,
        -- every separator as a space, so that splitting needs no regular expression
        trim(translate(body, concat(chr(9), chr(11), chr(12)), '   ')) AS spaced
    FROM bodies
)
SELECT
    file_index,
    line_number,
    body,
    problem,
    startswith(body, '#') OR spaced = '' AS skipped,
    spaced
FROM checked;
