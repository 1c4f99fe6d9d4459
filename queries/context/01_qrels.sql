-- name: eval_qrels
-- description: The judgments an evaluation uses: one qrels set of one collection, threshold applied.
-- params: collection_id VARCHAR, qrels_id VARCHAR, rel INTEGER
-- A negative grade means "pooled but not judged" (trec_eval's RELVALUE_UNJUDGED): such rows
-- are dropped here, so every metric sees them as unjudged. is_rel applies the relevance
-- threshold (trec_eval -l); gain is the grade itself (nDCG, never thresholded).
CREATE OR REPLACE TEMP TABLE ev_qrels AS
SELECT
    query_id,
    doc_id,
    relevance AS gain,
    relevance >= $rel AS is_rel
FROM qrels
WHERE collection_id = $collection_id
  AND qrels_id = $qrels_id
  AND relevance >= 0;
