-- name: bounds_mean
-- description: Mean-mass aggregation across topics: one row per (run, depth) with the mean of each per-topic mass and bound.
-- params:
-- reference: methods §7.3 [decision]
-- m̄(B) = mean over the topics of T of m_t(B); for precision this is [mean P@d, mean P@d +
-- mean U@d]. The default for plots: unlike Dempster's rule it does not collapse m(Theta)
-- towards 0 as topics accumulate. For scenario families the masses are NULL and only the
-- mean lower and upper values are meaningful.
SELECT
    run_id,
    depth,
    avg(lower) AS lower,
    avg(upper) AS upper,
    avg(m_rel) AS m_rel,
    avg(m_nonrel) AS m_nonrel,
    avg(m_theta) AS m_theta,
    CAST(count(*) AS INTEGER) AS n_topics
FROM ref_topics
GROUP BY run_id, depth
ORDER BY run_id, depth;
