-- name: best_rank
-- description: Per pair of an audit's frame, the best rank any run of the collection gave it (NULL: no run retrieved it).
-- params: collection_id VARCHAR, frame_id VARCHAR
-- reference: methods §15.2
-- A declared audit is checked by comparing its pairs' best ranks with the frame's: an audit
-- of the pairs every run put first is no random sample.
SELECT r.query_id, r.doc_id, min(r.rank) AS best_rank
FROM run_results AS r
SEMI JOIN qrels AS q
    ON q.collection_id = r.collection_id AND q.query_id = r.query_id AND q.doc_id = r.doc_id
   AND q.qrels_id = $frame_id
WHERE r.collection_id = $collection_id
GROUP BY r.query_id, r.doc_id;
