-- name: RBP_graded
-- description: Graded rank-biased precision: (1 - p) times the sum of gain · p^(rank - 1) over the judged documents within depth k, gain = grade / the highest grade (gain=max) or trec_eval 10's rescaling (gain=trec_eval).
-- params: p DOUBLE = 0.8 (0 < p < 1), k INTEGER = NULL, gain VARCHAR = max [max|trec_eval]
-- kind: performance
-- reference: Moffat & Zobel, TOIS 2008; methods §1.5; trec_eval m_rbp.c (10.0) for gain=trec_eval
-- RBP(gain=...) resolves here (evalwh.measures.catalog); RBP itself is binary (grade >= rel). Unjudged
-- documents contribute nothing. The gain of a judged document:
--   max        grade / the highest grade of the qrels set: graded RBP as published graded
--              leaderboards compute it (a fractional grade as given; the threshold plays no part)
--   trec_eval  trec_eval 10's normalisation as intended: grade / the highest grade of the topic
--              when that exceeds 1, else the grade itself (trec_eval's rbp, p = 0.9 there, also
--              truncates fractional grades and starts its min and max uninitialised: its own
--              measure, trec_rbp, copies that; this one does not)
WITH scales AS (
    SELECT query_id, max(gain) AS topic_max, max(max(gain)) OVER () AS qrels_max
    FROM ev_qrels
    GROUP BY query_id
),
weights AS (
    SELECT
        j.run_id,
        j.query_id,
        sum(
            pow($p, j.rank - 1) * CASE $gain
                WHEN 'max' THEN j.gain / s.qrels_max
                ELSE CASE WHEN s.topic_max > 1 THEN j.gain / s.topic_max ELSE j.gain END
            END
            ORDER BY j.rank
        ) AS weight
    FROM ev_judged AS j
    JOIN scales AS s USING (query_id)
    WHERE j.gain > 0 AND ($k IS NULL OR j.rank <= $k)
    GROUP BY j.run_id, j.query_id
)
SELECT
    p.run_id,
    p.query_id,
    (1 - $p) * coalesce(w.weight, 0.0) AS value
FROM ev_pairs AS p
LEFT JOIN weights AS w USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
