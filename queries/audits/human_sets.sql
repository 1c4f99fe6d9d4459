-- name: human_sets
-- description: For an audit, the qrels sets that could hold its people's labels: every one of its pairs labelled (grade >= 0), smallest first.
-- params: collection_id VARCHAR, audit_id VARCHAR, excluded VARCHAR[]
-- reference: methods §15.4
-- The report does not know which set holds the people's labels of an audit; it takes the
-- smallest set that labels the whole audit, other than the frame, the machine's, the sets the
-- report evaluates with ($excluded: the official qrels label every pooled pair, and are not the
-- people's labels of an audit) and the sets whose provenance says an LLM or an inference made them.
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
JOIN qrels_sets AS qs ON qs.collection_id = $collection_id AND qs.qrels_id = c.qrels_id
CROSS JOIN audit AS a
WHERE c.labelled = a.pairs
  AND c.qrels_id NOT IN (a.frame_id, a.machine_id)
  AND NOT list_contains($excluded, c.qrels_id)
  AND coalesce(qs.source, 'human') NOT IN ('llm', 'inferred')
ORDER BY s.size, c.qrels_id;
