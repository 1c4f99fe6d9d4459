-- name: insert_run_results
-- description: Rank the staged lines of the accepted files in trec_eval order and store them.
-- params: collection_id VARCHAR
-- staged_accepted maps each accepted file to its run_id; the ranking itself is the one in
-- schema/001_core.sql (trec_ranked), materialised here so that no later query sorts a run.
CREATE OR REPLACE TEMP TABLE staged_results AS
SELECT
    $collection_id AS collection_id,
    a.run_id,
    s.query_id,
    s.doc_id,
    CAST(s.score_text AS DOUBLE) AS score,
    s.rank_text AS rank_given
FROM staged_lines AS s
JOIN staged_accepted AS a USING (filename);

INSERT INTO run_results (collection_id, run_id, query_id, doc_id, score, rank_given, rank)
SELECT collection_id, run_id, query_id, doc_id, score, rank_given, rank
FROM trec_ranked('staged_results', false);

INSERT INTO run_topics (collection_id, run_id, query_id, num_ret)
SELECT collection_id, run_id, query_id, CAST(count(*) AS INTEGER)
FROM staged_results
GROUP BY collection_id, run_id, query_id;
