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
-- The rank as written (NULL where it is the rank's own decimal) is kept as an integer where
-- it is one's own decimal, else as text (schema/026_document_keys.sql).
INSERT INTO run_rows (list_key, doc_key, score, rank, given_rank, given_text)
SELECT
    list_key,
    doc_key,
    score,
    rank,
    CASE WHEN CAST(TRY_CAST(rank_given AS INTEGER) AS VARCHAR) = rank_given THEN CAST(rank_given AS INTEGER) END,
    CASE WHEN CAST(TRY_CAST(rank_given AS INTEGER) AS VARCHAR) IS DISTINCT FROM rank_given THEN rank_given END
FROM staged_rows;
