-- name: eval_sources
-- description: The provenance source of the label of every judged row: one set, one source.
-- params:
-- Read by A_p(source=...) (queries/metrics/a_p_source.sql). Every label of one qrels set has
-- the set's source (schema/015: human, llm, inferred or derived; a set without one counts as
-- 'human', or 'derived' for evalwh's derived sets, as the migration marked them). A view
-- over ev_judged, so that it follows a measure's own options as ev_judged does.
CREATE OR REPLACE TEMP VIEW ev_judged_sources AS
SELECT j.run_id, j.query_id, j.rank, s.source
FROM ev_judged AS j
CROSS JOIN (
    SELECT coalesce(any_value(source), CASE WHEN any_value(kind) = 'derived' THEN 'derived' ELSE 'human' END)
        AS source
    FROM qrels_sets
    WHERE collection_id = getvariable('ev_collection_id')
      AND qrels_id = getvariable('ev_qrels_id')
) AS s;
