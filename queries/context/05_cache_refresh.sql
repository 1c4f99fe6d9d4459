-- name: eval_cache_refresh
-- description: Rebuild the cached judged rows of the stale runs (ev_join_runs) for this qrels set.
-- params: fingerprint VARCHAR
-- Only used at the default threshold (relevant = grade >= 1), for which the cached
-- running counts hold; other thresholds join directly (05_source_direct.sql). Each rebuilt
-- run gets a new build (build_key) and its rows the keys of their ranked lists (list_key,
-- schema/013_keyed_results.sql). Rows go in relevant first, then by rank
-- (schema/010_judged_cache_order.sql): the row groups' min/max then let a metric's
-- "rank <= k" or "is_rel" skip most of them.
DELETE FROM judged_results
WHERE build_key IN (
    SELECT b.build_key
    FROM judged_builds AS b
    JOIN ev_key AS k ON b.collection_id = k.collection_id AND b.qrels_id = k.qrels_id
    WHERE b.run_id IN (SELECT run_id FROM ev_join_runs)
);

DELETE FROM judged_builds AS b
USING ev_key AS k
WHERE b.collection_id = k.collection_id AND b.qrels_id = k.qrels_id
  AND b.run_id IN (SELECT run_id FROM ev_join_runs);

INSERT INTO judged_builds (collection_id, qrels_id, run_id, run_sha256, qrels_fingerprint, build_key)
SELECT
    k.collection_id,
    k.qrels_id,
    s.run_id,
    s.sha256,
    $fingerprint,
    CAST((SELECT coalesce(max(build_key), 0) FROM judged_builds)
         + row_number() OVER (ORDER BY s.run_id) AS INTEGER)
FROM ev_join_runs AS s
CROSS JOIN ev_key AS k;

-- Documents judged with grade 0 at consecutive ranks below judged_spans_from() share one
-- row (span, schema/014_judged_spans.sql): within a list, such a row continues the stretch
-- above it when no unjudged document lies between them (rank - judged_so_far is the same)
-- and no judged document of another grade does (positive_so_far is the same); every other
-- row is a group of its own.
INSERT INTO judged_results (build_key, list_key, rank, gain, judged_so_far, relevant_so_far, span)
WITH stretches AS (
    SELECT
        run_id,
        query_id,
        min(rank) AS rank,
        any_value(gain) AS gain,
        min(judged_so_far) AS judged_so_far,
        any_value(relevant_so_far) AS relevant_so_far,
        CAST(count(*) AS INTEGER) AS span
    FROM (
        SELECT *, gain = 0 AND rank > judged_spans_from() AS deep_zero
        FROM ev_judged_rows
    )
    GROUP BY
        run_id,
        query_id,
        deep_zero,
        CASE WHEN deep_zero THEN rank - judged_so_far ELSE rank END,
        CASE WHEN deep_zero THEN positive_so_far END
)
SELECT b.build_key, t.list_key, j.rank, j.gain, j.judged_so_far, j.relevant_so_far, j.span
FROM stretches AS j
CROSS JOIN ev_key AS k
JOIN judged_builds AS b
    ON b.collection_id = k.collection_id AND b.qrels_id = k.qrels_id AND b.run_id = j.run_id
JOIN run_topics AS t
    ON t.collection_id = k.collection_id AND t.run_id = j.run_id AND t.query_id = j.query_id
ORDER BY j.gain >= 1 DESC, j.rank;
