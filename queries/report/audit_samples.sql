-- name: audit_samples
-- description: The label sets of a collection that judge only the pairs of one of its random audits (the people's labels of a sample), with that audit.
-- params: collection_id VARCHAR
-- reference: methods §15
-- Such a set ranks the runs on a random sample of the frame as if it were complete qrels; the
-- report's judgments section says so. A set judging pairs of several audits is listed with each
-- audit that holds all of its pairs.
WITH judged AS (
    SELECT qrels_id, query_id, doc_id
    FROM qrels
    WHERE collection_id = $collection_id AND relevance >= 0
),
sizes AS (
    SELECT qrels_id, count(*) AS pairs FROM judged GROUP BY qrels_id
),
inside AS (
    SELECT j.qrels_id, p.audit_id, count(*) AS pairs
    FROM judged AS j
    JOIN audit_pairs AS p
        ON p.collection_id = $collection_id AND p.query_id = j.query_id AND p.doc_id = j.doc_id
    GROUP BY j.qrels_id, p.audit_id
)
SELECT i.qrels_id, i.audit_id
FROM inside AS i
JOIN sizes AS s USING (qrels_id)
WHERE i.pairs = s.pairs
ORDER BY i.qrels_id, i.audit_id;
