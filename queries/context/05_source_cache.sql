-- name: eval_source_cache
-- description: Judged rows with running counts of the evaluated runs, read from the cache (judged_results).
-- params:
-- The cache holds keys (schema/013_keyed_results.sql): a row's build (qrels set, run) and
-- its ranked list (run, topic); judged_rows reads it one row per judged document, a
-- stretch of ranks judged 0 one row per rank (schema/014_judged_spans.sql). The builds of
-- this qrels set and the lists of the evaluated runs and topics (ev_topics) are few, so
-- both are small tables the cache's rows are joined to; the metrics' filters on rank and
-- gain still reach the scan of judged_results.
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

CREATE OR REPLACE TEMP VIEW ev_judged_source AS
SELECT l.run_id, l.query_id, c.rank, c.gain, c.judged_so_far, c.relevant_so_far
FROM judged_rows AS c
JOIN ev_cached_lists AS l USING (list_key)
SEMI JOIN ev_cached_builds AS b USING (build_key);
