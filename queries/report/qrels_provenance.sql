-- name: report_qrels_provenance
-- description: The qrels set a report is computed against: source, sha256, lines, derivation.
-- params: collection_id VARCHAR, qrels_id VARCHAR
SELECT
    qrels_id,
    kind,
    source_file,
    sha256,
    line_count,
    parent_qrels_id,
    params
FROM qrels_sets
WHERE collection_id = $collection_id AND qrels_id = $qrels_id;
