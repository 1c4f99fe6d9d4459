-- name: lu_reference_counts
-- description: Per topic of the topic set, the number of documents the reference set judged with each grade.
-- params:
-- reference: methods §12.3
-- Fixed across replicates; with the machine documents' drawn grades they give each topic's
-- number of relevant documents R (AP's denominator) and its ideal gain vector (nDCG).
SELECT t.topic_no, l.reference_grade AS grade, CAST(count(*) AS INTEGER) AS documents
FROM lu_labels AS l
JOIN lu_topics AS t USING (query_id)
WHERE l.reference_grade IS NOT NULL
GROUP BY t.topic_no, l.reference_grade
ORDER BY t.topic_no, l.reference_grade;
