-- name: contributions_runs
-- description: One row per member run: documents in its top lambda, and those (and the relevant ones) that only it brought into the pool.
-- params: collection_id VARCHAR, qrels_id VARCHAR, depth INTEGER, rel INTEGER, runs VARCHAR[]
-- U_lambda(s, S, t) = top_lambda(s, t) minus Pool_lambda(S \ {s}, t) (methods §5.2): a document
-- is unique to s when s is the only member with it in its top lambda. Relevance (grade >= $rel)
-- comes from the qrels set $qrels_id; only topics of that set count.
WITH tops AS (
    SELECT r.run_id, r.query_id, r.doc_id
    FROM run_results AS r
    SEMI JOIN (
        SELECT DISTINCT query_id FROM qrels
        WHERE collection_id = $collection_id AND qrels_id = $qrels_id
    ) AS t USING (query_id)
    WHERE r.collection_id = $collection_id
      AND list_contains($runs, r.run_id)
      AND r.rank <= $depth
),
contributors AS (
    SELECT query_id, doc_id, count(*) AS n_runs
    FROM tops
    GROUP BY query_id, doc_id
),
relevant AS (
    SELECT query_id, doc_id
    FROM qrels
    WHERE collection_id = $collection_id AND qrels_id = $qrels_id AND relevance >= $rel
),
labelled AS (
    SELECT
        t.run_id,
        t.query_id,
        c.n_runs = 1 AS is_unique,
        rl.doc_id IS NOT NULL AS is_rel
    FROM tops AS t
    JOIN contributors AS c USING (query_id, doc_id)
    LEFT JOIN relevant AS rl USING (query_id, doc_id)
)
SELECT
    ru.run_id,
    ru.group_name,
    count(l.run_id) AS pooled_docs,
    count(*) FILTER (WHERE l.is_rel) AS pooled_relevant,
    count(*) FILTER (WHERE l.is_unique) AS unique_docs,
    count(*) FILTER (WHERE l.is_unique AND l.is_rel) AS unique_relevant,
    count(DISTINCT l.query_id) FILTER (WHERE l.is_unique) AS topics_with_unique
FROM runs AS ru
LEFT JOIN labelled AS l USING (run_id)
WHERE ru.collection_id = $collection_id AND list_contains($runs, ru.run_id)
GROUP BY ru.run_id, ru.group_name
ORDER BY unique_relevant DESC, unique_docs DESC, ru.run_id;
