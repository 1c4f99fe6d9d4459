-- name: nDCG
-- description: nDCG@d and the scenario nDCG_allrel@d (unjudged documents in the top d given the gain allrel_gain of bd_key, and u_d such documents added to the ideal list) per run, topic and depth.
-- params:
-- kind: scenario
-- reference: methods §1.4, §3.3 [decision], §7.4
-- [decision] A relabelled document gets the gain allrel_gain (bd_key), the relevance threshold
-- (the lowest grade that counts as relevant; 1 on binary qrels). The ideal list of the scenario
-- holds the topic's judged gains plus u_d documents of that gain, sorted, cut at d:
--   IDCG_up@d = (ideal prefix over the n_top judged gains >= allrel_gain, cut at d)
--             + allrel_gain * (D(min(d, n_top + u_d)) - D(min(d, n_top)))
--             + (judged gains below allrel_gain, shifted down u_d places, cut at d)
-- with D(n) = sum_{i <= n} 1 / log2(i + 1). The last term is empty with the default
-- threshold 1 (integer grades). A scenario, not a bound: IDCG grows with u_d.
CREATE OR REPLACE TEMP VIEW bd_topics AS
WITH ideal AS (
    SELECT
        q.query_id,
        q.gain,
        row_number() OVER (PARTITION BY q.query_id ORDER BY q.gain DESC) AS ideal_rank
    FROM ev_qrels AS q
    SEMI JOIN ev_topics AS t USING (query_id)
    WHERE q.gain > 0
),
ideal_prefix AS (
    SELECT
        query_id,
        ideal_rank,
        gain,
        sum(gain / log2(ideal_rank + 1)) OVER (
            PARTITION BY query_id ORDER BY ideal_rank ROWS UNBOUNDED PRECEDING
        ) AS idcg
    FROM ideal
),
ideal_counts AS (
    SELECT
        query_id,
        count(*) AS n_positive,
        count(*) FILTER (WHERE gain >= k.allrel_gain) AS n_top
    FROM ideal
    CROSS JOIN bd_key AS k
    GROUP BY query_id
),
cells AS (
    -- the unjudged positions among the top e hold the discount D(e) minus the judged ones
    SELECT
        cl.list_id,
        cl.run_no,
        l.query_id,
        cl.depth,
        cl.dcg,
        cl.dcg + k.allrel_gain * (r.discount - cl.judged_discount) AS dcg_allrel,
        cl.unjudged,
        coalesce(c.n_positive, 0) AS n_positive,
        coalesce(c.n_top, 0) AS n_top
    FROM bd_cells AS cl
    CROSS JOIN bd_key AS k
    JOIN bd_lists AS l ON l.list_id = cl.list_id
    JOIN bd_rank_sums AS r ON r.n = cl.evaluated
    LEFT JOIN ideal_counts AS c ON c.query_id = l.query_id
),
shifted_low AS (
    -- judged gains below the relabelling gain, pushed down u_d places by the added documents;
    -- only topics with such gains take part (none with binary qrels and the threshold 1)
    SELECT
        cl.list_id,
        cl.depth,
        sum(i.gain / log2(i.ideal_rank + cl.unjudged + 1)) AS low_gain
    FROM cells AS cl
    JOIN ideal AS i
        ON i.query_id = cl.query_id
        AND i.ideal_rank > cl.n_top
        AND i.ideal_rank + cl.unjudged <= cl.depth
    WHERE cl.n_positive > cl.n_top
    GROUP BY cl.list_id, cl.depth
),
normalisers AS (
    SELECT
        cl.list_id,
        cl.run_no,
        cl.depth,
        cl.dcg,
        cl.dcg_allrel,
        coalesce(cut.idcg, 0.0) AS idcg,
        coalesce(top.idcg, 0.0)
            + k.allrel_gain * (added.discount - base.discount)
            + coalesce(low.low_gain, 0.0) AS idcg_allrel
    FROM cells AS cl
    CROSS JOIN bd_key AS k
    LEFT JOIN ideal_prefix AS cut
        ON cut.query_id = cl.query_id AND cut.ideal_rank = least(cl.depth, cl.n_positive)
    LEFT JOIN ideal_prefix AS top
        ON top.query_id = cl.query_id AND top.ideal_rank = least(cl.depth, cl.n_top)
    JOIN bd_rank_sums AS base ON base.n = least(cl.depth, cl.n_top)
    JOIN bd_rank_sums AS added ON added.n = least(cl.depth, cl.n_top + cl.unjudged)
    LEFT JOIN shifted_low AS low
        ON low.list_id = cl.list_id AND low.depth = cl.depth
)
SELECT
    list_id,
    run_no,
    depth,
    CASE WHEN idcg = 0 THEN 0.0 ELSE dcg / idcg END AS lower,
    CASE WHEN idcg_allrel = 0 THEN 0.0 ELSE dcg_allrel / idcg_allrel END AS upper,
    CAST(NULL AS DOUBLE) AS m_rel,
    CAST(NULL AS DOUBLE) AS m_nonrel,
    CAST(NULL AS DOUBLE) AS m_theta
FROM normalisers;
