-- name: trec_rbp
-- description: trec_eval 10's rbp: (1 - p) times the sum of gain · p^(rank - 1), gains rescaled to [0, 1] by (g - min) / (max - min) when some gain lies outside it.
-- params: p DOUBLE = 0.9 (0 < p < 1), gains VARCHAR = NULL
-- trec_eval: rbp
-- kind: performance
-- reference: Moffat & Zobel, TOIS 2008; trec_eval m_rbp.c (10.0)
-- The gains are the topic's grades 0..max (each its own value unless the gain map, in
-- trec_eval's syntax "2=1,3=1", says otherwise) and every mapped grade; min and max run over
-- them all. So on binary qrels it is RBP(p=0.9); with grades 0, 1, 2 a grade g weighs g / 2,
-- and with a negative grade in the map even grade 0 gains weight. Unjudged documents weigh 0.
-- (trec_eval 10.0 starts min and max uninitialised; on the platforms tested they act as if
-- started at 0, which is what this file does: see docs/trec_eval.md.)
WITH gain_map AS (
    SELECT TRY_CAST(split_part(pair, '=', 1) AS BIGINT) AS level,
           any_value(coalesce(TRY_CAST(trim(split_part(pair, '=', 2)) AS DOUBLE), 0.0)) AS gain
    FROM (SELECT unnest(string_split(coalesce($gains, ''), ',')) AS pair)
    WHERE regexp_matches(split_part(pair, '=', 1), '^[+-]?[0-9]+$')
    GROUP BY 1
),
top_levels AS (
    SELECT q.query_id, max(trunc(q.gain)) AS top_level
    FROM ev_qrels AS q
    SEMI JOIN ev_topics AS t USING (query_id)
    GROUP BY q.query_id
),
grades AS (
    -- grades 0..top of the topic, one row each
    SELECT query_id, unnest(generate_series(0, CAST(top_level AS BIGINT))) AS level
    FROM top_levels
),
levels AS (
    -- every gain of the topic: grades 0..top (mapped or not) and every mapped grade
    SELECT g.query_id, g.level, coalesce(m.gain, g.level) AS gain
    FROM grades AS g
    LEFT JOIN gain_map AS m ON m.level = g.level
    UNION
    SELECT t.query_id, m.level, m.gain
    FROM ev_topics AS t
    CROSS JOIN gain_map AS m
),
bounds AS (
    SELECT query_id, least(min(gain), 0.0) AS low, greatest(max(gain), 0.0) AS high
    FROM levels
    GROUP BY query_id
),
scaled AS (
    SELECT
        l.query_id,
        l.level,
        CASE WHEN b.low < 0 OR b.high > 1 THEN (l.gain - b.low) / (b.high - b.low) ELSE l.gain END AS gain
    FROM levels AS l
    JOIN bounds AS b USING (query_id)
),
weights AS (
    SELECT j.run_id, j.query_id, sum(s.gain * pow($p, j.rank - 1) ORDER BY j.rank) AS weight
    FROM ev_judged AS j
    JOIN scaled AS s ON s.query_id = j.query_id AND s.level = trunc(j.gain)
    WHERE s.gain <> 0
    GROUP BY j.run_id, j.query_id
)
SELECT
    p.run_id,
    p.query_id,
    (1 - $p) * coalesce(w.weight, 0.0) AS value
FROM ev_pairs AS p
LEFT JOIN weights AS w USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
