-- name: audit_labels
-- description: An audit's pairs with the human set's grade (NULL where it has none).
-- params: collection_id VARCHAR, audit_id VARCHAR, human_id VARCHAR
-- reference: methods §15.3
-- A pair of the audit the human set left unlabelled makes the sample no longer random (which
-- pairs people skip is not chance); the estimate refuses it.
SELECT
    a.query_id,
    a.doc_id,
    a.stratum,
    a.draw_order,
    h.relevance AS human_grade
FROM audit_pairs AS a
LEFT JOIN qrels AS h
    ON h.collection_id = a.collection_id AND h.query_id = a.query_id AND h.doc_id = a.doc_id
   AND h.qrels_id = $human_id AND h.relevance >= 0
WHERE a.collection_id = $collection_id AND a.audit_id = $audit_id
ORDER BY a.draw_order;
