-- name: bounds_aggregates
-- description: Both aggregations across topics in one pass over the cells: one row per (run, depth) with the mean of each per-topic value and the log commonalities that Dempster's rule of combination needs.
-- params:
-- reference: methods §7.3 [decision]; S3
-- The per-topic cells (bd_topics, a view) are streamed into this one GROUP BY and never
-- stored, whichever aggregations were asked.
-- Mean masses: m̄(B) = mean over the topics of T of m_t(B); for precision this is
-- [mean P@d, mean P@d + mean U@d]. The default for plots: unlike Dempster's rule it does
-- not collapse m(Theta) towards 0 as topics accumulate. For scenario families the masses
-- are NULL and only the mean lower and upper values are meaningful.
-- Dempster: on Theta = {R, N} the unnormalised rule multiplies commonalities, Q(A) = sum of
-- m(B) over B containing A: Q({R}) = prod_t Pl_t({R}), Q({N}) = prod_t Pl_t({N}),
-- Q(Theta) = prod_t m_t(Theta). Products of 50+ numbers below 1 underflow, so they are kept
-- as logarithms; a zero factor (ln 0) is carried as a count instead. evalwh.methods.bounds turns
-- these into normalised masses and the conflict K. certain_rel / certain_nonrel name one
-- topic with m({R}) = 1 / m({N}) = 1, the witnesses of a total conflict (the first by
-- list_id, which orders topics by name within a run).
WITH per_run AS (
    SELECT
        run_no,
        depth,
        avg(lower) AS lower,
        avg(upper) AS upper,
        avg(m_rel) AS m_rel,
        avg(m_nonrel) AS m_nonrel,
        avg(m_theta) AS m_theta,
        CAST(count(*) AS INTEGER) AS n_topics,
        sum(ln(m_rel + m_theta)) FILTER (WHERE m_rel + m_theta > 0) AS log_q_rel,
        count(*) FILTER (WHERE m_rel + m_theta <= 0) AS zero_q_rel,
        sum(ln(m_nonrel + m_theta)) FILTER (WHERE m_nonrel + m_theta > 0) AS log_q_nonrel,
        count(*) FILTER (WHERE m_nonrel + m_theta <= 0) AS zero_q_nonrel,
        sum(ln(m_theta)) FILTER (WHERE m_theta > 0) AS log_q_theta,
        count(*) FILTER (WHERE m_theta <= 0) AS zero_q_theta,
        min(list_id) FILTER (WHERE m_rel >= 1) AS certain_rel,
        min(list_id) FILTER (WHERE m_nonrel >= 1) AS certain_nonrel
    FROM bd_topics
    GROUP BY run_no, depth
),
runs AS (
    SELECT DISTINCT run_no, run_id
    FROM bd_lists
)
SELECT
    r.run_id,
    a.depth,
    a.lower,
    a.upper,
    a.m_rel,
    a.m_nonrel,
    a.m_theta,
    a.n_topics,
    a.log_q_rel,
    a.zero_q_rel,
    a.log_q_nonrel,
    a.zero_q_nonrel,
    a.log_q_theta,
    a.zero_q_theta,
    rel.query_id AS certain_rel,
    nonrel.query_id AS certain_nonrel
FROM per_run AS a
JOIN runs AS r USING (run_no)
LEFT JOIN bd_lists AS rel ON rel.list_id = a.certain_rel
LEFT JOIN bd_lists AS nonrel ON nonrel.list_id = a.certain_nonrel
ORDER BY r.run_id, a.depth;
