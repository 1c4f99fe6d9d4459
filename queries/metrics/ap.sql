-- name: AP
-- description: Average precision to depth k (whole list without k): precision at each relevant document, summed, divided by R.
-- params: k INTEGER = NULL
-- aliases: MAP, map
-- trec_eval: map | map_cut_{k}
-- kind: performance
-- range: 0, 1
-- reference: methods §1.2; trec_eval m_map.c, m_map_cut.c
-- The denominator is R, the number of known relevant documents, not min(R, k): relevant
-- documents the run did not return within k count as zero precision (trec_eval map_cut).
WITH precision_sums AS (
    -- precision at the rank of each relevant document: relevant_so_far / rank
    SELECT run_id, query_id, sum(relevant_so_far / rank ORDER BY rank) AS precision_sum
    FROM ev_judged
    WHERE is_rel AND ($k IS NULL OR rank <= $k)
    GROUP BY run_id, query_id
)
SELECT
    p.run_id,
    p.query_id,
    CASE WHEN p.num_rel = 0 THEN 0.0 ELSE coalesce(s.precision_sum, 0) / p.num_rel END AS value
FROM ev_pairs AS p
LEFT JOIN precision_sums AS s USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
