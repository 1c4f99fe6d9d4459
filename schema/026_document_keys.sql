-- A collection's documents keyed once, not once per topic that retrieved them.
--
-- 013_keyed_results gave every (collection, topic, document) pair a run retrieved its own
-- key, and stored its three strings in `documents`. Runs of a collection retrieve the same
-- documents for many topics: the shared bench's XL holds 33.9 M such pairs of only 528,155
-- documents, and its ingest stored, keyed and hashed every pair's strings (and its reader's
-- dictionary of them outgrew memory, 1.3 GB in a temporary file). Now `documents` holds one
-- row per (collection, document) a run retrieved, and a run line (run_rows) refers to its
-- document by that key; the line's topic is its list's (run_topics), so the pair is derived
-- where a query needs it, never stored. run_results and ranked_results keep their columns.
-- Keys stay unique across the warehouse; the ingest gives new ones from max + 1.
--
-- The rank column as a file wrote it, where it is not the rank's own decimal (a run whose
-- ranks do not follow its scores, about one line in nine of the shared bench's runs), was a
-- string; it is nearly always an integer's own decimal, so run_rows now keeps it as that
-- integer (given_rank) and only another text as text (given_text: "07", "1.0", ...). On the
-- shared L that took run_rows from 200 to 160 MiB. run_results.rank_given reads as before.
-- This migration gives the documents stored before their new keys (1, 2, ... in collection
-- and document order) and moves every line to them, in (list, rank) order as the ingest
-- stores them, its rank as given split so; the judged-rows cache is keyed by list and rank, not by document, and stays.

CREATE TEMP TABLE document_keys AS
SELECT d.doc_key AS pair_key, n.doc_key
FROM documents AS d
JOIN (
    SELECT collection_id, doc_id, row_number() OVER (ORDER BY collection_id, doc_id) AS doc_key
    FROM (SELECT DISTINCT collection_id, doc_id FROM documents)
) AS n USING (collection_id, doc_id);

CREATE TABLE documents_keyed (
    collection_id VARCHAR NOT NULL,
    doc_id        VARCHAR NOT NULL,
    doc_key       BIGINT NOT NULL
);
INSERT INTO documents_keyed
SELECT DISTINCT d.collection_id, d.doc_id, k.doc_key
FROM documents AS d
JOIN document_keys AS k ON k.pair_key = d.doc_key
ORDER BY k.doc_key;

CREATE TABLE run_rows_keyed (
    list_key   INTEGER NOT NULL,
    doc_key    BIGINT NOT NULL,
    score      DOUBLE NOT NULL,
    rank       INTEGER NOT NULL,
    given_rank INTEGER,           -- the rank column, where it is another integer's own decimal
    given_text VARCHAR            -- the rank column, where it is no integer's own decimal
);
INSERT INTO run_rows_keyed
SELECT
    r.list_key,
    k.doc_key,
    r.score,
    r.rank,
    CASE WHEN CAST(TRY_CAST(r.rank_given AS INTEGER) AS VARCHAR) = r.rank_given THEN CAST(r.rank_given AS INTEGER) END,
    CASE WHEN CAST(TRY_CAST(r.rank_given AS INTEGER) AS VARCHAR) IS DISTINCT FROM r.rank_given THEN r.rank_given END
FROM run_rows AS r
JOIN document_keys AS k ON k.pair_key = r.doc_key
ORDER BY r.list_key, r.rank;

DROP TABLE run_rows;
DROP TABLE documents;
DROP TABLE document_keys;
ALTER TABLE documents_keyed RENAME TO documents;
ALTER TABLE run_rows_keyed RENAME TO run_rows;

CREATE OR REPLACE VIEW run_results AS
SELECT
    t.collection_id,
    t.run_id,
    t.query_id,
    d.doc_id,
    r.score,
    coalesce(r.given_text, CAST(coalesce(r.given_rank, r.rank) AS VARCHAR)) AS rank_given,
    r.rank
FROM run_rows AS r
JOIN run_topics AS t USING (list_key)
JOIN documents AS d USING (doc_key);

COMMENT ON TABLE documents IS 'One row per (collection, document) a run retrieved, with its key (doc_key); a line''s topic is its list''s (run_topics).';
COMMENT ON VIEW run_results IS 'One row per (collection, run, topic, document); rank in trec_eval order.';
COMMENT ON TABLE run_rows IS 'One row per run line, by keys: list_key, doc_key, score, rank in trec_eval order, and the rank column as written where it is not the rank (given_rank, or given_text where it is no integer''s own decimal).';
