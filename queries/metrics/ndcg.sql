-- name: nDCG
-- description: Normalised discounted cumulative gain to depth k (whole list without k): gain = grade, discount log2(rank + 1).
-- params: k INTEGER = NULL
-- aliases: NDCG, ndcg
-- trec_eval: ndcg | ndcg_cut_{k}
-- kind: performance
-- range: 0, 1
-- reference: Järvelin & Kekäläinen, TOIS 2002; methods §1.4; trec_eval m_ndcg.c, m_ndcg_cut.c (>= 9.0.4)
-- Gain is the grade itself (not 2^g - 1) and ignores the relevance threshold; unjudged and
-- negative grades give 0. The ideal list holds every judged document of the topic sorted by
-- grade, cut at k; nDCG is 0 when the ideal gain is 0.
WITH gains AS (
    SELECT run_id, query_id, sum(gain / log2(rank + 1) ORDER BY rank) AS dcg
    FROM ev_judged
    WHERE gain > 0 AND ($k IS NULL OR rank <= $k)
    GROUP BY run_id, query_id
),
ideal_ranks AS (
    SELECT
        q.query_id,
        q.gain,
        row_number() OVER (PARTITION BY q.query_id ORDER BY q.gain DESC) AS ideal_rank
    FROM ev_qrels AS q
    SEMI JOIN ev_topics AS t USING (query_id)
    WHERE q.gain > 0
),
ideal AS (
    SELECT query_id, sum(gain / log2(ideal_rank + 1) ORDER BY ideal_rank) AS idcg
    FROM ideal_ranks
    WHERE $k IS NULL OR ideal_rank <= $k
    GROUP BY query_id
)
SELECT
    p.run_id,
    p.query_id,
    coalesce(g.dcg / i.idcg, 0.0) AS value
FROM ev_pairs AS p
LEFT JOIN gains AS g USING (run_id, query_id)
LEFT JOIN ideal AS i USING (query_id)
ORDER BY p.run_id, p.query_id;
