-- name: report_grades
-- description: The grades of the label sets a report evaluates with: graded (more than two levels of relevance) or binary.
-- params: collection_id VARCHAR, qrels_ids VARCHAR[]
-- Negative grades mean "pooled but not judged" and are left out. Graded labels are any grade
-- above 1 (nDCG then leads the report's measures); binary labels are 0 and 1 only.
SELECT
    max(relevance) FILTER (WHERE relevance >= 0) AS max_grade,
    count(DISTINCT relevance) FILTER (WHERE relevance >= 0) AS levels
FROM qrels
WHERE collection_id = $collection_id AND list_contains($qrels_ids, qrels_id);
