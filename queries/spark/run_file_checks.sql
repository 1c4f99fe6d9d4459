-- name: run_file_checks
-- description: Per run file: its first line's tag and whether that line is good, line count, bad lines of each kind, repeated documents.
-- params:
-- Spark SQL over staged_lines (stage_run_lines.sql). What the warehouse finds with its sniff of
-- each file's first line (evalwh.store.ingest.files._sniff) and queries/ingest/run_checks.sql,
-- in one query over the materialised lines. Every aggregate keeps fixed-width values (counts,
-- a smallest line number), so Spark aggregates by hashing instead of sorting the lines: the
-- first line's tag is looked up by a join with the files' first line numbers (one row per
-- file, broadcast), not taken with min_by. A tag differs from the file's first one as
-- run_checks.sql judges it, on lines with the right fields; a bad first line rejects the file
-- before its tags matter. A file without lines (comments and blank lines only) has no row.
WITH per_file AS (
    SELECT
        file_index,
        min(line_number) AS first_line,
        count(*) AS line_count,
        count_if(NOT fields_ok) AS bad_fields,
        count_if(fields_ok AND NOT score_ok) AS bad_scores
    FROM staged_lines
    GROUP BY file_index
),
firsts AS (
    SELECT /*+ BROADCAST(p) */ s.file_index, s.tag AS first_tag, s.fields_ok AS first_ok
    FROM staged_lines AS s
    JOIN per_file AS p ON s.file_index = p.file_index AND s.line_number = p.first_line
),
tags AS (
    SELECT /*+ BROADCAST(f) */ s.file_index, count_if(s.fields_ok AND s.tag <> f.first_tag) AS other_tags
    FROM staged_lines AS s
    JOIN firsts AS f ON s.file_index = f.file_index
    GROUP BY s.file_index
),
duplicates AS (
    -- the same document twice for a topic in one file: trec_eval aborts on it
    SELECT file_index, count(*) AS duplicate_docs
    FROM (
        SELECT file_index
        FROM staged_lines
        WHERE query_id IS NOT NULL AND doc_id IS NOT NULL
        GROUP BY file_index, query_id, doc_id
        HAVING count(*) > 1
    )
    GROUP BY file_index
)
SELECT
    p.file_index,
    f.first_tag,
    f.first_ok,
    p.line_count,
    p.bad_fields,
    p.bad_scores,
    coalesce(t.other_tags, 0) > 0 AS other_tags,
    coalesce(d.duplicate_docs, 0) AS duplicate_docs
FROM per_file AS p
JOIN firsts AS f ON f.file_index = p.file_index
LEFT JOIN tags AS t ON t.file_index = p.file_index
LEFT JOIN duplicates AS d ON d.file_index = p.file_index;
