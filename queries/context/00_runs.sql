-- name: eval_runs
-- description: The evaluation key (collection, qrels set, options) and the runs it covers.
-- params: collection_id VARCHAR, qrels_id VARCHAR, rel INTEGER, depth_cap INTEGER, condensed BOOLEAN, runs VARCHAR[]
-- ev_key is a one-row table that the context steps join, since a view cannot take
-- parameters. The same options are also session variables (ev_*), read by the views that
-- every metric scans (05_source_cache, 06_judged) with getvariable(): DuckDB folds those to
-- constants while planning, so a metric's filters (rank <= k, is_rel) reach the scan of the
-- judged rows and skip row groups by their min/max. (Other engines get the values inlined:
-- evalwh/spark.py.) ev_runs holds all runs of the collection, or the listed ones.
SET VARIABLE ev_collection_id = CAST($collection_id AS VARCHAR);
SET VARIABLE ev_qrels_id = CAST($qrels_id AS VARCHAR);
SET VARIABLE ev_rel = CAST($rel AS INTEGER);
SET VARIABLE ev_depth_cap = CAST($depth_cap AS INTEGER);
SET VARIABLE ev_condensed = CAST($condensed AS BOOLEAN);

CREATE OR REPLACE TEMP TABLE ev_key AS
SELECT
    CAST($collection_id AS VARCHAR) AS collection_id,
    CAST($qrels_id AS VARCHAR) AS qrels_id,
    CAST($rel AS INTEGER) AS rel,
    CAST($depth_cap AS INTEGER) AS depth_cap,
    CAST($condensed AS BOOLEAN) AS condensed;

CREATE OR REPLACE TEMP TABLE ev_runs AS
SELECT r.collection_id, r.run_id, r.sha256
FROM runs AS r
WHERE r.collection_id = $collection_id
  AND ($runs IS NULL OR list_contains($runs, r.run_id));
