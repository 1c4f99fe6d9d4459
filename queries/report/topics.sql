-- name: report_topics
-- description: One row per topic of a qrels set: judged, relevant and unjudged-but-pooled documents.
-- params: collection_id VARCHAR, qrels_id VARCHAR, rel INTEGER
-- "judged" counts grades >= 0; a negative grade means pooled but not judged (trec_eval reads
-- it as unjudged) and is counted apart. "relevant" counts grades >= $rel, the threshold the
-- report's metrics use.
SELECT
    query_id,
    count(*) FILTER (WHERE relevance >= 0) AS judged,
    count(*) FILTER (WHERE relevance >= $rel) AS relevant,
    count(*) FILTER (WHERE relevance < 0) AS unjudged_pooled
FROM qrels
WHERE collection_id = $collection_id AND qrels_id = $qrels_id
GROUP BY query_id
ORDER BY query_id;
