-- name: RBP
-- description: Rank-biased precision, the base value: (1 - p) times the sum of p^(rank - 1) over relevant documents within depth k.
-- params: p DOUBLE = 0.8 (0 < p < 1), k INTEGER = NULL
-- trec_eval: rbp
-- kind: performance
-- range: 0, 1
-- reference: Moffat & Zobel, TOIS 2008; methods §1.5
-- Unjudged documents contribute nothing here: the base is the lower end of the interval
-- [RBP, RBP_upper] that holds the value of every completion of the judgments. Binary
-- relevance (grade >= threshold); trec_eval's rbp (p = 0.9 there) rescales graded gains.
WITH weights AS (
    SELECT run_id, query_id, sum(pow($p, rank - 1) ORDER BY rank) AS weight
    FROM ev_judged
    WHERE is_rel AND ($k IS NULL OR rank <= $k)
    GROUP BY run_id, query_id
)
SELECT
    p.run_id,
    p.query_id,
    (1 - $p) * coalesce(w.weight, 0.0) AS value
FROM ev_pairs AS p
LEFT JOIN weights AS w USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
