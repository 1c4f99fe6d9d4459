-- name: unjudged_share
-- description: Unjudged share per rank over all runs and topics of a collection (methods §2.7).
-- params: collection_id VARCHAR, qrels_id VARCHAR, max_rank INTEGER
-- u(k) = #{lists with m >= k whose document at k is unjudged} / #{lists with m >= k}.
-- Counted from the judged rows only: unjudged at k = lists reaching k - judged at k.
WITH reach AS (
    -- lists reaching rank k: those with num_ret >= k
    SELECT k AS rank, count(*) AS lists
    FROM run_topics AS rt
    CROSS JOIN LATERAL (SELECT unnest(range(1, least(rt.num_ret, $max_rank) + 1)) AS k)
    WHERE rt.collection_id = $collection_id
    GROUP BY k
),
judged_at AS (
    SELECT r.rank, count(*) AS judged
    FROM run_results AS r
    JOIN qrels AS q
        ON q.collection_id = r.collection_id AND q.query_id = r.query_id AND q.doc_id = r.doc_id
    WHERE r.collection_id = $collection_id
      AND q.qrels_id = $qrels_id
      AND q.relevance >= 0
      AND r.rank <= $max_rank
    GROUP BY r.rank
)
SELECT
    reach.rank,
    reach.lists,
    reach.lists - coalesce(j.judged, 0) AS unjudged,
    (reach.lists - coalesce(j.judged, 0)) / reach.lists AS share
FROM reach
LEFT JOIN judged_at AS j USING (rank)
ORDER BY reach.rank;
