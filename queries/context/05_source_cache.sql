-- name: eval_source_cache
-- description: Judged rows with running counts of the evaluated runs, read from the cache (judged_results).
-- params:
-- The cache holds keys (schema/013_keyed_results.sql): a row's build (qrels set, run) and
-- its ranked list (run, topic). The builds of this qrels set and the lists of the evaluated
-- runs and topics (ev_topics) are few, so both are small tables the cache's rows are
-- joined to; the metrics' filters on rank and gain still reach the scan of judged_results.
CREATE OR REPLACE TEMP TABLE ev_cached_lists AS
SELECT t.list_key, t.run_id, t.query_id
FROM run_topics AS t
SEMI JOIN ev_runs AS e USING (run_id)
SEMI JOIN ev_topics AS s USING (query_id)
WHERE t.collection_id = getvariable('ev_collection_id');

CREATE OR REPLACE TEMP TABLE ev_cached_builds AS
SELECT b.build_key
FROM judged_builds AS b
SEMI JOIN ev_runs AS e USING (run_id)
WHERE b.collection_id = getvariable('ev_collection_id')
  AND b.qrels_id = getvariable('ev_qrels_id');

-- A row with span > 1 stands for that many consecutive ranks judged with grade 0 below
-- judged_spans_from() (schema/014_judged_spans.sql, whose CHECK holds every such row to it);
-- it is read back as one row per rank. The second branch repeats what the CHECK guarantees
-- (gain 0, every rank below judged_spans_from()) as filters on what it returns, so that the
-- planner drops the branch from a query of ranks <= judged_spans_from() or of relevant
-- documents only, and the first branch keeps the plan and the skipping of stored rows. (The
-- first branch says span < 2, not span = 1: the planner estimates "= 1" as one distinct
-- value in hundreds, takes the rows for few, and joins them the wrong way round: measured
-- 0.6 s instead of 0.29 s for the eight measures of bench/scale.py on L.)
CREATE OR REPLACE TEMP VIEW ev_judged_source AS
SELECT l.run_id, l.query_id, c.rank, c.gain, c.judged_so_far, c.relevant_so_far
FROM judged_results AS c
JOIN ev_cached_lists AS l USING (list_key)
SEMI JOIN ev_cached_builds AS b USING (build_key)
WHERE c.span < 2
UNION ALL
SELECT
    l.run_id,
    l.query_id,
    c.rank + s.step AS rank,
    c.gain,
    c.judged_so_far + s.step AS judged_so_far,
    c.relevant_so_far
FROM judged_results AS c
CROSS JOIN range(c.span) AS s(step)
JOIN ev_cached_lists AS l USING (list_key)
SEMI JOIN ev_cached_builds AS b USING (build_key)
WHERE c.span > 1 AND c.gain = 0 AND c.rank + s.step > judged_spans_from();
