-- name: stream_run_lines
-- description: Read a batch of run files in file order, typed, for ranking by file order (evalwh.direct).
-- params: files VARCHAR[], delim VARCHAR, tags VARCHAR[]
-- The direct evaluation's reader (evalwh eval --qrels FILE RUN...): nothing is stored, the
-- lines stream out in file order to evalwh.fastrank, which verifies that order instead of
-- sorting. It is stricter than stage_run_lines.sql, never looser: a line of other than six
-- fields, or a score DuckDB cannot read as a number, fails the whole query, and any line
-- with line_ok false refuses its file; refused files take the staging path, which accepts
-- or names the bad line exactly as `evalwh ingest` does. Files reach this reader only when
-- their scan found one kind of whitespace, no NUL byte, no stray \r and no '+-'.
--   line_ok    six non-empty fields, a finite score, the file's tag (as stage_run_lines.sql)
--   doc_hash   DuckDB's hash of doc_id: equal hashes in a topic are duplicate candidates
SELECT
    CAST(file_index AS INTEGER) AS file_index,
    c1 AS query_id,
    c3 AS doc_id,
    c5 AS score,
    hash(c3) AS doc_hash,
    -- an empty field reads as NULL (the reader's default null string is the empty one)
    coalesce(
        c2 IS NOT NULL AND c4 IS NOT NULL AND c6 = $tags[CAST(file_index AS INTEGER) + 1]
            AND isfinite(c5),
        false
    ) AND c1 IS NOT NULL AND c3 IS NOT NULL AS line_ok
FROM read_csv(
    $files,
    columns = {'c1': 'VARCHAR', 'c2': 'VARCHAR', 'c3': 'VARCHAR', 'c4': 'VARCHAR',
               'c5': 'DOUBLE', 'c6': 'VARCHAR'},
    delim = $delim, quote = '', escape = '', header = false, auto_detect = false,
    strict_mode = true
)
-- comments, as in stage_run_lines.sql (one of six fields with a number fifth would parse)
WHERE c1 IS NULL OR NOT starts_with(c1, '#');
