-- name: exclusion_losses_topics
-- description: Per run and topic where exclusions removed documents: how many, those in the top 10 as given, the best rank as given, the documents.
-- params: collection_id VARCHAR, runs VARCHAR[]
-- methods §17. One row per (run, topic) with a removed line; documents lists them by rank as
-- given; lines is what the run kept for the topic (run_topics.num_ret).
SELECT
    x.run_id,
    x.query_id,
    CAST(count(*) AS BIGINT) AS removed,
    CAST(count(*) FILTER (WHERE x.rank <= 10) AS BIGINT) AS removed_top10,
    min(x.rank) AS best_rank,
    string_agg(x.doc_id, ' ' ORDER BY x.rank) AS documents,
    any_value(t.num_ret) AS lines
FROM run_exclusions AS x
LEFT JOIN run_topics AS t
    ON t.collection_id = x.collection_id AND t.run_id = x.run_id AND t.query_id = x.query_id
WHERE x.collection_id = $collection_id
  AND ($runs IS NULL OR list_contains($runs, x.run_id))
GROUP BY x.run_id, x.query_id
ORDER BY x.run_id, x.query_id;
