-- name: report_pool_depth
-- description: The pool depth implied by the judgments: the shortest fully judged prefix over the lists of the pooled runs.
-- params: collection_id VARCHAR
-- Reads the evaluation context (ev_pairs, ev_judged) built over every run and topic. A list's
-- judged prefix is the largest k with every document of ranks 1..k judged: judged_so_far
-- equals rank exactly on those rows. A list that is judged to its end (num_ret <= prefix)
-- says nothing about the pool depth and is skipped. Only runs flagged pooled (run metadata)
-- count; without metadata the result is NULL (unknown), as it is when every pooled list is
-- judged to its end. The depth is a lower bound on the official pool depth: a document
-- can be unjudged inside the pool depth only if the judgments are not the pool's.
WITH prefix AS (
    SELECT
        run_id,
        query_id,
        count(*) FILTER (WHERE judged_so_far = rank) AS judged_prefix
    FROM ev_judged
    GROUP BY run_id, query_id
),
pooled_lists AS (
    SELECT
        p.run_id,
        p.num_ret,
        coalesce(x.judged_prefix, 0) AS judged_prefix
    FROM ev_pairs AS p
    JOIN runs AS r
        ON r.collection_id = $collection_id AND r.run_id = p.run_id AND r.pooled
    LEFT JOIN prefix AS x
        ON x.run_id = p.run_id AND x.query_id = p.query_id
)
SELECT
    min(judged_prefix) FILTER (WHERE num_ret > judged_prefix) AS pool_depth,
    count(DISTINCT run_id) AS pooled_runs,
    count(*) AS pooled_lists
FROM pooled_lists;
