-- name: insert_ranked
-- description: Store the run files the run-file reader ranked at ingest, by key: their lists and new documents (their lines: insert_rows.sql).
-- params: collection_id VARCHAR
-- evalwh/io/_runlines.c has checked and ranked every line in trec_eval's order (trec_ranked's,
-- schema/001_core.sql; tests/test_ingest_reader.py holds it to the macro) and given each
-- line the key of its document (schema/026_document_keys.sql: a collection's documents are
-- stored once; a line's topic is its list's).
-- evalwh.store.ingest.keyed staged, per file (as Arrow tables in memory for a small ingest of
-- small files, else as Parquet files):
--   staged_documents  doc_id, doc_key: the documents the file added (maybe none)
-- and registered the files' ranked lists as ingest_topics (run_id, query_id, num_ret,
-- list_key). One statement per table: DuckDB streams Parquet files within its memory limit.
INSERT INTO run_topics (collection_id, run_id, query_id, num_ret, list_key)
SELECT $collection_id, run_id, query_id, num_ret, list_key
FROM ingest_topics;

INSERT INTO documents (collection_id, doc_id, doc_key)
SELECT $collection_id, doc_id, doc_key
FROM staged_documents;
