-- name: stream_run_lines
-- description: Read a batch of run files in file order, typed, each line with its judgment, for ranking by file order (evalwh.direct).
-- params: files VARCHAR[], delim VARCHAR, tags VARCHAR[], collection_id VARCHAR, qrels_id VARCHAR
-- The direct evaluation's reader (evalwh eval --qrels FILE RUN...): nothing is stored, the
-- lines stream out to evalwh.fastrank, which verifies their order instead of sorting. It is
-- stricter than stage_run_lines.sql, never looser: a line of other than six fields, or a
-- score DuckDB cannot read as a number, fails the whole query, and any line with line_ok
-- false refuses its file; refused files take the staging path, which accepts or names the
-- bad line exactly as `evalwh ingest` does. Files reach this reader only when their scan
-- found one kind of whitespace, no NUL byte, no stray \r and no '+-'.
--   gain       the judgment's grade, NULL for an unjudged line (negative grades count as
--              unjudged, as in queries/context/01_qrels.sql)
--   line_ok    six non-empty fields, a finite score, the file's tag (as stage_run_lines.sql)
--   doc_hash   DuckDB's hash of doc_id: equal hashes in a topic are duplicate candidates
-- evalwh.direct runs this with the join-order optimizers off, so that the judgments are the
-- hash join's build side and the lines keep their file order through it. Nothing depends on
-- that but speed: fastrank accepts any order only if it is trec_eval's.
SELECT
    CAST(l.file_index AS INTEGER) AS file_index,
    l.c1 AS query_id,
    l.c3 AS doc_id,
    l.c5 AS score,
    q.gain,
    hash(l.c3) AS doc_hash,
    -- an empty field reads as NULL (the reader's default null string is the empty one)
    coalesce(
        l.c2 IS NOT NULL AND l.c4 IS NOT NULL AND l.c6 = $tags[CAST(l.file_index AS INTEGER) + 1]
            AND isfinite(l.c5),
        false
    ) AND l.c1 IS NOT NULL AND l.c3 IS NOT NULL AS line_ok
FROM read_csv(
    $files,
    columns = {'c1': 'VARCHAR', 'c2': 'VARCHAR', 'c3': 'VARCHAR', 'c4': 'VARCHAR',
               'c5': 'DOUBLE', 'c6': 'VARCHAR'},
    delim = $delim, quote = '', escape = '', header = false, auto_detect = false,
    strict_mode = true
) AS l
LEFT JOIN (
    SELECT query_id, doc_id, relevance AS gain
    FROM qrels
    WHERE collection_id = $collection_id AND qrels_id = $qrels_id AND relevance >= 0
) AS q
    ON q.query_id = l.c1 AND q.doc_id = l.c3
-- comments, as in stage_run_lines.sql (one of six fields with a number fifth would parse)
WHERE l.c1 IS NULL OR NOT starts_with(l.c1, '#');
