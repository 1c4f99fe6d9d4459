-- name: positions
-- description: Where each run ranked each pair of an audit's frame, down to max_depth (all ranks when NULL).
-- params: collection_id VARCHAR, max_depth INTEGER
-- reference: methods §15.3
-- Reads audit_frame (pair_no, query_id, doc_id) and audit_runs (run_no, run_id), which the
-- caller registers. A linear measure's score of a run is the sum over these rows of the
-- position's weight times the pair's gain: documents outside the frame are non-relevant under
-- every label set, so they add nothing.
SELECT f.pair_no, u.run_no, r.rank
FROM run_results AS r
JOIN audit_runs AS u ON u.run_id = r.run_id
JOIN audit_frame AS f ON f.query_id = r.query_id AND f.doc_id = r.doc_id
WHERE r.collection_id = $collection_id
  AND ($max_depth IS NULL OR r.rank <= $max_depth)
ORDER BY u.run_no, f.pair_no;
