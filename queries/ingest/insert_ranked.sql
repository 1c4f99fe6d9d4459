-- name: insert_ranked
-- description: Store the run lines the run-file reader ranked at ingest (staged as Parquet) in run_results.
-- params: collection_id VARCHAR, files VARCHAR[]
-- evalwh/_runlines.c has checked and ranked every line in trec_eval's order (trec_ranked's,
-- schema/001_core.sql; tests/test_ingest_reader.py holds it to the macro), and evalwh.ingest
-- staged each file's rows as one Parquet file in its temporary folder. One statement over all
-- of them: DuckDB streams them into the table within its memory limit.
INSERT INTO run_results (collection_id, run_id, query_id, doc_id, score, rank_given, rank)
SELECT $collection_id, run_id, query_id, doc_id, score, rank_given, rank
FROM read_parquet($files);
