-- name: contributions_groups
-- description: One row per participant group: documents its member runs pooled, and those (and the relevant ones) no other group pooled.
-- params: collection_id VARCHAR, qrels_id VARCHAR, depth INTEGER, rel INTEGER, runs VARCHAR[]
-- The group variant of unique contributions (Zobel 1998; methods §5.2):
-- U_lambda(G) = Pool_lambda(G) minus Pool_lambda(S \ G). A run without a group (no run
-- metadata) is its own group, named by its run id.
WITH tops AS (
    SELECT DISTINCT coalesce(ru.group_name, r.run_id) AS group_name, r.query_id, r.doc_id
    FROM run_results AS r
    JOIN runs AS ru USING (collection_id, run_id)
    SEMI JOIN (
        SELECT DISTINCT query_id FROM qrels
        WHERE collection_id = $collection_id AND qrels_id = $qrels_id
    ) AS t USING (query_id)
    WHERE r.collection_id = $collection_id
      AND list_contains($runs, r.run_id)
      AND r.rank <= $depth
),
contributors AS (
    SELECT query_id, doc_id, count(*) AS n_groups
    FROM tops
    GROUP BY query_id, doc_id
),
relevant AS (
    SELECT query_id, doc_id
    FROM qrels
    WHERE collection_id = $collection_id AND qrels_id = $qrels_id AND relevance >= $rel
),
members AS (
    SELECT coalesce(group_name, run_id) AS group_name, count(*) AS runs
    FROM runs
    WHERE collection_id = $collection_id AND list_contains($runs, run_id)
    GROUP BY ALL
)
SELECT
    m.group_name,
    any_value(m.runs) AS runs,
    count(t.doc_id) AS pooled_docs,
    count(*) FILTER (WHERE rl.doc_id IS NOT NULL) AS pooled_relevant,
    count(*) FILTER (WHERE c.n_groups = 1) AS unique_docs,
    count(*) FILTER (WHERE c.n_groups = 1 AND rl.doc_id IS NOT NULL) AS unique_relevant,
    count(DISTINCT t.query_id) FILTER (WHERE c.n_groups = 1) AS topics_with_unique
FROM members AS m
LEFT JOIN tops AS t USING (group_name)
LEFT JOIN contributors AS c USING (query_id, doc_id)
LEFT JOIN relevant AS rl USING (query_id, doc_id)
GROUP BY m.group_name
ORDER BY unique_relevant DESC, unique_docs DESC, m.group_name;
