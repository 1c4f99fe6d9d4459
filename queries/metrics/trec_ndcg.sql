-- name: trec_ndcg
-- description: trec_eval's ndcg with a gain map: dcg over ideal_dcg of the whole list (0 when the ideal is 0).
-- params: gains VARCHAR = NULL
-- trec_eval: ndcg
-- kind: performance
-- reference: trec_eval m_ndcg.c
-- Without gains it equals nDCG. gains as in dcg.sql ("1=3,2=9,4=4.5"); a gain may be 0 or
-- negative, and negative gains of retrieved documents lower the dcg.
WITH gain_map AS (
    -- the gains given as "level=gain,..." (trec_eval's syntax); other entries (p=0.5) are ignored
    SELECT TRY_CAST(split_part(pair, '=', 1) AS BIGINT) AS level,
           any_value(coalesce(TRY_CAST(trim(split_part(pair, '=', 2)) AS DOUBLE), 0.0)) AS gain
    FROM (SELECT unnest(string_split(coalesce($gains, ''), ',')) AS pair)
    WHERE regexp_matches(split_part(pair, '=', 1), '^[+-]?[0-9]+$')
    GROUP BY 1
),
judged AS (
    -- each judged document retrieved with its gain: the mapped gain of its grade, else the
    -- grade (trec_eval reads a grade as an integer: a fractional one is truncated)
    SELECT j.run_id, j.query_id, j.rank, coalesce(m.gain, trunc(j.gain)) AS gain
    FROM ev_judged AS j
    LEFT JOIN gain_map AS m ON m.level = trunc(j.gain)
),
ideal AS (
    -- the ideal list: every judged document of the topic with a positive gain, best first
    SELECT
        q.query_id,
        coalesce(m.gain, trunc(q.gain)) AS gain,
        row_number() OVER (PARTITION BY q.query_id ORDER BY coalesce(m.gain, trunc(q.gain)) DESC) AS pos
    FROM ev_qrels AS q
    SEMI JOIN ev_topics AS t USING (query_id)
    LEFT JOIN gain_map AS m ON m.level = trunc(q.gain)
    WHERE coalesce(m.gain, trunc(q.gain)) > 0
),
gains_sum AS (
    SELECT run_id, query_id, sum(gain / log2(rank + 1) ORDER BY rank) AS dcg
    FROM judged
    WHERE gain <> 0
    GROUP BY run_id, query_id
),
ideal_sum AS (
    SELECT query_id, sum(gain / log2(pos + 1) ORDER BY pos) AS idcg
    FROM ideal
    GROUP BY query_id
)
SELECT
    p.run_id,
    p.query_id,
    CASE WHEN coalesce(i.idcg, 0) > 0 THEN coalesce(g.dcg, 0.0) / i.idcg ELSE 0.0 END AS value
FROM ev_pairs AS p
LEFT JOIN gains_sum AS g USING (run_id, query_id)
LEFT JOIN ideal_sum AS i USING (query_id)
ORDER BY p.run_id, p.query_id;
