-- name: nDCG_gains
-- description: nDCG to depth k (whole list without k) with a gain map (gains={grade:gain}) or exponential gain 2^g - 1 (dcg=exp-log2); discount log2(rank + 1).
-- params: k INTEGER = NULL, dcg VARCHAR = log2 [log2|exp-log2], gains GAINS = NULL
-- kind: performance
-- reference: Järvelin & Kekäläinen, TOIS 2002; Burges et al., ICML 2005 (exp-log2); methods §1.4; trec_eval m_ndcg.c, m_ndcg_cut.c (>= 9.0.4)
-- nDCG(dcg=..., gains=...) resolves here (evalwh.measures.catalog): nDCG.sql stays the plain, portable
-- query. Gain is the grade itself (not 2^g - 1 unless dcg=exp-log2), a fractional grade as given,
-- and ignores the relevance threshold. gains={0:0,1:1,2:3} maps grades to gains as trec_eval's
-- ndcg.0=0,1=1,2=3 does (an unlisted grade keeps its value); a mapped gain may be negative and
-- then lowers the DCG, as in trec_eval. Unjudged documents and negative grades give 0. The
-- ideal list holds every judged document of the topic with a positive gain, sorted by gain,
-- cut at k; nDCG is 0 when the ideal gain is 0.
WITH judged_gains AS (
    SELECT
        run_id,
        query_id,
        rank,
        CASE WHEN $gains IS NULL THEN gain ELSE coalesce(CAST($gains AS MAP(DOUBLE, DOUBLE))[gain], gain) END AS g
    FROM ev_judged
    -- without a gain map only positive grades gain (and the scan skips the others)
    WHERE (gain > 0 OR $gains IS NOT NULL) AND ($k IS NULL OR rank <= $k)
),
gains AS (
    SELECT
        run_id,
        query_id,
        sum(CASE WHEN $dcg = 'exp-log2' THEN pow(2, g) - 1 ELSE g END / log2(rank + 1) ORDER BY rank) AS dcg
    FROM judged_gains
    WHERE g <> 0
    GROUP BY run_id, query_id
),
ideal_ranks AS (
    SELECT
        q.query_id,
        q.g,
        row_number() OVER (PARTITION BY q.query_id ORDER BY q.g DESC) AS ideal_rank
    FROM (
        SELECT query_id, CASE WHEN $gains IS NULL THEN gain ELSE coalesce(CAST($gains AS MAP(DOUBLE, DOUBLE))[gain], gain) END AS g
        FROM ev_qrels
    ) AS q
    SEMI JOIN ev_topics AS t USING (query_id)
    WHERE q.g > 0
),
ideal AS (
    SELECT
        query_id,
        sum(CASE WHEN $dcg = 'exp-log2' THEN pow(2, g) - 1 ELSE g END / log2(ideal_rank + 1) ORDER BY ideal_rank) AS idcg
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
