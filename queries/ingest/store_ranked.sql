-- name: store_ranked
-- description: Store ranked run results given by name (staged_results, staged_topics) under their keys.
-- params:
-- insert_run_results.sql (the general path of an ingest, or a DataFrame's) or an import
-- staged one row per line and per ranked list, by name, as run_results and run_topics
-- show them. The warehouse stores them by key (schema/013_keyed_results.sql): each ranked
-- list gets a new list_key, each document of the collection not yet in `documents` a new
-- doc_key (schema/026_document_keys.sql; max + 1 onwards: the writer is alone), and each
-- line its two keys.
INSERT INTO run_topics (collection_id, run_id, query_id, num_ret, list_key)
SELECT
    collection_id,
    run_id,
    query_id,
    num_ret,
    CAST((SELECT coalesce(max(list_key), 0) FROM run_topics)
         + row_number() OVER (ORDER BY collection_id, run_id, query_id) AS INTEGER)
FROM staged_topics;

INSERT INTO documents (collection_id, doc_id, doc_key)
SELECT
    s.collection_id,
    s.doc_id,
    (SELECT coalesce(max(doc_key), 0) FROM documents)
        + row_number() OVER (ORDER BY s.collection_id, s.doc_id)
FROM (SELECT DISTINCT collection_id, doc_id FROM staged_results) AS s
ANTI JOIN documents AS d USING (collection_id, doc_id);

-- The rank as written is kept only where it is not the rank's own decimal: as an integer
-- where it is another integer's own decimal, else as text (schema/026_document_keys.sql).
INSERT INTO run_rows (list_key, doc_key, score, rank, given_rank, given_text)
SELECT
    t.list_key,
    d.doc_key,
    r.score,
    r.rank,
    CASE
        WHEN r.rank_given <> CAST(r.rank AS VARCHAR)
         AND CAST(TRY_CAST(r.rank_given AS INTEGER) AS VARCHAR) = r.rank_given
        THEN CAST(r.rank_given AS INTEGER)
    END,
    CASE WHEN CAST(TRY_CAST(r.rank_given AS INTEGER) AS VARCHAR) IS DISTINCT FROM r.rank_given THEN r.rank_given END
FROM staged_results AS r
JOIN run_topics AS t USING (collection_id, run_id, query_id)
JOIN documents AS d USING (collection_id, doc_id);

DROP TABLE staged_results;
DROP TABLE staged_topics;
