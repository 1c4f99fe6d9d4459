-- name: completed_qrels
-- description: Store completed qrels Q*: the parent judgments plus every returned document of the study's runs as judged non-relevant.
-- params: collection_id VARCHAR, qrels_id VARCHAR, parent_qrels_id VARCHAR, runs VARCHAR[]
-- Webber & Park's preprocessing (methods §3.4): a document that was unjudged in the original
-- collection is added with grade 0, so that in a pooling experiment only documents withdrawn
-- by the experiment are unjudged. The completion covers every returned document at full depth
-- (condensed lists pull documents from far below any cut-off). A negative parent grade
-- ("pooled but not judged") is unjudged too and becomes 0. Only topics of the parent are
-- completed; $runs NULL means every run of the collection.
INSERT INTO qrels (collection_id, qrels_id, query_id, iteration, doc_id, relevance)
WITH parent AS (
    SELECT query_id, iteration, doc_id, relevance
    FROM qrels
    WHERE collection_id = $collection_id AND qrels_id = $parent_qrels_id
),
returned AS (
    SELECT DISTINCT r.query_id, r.doc_id
    FROM run_results AS r
    SEMI JOIN (SELECT DISTINCT query_id FROM parent) AS t USING (query_id)
    WHERE r.collection_id = $collection_id
      AND ($runs IS NULL OR list_contains($runs, r.run_id))
),
judged AS (
    SELECT query_id, iteration, doc_id, relevance FROM parent WHERE relevance >= 0
),
added AS (
    SELECT query_id, '0' AS iteration, doc_id, 0 AS relevance
    FROM returned
    ANTI JOIN judged USING (query_id, doc_id)
    -- a parent row with a negative grade is replaced, not kept beside the added one
)
SELECT $collection_id AS collection_id, $qrels_id AS qrels_id, query_id, iteration, doc_id, relevance
FROM (SELECT query_id, iteration, doc_id, relevance FROM judged
      UNION ALL
      SELECT query_id, iteration, doc_id, relevance FROM added)
ORDER BY query_id, doc_id;
