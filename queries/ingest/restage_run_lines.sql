-- name: restage_run_lines
-- description: Read run files again line by line, splitting on any run of whitespace, replacing their rows in staged_lines.
-- params: files VARCHAR[], file_ids INTEGER[], tags VARCHAR[], ignore_extra_fields BOOLEAN
-- The general path, for files that mix tabs and spaces, pad fields, or have lines the fast
-- path could not split (stage_run_lines.sql). It is slower (a regular expression per line),
-- so only such files come here. $file_ids maps a file's position in $files to its
-- file_index in the batch. Separators are C's isspace() within a line: space, tab, vertical
-- tab, form feed (\r only ends lines; the caller rejects files with any other \r).
-- The files hold no NUL byte (the caller checked), so chr(0) as delimiter yields whole lines.
DELETE FROM staged_lines
WHERE list_contains($file_ids, file_index);

INSERT INTO staged_lines BY NAME
WITH lines AS (
    SELECT
        $file_ids[CAST(file_index AS INTEGER) + 1] AS file_index,
        string_split_regex(
            regexp_replace(line, '^[ \t\x0B\f]+|[ \t\x0B\f]+$', '', 'g'), '[ \t\x0B\f]+'
        ) AS f,
        $tags[CAST(file_index AS INTEGER) + 1] AS expected_tag
    FROM read_csv(
        $files, columns = {'line': 'VARCHAR'}, delim = chr(0), quote = '', escape = '',
        header = false, auto_detect = false, strict_mode = false, nullstr = chr(10)
    )
    WHERE NOT starts_with(line, '#') AND NOT regexp_full_match(line, '[ \t\x0B\f]*')
)
SELECT
    file_index,
    f[1] AS query_id,
    f[3] AS doc_id,
    f[4] AS rank_given,
    TRY_CAST(f[5] AS DOUBLE) AS score,
    len(f) = 6 OR (len(f) > 6 AND $ignore_extra_fields) AS fields_ok,
    coalesce(isfinite(TRY_CAST(f[5] AS DOUBLE))
        AND regexp_full_match(f[5], '[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?'), false) AS score_ok,
    coalesce(f[6] = expected_tag, false) AS tag_ok
FROM lines;
