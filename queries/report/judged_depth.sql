-- name: report_judged_depth
-- description: The depth to which the judgments cover the runs: pool depth of a built pool, else inferred from the runs' judged prefixes.
-- params: collection_id VARCHAR, qrels_id VARCHAR
-- Reads the evaluation context (ev_pairs, ev_judged) built over every run and topic. A list's
-- judged prefix is the largest k with every document of ranks 1..k judged; a run's judged
-- depth is its shortest judged prefix over the lists it does not have judged to the end (a
-- list judged to its end says nothing). Three answers, most trusted first:
--   pool_depth   the depth lambda of the pool whose qrels set is $qrels_id (evalwh pool build);
--   pooled_depth the shortest judged depth of the runs flagged pooled (run metadata);
--   runs_depth   the deepest judged depth of any run: a depth-lambda pool judges every list
--                of its member runs to lambda, and a run outside the pool rarely gets as far.
-- Each is NULL when it is unknown (no such pool, no pooled flags, every list judged to its
-- end); a depth of 0 (not even rank 1 judged on every list) says nothing either.
WITH prefix AS (
    SELECT
        run_id,
        query_id,
        count(*) FILTER (WHERE judged_so_far = rank) AS judged_prefix
    FROM ev_judged
    GROUP BY run_id, query_id
),
per_run AS (
    SELECT
        p.run_id,
        bool_or(coalesce(r.pooled, false)) AS pooled,
        min(coalesce(x.judged_prefix, 0))
            FILTER (WHERE p.num_ret > coalesce(x.judged_prefix, 0)) AS judged_depth
    FROM ev_pairs AS p
    JOIN runs AS r
        ON r.collection_id = $collection_id AND r.run_id = p.run_id
    LEFT JOIN prefix AS x
        ON x.run_id = p.run_id AND x.query_id = p.query_id
    GROUP BY p.run_id
)
SELECT
    (
        SELECT max(depth) FROM pools
        WHERE collection_id = $collection_id AND pool_id = $qrels_id
    ) AS pool_depth,
    nullif(min(judged_depth) FILTER (WHERE pooled), 0) AS pooled_depth,
    nullif(max(judged_depth), 0) AS runs_depth,
    count(*) FILTER (WHERE pooled) AS pooled_runs
FROM per_run;
