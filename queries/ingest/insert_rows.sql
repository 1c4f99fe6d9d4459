-- name: insert_rows
-- description: Store the lines of the run files the run-file reader ranked at ingest, by key.
-- params:
-- evalwh/io/_runlines.c has checked and ranked every line in trec_eval's order and keyed it
-- (insert_ranked.sql stores the files' ranked lists and new documents, whose keys these are).
-- evalwh.store.ingest.keyed staged, per file (as Arrow tables in memory for a small ingest of
-- small files, else as Parquet files):
--   staged_rows  list_key, doc_key, score, rank, rank_given (NULL where the rank's own text)
-- One statement: DuckDB streams Parquet files within its memory limit, and reads Arrow
-- tables through a relation that the transaction does not keep
-- (evalwh.store.ingest.cache.insert_staged).
INSERT INTO run_rows (list_key, doc_key, score, rank, rank_given)
SELECT list_key, doc_key, score, rank, rank_given
FROM staged_rows;
