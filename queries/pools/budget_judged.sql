-- name: budget_judged
-- description: Judged rows of many label sets at once: every run scored against each simulated label set of a budget replay.
-- params:
-- Needs ev_budget_runs (run_id: the runs ranked), ev_budget_labels (label_id, query_id,
-- doc_id, relevance, is_rel: one row per labelled pair of each simulated set, is_rel the
-- relevance threshold applied by the caller as ev_qrels applies it; e.g. the first B documents of a judging order with the reference's
-- grades, or people's labels filled by a calibrated machine), ev_topics and ev_ranked
-- (queries/context, built on the reference set). The evaluation key label_id || TAB ||
-- run_id takes the place of run_id in ev_judged and ev_pairs, so the metric queries score
-- every run under every set in one pass (a run id never holds a TAB: ingest refuses it).
-- A pair a set does not label is unjudged, hence not relevant (methods §3.1). R and N are
-- each set's own. Leaves ev_pool_rows for queries/pools/judged.sql and ev_eval_counts for
-- queries/pools/pairs.sql, as spec_judged.sql does.
CREATE OR REPLACE TEMP VIEW ev_pool_rows AS
SELECT
    l.label_id || chr(9) || r.run_id AS run_id,
    r.query_id,
    r.rank,
    l.relevance AS gain,
    l.is_rel
FROM ev_ranked AS r
JOIN ev_budget_labels AS l ON l.query_id = r.query_id AND l.doc_id = r.doc_id
WHERE l.relevance >= 0;

CREATE OR REPLACE TEMP TABLE ev_eval_counts AS
WITH counts AS (
    SELECT
        label_id,
        query_id,
        count(*) FILTER (WHERE is_rel) AS num_rel,
        count(*) FILTER (WHERE relevance >= 0 AND NOT is_rel) AS num_nonrel
    FROM ev_budget_labels
    GROUP BY label_id, query_id
),
keys AS (
    SELECT l.label_id, r.run_id
    FROM (SELECT DISTINCT label_id FROM ev_budget_labels) AS l
    CROSS JOIN ev_budget_runs AS r
)
SELECT
    k.label_id || chr(9) || k.run_id AS run_id,
    k.run_id AS source_run_id,
    t.query_id,
    CAST(coalesce(c.num_rel, 0) AS INTEGER) AS num_rel,
    CAST(coalesce(c.num_nonrel, 0) AS INTEGER) AS num_nonrel
FROM keys AS k
CROSS JOIN ev_topics AS t
LEFT JOIN counts AS c ON c.label_id = k.label_id AND c.query_id = t.query_id;
