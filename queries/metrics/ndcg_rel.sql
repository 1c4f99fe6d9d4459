-- name: ndcg_rel
-- description: nDCG averaged over the relevant documents (gain > 0): at each one retrieved, dcg to its rank over the ideal dcg to the same depth (at most the ideal's length); each one missed scores the whole list's nDCG.
-- params: gains VARCHAR = NULL
-- trec_eval: ndcg_rel
-- kind: performance
-- reference: trec_eval m_ndcg_rel.c (experimental)
-- L = the ideal list's length (judged documents with a positive gain). 0 when L = 0.
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
running AS (
    SELECT
        run_id,
        query_id,
        rank,
        gain,
        sum(gain / log2(rank + 1)) OVER (
            PARTITION BY run_id, query_id ORDER BY rank ROWS UNBOUNDED PRECEDING
        ) AS dcg
    FROM judged
    WHERE gain <> 0
),
ideal_prefix AS (
    SELECT
        query_id,
        pos,
        sum(gain / log2(pos + 1)) OVER (PARTITION BY query_id ORDER BY pos ROWS UNBOUNDED PRECEDING) AS idcg,
        count(*) OVER (PARTITION BY query_id) AS ideal_length
    FROM ideal
),
ideal_total AS (
    SELECT query_id, pos AS ideal_length, idcg
    FROM ideal_prefix
    WHERE pos = ideal_length
),
at_relevant AS (
    -- dcg / ideal dcg at each retrieved document with a positive gain
    SELECT r.run_id, r.query_id, sum(r.dcg / i.idcg ORDER BY r.rank) AS ratio_sum, count(*) AS found
    FROM running AS r
    JOIN ideal_total AS t USING (query_id)
    JOIN ideal_prefix AS i ON i.query_id = r.query_id AND i.pos = least(r.rank, t.ideal_length)
    WHERE r.gain > 0
    GROUP BY r.run_id, r.query_id
),
whole AS (
    SELECT run_id, query_id, sum(gain / log2(rank + 1) ORDER BY rank) AS dcg
    FROM judged
    WHERE gain <> 0
    GROUP BY run_id, query_id
),
sums AS (
    SELECT
        p.run_id,
        p.query_id,
        t.ideal_length,
        coalesce(a.ratio_sum, 0.0)
            + (t.ideal_length - coalesce(a.found, 0)) * coalesce(w.dcg, 0.0) / t.idcg AS total
    FROM ev_pairs AS p
    JOIN ideal_total AS t USING (query_id)
    LEFT JOIN at_relevant AS a USING (run_id, query_id)
    LEFT JOIN whole AS w USING (run_id, query_id)
)
SELECT
    p.run_id,
    p.query_id,
    CASE WHEN s.total > 0 THEN s.total / s.ideal_length ELSE 0.0 END AS value
FROM ev_pairs AS p
LEFT JOIN sums AS s USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
