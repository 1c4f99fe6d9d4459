-- name: human_sets
-- description: For an audit, the qrels sets that label every one of its pairs (grade >= 0), smallest first.
-- params: collection_id VARCHAR, audit_id VARCHAR
-- reference: methods §15.4
-- The report does not know which set holds the people's labels of an audit; it takes the
-- smallest set, other than the frame and the machine's, that labels the whole audit.
WITH audit AS (
    SELECT a.frame_id, a.machine_id, count(p.doc_id) AS pairs
    FROM audits AS a
    JOIN audit_pairs AS p USING (collection_id, audit_id)
    WHERE a.collection_id = $collection_id AND a.audit_id = $audit_id
    GROUP BY a.frame_id, a.machine_id
),
covered AS (
    SELECT q.qrels_id, count(*) AS labelled
    FROM audit_pairs AS p
    JOIN qrels AS q
        ON q.collection_id = p.collection_id AND q.query_id = p.query_id AND q.doc_id = p.doc_id
       AND q.relevance >= 0
    WHERE p.collection_id = $collection_id AND p.audit_id = $audit_id
    GROUP BY q.qrels_id
),
sizes AS (
    SELECT qrels_id, count(*) AS size
    FROM qrels
    WHERE collection_id = $collection_id
    GROUP BY qrels_id
)
SELECT c.qrels_id, s.size
FROM covered AS c
JOIN sizes AS s USING (qrels_id)
CROSS JOIN audit AS a
WHERE c.labelled = a.pairs AND c.qrels_id NOT IN (a.frame_id, a.machine_id)
ORDER BY s.size, c.qrels_id;
