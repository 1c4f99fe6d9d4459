-- name: lu_rows
-- description: The judged positions of every evaluated ranking down to max_depth (all ranks when NULL), each with its label source.
-- params: collection_id VARCHAR, max_depth INTEGER
-- reference: methods §12.1
-- One row per (run, topic, rank) whose document H or M judged, sorted by run, topic and
-- rank. A row judged by H has its fixed grade (reference_grade) and doc_no NULL; a row
-- only M judged has the doc_no of lu_machine_docs, whose drawn grade it takes in each
-- replicate. Documents neither set judged are not read: the measures count them as
-- non-relevant (methods §3.1), and P@k divides by k whatever the run returned.
SELECT
    u.run_no,
    t.topic_no,
    r.rank,
    l.reference_grade,
    d.doc_no
FROM run_results AS r
JOIN lu_runs AS u USING (run_id)
JOIN lu_topics AS t USING (query_id)
JOIN lu_labels AS l ON l.query_id = r.query_id AND l.doc_id = r.doc_id
LEFT JOIN lu_machine_docs AS d ON d.query_id = r.query_id AND d.doc_id = r.doc_id
WHERE r.collection_id = $collection_id
  AND ($max_depth IS NULL OR r.rank <= $max_depth)
ORDER BY u.run_no, t.topic_no, r.rank;
