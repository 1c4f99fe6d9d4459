-- name: eval_sources_composed
-- description: The provenance source of the label of every judged row of a composed evaluation.
-- params:
-- Read by A_p(source=...) (queries/metrics/a_p_source.sql). Under a composition each judged
-- pair's label came from one set (01_qrels_composed.sql), whose source it carries. The
-- rows are those of ev_judged: the ranked documents of the evaluated runs and topics that
-- ev_qrels judges, within the depth cap.
CREATE OR REPLACE TEMP VIEW ev_judged_sources AS
SELECT r.run_id, r.query_id, r.rank, q.label_source AS source
FROM ev_ranked AS r
JOIN ev_qrels AS q USING (query_id, doc_id)
SEMI JOIN ev_topics AS t USING (query_id)
WHERE r.rank <= getvariable('ev_depth_cap');
