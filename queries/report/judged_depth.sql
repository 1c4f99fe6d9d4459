-- name: report_judged_depth
-- description: The depth to which the judgments cover the ranked lists: a built pool's depth, else the most common depth at which pooled lists stop being judged, with its evidence.
-- params: collection_id VARCHAR, qrels_id VARCHAR, qrels_ids VARCHAR[]
-- (docs/methods.md §14.2.) A list is one run's ranking of one topic of the label sets
-- $qrels_ids (the set evaluated and any sets filling it). A document is in the pool when the
-- sets list it, whatever its grade (a negative grade is "pooled, not judged"). A list's
-- judged prefix is the deepest k with ranks 1..k in the pool, read with its ties: documents
-- tied on score come in trec_eval's order (doc_id descending), which need not be the order
-- the pool was built in, so a group of tied documents that straddles k counts as judged to k
-- when enough of its documents are in the pool to fill its ranks up to k. A list whose every
-- document is in the pool is judged to its end and says nothing about where judging stops.
-- Among the lists that stop, the most common stopping depth (k >= 1, the shallower on a tie)
-- is the judged depth, provided more than half of all lists are judged to it or deeper; one
-- list, or a few runs that retrieve oddly, cannot move it. Two answers, by which lists count:
--   pooled_*  the lists of the runs flagged pooled (run metadata), when any run is;
--   runs_*    every run's lists (the unpooled runs' lists stop shallower, but not all at
--             one depth, so the pooled lists' depth still stands out).
-- Each comes with its evidence: lists stopping at exactly that depth, lists judged to it or
-- deeper, and all lists. pool_depth is the depth of the pool whose qrels set is $qrels_id
-- (evalwh pool build), most trusted of all.
WITH pool AS (
    SELECT DISTINCT query_id, doc_id
    FROM qrels
    WHERE collection_id = $collection_id AND list_contains($qrels_ids, qrels_id)
),
pool_topics AS (
    SELECT DISTINCT query_id FROM pool
),
ranked AS (
    SELECT r.run_id, r.query_id, r.rank, r.score, p.doc_id IS NOT NULL AS in_pool
    FROM run_results AS r
    SEMI JOIN pool_topics AS t ON t.query_id = r.query_id
    LEFT JOIN pool AS p ON p.query_id = r.query_id AND p.doc_id = r.doc_id
    WHERE r.collection_id = $collection_id
),
first_out AS (
    -- per list: the score of its first document outside the pool (NULL: judged to its end)
    SELECT
        run_id,
        query_id,
        arg_min(score, rank) FILTER (WHERE NOT in_pool) AS out_score,
        count(*) AS num_ret
    FROM ranked
    GROUP BY run_id, query_id
),
boundary AS (
    -- the documents tied with it: where their group starts, and how many of them are pooled
    SELECT f.run_id, f.query_id, min(r.rank) AS first_rank, count(*) FILTER (WHERE r.in_pool) AS in_pool
    FROM first_out AS f
    JOIN ranked AS r
        ON r.run_id = f.run_id AND r.query_id = f.query_id AND r.score = f.out_score
    GROUP BY f.run_id, f.query_id
),
lists AS (
    SELECT
        f.run_id,
        f.query_id,
        -- the prefix ends inside the first group not wholly in the pool
        b.first_rank - 1 + b.in_pool AS stops_at,
        f.num_ret,
        coalesce(u.pooled, false) AS pooled
    FROM first_out AS f
    LEFT JOIN boundary AS b USING (run_id, query_id)
    JOIN runs AS u ON u.collection_id = $collection_id AND u.run_id = f.run_id
),
kinds AS (
    SELECT true AS pooled_only UNION ALL SELECT false
),
counted AS (
    SELECT k.pooled_only, l.stops_at, l.num_ret
    FROM kinds AS k
    JOIN lists AS l ON l.pooled OR NOT k.pooled_only
),
stops AS (
    SELECT pooled_only, stops_at AS depth, count(*) AS exact
    FROM counted
    WHERE stops_at >= 1
    GROUP BY ALL
),
modes AS (
    SELECT pooled_only, arg_min(depth, (-exact, depth)) AS depth, max(exact) AS exact
    FROM stops
    GROUP BY pooled_only
),
evidence AS (
    SELECT
        m.pooled_only,
        m.depth,
        m.exact,
        count(*) FILTER (WHERE coalesce(c.stops_at, c.num_ret) >= m.depth) AS deeper,
        count(*) AS lists
    FROM modes AS m
    JOIN counted AS c USING (pooled_only)
    GROUP BY ALL
),
answers AS (
    SELECT
        k.pooled_only,
        CASE WHEN e.deeper * 2 > e.lists THEN e.depth END AS depth,
        e.exact,
        e.deeper,
        coalesce(e.lists, 0) AS lists
    FROM kinds AS k
    LEFT JOIN evidence AS e USING (pooled_only)
)
SELECT
    (
        SELECT max(depth) FROM pools
        WHERE collection_id = $collection_id AND pool_id = $qrels_id
    ) AS pool_depth,
    any_value(depth) FILTER (WHERE pooled_only) AS pooled_depth,
    any_value(exact) FILTER (WHERE pooled_only) AS pooled_exact,
    any_value(deeper) FILTER (WHERE pooled_only) AS pooled_deeper,
    any_value(lists) FILTER (WHERE pooled_only) AS pooled_lists,
    any_value(depth) FILTER (WHERE NOT pooled_only) AS runs_depth,
    any_value(exact) FILTER (WHERE NOT pooled_only) AS runs_exact,
    any_value(deeper) FILTER (WHERE NOT pooled_only) AS runs_deeper,
    any_value(lists) FILTER (WHERE NOT pooled_only) AS runs_lists,
    (
        SELECT count(*) FROM runs WHERE collection_id = $collection_id AND pooled
    ) AS pooled_runs
FROM answers;
