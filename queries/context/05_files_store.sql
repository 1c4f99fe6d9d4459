-- name: eval_files_store
-- description: The tables that hold the judged rows of the run files a direct evaluation ranks with its reader.
-- params: collection_id VARCHAR
-- evalwh.measures.direct's reader (evalwh/io/_runlines.c, rank_file) ranks each run file and appends its
-- judged rows to ev_files.judged, a few files at a time (relevant rows first, as the
-- warehouse's cache), while the next files are read. Runs and topics are numbered
-- (ev_files.runs, ev_files.topics: the judged topics of the qrels), so that the rows are
-- integers only. ev_files is an in-memory database of its own, which evalwh.measures.direct attaches
-- (ATTACH ':memory:' AS ev_files (COMPRESS), from DuckDB 1.4 on) and checkpoints every few
-- million rows: compressed, it holds the judged rows of 100 M run lines in a fraction of
-- their plain size; nothing of it is kept after the evaluation. 05_source_files.sql reads
-- them with their names.
CREATE TABLE ev_files.runs (
    run INTEGER PRIMARY KEY,
    run_id VARCHAR NOT NULL
);

CREATE TABLE ev_files.topics AS
SELECT CAST(row_number() OVER (ORDER BY query_id) - 1 AS INTEGER) AS topic, query_id
FROM (
    SELECT DISTINCT query_id
    FROM qrels
    WHERE collection_id = $collection_id AND relevance >= 0
);

CREATE TABLE ev_files.judged (
    run INTEGER NOT NULL,
    topic INTEGER NOT NULL,
    rank INTEGER NOT NULL,
    gain INTEGER NOT NULL,
    judged_so_far INTEGER NOT NULL,
    relevant_so_far INTEGER NOT NULL
);
