-- name: unjudged_share
-- description: Unjudged share per rank over all runs and qrels topics of a collection (methods §2.7).
-- params: max_rank INTEGER
-- Reads the evaluation context (ev_pairs, ev_judged) built over every run and every topic of
-- the qrels set. u(k) = #{lists with m >= k whose document at k is unjudged} / #{lists with
-- m >= k}, counted from the judged rows only: unjudged at k = lists reaching k - judged at k.
WITH reach AS (
    SELECT k AS rank, count(*) AS lists
    FROM ev_pairs AS p
    CROSS JOIN LATERAL (SELECT unnest(range(1, least(p.num_ret, $max_rank) + 1)) AS k)
    GROUP BY k
),
judged_at AS (
    SELECT rank, count(*) AS judged
    FROM ev_judged
    WHERE rank <= $max_rank
    GROUP BY rank
)
SELECT
    reach.rank,
    reach.lists,
    reach.lists - coalesce(j.judged, 0) AS unjudged,
    (reach.lists - coalesce(j.judged, 0)) / reach.lists AS share
FROM reach
LEFT JOIN judged_at AS j USING (rank)
ORDER BY reach.rank;
