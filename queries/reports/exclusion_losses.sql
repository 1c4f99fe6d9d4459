-- name: exclusion_losses
-- description: Per run, what the excluded documents took from it: documents removed, those in the top 10 as given, the best rank as given, lines kept.
-- params: collection_id VARCHAR, runs VARCHAR[]
-- methods §17. run_exclusions holds each removed line with its rank as given (before the
-- ranks closed up); run_topics.num_ret counts the lines kept. Every run of the collection
-- (or of runs) is listed, with 0 where nothing was removed.
SELECT
    r.run_id,
    CAST(count(x.doc_id) AS BIGINT) AS removed,
    CAST(count(x.doc_id) FILTER (WHERE x.rank <= 10) AS BIGINT) AS removed_top10,
    min(x.rank) AS best_rank,
    CAST(count(DISTINCT x.query_id) AS BIGINT) AS topics,
    (SELECT CAST(sum(t.num_ret) AS BIGINT) FROM run_topics AS t
     WHERE t.collection_id = r.collection_id AND t.run_id = r.run_id) AS lines
FROM runs AS r
LEFT JOIN run_exclusions AS x ON x.collection_id = r.collection_id AND x.run_id = r.run_id
WHERE r.collection_id = $collection_id
  AND ($runs IS NULL OR list_contains($runs, r.run_id))
GROUP BY r.collection_id, r.run_id
ORDER BY r.run_id;
