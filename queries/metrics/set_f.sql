-- name: set_F
-- description: F-measure of the retrieved set: (beta + 1)·P·R / (beta·P + R) with set precision P and set recall R; 0 when nothing relevant is retrieved.
-- params: beta DOUBLE = 1.0 (beta >= 0)
-- trec_eval: set_F
-- kind: performance
-- range: 0, 1
-- reference: van Rijsbergen 1979; trec_eval m_set_F.c
-- As in trec_eval, beta weighs P·R linearly ((beta + 1), beta·P), not as beta squared.
WITH hits AS (
    SELECT run_id, query_id, count(*) AS relevant_retrieved
    FROM ev_judged
    WHERE is_rel
    GROUP BY run_id, query_id
),
sets AS (
    SELECT
        p.run_id,
        p.query_id,
        coalesce(h.relevant_retrieved, 0) AS relevant_retrieved,
        CASE WHEN p.num_ret = 0 THEN 0.0 ELSE coalesce(h.relevant_retrieved, 0) / p.num_ret END AS set_p,
        CASE WHEN p.num_rel = 0 THEN 0.0 ELSE coalesce(h.relevant_retrieved, 0) / p.num_rel END AS set_r
    FROM ev_pairs AS p
    LEFT JOIN hits AS h USING (run_id, query_id)
)
SELECT
    run_id,
    query_id,
    CASE
        WHEN relevant_retrieved = 0 THEN 0.0
        ELSE ($beta + 1.0) * set_p * set_r / ($beta * set_p + set_r)
    END AS value
FROM sets
ORDER BY run_id, query_id;
