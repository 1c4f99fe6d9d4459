-- The judged-rows cache (008) in the order evaluation reads it: relevant rows first, each
-- part by rank. DuckDB keeps min/max statistics per row group (about 120,000 rows), and the
-- metric filters reach the scan of judged_results (queries/context/06_judged.sql), so a
-- metric at depth k (rank <= k) or over relevant rows only (AP, bpref) reads the few row
-- groups that can hold such rows instead of every one. New rows are inserted in this order
-- (queries/context/05_cache_refresh.sql); this migration rewrites the rows cached before.
-- Same columns and contents: nothing needs rebuilding, and judged_builds stays valid.
CREATE TABLE judged_results_ordered (
    collection_id   VARCHAR NOT NULL,
    qrels_id        VARCHAR NOT NULL,
    run_id          VARCHAR NOT NULL,
    query_id        VARCHAR NOT NULL,
    rank            INTEGER NOT NULL,
    gain            INTEGER NOT NULL,
    judged_so_far   INTEGER NOT NULL,
    relevant_so_far INTEGER NOT NULL
);

INSERT INTO judged_results_ordered
SELECT collection_id, qrels_id, run_id, query_id, rank, gain, judged_so_far, relevant_so_far
FROM judged_results
ORDER BY collection_id, qrels_id, gain >= 1 DESC, rank;

DROP TABLE judged_results;

ALTER TABLE judged_results_ordered RENAME TO judged_results;
