-- name: insert_run_results
-- description: Rank the staged, validated lines in trec_eval order: the run results and topics to store.
-- params: collection_id VARCHAR, run_ids VARCHAR[]
-- The ranking is the one in schema/001_core.sql (trec_ranked), materialised here so that no
-- later query sorts a run again. The staged rows carry the batch-local file_index as their
-- run key (an integer compares faster than a name while sorting); $run_ids[file_index + 1] is
-- the run's name. The collection is one constant per batch. The rows are run_results' and
-- run_topics' rows by name; store_ranked.sql stores them by key (on Spark they are the
-- run_results and run_topics views themselves).
CREATE OR REPLACE TEMP VIEW staged_ranking AS
SELECT
    0 AS collection_id,
    file_index AS run_id,
    query_id,
    doc_id,
    score,
    rank_given
FROM staged_lines;

CREATE OR REPLACE TEMP TABLE staged_results AS
SELECT
    $collection_id AS collection_id,
    $run_ids[run_id + 1] AS run_id,
    query_id,
    doc_id,
    score,
    rank_given,
    rank
FROM trec_ranked('staged_ranking', false);

CREATE OR REPLACE TEMP TABLE staged_topics AS
SELECT
    $collection_id AS collection_id,
    $run_ids[file_index + 1] AS run_id,
    query_id,
    CAST(count(*) AS INTEGER) AS num_ret
FROM staged_lines
GROUP BY file_index, query_id;
