-- name: eval_judged
-- description: The judged documents of each ranked list, options applied: the only result rows any metric reads.
-- params:
-- Every metric in queries/metrics/ is computed from these rows plus per-list counts
-- (ev_pairs): unjudged documents matter only through the number retrieved, so they are
-- never joined, sorted or carried. The options are the session variables of 00_runs.sql,
-- constants to the planner, so that a metric's "rank <= k" or "is_rel" reaches the scan of
-- the judged rows. The depth cap (trec_eval -M) keeps ranks up to depth_cap; the threshold
-- (trec_eval -l) makes is_rel; on condensed lists (Sakai 2007, trec_eval -J) unjudged
-- documents are gone and the rank is the rank among judged documents, judged_so_far. The
-- running counts need no change for either. Every ev_judged_source (05_source_*.sql) holds
-- only the evaluated topics (ev_topics) already.
--   nonrelevant_above  judged non-relevant documents strictly above this rank (bpref's c)
CREATE OR REPLACE TEMP VIEW ev_judged AS
SELECT
    s.run_id,
    s.query_id,
    CASE WHEN getvariable('ev_condensed') THEN s.judged_so_far ELSE s.rank END AS rank,
    s.gain,
    s.gain >= getvariable('ev_rel') AS is_rel,
    s.relevant_so_far,
    s.judged_so_far,
    s.judged_so_far - s.relevant_so_far - CASE WHEN s.gain >= getvariable('ev_rel') THEN 0 ELSE 1 END
        AS nonrelevant_above
FROM ev_judged_source AS s
WHERE s.rank <= getvariable('ev_depth_cap');
