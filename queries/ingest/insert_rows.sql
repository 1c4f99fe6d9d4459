-- name: insert_rows
-- description: Store the lines of the run files the run-file reader ranked at ingest, by key.
-- params:
-- evalwh/io/_runlines.c has checked and ranked every line in trec_eval's order and keyed it
-- (insert_ranked.sql stores the files' ranked lists and new documents, whose keys these are).
-- evalwh.store.ingest.keyed staged, per file (as Arrow tables in memory for a small ingest of
-- small files, else as Parquet files):
--   staged_rows  list_key, doc_key, score, rank, rank_given, given_rank: the rank column
--                where it is not the rank's own decimal (else both NULL), as run_rows keeps
--                it (schema/026_document_keys.sql): given_rank where it is another
--                integer's own decimal, else the text in rank_given
-- One statement: DuckDB streams Parquet files within its memory limit, and reads Arrow
-- tables through a relation that the transaction does not keep
-- (evalwh.store.ingest.cache.insert_staged).
INSERT INTO run_rows (list_key, doc_key, score, rank, given_rank, given_text)
SELECT list_key, doc_key, score, rank, given_rank, rank_given
FROM staged_rows;
