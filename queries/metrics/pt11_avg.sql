-- name: pt11_avg
-- description: Interpolated precision averaged over recall levels (by default the 11 points 0, 0.1, ..., 1).
-- params: recalls VARCHAR = NULL, legacy BOOLEAN = false
-- aliases: 11pt_avg
-- trec_eval: 11pt_avg
-- kind: performance
-- range: 0, 1
-- reference: trec_eval m_11pt_avg.c; iprec_at_recall.sql for the interpolation
-- recalls is a comma-separated list (trec_eval's -m 11pt_avg.0.25,0.5,0.75); each level is
-- read as iprec_at_recall reads it (legacy = true: trec_eval <= 9.0.8's rounding), and the mean
-- is over all levels given, duplicates included.
WITH levels AS (
    SELECT CAST(trim(level) AS DOUBLE) AS recall
    FROM (
        SELECT unnest(string_split(coalesce($recalls, '0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1'), ',')) AS level
    )
),
interpolated AS (
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
        p.run_id,
        p.query_id,
        greatest(
            1,
            CASE
                WHEN $legacy THEN CAST(floor(l.recall * p.num_rel + 0.9) AS BIGINT)
                ELSE CAST(round(l.recall * p.num_rel) AS BIGINT)
            END
        ) AS cut
    FROM ev_pairs AS p
    CROSS JOIN levels AS l
)
SELECT
    c.run_id,
    c.query_id,
    sum(coalesce(i.precision, 0.0) ORDER BY c.cut DESC) / count(*) AS value
FROM cuts AS c
LEFT JOIN interpolated AS i
    ON i.run_id = c.run_id AND i.query_id = c.query_id AND i.relevant_so_far = c.cut
GROUP BY c.run_id, c.query_id
ORDER BY c.run_id, c.query_id;
