-- name: changed_ranks_given
-- description: How many lines of a stored run give back another rank as written than a DataFrame's rank column.
-- params: collection_id VARCHAR, run_id VARCHAR
-- frame_ranks holds the frame's query_id, doc_id and rank_given. A frame's digest leaves its
-- rank column out (evalwh.store.ingest.frames.frame_sha256 of the other columns), so a frame whose digest
-- matches the stored run's has the same (topic, document, score) lines; this counts those
-- whose stored rank as written differs. 0: the frame is unchanged.
SELECT count(*) AS changed
FROM frame_ranks AS f
LEFT JOIN run_results AS r
    ON r.collection_id = $collection_id
    AND r.run_id = $run_id
    AND r.query_id = f.query_id
    AND r.doc_id = f.doc_id
WHERE r.rank_given IS DISTINCT FROM f.rank_given;
