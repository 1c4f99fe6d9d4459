-- name: eval_runs
-- description: The evaluation key (collection, qrels set, options) and the runs it covers.
-- params: collection_id VARCHAR, qrels_id VARCHAR, rel INTEGER, depth_cap INTEGER, condensed BOOLEAN, runs VARCHAR[]
-- ev_key is a one-row table that the context views join, since a view cannot take
-- parameters. ev_runs holds all runs of the collection, or the listed ones.
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
