-- name: apply_exclusions
-- description: Remove a collection's excluded documents from runs' ranked lists (ranks closed up), and put back rows no exclusion names any more.
-- params: collection_id VARCHAR, runs VARCHAR[]
-- methods §17. A run's lists are ranked in trec_eval's order at ingest (run_rows.rank); an
-- excluded document leaves its list, goes to run_exclusions with the rank it had, and the
-- documents below it move up: the list is ranked as if the run had never returned it,
-- which is what trec_eval gives on the run file with those lines deleted (score order is
-- not changed by removing lines). Lists already filtered are first restored to the run as
-- given, then filtered by the exclusions as they are now, so a source replaced or removed
-- gives rows back. runs NULL: every run of the collection. The caller skips this file when
-- the collection has neither exclusions nor removed rows.

-- Removed rows get their document's key back (an import, or a run's deletion, may have
-- dropped it): max + 1 onwards, as store_ranked.sql gives keys. First: the documents excluded
-- now are found by these keys too. (A collection's documents are keyed once, whatever the
-- topic, schema/026_document_keys.sql; a line's topic is its list's.)
INSERT INTO documents (collection_id, doc_id, doc_key)
SELECT
    $collection_id,
    m.doc_id,
    (SELECT coalesce(max(doc_key), 0) FROM documents) + row_number() OVER (ORDER BY m.doc_id)
FROM (
    SELECT DISTINCT x.doc_id
    FROM run_exclusions AS x
    WHERE x.collection_id = $collection_id
      AND ($runs IS NULL OR list_contains($runs, x.run_id))
) AS m
WHERE NOT EXISTS (
    SELECT 1 FROM documents AS d
    WHERE d.collection_id = $collection_id AND d.doc_id = m.doc_id
);

-- The (topic, document key) pairs excluded now: a listed pair, or (the rule identical_ids) a
-- document whose id is a topic's id, for that topic.
CREATE OR REPLACE TEMP TABLE ex_pairs AS
SELECT DISTINCT query_id, doc_id
FROM excluded_documents
WHERE collection_id = $collection_id;

CREATE OR REPLACE TEMP TABLE ex_docs AS
SELECT p.query_id, d.doc_key
FROM ex_pairs AS p
JOIN documents AS d ON d.collection_id = $collection_id AND d.doc_id = p.doc_id
UNION
SELECT d.doc_id AS query_id, d.doc_key
FROM documents AS d
WHERE d.collection_id = $collection_id
  AND d.doc_id IN (SELECT query_id FROM run_topics WHERE collection_id = $collection_id)
  AND EXISTS (
      SELECT 1 FROM exclusion_sources AS s
      WHERE s.collection_id = $collection_id AND s.origin = 'rule' AND s.source = 'identical_ids'
  );

-- The lists to rebuild: those holding an excluded document, and those with removed rows.
CREATE OR REPLACE TEMP TABLE ex_lists AS
SELECT t.list_key, t.run_id, t.query_id
FROM run_topics AS t
WHERE t.collection_id = $collection_id
  AND ($runs IS NULL OR list_contains($runs, t.run_id))
  AND (
      -- (the lines of an excluded document, whatever their topic, are few: then their lists')
      t.list_key IN (
          SELECT c.list_key
          FROM (
              SELECT r.list_key, r.doc_key FROM run_rows AS r
              WHERE r.doc_key IN (SELECT doc_key FROM ex_docs)
          ) AS c
          JOIN run_topics AS u USING (list_key)
          SEMI JOIN ex_docs AS e ON e.query_id = u.query_id AND e.doc_key = c.doc_key
      )
      OR EXISTS (
          SELECT 1 FROM run_exclusions AS x
          WHERE x.collection_id = $collection_id AND x.run_id = t.run_id AND x.query_id = t.query_id
      )
  );

CREATE OR REPLACE TEMP TABLE ex_removed AS
SELECT l.list_key, d.doc_key, x.score, x.rank, x.rank_given AS given
FROM run_exclusions AS x
JOIN ex_lists AS l USING (run_id, query_id)
JOIN documents AS d ON d.collection_id = $collection_id AND d.doc_id = x.doc_id
WHERE x.collection_id = $collection_id;

-- A kept row at closed rank k had rank k + (removed rows j, by rank, with rank_j - j < k):
-- rank_j - j is the number of kept rows above the j-th removed one, and grows with j, so the
-- count is the largest j whose rank_j - j is below k (an ASOF join finds it; removed rows
-- next to one another share a kept_above, the last of them counts).
CREATE OR REPLACE TEMP TABLE ex_gaps AS
SELECT list_key, kept_above, max(j) AS removed_above
FROM (
    SELECT
        list_key,
        rank - row_number() OVER (PARTITION BY list_key ORDER BY rank) AS kept_above,
        row_number() OVER (PARTITION BY list_key ORDER BY rank) AS j
    FROM ex_removed
)
GROUP BY list_key, kept_above;

-- Every row of those lists at its rank as given; given is the rank column's text; excluded
-- where its (list's topic, document) pair is.
CREATE OR REPLACE TEMP TABLE ex_all AS
SELECT
    a.list_key,
    a.doc_key,
    a.score,
    a.rank,
    a.given,
    e.doc_key IS NOT NULL AS excluded
FROM (
    -- lists without removed rows keep their ranks (no count per row: most lists, first time)
    SELECT r.list_key, r.doc_key, r.score, r.rank, coalesce(r.given_text, CAST(coalesce(r.given_rank, r.rank) AS VARCHAR)) AS given
    FROM run_rows AS r
    SEMI JOIN ex_lists USING (list_key)
    ANTI JOIN ex_gaps USING (list_key)
    UNION ALL
    SELECT
        r.list_key,
        r.doc_key,
        r.score,
        CAST(r.rank + coalesce(g.removed_above, 0) AS INTEGER) AS rank,
        coalesce(r.given_text, CAST(coalesce(r.given_rank, r.rank) AS VARCHAR)) AS given
    FROM (
        SELECT r.* FROM run_rows AS r
        SEMI JOIN ex_lists USING (list_key)
        SEMI JOIN (SELECT DISTINCT list_key FROM ex_gaps) USING (list_key)
    ) AS r
    ASOF LEFT JOIN ex_gaps AS g ON r.list_key = g.list_key AND r.rank > g.kept_above
    UNION ALL
    SELECT list_key, doc_key, score, rank, given
    FROM ex_removed
) AS a
JOIN ex_lists AS l USING (list_key)
LEFT JOIN ex_docs AS e ON e.query_id = l.query_id AND e.doc_key = a.doc_key;

DELETE FROM run_rows WHERE list_key IN (SELECT list_key FROM ex_lists);

DELETE FROM run_exclusions AS x
USING ex_lists AS l
WHERE x.collection_id = $collection_id AND x.run_id = l.run_id AND x.query_id = l.query_id;

-- The kept rows ranked 1, 2, ... again; the rank as written kept where it is not the rank's
-- own decimal: as an integer where it is another integer's, else as text.
INSERT INTO run_rows (list_key, doc_key, score, rank, given_rank, given_text)
SELECT
    list_key,
    doc_key,
    score,
    rank,
    CASE
        WHEN given <> CAST(rank AS VARCHAR) AND CAST(TRY_CAST(given AS INTEGER) AS VARCHAR) = given
        THEN CAST(given AS INTEGER)
    END,
    CASE WHEN CAST(TRY_CAST(given AS INTEGER) AS VARCHAR) IS DISTINCT FROM given THEN given END
FROM (
    SELECT
        list_key,
        doc_key,
        score,
        CAST(row_number() OVER (PARTITION BY list_key ORDER BY rank) AS INTEGER) AS rank,
        given
    FROM ex_all
    WHERE NOT excluded
)
ORDER BY list_key, rank;

INSERT INTO run_exclusions (collection_id, run_id, query_id, doc_id, score, rank, rank_given)
SELECT $collection_id, l.run_id, l.query_id, d.doc_id, a.score, a.rank, a.given
FROM ex_all AS a
JOIN ex_lists AS l USING (list_key)
JOIN documents AS d USING (doc_key)
WHERE a.excluded
ORDER BY l.run_id, l.query_id, a.rank;

-- A list the exclusions emptied keeps its row with num_ret 0: the run retrieved nothing
-- for that topic (08_pairs.sql reads it as a topic the run did not return).
UPDATE run_topics AS t
SET num_ret = c.kept
FROM (
    SELECT list_key, CAST(count(*) FILTER (WHERE NOT excluded) AS INTEGER) AS kept
    FROM ex_all
    GROUP BY list_key
) AS c
WHERE t.list_key = c.list_key;

DROP TABLE ex_pairs;
DROP TABLE ex_docs;
DROP TABLE ex_removed;
DROP TABLE ex_gaps;
DROP TABLE ex_all;
