-- name: insert_reduced_qrels
-- description: Store reduced samples as derived qrels sets, replacing sets of the same ids.
-- params: collection_id VARCHAR, parent_qrels_id VARCHAR
-- reduced_sets (qrels_id, source_file, sha256, line_count, params) has one row per set to
-- write; reduced_rows (qrels_id, query_id, iteration, doc_id, relevance) holds their judgments.
DELETE FROM qrels
WHERE collection_id = $collection_id
  AND qrels_id IN (SELECT qrels_id FROM reduced_sets);

DELETE FROM qrels_sets
WHERE collection_id = $collection_id
  AND qrels_id IN (SELECT qrels_id FROM reduced_sets);

INSERT INTO qrels (collection_id, qrels_id, query_id, iteration, doc_id, relevance)
SELECT $collection_id, qrels_id, query_id, iteration, doc_id, relevance
FROM reduced_rows
ORDER BY qrels_id, query_id, doc_id;

-- evalwh made these sets from another: their source is 'derived' (schema 015)
INSERT INTO qrels_sets (
    collection_id, qrels_id, kind, source_file, sha256, line_count, parent_qrels_id, params, source
)
SELECT $collection_id, qrels_id, 'derived', source_file, sha256, line_count, $parent_qrels_id, params, 'derived'
FROM reduced_sets;
