-- The judged rows of every ranked list, per qrels set: a cache that evaluation builds on
-- first use (queries/context/05_cache_refresh.sql) so that later evaluations read only
-- judged rows instead of joining every retrieved document with the qrels again.

-- One row per (collection, qrels set, run, topic, judged document): rank in trec_eval order,
-- gain = the grade (>= 0; negative grades are unjudged and absent), and the list's running
-- counts at the default threshold (relevant = grade >= 1): judged and relevant documents
-- at or above this rank.
CREATE TABLE IF NOT EXISTS judged_results (
    collection_id   VARCHAR NOT NULL,
    qrels_id        VARCHAR NOT NULL,
    run_id          VARCHAR NOT NULL,
    query_id        VARCHAR NOT NULL,
    rank            INTEGER NOT NULL,
    gain            INTEGER NOT NULL,
    judged_so_far   INTEGER NOT NULL,
    relevant_so_far INTEGER NOT NULL
);

-- One row per (collection, qrels set, run) present in judged_results: what it was built from.
-- An entry is used only while both fingerprints still match; otherwise it is rebuilt.
CREATE TABLE IF NOT EXISTS judged_builds (
    collection_id     VARCHAR NOT NULL,
    qrels_id          VARCHAR NOT NULL,
    run_id            VARCHAR NOT NULL,
    run_sha256        VARCHAR NOT NULL,
    qrels_fingerprint VARCHAR NOT NULL,
    built_at          TIMESTAMP NOT NULL DEFAULT current_timestamp
);
