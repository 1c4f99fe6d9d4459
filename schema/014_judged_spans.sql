-- The judged-rows cache stores a stretch of deep judged non-relevant documents as one row.
--
-- Most judged documents of a pooled run are judged non-relevant (grade 0), and below the
-- depths metrics usually cut at they come in stretches of consecutive ranks: on a collection
-- whose pool covers most of what runs retrieve, a list of 1,000 documents holds a few dozen
-- relevant ones and nearly a thousand rows of grade 0 between them. Within such a stretch
-- every row follows from its first one: the rank and judged_so_far go up by one a row, gain
-- (0) and relevant_so_far stay. So the cache keeps the stretch as its first row and length:
--   span   how many consecutive ranks the row stands for: ranks rank .. rank + span - 1,
--          judged_so_far .. judged_so_far + span - 1, the same gain and relevant_so_far.
--          Only documents judged with grade 0 below rank judged_spans_from() share a row (a
--          stretch ends at any other judged document and at any unjudged one); every other
--          row has span 1.
-- Storing a row costs a database about the same whatever it holds, so the cache of a run
-- costs what its top ranks, its relevant documents and its stretches cost, not what its
-- judged lines do (on the generated L collection 3.9 M rows instead of 24.4 M). Above
-- judged_spans_from() (the depths of P@10, nDCG@20, A_p@100, ...) every judged document
-- keeps its own row, so a metric cut there reads stored rows only. The view judged_rows
-- gives the cache back one row per judged document, and the evaluation reads it
-- (queries/context/05_source_cache.sql). Rows cached before this migration each stand for
-- one rank (span 1), so nothing needs rebuilding.
CREATE OR REPLACE MACRO judged_spans_from() AS 100;

CREATE TABLE judged_results_spans (
    build_key       INTEGER NOT NULL,
    list_key        INTEGER NOT NULL,
    rank            INTEGER NOT NULL,
    gain            DOUBLE NOT NULL,
    judged_so_far   INTEGER NOT NULL,
    relevant_so_far INTEGER NOT NULL,
    span            INTEGER NOT NULL DEFAULT 1,
    CHECK (span = 1 OR (span > 1 AND rank > judged_spans_from() AND gain = 0))
);

INSERT INTO judged_results_spans (build_key, list_key, rank, gain, judged_so_far, relevant_so_far)
SELECT build_key, list_key, rank, gain, judged_so_far, relevant_so_far
FROM judged_results
ORDER BY rowid;

DROP TABLE judged_results;
ALTER TABLE judged_results_spans RENAME TO judged_results;

-- The cache one row per judged document, by key: stored rows as they are, stretches one row
-- per rank. The second branch repeats what the CHECK guarantees its rows (gain 0, every rank
-- below judged_spans_from()) as filters on what it returns, so that DuckDB's planner drops
-- the branch from a query of relevant documents only or of ranks up to judged_spans_from(),
-- which then reads stored rows alone, skipping row groups by their min/max as before. (The
-- first branch says span < 2, not span = 1: the planner estimates "= 1" as one value in
-- hundreds, takes the rows for few and joins them the wrong way round: measured 0.6 s instead
-- of 0.3 s for the eight measures of bench/scale.py on the generated L collection.)
CREATE OR REPLACE VIEW judged_rows AS
SELECT c.build_key, c.list_key, c.rank, c.gain, c.judged_so_far, c.relevant_so_far
FROM judged_results AS c
WHERE c.span < 2
UNION ALL
SELECT
    c.build_key,
    c.list_key,
    c.rank + s.step AS rank,
    c.gain,
    c.judged_so_far + s.step AS judged_so_far,
    c.relevant_so_far
FROM judged_results AS c
CROSS JOIN range(c.span) AS s(step)
WHERE c.span > 1 AND c.gain = 0 AND c.rank + s.step > judged_spans_from();

CREATE OR REPLACE VIEW judged_cache AS
SELECT
    b.collection_id,
    b.qrels_id,
    t.run_id,
    t.query_id,
    c.rank,
    c.gain,
    c.judged_so_far,
    c.relevant_so_far
FROM judged_rows AS c
JOIN judged_builds AS b USING (build_key)
JOIN run_topics AS t USING (list_key);

COMMENT ON TABLE judged_results IS 'Cache: per build (qrels set, run) and list, one row per judged document, or per stretch of span consecutive ranks below judged_spans_from() judged with grade 0; with running counts.';
COMMENT ON VIEW judged_rows IS 'Cache: one row per judged document of a build and list (stretches read back one row per rank), by key.';
COMMENT ON VIEW judged_cache IS 'Cache: one row per (collection, qrels set, run, topic, judged document), by name.';
COMMENT ON COLUMN judged_results.span IS 'How many consecutive ranks the row stands for (rank .. rank + span - 1), all judged with grade 0 below judged_spans_from(); 1 for every other row.';
