-- name: eval_topics
-- description: The topic set T with its judgment counts: R relevant, N judged non-relevant.
-- params: collection_id VARCHAR, qrels_id VARCHAR, fill VARCHAR[], keep_topics_without_relevant BOOLEAN
-- Every topic of the qrels set is a candidate (also one whose grades are all negative); under
-- a composition (fill: the sets that fill its holes, NULL for none) every topic of any of its
-- sets, as in a qrels file holding all their labels (01_qrels_composed.sql).
-- By default (methods §0.4) topics with no relevant document are left out of T so that all
-- means are taken over the same topics; trec_eval keeps them and scores them 0.
CREATE OR REPLACE TEMP TABLE ev_topics AS
WITH candidates AS (
    SELECT DISTINCT query_id
    FROM qrels
    WHERE collection_id = $collection_id
      AND (qrels_id = $qrels_id OR list_contains($fill, qrels_id))
),
counts AS (
    SELECT
        query_id,
        count(*) FILTER (WHERE is_rel) AS num_rel,
        count(*) FILTER (WHERE NOT is_rel) AS num_nonrel
    FROM ev_qrels
    GROUP BY query_id
)
SELECT
    c.query_id,
    CAST(coalesce(n.num_rel, 0) AS INTEGER) AS num_rel,
    CAST(coalesce(n.num_nonrel, 0) AS INTEGER) AS num_nonrel
FROM candidates AS c
LEFT JOIN counts AS n USING (query_id)
WHERE $keep_topics_without_relevant OR coalesce(n.num_rel, 0) > 0;
