-- name: insert_run_results
-- description: Rank the staged, validated lines in trec_eval order and store them with their topics.
-- params: collection_id VARCHAR, run_ids VARCHAR[]
-- The ranking is the one in schema/001_core.sql (trec_ranked), materialised here so that no
-- later query sorts a run again. The staged rows carry the batch-local file_index as their
-- run key (an integer compares faster than a name while sorting); $run_ids[file_index + 1] is
-- the run's name. The collection is one constant per batch.
CREATE OR REPLACE TEMP VIEW staged_ranking AS
SELECT
    0 AS collection_id,
    file_index AS run_id,
    query_id,
    doc_id,
    score,
    rank_given
FROM staged_lines;

INSERT INTO run_results (collection_id, run_id, query_id, doc_id, score, rank_given, rank)
SELECT $collection_id, $run_ids[run_id + 1], query_id, doc_id, score, rank_given, rank
FROM trec_ranked('staged_ranking', false);

INSERT INTO run_topics (collection_id, run_id, query_id, num_ret)
SELECT $collection_id, $run_ids[file_index + 1], query_id, CAST(count(*) AS INTEGER)
FROM staged_lines
GROUP BY file_index, query_id;
