-- Excluded documents (methods §17): (topic, document) pairs of a collection that no run may
-- count, with where each came from, and what their removal took from each run.
--
-- One row per (collection, source, topic, document) excluded:
--   origin   'qrels' (a line labelled -100 of the qrels set named by source: it leaves the
--            set and enters here) | 'file' (a line `topic docid` of the exclusion file named
--            by source)
-- The collection rule "a document whose id equals its topic's id is excluded" (BEIR's
-- ArguAna and Quora; ir_datasets' ignore_identical_ids) is a source of its own (origin
-- 'rule', source 'identical_ids') without rows here: it holds for every topic.
CREATE TABLE IF NOT EXISTS excluded_documents (
    collection_id VARCHAR NOT NULL,
    origin        VARCHAR NOT NULL,
    source        VARCHAR NOT NULL,
    query_id      VARCHAR NOT NULL,
    doc_id        VARCHAR NOT NULL
);

-- One row per (collection, source of exclusions): a qrels set with -100 lines, an exclusion
-- file (its content's SHA-256 and lines) or the identical-id rule.
CREATE TABLE IF NOT EXISTS exclusion_sources (
    collection_id VARCHAR NOT NULL,
    origin        VARCHAR NOT NULL,
    source        VARCHAR NOT NULL,
    sha256        VARCHAR,
    pairs         BIGINT NOT NULL,
    created_at    TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- One row per (collection, run, topic, document) the exclusions removed from a run before
-- it was ranked: the run's losses. rank is the document's rank in the run as given (trec_eval
-- order, before the ranks closed up); the run's stored lines (run_rows) are the others, ranked
-- 1, 2, ... again.
CREATE TABLE IF NOT EXISTS run_exclusions (
    collection_id VARCHAR NOT NULL,
    run_id        VARCHAR NOT NULL,
    query_id      VARCHAR NOT NULL,
    doc_id        VARCHAR NOT NULL,
    score         DOUBLE NOT NULL,
    rank          INTEGER NOT NULL,
    rank_given    VARCHAR
);

COMMENT ON TABLE excluded_documents IS 'One row per (collection, source, topic, document) no run may count (methods §17): a qrels line labelled -100 (origin ''qrels'') or an exclusion file''s line (origin ''file''); filled by `evalwh ingest qrels` and `evalwh exclusions add`.';
COMMENT ON TABLE exclusion_sources IS 'One row per (collection, source of exclusions): a qrels set with -100 lines, an exclusion file (SHA-256, pairs) or the rule identical_ids (a document whose id is its topic''s id); filled by `evalwh ingest qrels` and `evalwh exclusions add`.';
COMMENT ON TABLE run_exclusions IS 'One row per (collection, run, topic, document) the exclusions removed from a run before ranking (its losses), rank as given before the ranks closed up; filled by every ingest; `evalwh exclusions losses` lists them.';
