-- name: bounds_dempster
-- description: Log commonalities per (run, depth): the products over topics that Dempster's rule of combination needs, as sums of logarithms.
-- params:
-- reference: methods §7.3; S3
-- On Theta = {R, N} the unnormalised rule multiplies commonalities, Q(A) = sum of m(B) over
-- B containing A: Q({R}) = prod_t Pl_t({R}), Q({N}) = prod_t Pl_t({N}),
-- Q(Theta) = prod_t m_t(Theta). Products of 50+ numbers below 1 underflow, so they are kept
-- as logarithms; a zero factor (ln 0) is carried as a count instead. evalwh.methods.bounds turns
-- these into normalised masses and the conflict K. certain_rel / certain_nonrel name one
-- topic with m({R}) = 1 / m({N}) = 1, the witnesses of a total conflict.
SELECT
    run_id,
    depth,
    sum(ln(m_rel + m_theta)) FILTER (WHERE m_rel + m_theta > 0) AS log_q_rel,
    count(*) FILTER (WHERE m_rel + m_theta <= 0) AS zero_q_rel,
    sum(ln(m_nonrel + m_theta)) FILTER (WHERE m_nonrel + m_theta > 0) AS log_q_nonrel,
    count(*) FILTER (WHERE m_nonrel + m_theta <= 0) AS zero_q_nonrel,
    sum(ln(m_theta)) FILTER (WHERE m_theta > 0) AS log_q_theta,
    count(*) FILTER (WHERE m_theta <= 0) AS zero_q_theta,
    CAST(count(*) AS INTEGER) AS n_topics,
    min(query_id) FILTER (WHERE m_rel >= 1) AS certain_rel,
    min(query_id) FILTER (WHERE m_nonrel >= 1) AS certain_nonrel
FROM ref_topics
GROUP BY run_id, depth
ORDER BY run_id, depth;
