-- name: contributions
-- description: One row per member run or participant group: documents it pooled, and those (and the relevant ones) no other run or group pooled.
-- params: collection_id VARCHAR, qrels_id VARCHAR, depth INTEGER, rel INTEGER, runs VARCHAR[], by_group BOOLEAN
-- Unique contributions (methods §5.2): U_lambda(s, S, t) = top_lambda(s, t) minus
-- Pool_lambda(S \ {s}, t), a document is unique to s when s is the only member with it in its
-- top lambda. With $by_group the unit is the participant group (Zobel 1998):
-- U_lambda(G) = Pool_lambda(G) minus Pool_lambda(S \ G); a run without a group (no run
-- metadata) is its own group, named by its run id. A run is a one-run unit, so both are one
-- query. Relevance (grade >= $rel) comes from the qrels set $qrels_id; only topics of that
-- set count. The caller keeps run_id (the unit) and group_name per run, or group_name and
-- runs per group.
WITH members AS (
    SELECT
        run_id,
        group_name,
        CASE WHEN $by_group THEN coalesce(group_name, run_id) ELSE run_id END AS unit
    FROM runs
    WHERE collection_id = $collection_id AND list_contains($runs, run_id)
),
units AS (
    -- per group, group_name is the unit itself (a run without a group stands for one)
    SELECT
        unit,
        CASE WHEN $by_group THEN unit ELSE any_value(group_name) END AS group_name,
        count(*) AS runs
    FROM members
    GROUP BY unit
),
tops AS (
    -- a unit's top-lambda documents; a document two runs of one group have counts once
    SELECT DISTINCT m.unit, r.query_id, r.doc_id
    FROM run_results AS r
    JOIN members AS m USING (run_id)
    SEMI JOIN (
        SELECT DISTINCT query_id FROM qrels
        WHERE collection_id = $collection_id AND qrels_id = $qrels_id
    ) AS t USING (query_id)
    WHERE r.collection_id = $collection_id AND r.rank <= $depth
),
contributors AS (
    SELECT query_id, doc_id, count(*) AS n_units
    FROM tops
    GROUP BY query_id, doc_id
),
relevant AS (
    SELECT query_id, doc_id
    FROM qrels
    WHERE collection_id = $collection_id AND qrels_id = $qrels_id AND relevance >= $rel
)
SELECT
    u.unit,
    u.group_name,
    u.runs,
    count(t.doc_id) AS pooled_docs,
    count(*) FILTER (WHERE rl.doc_id IS NOT NULL) AS pooled_relevant,
    count(*) FILTER (WHERE c.n_units = 1) AS unique_docs,
    count(*) FILTER (WHERE c.n_units = 1 AND rl.doc_id IS NOT NULL) AS unique_relevant,
    count(DISTINCT t.query_id) FILTER (WHERE c.n_units = 1) AS topics_with_unique
FROM units AS u
LEFT JOIN tops AS t USING (unit)
LEFT JOIN contributors AS c USING (query_id, doc_id)
LEFT JOIN relevant AS rl USING (query_id, doc_id)
GROUP BY u.unit, u.group_name, u.runs
ORDER BY unique_relevant DESC, unique_docs DESC, u.unit;
