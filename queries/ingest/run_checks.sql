-- name: run_checks
-- description: Per staged file: line count, the tag(s) and counts of each kind of bad line.
-- params: ignore_extra_fields BOOLEAN
-- Any non-zero count makes the ingest fail; evalwh then re-reads that file to name the
-- first offending line (formats.locate_run_error), so this query only has to be right
-- about *whether* a file is bad, and fast.
WITH typed AS (
    SELECT
        filename,
        query_id,
        doc_id,
        tag,
        messy OR (extra_fields AND NOT $ignore_extra_fields) AS bad_fields,
        coalesce(NOT isfinite(TRY_CAST(score_text AS DOUBLE)), true) AS bad_score
    FROM staged_lines
),
per_file AS (
    SELECT
        filename,
        count(*) AS line_count,
        count(DISTINCT tag) AS tag_count,
        min(tag) AS tag,
        count(*) FILTER (WHERE bad_fields) AS bad_fields,
        count(*) FILTER (WHERE bad_score) AS bad_score
    FROM typed
    GROUP BY filename
),
duplicates AS (
    -- the same document twice for a topic in one file: trec_eval aborts on it
    SELECT filename, count(*) AS duplicate_docs
    FROM (
        SELECT filename
        FROM staged_lines
        GROUP BY filename, query_id, doc_id
        HAVING count(*) > 1
    )
    GROUP BY filename
)
SELECT
    p.filename,
    p.line_count,
    p.tag_count,
    p.tag,
    p.bad_fields,
    p.bad_score,
    coalesce(d.duplicate_docs, 0) AS duplicate_docs
FROM per_file AS p
LEFT JOIN duplicates AS d USING (filename)
ORDER BY p.filename;
