-- name: stage_qrels
-- description: Read a TREC qrels file (qid iter docid rel) into a staging table.
-- params: files VARCHAR[]
-- Qrels files are small next to runs, so they always take the any-whitespace split.
-- A line is a comment only when '#' is its first character; blank lines are skipped.
CREATE OR REPLACE TEMP TABLE staged_qrels AS
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
    f[2] AS iteration,
    f[3] AS doc_id,
    f[4] AS relevance_text,
    len(f) AS field_count
FROM lines;
