-- name: pool_member_lists
-- description: Each member's top lambda per topic in rank order: the arms of the sequential strategies (move-to-front, bandits).
-- params: collection_id VARCHAR, parent_qrels_id VARCHAR, depth INTEGER, runs VARCHAR[]
-- One row per (topic, member run, rank <= lambda), trec_eval order as everywhere (the rank
-- materialised at ingest), only topics of the parent set. A run's list may be shorter than
-- lambda; a run without a ranking for a topic has no rows there.
SELECT r.query_id, r.run_id, r.rank, r.doc_id
FROM run_results AS r
SEMI JOIN (
    SELECT DISTINCT query_id FROM qrels
    WHERE collection_id = $collection_id AND qrels_id = $parent_qrels_id
) AS t USING (query_id)
WHERE r.collection_id = $collection_id
  AND list_contains($runs, r.run_id)
  AND r.rank <= $depth
ORDER BY r.query_id, r.run_id, r.rank;
