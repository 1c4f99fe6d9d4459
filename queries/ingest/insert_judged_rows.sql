-- name: insert_judged_rows
-- description: Store one part of the judged rows the run-file reader found at ingest in the evaluation cache.
-- params:
-- staged_judged (Arrow tables or Parquet files, staged by evalwh.store.ingest.keyed) holds, per
-- newly ingested run, rows that queries/context/04_judged_rows.sql would join for the collection's
-- primary qrels set (rank, gain = grade >= 0, running counts at the default threshold), computed by
-- evalwh/io/_runlines.c while it ranked the file, with the keys of their build and ranked list;
-- documents judged with grade 0 at consecutive ranks share one row (span,
-- schema/014_judged_spans.sql). The ingest stores the rows part by part: relevant ones, then the
-- others (evalwh.store.ingest.cache.JUDGED_PARTS), each part one statement, so that DuckDB's row
-- groups hold rows of one part, as the evaluation's own refresh orders them (05_cache_refresh.sql).
INSERT INTO judged_results (build_key, list_key, rank, gain, judged_so_far, relevant_so_far, span)
SELECT build_key, list_key, rank, gain, judged_so_far, relevant_so_far, span
FROM staged_judged;
