-- name: qrels_checks
-- description: Counts of bad lines in the staged qrels: wrong field count, a grade that is not a decimal number, duplicates.
-- params:
-- A grade is a decimal number as given (2, -1, 0.75, +1.5; at most nine integer digits, no
-- exponent): LLM labellers and automatic qrels give fractional grades (schema/012).
SELECT
    count(*) AS line_count,
    count(*) FILTER (WHERE field_count <> 4) AS bad_fields,
    count(*) FILTER (
        WHERE field_count = 4 AND NOT regexp_full_match(relevance_text, '[+-]?([0-9]{1,9}(\.[0-9]*)?|\.[0-9]+)')
    ) AS bad_relevance,
    (
        SELECT count(*)
        FROM (
            SELECT 1
            FROM staged_qrels
            GROUP BY query_id, doc_id
            HAVING count(*) > 1
        )
    ) AS duplicate_docs
FROM staged_qrels;
