-- name: stage_run_lines_regex
-- description: Re-read messy TREC run files line by line, splitting on any run of whitespace, into staged_lines.
-- params: files VARCHAR[]
-- The general path for files that mix tabs and spaces or pad fields; slower than
-- stage_run_lines.sql, so only files that the fast path flagged come here.
INSERT INTO staged_lines BY NAME
WITH lines AS (
    SELECT filename, string_split_regex(trim(line, E' \t\r\n\x0B\x0C'), '\s+') AS f
    FROM read_csv(
        $files, columns = {'line': 'VARCHAR'}, delim = chr(0), quote = '', escape = '',
        header = false, auto_detect = false, filename = true
    )
    WHERE NOT starts_with(line, '#') AND trim(line, E' \t\r\n\x0B\x0C') <> ''
)
SELECT
    filename,
    f[1] AS query_id,
    f[3] AS doc_id,
    f[4] AS rank_text,
    f[5] AS score_text,
    f[6] AS tag,
    len(f) > 6 AS extra_fields,
    len(f) < 6 AS messy
FROM lines;
