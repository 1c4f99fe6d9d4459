-- name: pool_qrels
-- description: Store the qrels of a pool: the parent judgments restricted to the union of the members' top lambda documents.
-- params: collection_id VARCHAR, pool_id VARCHAR, parent_qrels_id VARCHAR, depth INTEGER, runs VARCHAR[]
-- Pool_lambda(S, t) is the union of top_lambda of every member run (methods §5.1), read from
-- the rank materialised at ingest (trec_eval order: score descending, then doc_id descending),
-- so the pool is deterministic even where scores tie. A pooled document that the parent set
-- does not judge is stored with grade -1, trec_eval's "pooled but not judged": every metric
-- reads it as unjudged, and the pool's membership stays complete in the table. Documents
-- outside the pool are simply absent, hence unjudged. Only topics of the parent set are pooled.
INSERT INTO qrels (collection_id, qrels_id, query_id, iteration, doc_id, relevance)
WITH parent AS (
    SELECT query_id, iteration, doc_id, relevance
    FROM qrels
    WHERE collection_id = $collection_id AND qrels_id = $parent_qrels_id
),
parent_topics AS (
    SELECT DISTINCT query_id FROM parent
),
pooled AS (
    SELECT DISTINCT r.query_id, r.doc_id
    FROM run_results AS r
    SEMI JOIN parent_topics AS t USING (query_id)
    WHERE r.collection_id = $collection_id
      AND list_contains($runs, r.run_id)
      AND r.rank <= $depth
)
SELECT
    $collection_id AS collection_id,
    $pool_id AS qrels_id,
    p.query_id,
    coalesce(q.iteration, '0') AS iteration,
    p.doc_id,
    coalesce(q.relevance, -1) AS relevance
FROM pooled AS p
LEFT JOIN parent AS q USING (query_id, doc_id)
ORDER BY p.query_id, p.doc_id;
