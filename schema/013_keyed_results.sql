-- Run results and the judged-rows cache keyed by integers, as a warehouse's fact tables are.
--
-- A run line used to be stored with five strings (collection, run, topic, document, rank as
-- given) and each of its judged-rows cache entries with four more. Storing a string costs a
-- database about ten times what an integer costs, so ingest spent most of its time there.
-- Now each line is stored as numbers:
--   run_topics.list_key   one ranked list: (collection, run, topic)
--   documents.doc_key     one (collection, topic, document) pair that a run retrieved
--   run_rows              one row per run line: list_key, doc_key, score, rank, and the
--                         rank as given only where it is not the rank's own decimal
--   judged_builds.build_key  one cache build: (collection, qrels set, run)
--   judged_results        one row per judged line: build_key, list_key, rank, gain, counts
-- run_results keeps its columns as a view, so every query, and ad-hoc SQL, reads it as before.
-- Keys are unique across the warehouse; the ingest gives new ones from max + 1 (a writer is
-- alone). This migration moves the rows stored before.

CREATE TABLE documents (
    collection_id VARCHAR NOT NULL,
    query_id      VARCHAR NOT NULL,
    doc_id        VARCHAR NOT NULL,
    doc_key       BIGINT NOT NULL
);
INSERT INTO documents
SELECT collection_id, query_id, doc_id, row_number() OVER (ORDER BY collection_id, query_id, doc_id)
FROM (SELECT DISTINCT collection_id, query_id, doc_id FROM run_results);

CREATE TABLE run_topics_keyed (
    collection_id VARCHAR NOT NULL,
    run_id        VARCHAR NOT NULL,
    query_id      VARCHAR NOT NULL,
    num_ret       INTEGER NOT NULL,
    list_key      INTEGER NOT NULL
);
INSERT INTO run_topics_keyed
SELECT collection_id, run_id, query_id, num_ret,
       CAST(row_number() OVER (ORDER BY collection_id, run_id, query_id) AS INTEGER)
FROM run_topics;

CREATE TABLE run_rows (
    list_key   INTEGER NOT NULL,
    doc_key    BIGINT NOT NULL,
    score      DOUBLE NOT NULL,
    rank       INTEGER NOT NULL,
    rank_given VARCHAR            -- NULL: the rank column said CAST(rank AS VARCHAR)
);
INSERT INTO run_rows
SELECT t.list_key, d.doc_key, r.score, r.rank,
       CASE WHEN r.rank_given <> CAST(r.rank AS VARCHAR) THEN r.rank_given END
FROM run_results AS r
JOIN run_topics_keyed AS t USING (collection_id, run_id, query_id)
JOIN documents AS d USING (collection_id, query_id, doc_id)
ORDER BY t.list_key, r.rank;

DROP TABLE run_results;
DROP TABLE run_topics;
ALTER TABLE run_topics_keyed RENAME TO run_topics;

CREATE VIEW run_results AS
SELECT
    t.collection_id,
    t.run_id,
    t.query_id,
    d.doc_id,
    r.score,
    coalesce(r.rank_given, CAST(r.rank AS VARCHAR)) AS rank_given,
    r.rank
FROM run_rows AS r
JOIN run_topics AS t USING (list_key)
JOIN documents AS d USING (doc_key);

-- The cache is a cache: its rows are rebuilt, not moved (each run's on its next ingest or
-- evaluation that may write; a read-only evaluation joins in memory meanwhile).
DROP TABLE judged_results;
DROP TABLE judged_builds;
CREATE TABLE judged_builds (
    collection_id     VARCHAR NOT NULL,
    qrels_id          VARCHAR NOT NULL,
    run_id            VARCHAR NOT NULL,
    run_sha256        VARCHAR NOT NULL,
    qrels_fingerprint VARCHAR NOT NULL,
    built_at          TIMESTAMP NOT NULL DEFAULT current_timestamp,
    build_key         INTEGER NOT NULL
);
CREATE TABLE judged_results (
    build_key       INTEGER NOT NULL,
    list_key        INTEGER NOT NULL,
    rank            INTEGER NOT NULL,
    gain            DOUBLE NOT NULL,
    judged_so_far   INTEGER NOT NULL,
    relevant_so_far INTEGER NOT NULL
);

-- The cache by name, for reading it (the evaluation reads judged_results by key).
CREATE VIEW judged_cache AS
SELECT
    b.collection_id,
    b.qrels_id,
    t.run_id,
    t.query_id,
    c.rank,
    c.gain,
    c.judged_so_far,
    c.relevant_so_far
FROM judged_results AS c
JOIN judged_builds AS b USING (build_key)
JOIN run_topics AS t USING (list_key);

COMMENT ON TABLE documents IS 'One row per (collection, topic, document) a run retrieved, with its key (doc_key).';
COMMENT ON TABLE run_topics IS 'One row per (collection, run, topic) retrieved, with num_ret and its key (list_key).';
COMMENT ON TABLE run_rows IS 'One row per run line, by keys: list_key, doc_key, score, rank in trec_eval order.';
COMMENT ON VIEW run_results IS 'One row per (collection, run, topic, document); rank in trec_eval order.';
COMMENT ON TABLE judged_results IS 'Cache: one row per judged line of a build (qrels set, run) and list, with running counts.';
COMMENT ON VIEW judged_cache IS 'Cache: one row per (collection, qrels set, run, topic, judged document), by name.';
COMMENT ON TABLE judged_builds IS 'Cache: one row per (collection, qrels set, run) build, with what it was built from.';
