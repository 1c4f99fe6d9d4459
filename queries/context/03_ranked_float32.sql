-- name: eval_ranked_float32
-- description: The chosen runs re-ranked with scores rounded to 32-bit floats, as trec_eval up to 9.0.8 did.
-- params:
-- trec_eval <= 9.0.8 read scores into a C float, so scores equal after float32 rounding
-- tie and fall back to the doc_id order. Same ordering macro as at ingest, other flag.
CREATE OR REPLACE TEMP VIEW ev_source AS
SELECT r.collection_id, r.run_id, r.query_id, r.doc_id, r.score
FROM run_results AS r
SEMI JOIN ev_runs AS e USING (collection_id, run_id);

CREATE OR REPLACE TEMP TABLE ev_ranked_float32 AS
SELECT run_id, query_id, doc_id, rank
FROM trec_ranked('ev_source', true);

CREATE OR REPLACE TEMP VIEW ev_ranked AS
SELECT run_id, query_id, doc_id, rank
FROM ev_ranked_float32;
