-- name: Compat
-- description: Compatibility: rank-biased overlap (persistence p) of the ranking with an ideal ranking of the topic's documents with grade > 0, normalised by the ideal's own overlap.
-- params: p DOUBLE = 0.95 (0 < p < 1), normalize BOOLEAN = true
-- kind: performance
-- range: 0, 1
-- reference: Clarke, Vtyurina & Smucker, TOIS 2021; ir_measures' compat provider
-- RBO to depth D = max(m, |I|), I the ideal ranking (grade descending; among equal grades the
-- retrieved documents in the run's order, then the others): with X_i = |I[:i] ∩ run[:i]|,
-- RBO = sum_{i <= D} p^(i-1) X_i / i, divided by sum_{i <= D} p^(i-1). A document at run
-- rank b and ideal rank a is in X_i for every i >= max(a, b), so the sum runs over the
-- retrieved documents of grade > 0, each adding S(D) - S(max(a, b) - 1), S(n) =
-- sum_{i <= n} p^(i-1) / i. normalize divides by the ideal ranking's RBO with itself. The
-- grade (fractional as given) only orders the ideal ranking; the threshold plays no part.
WITH relevant AS (
    -- the topic's documents in the ideal ranking
    SELECT q.query_id, q.gain
    FROM ev_qrels AS q
    SEMI JOIN ev_topics AS t USING (query_id)
    WHERE q.gain > 0
),
grades AS (
    -- per grade, the documents of higher grade (ahead of it in the ideal ranking)
    SELECT
        query_id,
        gain,
        coalesce(
            sum(count(*)) OVER (PARTITION BY query_id ORDER BY gain DESC ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
            0
        ) AS ahead
    FROM relevant
    GROUP BY query_id, gain
),
sizes AS (
    SELECT query_id, count(*) AS n_ideal
    FROM relevant
    GROUP BY query_id
),
depths AS (
    SELECT p.run_id, p.query_id, coalesce(s.n_ideal, 0) AS n_ideal, greatest(p.num_ret, coalesce(s.n_ideal, 0)) AS depth
    FROM ev_pairs AS p
    LEFT JOIN sizes AS s USING (query_id)
),
series AS (
    -- S(n) and W(n) = sum_{i <= n} p^(i-1), for n up to the deepest D
    SELECT
        i AS n,
        sum(pow($p, i - 1) / i) OVER (ORDER BY i ROWS UNBOUNDED PRECEDING) AS s,
        sum(pow($p, i - 1)) OVER (ORDER BY i ROWS UNBOUNDED PRECEDING) AS w
    FROM (SELECT unnest(generate_series(0, (SELECT coalesce(max(depth), 0) FROM depths))) AS i) AS positions
    WHERE i > 0
    UNION ALL
    SELECT 0, 0.0, 0.0
),
placed AS (
    -- each retrieved document of grade > 0: its run rank and its ideal rank
    SELECT
        j.run_id,
        j.query_id,
        j.rank,
        g.ahead + row_number() OVER (PARTITION BY j.run_id, j.query_id, j.gain ORDER BY j.rank) AS ideal_rank
    FROM ev_judged AS j
    JOIN grades AS g USING (query_id, gain)
),
overlap AS (
    SELECT pl.run_id, pl.query_id, sum(d_s.s - m_s.s ORDER BY pl.rank) AS rbo_sum
    FROM placed AS pl
    JOIN depths AS d USING (run_id, query_id)
    JOIN series AS d_s ON d_s.n = d.depth
    JOIN series AS m_s ON m_s.n = greatest(pl.rank, pl.ideal_rank) - 1
    GROUP BY pl.run_id, pl.query_id
)
SELECT
    d.run_id,
    d.query_id,
    CASE
        WHEN d.depth = 0 OR d.n_ideal = 0 THEN 0.0
        WHEN $normalize THEN coalesce(o.rbo_sum, 0.0) / (r_w.w + d.n_ideal * (d_s.s - r_s.s))
        ELSE coalesce(o.rbo_sum, 0.0) / d_s.w
    END AS value
FROM depths AS d
JOIN series AS d_s ON d_s.n = d.depth
JOIN series AS r_s ON r_s.n = d.n_ideal
JOIN series AS r_w ON r_w.n = d.n_ideal
LEFT JOIN overlap AS o USING (run_id, query_id)
ORDER BY d.run_id, d.query_id;
