-- name: RBP
-- description: Rank-biased precision, the base value: (1 - p) times the sum of gain · p^(rank - 1) over the documents within depth k; gain 1 for a relevant document (gain=binary), or a graded gain (gain=max, gain=trec_eval).
-- params: p DOUBLE = 0.8, k INTEGER = NULL, gain VARCHAR = binary [binary|max|trec_eval]
-- trec_eval: rbp
-- kind: performance
-- reference: Moffat & Zobel, TOIS 2008; methods §1.5; trec_eval m_rbp.c (10.0) for gain=trec_eval
-- Unjudged documents contribute nothing here: the base is the lower end of the interval
-- [RBP, RBP_upper] that holds the value of every completion of the judgments. The gain of a
-- judged document:
--   binary     1 if grade >= the threshold (rel), else 0 (evalwh's default; ir_measures' RBP(rel=...))
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
                WHEN 'binary' THEN CASE WHEN j.is_rel THEN 1.0 ELSE 0.0 END
                WHEN 'max' THEN j.gain / s.qrels_max
                ELSE CASE WHEN s.topic_max > 1 THEN j.gain / s.topic_max ELSE j.gain END
            END
        ) AS weight
    FROM ev_judged AS j
    LEFT JOIN scales AS s ON $gain <> 'binary' AND s.query_id = j.query_id
    WHERE (CASE WHEN $gain = 'binary' THEN j.is_rel ELSE j.gain > 0 END) AND ($k IS NULL OR j.rank <= $k)
    GROUP BY j.run_id, j.query_id
)
SELECT
    p.run_id,
    p.query_id,
    (1 - $p) * coalesce(w.weight, 0.0) AS value
FROM ev_pairs AS p
LEFT JOIN weights AS w USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
