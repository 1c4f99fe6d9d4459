-- name: eval_qrels
-- description: The judgments an evaluation uses: one qrels set of one collection, threshold applied.
-- params:
-- A negative grade means "pooled but not judged" (trec_eval's RELVALUE_UNJUDGED): such rows
-- are dropped here, so every metric sees them as unjudged. is_rel applies the relevance
-- threshold (trec_eval -l); gain is the grade itself (nDCG, never thresholded). A view over
-- the qrels table (the options are the session variables of 00_runs.sql): its few readers
-- scan one qrels set faster than a copy of it is made.
CREATE OR REPLACE TEMP VIEW ev_qrels AS
SELECT
    query_id,
    doc_id,
    relevance AS gain,
    relevance >= getvariable('ev_rel') AS is_rel
FROM qrels
WHERE collection_id = getvariable('ev_collection_id')
  AND qrels_id = getvariable('ev_qrels_id')
  AND relevance >= 0;
