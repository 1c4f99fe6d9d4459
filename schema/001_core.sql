-- evalwh core schema: collections, topics, qrels, runs and their results.
-- Every table carries collection_id: one warehouse file holds many test collections.
-- Uniqueness of the natural keys is enforced by the ingest code inside one transaction
-- (DuckDB primary keys would forbid delete-then-insert of a key within one transaction,
-- which `--replace` needs); the grain of each table is stated in its comment.

-- One row per test collection.
CREATE TABLE IF NOT EXISTS collections (
    collection_id VARCHAR NOT NULL,
    description   VARCHAR,
    created_at    TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- One row per (collection, topic) that has judgments in at least one qrels set.
CREATE TABLE IF NOT EXISTS topics (
    collection_id VARCHAR NOT NULL,
    query_id      VARCHAR NOT NULL
);

-- One row per (collection, qrels set). A collection has its ingested judgments
-- (qrels_id 'default' unless named) and may hold derived sets: reduced samples,
-- pool-restricted views made permanent, completed qrels.
CREATE TABLE IF NOT EXISTS qrels_sets (
    collection_id   VARCHAR NOT NULL,
    qrels_id        VARCHAR NOT NULL,
    kind            VARCHAR NOT NULL,     -- 'ingested' | 'derived'
    source_file     VARCHAR,              -- file name as given, or a description of the derivation
    sha256          VARCHAR NOT NULL,     -- of the content (decompressed), or of the derivation
    line_count      BIGINT,
    parent_qrels_id VARCHAR,              -- for derived sets
    params          VARCHAR,              -- JSON: how a derived set was made (seed, level, ...)
    created_at      TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- One row per (collection, qrels set, topic, document).
-- relevance is the grade as given; a negative grade means "pooled but not judged" and is
-- read as unjudged by every metric, as trec_eval does.
CREATE TABLE IF NOT EXISTS qrels (
    collection_id VARCHAR NOT NULL,
    qrels_id      VARCHAR NOT NULL,
    query_id      VARCHAR NOT NULL,
    iteration     VARCHAR NOT NULL,       -- the second column of a qrels line, kept as text
    doc_id        VARCHAR NOT NULL,
    relevance     INTEGER NOT NULL
);

-- One row per (collection, run).
CREATE TABLE IF NOT EXISTS runs (
    collection_id VARCHAR NOT NULL,
    run_id        VARCHAR NOT NULL,
    tag           VARCHAR,                -- the tag column of the file (run_id unless --run-id)
    source_file   VARCHAR NOT NULL,
    sha256        VARCHAR NOT NULL,       -- of the content (decompressed)
    line_count    BIGINT NOT NULL,        -- result lines, comments excluded
    ingested_at   TIMESTAMP NOT NULL DEFAULT current_timestamp,
    group_name    VARCHAR,                -- participant group, from run metadata
    run_type      VARCHAR,                -- e.g. 'automatic' | 'manual'
    pooled        BOOLEAN                 -- contributed to the official pool
);

-- One row per (collection, run, topic, document).
-- rank is materialised at ingest in trec_eval's order (score descending, then doc_id
-- descending byte-wise: trec_eval's comp_sim_docno); rank_given is the file's own rank
-- column, kept for reference and never used for ordering.
CREATE TABLE IF NOT EXISTS run_results (
    collection_id VARCHAR NOT NULL,
    run_id        VARCHAR NOT NULL,
    query_id      VARCHAR NOT NULL,
    doc_id        VARCHAR NOT NULL,
    score         DOUBLE NOT NULL,
    rank_given    VARCHAR NOT NULL,       -- the rank column as given (trec_eval ignores it)
    rank          INTEGER NOT NULL
);

-- One row per (collection, run, topic) the run returned documents for.
CREATE TABLE IF NOT EXISTS run_topics (
    collection_id VARCHAR NOT NULL,
    run_id        VARCHAR NOT NULL,
    query_id      VARCHAR NOT NULL,
    num_ret       INTEGER NOT NULL
);

-- THE ordering of a run, in one place (trec_eval's): score descending, ties broken by doc_id
-- descending in byte order; the rank column and the line order of the file are ignored.
-- With float32_ties, scores that are equal after rounding to a 32-bit float tie, as in
-- trec_eval up to 9.0.8, which stored scores as float.
-- `results` names any table or view with collection_id, run_id, query_id, doc_id, score;
-- its columns pass through (hence the *), with `rank` added.
-- The partition keys are listed most selective first: a relation almost always holds one
-- collection, and a constant leading key makes DuckDB's partitioned sort about 15 % slower
-- (measured on the 6.3 M TREC-8 lines; the partitions, hence the ranks, are the same).
CREATE OR REPLACE MACRO trec_ranked(results, float32_ties) AS TABLE
    SELECT
        *,
        CAST(row_number() OVER (
            PARTITION BY run_id, query_id, collection_id
            ORDER BY
                CASE WHEN float32_ties THEN CAST(CAST(score AS FLOAT) AS DOUBLE) ELSE score END DESC,
                doc_id DESC
        ) AS INTEGER) AS rank
    FROM query_table(results);

-- Ranked results, the stable view for ad-hoc queries.
CREATE OR REPLACE VIEW ranked_results AS
    SELECT collection_id, run_id, query_id, doc_id, score, rank, rank_given
    FROM run_results;
