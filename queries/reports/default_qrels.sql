-- name: default_qrels
-- description: What decides a collection's default qrels set: each set with its kind, and the set its conventions name.
-- params: collection_id VARCHAR
-- Store.qrels_set reads it when a command is given no --qrels-id: the set the conventions
-- name (evalwh conventions --qrels-id), else the set named 'default', else the only
-- ingested set (derived sets, a pool's or a reduced one, do not count: building a pool
-- must not make the collection's own set ambiguous). One row per set; "chosen" is the
-- conventions' set on every row (NULL when none is stored); a collection without sets
-- gives one row with qrels_id NULL, so "chosen" is always there.
WITH chosen AS (
    SELECT any_value(qrels_id) AS chosen
    FROM collection_conventions
    WHERE collection_id = $collection_id
),
sets AS (
    SELECT qrels_id, kind
    FROM qrels_sets
    WHERE collection_id = $collection_id
)
SELECT s.qrels_id, s.kind, c.chosen
FROM chosen AS c
LEFT JOIN sets AS s ON true
ORDER BY s.qrels_id;
