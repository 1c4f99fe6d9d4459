-- name: bounds_topics
-- description: The per-topic bands, one row per (run, topic, depth).
-- params:
SELECT l.run_id, l.query_id, t.depth, t.lower, t.upper, t.m_rel, t.m_nonrel, t.m_theta
FROM bd_topics AS t
JOIN bd_lists AS l USING (list_id)
ORDER BY l.run_id, l.query_id, t.depth;
