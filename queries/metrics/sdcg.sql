-- name: SDCG
-- description: Scaled DCG at depth k: DCG with gain (g - min_rel) / (max_rel - min_rel), divided by the DCG of k documents of gain 1.
-- params: k INTEGER, max_rel DOUBLE (max_rel > min_rel), min_rel DOUBLE = 0
-- kind: performance
-- reference: Moffat, Bailey, Scholer & Thomas, the C/W/L framework (cwl_eval's NDCG-k); ir_measures' SDCG
-- nDCG as if at least k documents of the highest grade existed: the normaliser is
-- sum_{i <= k} 1 / log2(i + 1), whatever the judgments. The grade (fractional as given) is
-- clipped to [min_rel, max_rel] first; unjudged documents have gain 0.
WITH gains AS (
    SELECT
        run_id,
        query_id,
        sum((least(greatest(gain, $min_rel), $max_rel) - $min_rel) / ($max_rel - $min_rel) / log2(rank + 1) ORDER BY rank) AS dcg
    FROM ev_judged
    WHERE rank <= $k
    GROUP BY run_id, query_id
),
scale AS (
    SELECT sum(1 / log2(i + 1) ORDER BY i) AS dcg_max
    FROM (SELECT unnest(generate_series(1, $k)) AS i) AS positions
)
SELECT
    p.run_id,
    p.query_id,
    coalesce(g.dcg, 0.0) / s.dcg_max AS value
FROM ev_pairs AS p
CROSS JOIN scale AS s
LEFT JOIN gains AS g USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
