-- name: iprec_at_recall
-- description: Interpolated precision at a recall level: the highest precision at or below the rank where the run reaches that share of R.
-- params: recall DOUBLE = 0.0 (0 <= recall <= 1), legacy BOOLEAN = false
-- trec_eval: iprec_at_recall
-- kind: performance
-- range: 0, 1
-- reference: trec_eval m_iprec_at_recall.c; Manning, Raghavan & Schütze 2008, §8.4
-- The recall level becomes a number of relevant documents c = round(recall·R) (half away
-- from zero, trec_eval 10); with legacy = true, c = floor(recall·R + 0.9) as trec_eval <= 9.0.8.
-- The interpolated precision at the c-th relevant document is the highest precision at that
-- rank or below, i.e. the highest relevant_so_far / rank over relevant documents j >= c;
-- c = 0 reads as c = 1. A run that never reaches c relevant documents scores 0.
WITH interpolated AS (
    -- precision at each relevant document, then its running maximum from the bottom up
    SELECT
        run_id,
        query_id,
        relevant_so_far,
        max(relevant_so_far / rank) OVER (
            PARTITION BY run_id, query_id ORDER BY relevant_so_far DESC ROWS UNBOUNDED PRECEDING
        ) AS precision
    FROM ev_judged
    WHERE is_rel
),
cuts AS (
    SELECT
        run_id,
        query_id,
        greatest(
            1,
            CASE
                WHEN $legacy THEN CAST(floor($recall * num_rel + 0.9) AS BIGINT)
                ELSE CAST(round($recall * num_rel) AS BIGINT)
            END
        ) AS cut
    FROM ev_pairs
)
SELECT
    c.run_id,
    c.query_id,
    coalesce(i.precision, 0.0) AS value
FROM cuts AS c
LEFT JOIN interpolated AS i
    ON i.run_id = c.run_id AND i.query_id = c.query_id AND i.relevant_so_far = c.cut
ORDER BY c.run_id, c.query_id;
