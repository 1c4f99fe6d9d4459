-- name: stage_qrels_fast
-- description: Read a TREC qrels file whose fields are split by one kind of whitespace into staged_qrels, with DuckDB's CSV reader.
-- params: files VARCHAR[], delim VARCHAR
-- The fast path of stage_qrels.sql, for a file whose scan found one whitespace character
-- only ($delim, a space or a tab): the CSV reader splits the lines (no regular expression
-- per line). It reads the same as the general split only where no field comes out empty;
-- split_unsure marks lines where one does (a run of delimiters, a leading or trailing one, a
-- line of delimiters only), and evalwh.store.ingest.qrels then stages the file again with
-- stage_qrels.sql. field_count counts up to five fields: enough to tell four from others.
-- No field can hold a newline, so nullstr = newline keeps empty fields as '' and leaves NULL
-- only for columns a line does not have. Comments ('#' as first character) are dropped; the
-- reader itself skips empty lines, a leading byte-order mark and the \r of \r\n.
CREATE OR REPLACE TEMP TABLE staged_qrels AS
SELECT
    c1 AS query_id,
    c2 AS iteration,
    c3 AS doc_id,
    c4 AS relevance_text,
    CASE
        WHEN c5 IS NOT NULL THEN 5
        ELSE (c2 IS NOT NULL)::INTEGER + (c3 IS NOT NULL)::INTEGER + (c4 IS NOT NULL)::INTEGER + 1
    END AS field_count,
    coalesce(c1 = '' OR c2 = '' OR c3 = '' OR c4 = '' OR c5 = '', false) AS split_unsure
FROM read_csv(
    $files,
    columns = {'c1': 'VARCHAR', 'c2': 'VARCHAR', 'c3': 'VARCHAR', 'c4': 'VARCHAR', 'c5': 'VARCHAR'},
    delim = $delim, quote = '', escape = '', header = false, auto_detect = false,
    null_padding = true, strict_mode = false, nullstr = chr(10)
)
WHERE NOT starts_with(c1, '#');
