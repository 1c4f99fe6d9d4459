-- name: restore_options
-- description: Put back the evaluation's own pairs and options after measures with their own rel= or judged_only= (apply.sql).
-- params: rel INTEGER, condensed BOOLEAN
-- evalwh.measures.evaluation then re-creates ev_judged with queries/context/06_judged.sql.
DROP TABLE IF EXISTS ev_pairs;
ALTER TABLE ev_pairs_base RENAME TO ev_pairs;
DROP TABLE IF EXISTS ev_judged_options;
SET VARIABLE ev_rel = CAST($rel AS INTEGER);
SET VARIABLE ev_condensed = CAST($condensed AS BOOLEAN);
