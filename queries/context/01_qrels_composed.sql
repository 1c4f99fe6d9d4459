-- name: eval_qrels_composed
-- description: The judgments of a composed evaluation: one set's labels, its holes filled from further sets in order.
-- params: qrels_ids VARCHAR[]
-- qrels_ids lists the sets by precedence: the evaluated set first, then the sets that fill
-- it (evalwh eval --qrels-id A --fill B --fill C: [A, B, C]). A set judged a (topic,
-- document) pair when it holds a non-negative grade for it; the pair takes the label of the
-- first set in the list that judged it. A negative grade ("pooled, not judged", trec_eval's
-- RELVALUE_UNJUDGED, dropped by 01_qrels.sql too) is no label: the pair is left to the next
-- set. So the composition evaluates exactly as one qrels file holding A's labels, then the
-- labels of B for the pairs A did not judge, and so on (docs/judgments.md).
--   ev_label_sets  the sets of the composition: place in the list and provenance source
--                  (schema/015; a set without one counts as 'human', or 'derived' for
--                  evalwh's derived sets, as the migration marked them)
--   ev_labels      the label of every judged pair and the set it came from
--   ev_qrels       01_qrels.sql's columns (the threshold is the session's, so that a
--                  measure's own rel= applies), plus label_set and label_source
CREATE OR REPLACE TEMP TABLE ev_label_sets AS
SELECT
    s.qrels_id,
    list_position($qrels_ids, s.qrels_id) AS layer,
    coalesce(s.source, CASE WHEN s.kind = 'derived' THEN 'derived' ELSE 'human' END) AS source
FROM qrels_sets AS s
WHERE s.collection_id = getvariable('ev_collection_id')
  AND list_contains($qrels_ids, s.qrels_id);

CREATE OR REPLACE TEMP TABLE ev_labels AS
SELECT
    q.query_id,
    q.doc_id,
    q.relevance AS gain,
    q.qrels_id AS label_set,
    l.source AS label_source
FROM qrels AS q
JOIN ev_label_sets AS l USING (qrels_id)
WHERE q.collection_id = getvariable('ev_collection_id')
  AND q.relevance >= 0
QUALIFY row_number() OVER (PARTITION BY q.query_id, q.doc_id ORDER BY l.layer) = 1;

CREATE OR REPLACE TEMP VIEW ev_qrels AS
SELECT
    query_id,
    doc_id,
    gain,
    gain >= getvariable('ev_rel') AS is_rel,
    label_set,
    label_source
FROM ev_labels;
