-- name: run_checks
-- description: Per staged file: line count, counts of each kind of bad line, duplicate documents.
-- params:
-- Any non-zero count rejects the file; evalwh then re-reads it to name the first offending
-- line (evalwh.io.formats.locate_run_error), so this query only has to be right about *whether*
-- a file is bad, and fast. Scores and tags are only judged on lines with the right fields.
WITH per_file AS (
    SELECT
        file_index,
        count(*) AS line_count,
        count(*) FILTER (WHERE NOT fields_ok) AS bad_fields,
        count(*) FILTER (WHERE fields_ok AND NOT score_ok) AS bad_scores,
        count(*) FILTER (WHERE fields_ok AND NOT tag_ok) AS other_tags
    FROM staged_lines
    GROUP BY file_index
),
duplicates AS (
    -- the same document twice for a topic in one file: trec_eval aborts on it
    SELECT file_index, count(*) AS duplicate_docs
    FROM (
        SELECT file_index
        FROM staged_lines
        GROUP BY file_index, query_id, doc_id
        HAVING count(*) > 1
    )
    GROUP BY file_index
)
SELECT
    p.file_index,
    p.line_count,
    p.bad_fields,
    p.bad_scores,
    p.other_tags,
    coalesce(d.duplicate_docs, 0) AS duplicate_docs
FROM per_file AS p
LEFT JOIN duplicates AS d USING (file_index)
ORDER BY p.file_index;
