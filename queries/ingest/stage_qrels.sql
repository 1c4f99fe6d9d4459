-- name: stage_qrels
-- description: Read a TREC qrels file (qid iter docid rel) into staged_qrels, splitting on any run of whitespace.
-- params: files VARCHAR[]
-- The general split (a regular expression per line), for files that stage_qrels_fast.sql
-- cannot read as the general split would. Separators are C's isspace() within a line: space, tab, vertical tab,
-- form feed; the caller has rejected NUL bytes and any \r that does not end a line, so
-- chr(0) as delimiter yields whole lines. A line is a comment only when '#' is its first
-- character; blank lines are skipped.
CREATE OR REPLACE TEMP TABLE staged_qrels AS
WITH lines AS (
    SELECT
        string_split_regex(
            regexp_replace(line, '^[ \t\x0B\f]+|[ \t\x0B\f]+$', '', 'g'), '[ \t\x0B\f]+'
        ) AS f
    FROM read_csv(
        $files, columns = {'line': 'VARCHAR'}, delim = chr(0), quote = '', escape = '',
        header = false, auto_detect = false, strict_mode = false, nullstr = chr(10)
    )
    WHERE NOT starts_with(line, '#') AND NOT regexp_full_match(line, '[ \t\x0B\f]*')
)
SELECT
    f[1] AS query_id,
    f[2] AS iteration,
    f[3] AS doc_id,
    f[4] AS relevance_text,
    len(f) AS field_count
FROM lines;
