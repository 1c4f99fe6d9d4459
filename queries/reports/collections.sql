-- name: collections
-- description: One row per collection: topics, judged and relevant documents of one label set (named), runs, label sets.
-- params:
-- The counts are those of one qrels set, named in "counted_set": the set the collection's
-- conventions name (evalwh conventions --qrels-id), else 'default', the sets every command
-- uses unless told otherwise (docs/methods.md §14.3); else the first set by name made by
-- human assessors (source 'human', or no source recorded); else the first set by name. A
-- collection of label sets alone (human and LLM labels, no 'default') is thus counted on its
-- human labels. "qrels_sets" counts every set.
-- "judged" counts qrels rows with a grade >= 0 (negative grades are pooled but unjudged);
-- "relevant" counts grades >= 1, trec_eval's default threshold.
WITH counted AS (
    SELECT
        s.collection_id,
        arg_min(
            s.qrels_id,
            (
                s.qrels_id IS DISTINCT FROM c.qrels_id,  -- (no conventions' set: no effect)
                s.qrels_id <> 'default',
                coalesce(s.source, 'human') <> 'human',
                s.qrels_id
            )
        ) AS qrels_id
    FROM qrels_sets AS s
    LEFT JOIN collection_conventions AS c USING (collection_id)
    GROUP BY s.collection_id
),
judgments AS (
    SELECT
        q.collection_id,
        count(DISTINCT q.query_id) AS topics,
        count(*) FILTER (WHERE q.relevance >= 0) AS judged,
        count(*) FILTER (WHERE q.relevance >= 1) AS relevant
    FROM qrels AS q
    JOIN counted AS c USING (collection_id, qrels_id)
    GROUP BY q.collection_id
),
run_counts AS (
    SELECT collection_id, count(*) AS runs
    FROM runs
    GROUP BY collection_id
),
qrels_set_counts AS (
    SELECT collection_id, count(*) AS qrels_sets
    FROM qrels_sets
    GROUP BY collection_id
)
SELECT
    c.collection_id,
    coalesce(j.topics, 0) AS topics,
    coalesce(j.judged, 0) AS judged,
    coalesce(j.relevant, 0) AS relevant,
    coalesce(r.runs, 0) AS runs,
    coalesce(s.qrels_sets, 0) AS qrels_sets,
    coalesce(k.qrels_id, '') AS counted_set
FROM collections AS c
LEFT JOIN counted AS k USING (collection_id)
LEFT JOIN judgments AS j USING (collection_id)
LEFT JOIN run_counts AS r USING (collection_id)
LEFT JOIN qrels_set_counts AS s USING (collection_id)
ORDER BY c.collection_id;
