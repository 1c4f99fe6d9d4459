-- name: run_exclusion
-- description: The S4 run-exclusion rule (methods §8.1): one row per run with its retrieved count over T, empty topics, and the decision.
-- params: collection_id VARCHAR, qrels_id VARCHAR, rel INTEGER, cap INTEGER, share DOUBLE
-- T is the evaluated topic set (topics with at least one relevant document, methods §0.4).
-- Retrieved documents are counted after ingest's de-duplication and the cap (trec_eval -M,
-- 1000 in TREC), over the topics of T only. A run is excluded when its total is strictly
-- below share x |T| x cap, or when it retrieved nothing for some topic of T.
WITH topic_set AS (
    SELECT query_id
    FROM qrels
    WHERE collection_id = $collection_id AND qrels_id = $qrels_id AND relevance >= $rel
    GROUP BY query_id
),
sizes AS (
    SELECT count(*) AS n_topics, $share * count(*) * $cap AS threshold
    FROM topic_set
),
per_topic AS (
    SELECT
        r.run_id,
        t.query_id,
        -- coalesce first: DuckDB's least() skips NULLs, so least(NULL, cap) would be cap
        least(coalesce(rt.num_ret, 0), $cap) AS num_ret
    FROM runs AS r
    CROSS JOIN topic_set AS t
    LEFT JOIN run_topics AS rt
        ON rt.collection_id = r.collection_id
        AND rt.run_id = r.run_id
        AND rt.query_id = t.query_id
    WHERE r.collection_id = $collection_id
),
totals AS (
    SELECT
        run_id,
        CAST(sum(num_ret) AS BIGINT) AS total_retrieved,
        CAST(count(*) FILTER (WHERE num_ret = 0) AS INTEGER) AS topics_empty
    FROM per_topic
    GROUP BY run_id
)
SELECT
    t.run_id,
    t.total_retrieved,
    t.topics_empty,
    s.threshold,
    t.total_retrieved < s.threshold OR t.topics_empty > 0 AS excluded,
    nullif(concat_ws('; ',
        CASE WHEN t.total_retrieved < s.threshold THEN
            printf('retrieved %d < %g = %g x %d topics x %d',
                   t.total_retrieved, s.threshold, $share, s.n_topics, $cap)
        END,
        CASE WHEN t.topics_empty > 0 THEN
            printf('nothing for %d of %d topics', t.topics_empty, s.n_topics)
        END
    ), '') AS reason
FROM totals AS t
CROSS JOIN sizes AS s
ORDER BY excluded DESC, t.total_retrieved, t.run_id;
