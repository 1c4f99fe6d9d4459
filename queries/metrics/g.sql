-- name: G
-- description: trec_eval's G: each retrieved document with a non-zero gain scores gain / log2(2 + cost - gain so far), cost = the ideal gains so far (each at least 1, 1 past the ideal list); summed over the ideal gains.
-- params: gains VARCHAR = NULL
-- trec_eval: G
-- kind: performance
-- reference: trec_eval m_G.c (experimental); binG is its binary case
-- gains as in dcg.sql. 0 when no judged document has a positive gain.
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
        sum(greatest(gain, 1.0)) OVER (PARTITION BY query_id ORDER BY pos ROWS UNBOUNDED PRECEDING) AS cost,
        count(*) OVER (PARTITION BY query_id) AS ideal_length,
        sum(gain) OVER (
            PARTITION BY query_id ORDER BY pos ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING
        ) AS ideal_gain
    FROM ideal
),
ideal_total AS (
    SELECT query_id, any_value(ideal_length) AS ideal_length, any_value(ideal_gain) AS ideal_gain
    FROM ideal_prefix
    GROUP BY query_id
),
running AS (
    SELECT
        run_id,
        query_id,
        rank,
        gain,
        sum(gain) OVER (PARTITION BY run_id, query_id ORDER BY rank ROWS UNBOUNDED PRECEDING) AS gain_so_far
    FROM judged
    WHERE gain <> 0
),
terms AS (
    SELECT
        r.run_id,
        r.query_id,
        sum(
            r.gain / log2(
                2 + coalesce(i.cost, 0.0) + greatest(r.rank - coalesce(t.ideal_length, 0), 0) - r.gain_so_far
            )
            ORDER BY r.rank
        ) AS term_sum
    FROM running AS r
    LEFT JOIN ideal_total AS t USING (query_id)
    LEFT JOIN ideal_prefix AS i ON i.query_id = r.query_id AND i.pos = least(r.rank, t.ideal_length)
    GROUP BY r.run_id, r.query_id
)
SELECT
    p.run_id,
    p.query_id,
    CASE WHEN coalesce(t.ideal_gain, 0) > 0 THEN coalesce(s.term_sum, 0.0) / t.ideal_gain ELSE 0.0 END AS value
FROM ev_pairs AS p
LEFT JOIN ideal_total AS t USING (query_id)
LEFT JOIN terms AS s USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
