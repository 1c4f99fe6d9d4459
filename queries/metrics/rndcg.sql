-- name: Rndcg
-- description: nDCG averaged at the R levels: the depths where the ideal list's gain changes (the ends of its gain levels), plus the list's end when it runs more than one past the ideal list.
-- params: gains VARCHAR = NULL
-- trec_eval: Rndcg
-- kind: performance
-- reference: trec_eval m_Rndcg.c (experimental)
-- With gain levels g1 > g2 > ... > gn > 0 ending at depths b1 < ... < bn = L (L = ideal
-- length), Rndcg = mean over j of dcg(bj) / ideal dcg(bj), where dcg(d) sums the run's gains
-- to depth d; a list of m >= L + 2 documents adds dcg(m) / ideal dcg(L) (trec_eval counts
-- this last point only then). 0 for a topic with R = 0; undefined (NULL) when no grade has
-- a positive gain.
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
ideal_prefix AS (
    SELECT
        query_id,
        pos,
        gain,
        sum(gain / log2(pos + 1)) OVER (PARTITION BY query_id ORDER BY pos ROWS UNBOUNDED PRECEDING) AS idcg
    FROM ideal
),
boundaries AS (
    -- the last position of each gain level
    SELECT query_id, max(pos) AS depth, arg_max(idcg, pos) AS idcg
    FROM ideal_prefix
    GROUP BY query_id, gain
),
ideal_total AS (
    SELECT query_id, max(depth) AS ideal_length, arg_max(idcg, depth) AS idcg, count(*) AS levels
    FROM boundaries
    GROUP BY query_id
),
dcg_at AS (
    -- the run's dcg to each boundary depth
    SELECT j.run_id, j.query_id, b.depth, sum(j.gain / log2(j.rank + 1) ORDER BY j.rank) AS dcg
    FROM judged AS j
    JOIN boundaries AS b ON b.query_id = j.query_id AND j.rank <= b.depth
    WHERE j.gain <> 0
    GROUP BY j.run_id, j.query_id, b.depth
),
at_boundaries AS (
    SELECT p.run_id, p.query_id, sum(coalesce(d.dcg, 0.0) / b.idcg ORDER BY b.depth) AS ratio_sum
    FROM ev_pairs AS p
    JOIN boundaries AS b USING (query_id)
    LEFT JOIN dcg_at AS d ON d.run_id = p.run_id AND d.query_id = p.query_id AND d.depth = b.depth
    GROUP BY p.run_id, p.query_id
),
whole AS (
    SELECT run_id, query_id, sum(gain / log2(rank + 1) ORDER BY rank) AS dcg
    FROM judged
    WHERE gain <> 0
    GROUP BY run_id, query_id
)
SELECT
    p.run_id,
    p.query_id,
    CASE
        WHEN p.num_rel = 0 THEN 0.0
        WHEN t.levels IS NULL THEN NULL
        WHEN p.num_ret >= t.ideal_length + 2
            THEN (a.ratio_sum + coalesce(w.dcg, 0.0) / t.idcg) / (t.levels + 1)
        ELSE a.ratio_sum / t.levels
    END AS value
FROM ev_pairs AS p
LEFT JOIN ideal_total AS t USING (query_id)
LEFT JOIN at_boundaries AS a USING (run_id, query_id)
LEFT JOIN whole AS w USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
